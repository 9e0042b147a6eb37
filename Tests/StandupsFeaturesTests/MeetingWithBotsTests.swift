import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

/// A bot in the room (a notes bot, a CI job) is not someone at the meeting: it neither keeps
/// a meeting ticking once the people left, nor brings one back by joining.
extension RecordMeetingTests {
  @Test func aBotLeftAloneInTheRoomDoesNotKeepTheMeetingTicking() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let now = LockIsolated(Self.start)
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock, now: now)
      let ana = Participant(id: "p1", name: "Ana")
      let notes = Participant(id: "b1", name: "Notes", isBot: true)
      let deploy = Participant(id: "b2", name: "Deploy", isBot: true)
      await joinAndStart(store, standup: standup, with: ana)
      await store.send(.participantJoined(notes)) {
        $0.participants = [ana, notes]
        $0.meeting?.present = ["Ana", "Notes"]
      }
      await store.send(.participantLeft(ana.id)) { $0.participants = [notes] }
      await store.receive(\.meeting.presented.roomEmptied) {
        $0.meeting?.pausedBecause = .everyoneLeft
        $0.meeting?.emptiedAt = Self.start
      }
      await clock.advance(by: .seconds(3))  // nothing ticks
      // Another bot joining within moments brings nothing back; the last bot leaving changes
      // nothing either.
      await store.send(.participantJoined(deploy)) {
        $0.participants = [notes, deploy]
        $0.meeting?.present = ["Ana", "Notes", "Deploy"]
      }
      await store.send(.participantLeft(notes.id)) { $0.participants = [deploy] }
      await store.send(.participantLeft(deploy.id)) { $0.participants = [] }
      await clock.advance(by: .seconds(3))
      // Ana back within moments: it goes on where it stopped.
      now.withValue { $0 += 6 }
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await goesOnByItself(store, clock: clock, to: 1)
      await discard(store)
    }
  }

  @Test func aMeetingOnlyBotsAreInStopsWhenTheLastOfThemLeaves() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let deploy = Participant(id: "b1", name: "Deploy", isBot: true)
      await joinAndStart(store, standup: standup, with: deploy)
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await store.send(.participantLeft(deploy.id)) { $0.participants = [] }
      await store.receive(\.meeting.presented.roomEmptied) {
        $0.meeting?.pausedBecause = .everyoneLeft
        $0.meeting?.emptiedAt = Self.start
      }
      await clock.advance(by: .seconds(3))
      await discard(store)
    }
  }
}
