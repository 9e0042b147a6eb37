import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

/// A meeting whose time is up is saved and ended in one step: a note is either in the meeting
/// the history keeps or refused, never acknowledged into a meeting already saved.
extension RecordMeetingTests {
  @Test func aNoteInTheLastSecondIsInTheSavedMeetingAndOneAfterItIsRefused() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock(attendees: 1, minutes: 1)
      let store = makeStore(standup, clock: clock)
      await startMeeting(store, standup)
      for second in 1...59 {
        await clock.advance(by: .seconds(1))
        await store.receive(\.meeting.presented.timerTick) {
          $0.meeting?.secondsElapsed = second
          $0.meeting?.secondsRun = second
        }
      }
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ben", text: "last word")))) {
        $0.meeting?.transcript = "Ben: last word"
        $0.meeting?.notes = [Note(author: "Ben", text: "last word", speaker: "Person 1")]
      }
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 60
        $0.meeting?.secondsRun = 60
      }
      // Saved and ended together: nothing can be taken in between.
      await store.receive(\.meeting.presented.delegate.timeIsUp) {
        $0.standup.meetings = [
          Meeting(
            id: UUID(0), date: Date(timeIntervalSince1970: 1_795_338_000),
            transcript: "Ben: last word", seconds: 60,
            notes: [Note(author: "Ben", text: "last word", speaker: "Person 1")])
        ]
        $0.meeting = nil
      }
      // A note sent for the running meeting a moment too late is refused, not taken: the page
      // offers it for the meeting just saved (`historyNoteSubmitted`).
      await store.send(
        .meeting(.presented(.noteSubmitted(author: "Cy", text: "too late"))),
        rejectedWith: .invalidAction("No meeting is running."))
      await clock.advance(by: .seconds(3))
      await store.finish()
    }
  }
}
