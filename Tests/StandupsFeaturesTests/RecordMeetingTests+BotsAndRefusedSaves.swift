import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

/// A bot in the room (a notes bot, a CI job) is not someone at the meeting: it neither keeps
/// a meeting ticking once the people left, nor brings one back by joining (after a move too).
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
        // NB: a bot is listed as its notes are signed.
        $0.meeting?.present = ["Ana", "Notes (bot)"]
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
        $0.meeting?.present = ["Ana", "Notes (bot)", "Deploy (bot)"]
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

  /// A bot back after a move brings nothing back either: a person who did not come back in
  /// time (a laptop asleep) must not find the meeting run through without them. A meeting
  /// only a bot was in waits for it to resume it.
  @Test func aMeetingABotRunsWaitsForItsResumeAfterAMove() async throws {
    try await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let deploy = Participant(id: "b1", name: "Deploy", isBot: true)
      await joinAndStart(store, standup: standup, with: deploy)
      await store.send(.roomMoving)
      await store.receive(\.meeting.presented.roomMoving) {
        $0.meeting?.pausedBecause = .moved
        $0.meeting?.emptiedAt = Self.start
      }
      await store.send(.participantLeft(deploy.id)) { $0.participants = [] }
      let checkpoint = try #require(store.state.meeting).checkpoint(standupID: standup.id)
      await discard(store)

      var opened = Room.State(standup: standup)
      opened.meeting = RecordMeeting.State(restoring: checkpoint, standup: standup)
      let next = makeStore(opened: opened, clock: clock, at: Self.start.addingTimeInterval(2))
      await next.send(.participantJoined(deploy)) { $0.participants = [deploy] }
      await clock.advance(by: .seconds(2))  // nothing ticks
      await next.send(.meeting(.presented(.resumeButtonTapped))) {
        $0.meeting?.pausedBecause = nil
        $0.meeting?.emptiedAt = nil
      }
      await clock.advance(by: .seconds(1))
      await next.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await discard(next)
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

/// A meeting's change that could not be saved is taken back, and only it.
extension RecordMeetingTests {
  @Test func aNoteThatCouldNotBeSavedGoesButTheClockAndOthersNotesStay() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let ana = Participant(id: "p1", name: "Ana")
      await joinAndStart(store, standup: standup, with: ana)
      let before = store.state
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "Lost")))) {
        $0.meeting?.transcript = "Ana: Lost"
        $0.meeting?.notes = [Note(author: "Ana", text: "Lost", speaker: "Person 1")]
      }
      let after = store.state
      // While its save is under way, the clock ticks and Ben's note comes in.
      await clock.advance(by: .seconds(2))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 2
        $0.meeting?.secondsRun = 2
      }
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ben", text: "Kept")))) {
        $0.meeting?.transcript = "Ana: Lost\nBen: Kept"
        $0.meeting?.notes.append(Note(author: "Ben", text: "Kept", speaker: "Person 1"))
      }
      await store.send(.saveFailed(before: before, after: after)) {
        $0.meeting?.transcript = "Ben: Kept"
        $0.meeting?.notes = [Note(author: "Ben", text: "Kept", speaker: "Person 1")]
      }
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 3
        $0.meeting?.secondsRun = 3
      }
      await discard(store)
    }
  }

  /// Two notes in a row whose saves both fail: each failure takes back its own note.
  @Test func twoNotesThatCouldNotBeSavedBothGo() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      await joinAndStart(store, standup: standup, with: Participant(id: "p1", name: "Ana"))
      let before = store.state
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "One")))) {
        $0.meeting?.transcript = "Ana: One"
        $0.meeting?.notes = [Note(author: "Ana", text: "One", speaker: "Person 1")]
      }
      let afterOne = store.state
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ben", text: "Two")))) {
        $0.meeting?.transcript = "Ana: One\nBen: Two"
        $0.meeting?.notes.append(Note(author: "Ben", text: "Two", speaker: "Person 1"))
      }
      let afterTwo = store.state
      await store.send(.saveFailed(before: before, after: afterOne)) {
        $0.meeting?.transcript = "Ben: Two"
        $0.meeting?.notes = [Note(author: "Ben", text: "Two", speaker: "Person 1")]
      }
      await store.send(.saveFailed(before: afterOne, after: afterTwo)) {
        $0.meeting?.transcript = ""
        $0.meeting?.notes = []
      }
      await discard(store)
    }
  }

  @Test func aNextThatCouldNotBeSavedGoesBackToTheSpeakerAsTheClockHasMovedOn() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()  // 60 s a speaker
      let store = makeStore(standup, clock: clock)
      let ana = Participant(id: "p1", name: "Ana")
      await joinAndStart(store, standup: standup, with: ana)
      let before = store.state
      let perSpeaker = standup.secondsPerAttendee
      await store.send(.meeting(.presented(.nextButtonTapped(from: 0)))) {
        $0.meeting?.speakerIndex = 1
        $0.meeting?.secondsElapsed = perSpeaker
      }
      let after = store.state
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = perSpeaker + 1
        $0.meeting?.secondsRun = 1
      }
      await store.send(.saveFailed(before: before, after: after)) {
        $0.meeting?.speakerIndex = 0
        $0.meeting?.secondsElapsed = 1
      }
      await discard(store)
    }
  }
}

extension RecordMeetingTests {
  /// A note's save fails after the meeting's time ran out: the meeting stays ended and in the
  /// history (saved on its own), without the note; it does not come back and tick.
  @Test func aMeetingThatEndedSinceARefusedNoteStaysEndedAndInTheHistory() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock(attendees: 1, minutes: 1)
      let store = makeStore(standup, clock: clock)
      store.exhaustivity = .off
      await joinAndStart(store, standup: standup, with: Participant(id: "p1", name: "Ana"))
      let before = store.state
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "Lost"))))
      let after = store.state
      await clock.advance(by: .seconds(60))
      await store.skipReceivedActions()
      #expect(store.state.meeting == nil)
      let ended = try? #require(store.state.standup.meetings.first)
      #expect(ended?.notes.map(\.text) == ["Lost"])
      await store.send(.saveFailed(before: before, after: after))
      #expect(store.state.meeting == nil)
      #expect(store.state.standup.meetings.map(\.id) == [ended?.id])
      // Its sender was told it was not taken: it is not in the saved meeting either.
      #expect(store.state.standup.meetings.first?.notes == [])
      #expect(store.state.standup.meetings.first?.transcript == "")
      await clock.advance(by: .seconds(5))
      await store.skipReceivedActions()
      #expect(store.state.meeting == nil)
    }
  }
}
