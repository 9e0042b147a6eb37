import CasePathsCore
import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

/// Who did what, said to everyone; and the 10 seconds in which anyone may undo a loss.
@MainActor
@Suite(.serialized)
struct RoomActivityTests {
  let ana = Actor(id: "p1", name: "Ana")
  let ben = Actor(id: "p2", name: "Ben")

  func makeStore(_ standup: Standup = .mock(), clock: TestClock<Duration>) -> TestStore<Room> {
    var state = Room.State(standup: standup)
    state.participants = [Participant(id: "p1", name: "Ana"), Participant(id: "p2", name: "Ben")]
    return TestStore(initialState: state) {
      Room()
    } withDependencies: {
      $0.continuousClock = clock
      $0.uuid = .incrementing
      $0.date = .constant(Date(timeIntervalSince1970: 1_795_338_000))
    }
  }

  @Test func eachSharedActionSaysWhoDidItAndADiscardedMeetingCanBeBroughtBack() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock(attendees: 3, minutes: 3)
      let store = makeStore(standup, clock: clock)
      await store.send(.acted(by: ana, .startMeetingButtonTapped)) {
        $0.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
        $0.meeting?.present = ["Ana", "Ben"]
        $0.activity = Activity(seq: 1, kind: .startedMeeting, by: ana)
        $0.activityCount = 1
      }
      await store.receive(\.meeting.presented.started)
      await store.send(.acted(by: ben, .meeting(.presented(.nextButtonTapped(from: 0))))) {
        $0.meeting?.speakerIndex = 1
        $0.meeting?.secondsElapsed = 60
        $0.activity = Activity(seq: 2, kind: .skippedToSpeaker, by: ben, detail: "Person 2")
        $0.activityCount = 2
      }
      #expect(store.state.activity?.sentence == "Ben moved on to Person 2")
      // Not "Ben moved on to Ben".
      #expect(
        Activity(seq: 2, kind: .skippedToSpeaker, by: ben, detail: "Ben").sentence
          == "Ben moved on to their own turn")
      // Notes are not announced: everyone sees them with their author.
      await store.send(
        .acted(by: ana, .meeting(.presented(.noteSubmitted(author: "Ana", text: "Shipped it"))))
      ) {
        $0.meeting?.transcript = "Ana: Shipped it"
        $0.meeting?.notes = [Note(author: "Ana", text: "Shipped it", speaker: "Person 2")]
      }
      await store.send(.acted(by: ben, .meeting(.presented(.endMeetingButtonTapped)))) {
        $0.meeting?.alert = .endMeeting
        $0.activity = Activity(seq: 3, kind: .askedToEndMeeting, by: ben)
        $0.activityCount = 3
      }
      let running = store.state.meeting
      await store.send(.acted(by: ben, .meeting(.presented(.alert(.discard))))) {
        $0.meeting = nil
        $0.activity = Activity(seq: 4, kind: .discardedMeeting, by: ben)
        $0.activityCount = 4
        $0.undo = Undo(activity: $0.activity!, restore: .meeting(running!))
      }
      // A stale undo (an older activity) is refused and changes nothing.
      await store.send(
        .acted(by: ana, .undoButtonTapped(seq: 3)),
        rejectedWith: .stale("That can no longer be undone."))
      await clock.advance(by: .seconds(9))
      await store.send(.acted(by: ana, .undoButtonTapped(seq: 4))) {
        $0.meeting = running
        $0.meeting?.alert = nil
        $0.undo = nil
        $0.activity = Activity(seq: 5, kind: .restoredMeeting, by: ana)
        $0.activityCount = 5
      }
      // The meeting ticks on from where it was, with its notes.
      await store.receive(\.meeting.presented.started)
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 61
        $0.meeting?.secondsRun = 1
      }
      await store.send(.acted(by: ana, .meeting(.presented(.endMeetingButtonTapped)))) {
        $0.meeting?.alert = .endMeeting
        $0.activity = Activity(seq: 6, kind: .askedToEndMeeting, by: ana)
        $0.activityCount = 6
      }
      await store.send(.acted(by: ana, .meeting(.presented(.alert(.saveAndEnd))))) {
        $0.standup.meetings.insert(
          Meeting(
            id: UUID(0), date: Date(timeIntervalSince1970: 1_795_338_000),
            transcript: "Ana: Shipped it", seconds: 1, present: ["Ana", "Ben"],
            notes: [Note(author: "Ana", text: "Shipped it", speaker: "Person 2")]),
          at: 0)
        $0.meeting = nil
        $0.activity = Activity(seq: 7, kind: .endedMeeting, by: ana)
        $0.activityCount = 7
      }
      #expect(store.state.activity?.sentence == "Ana ended the meeting")
      // Ben pressed Discard in the same alert a moment later: told who ended it, and how.
      await store.send(
        .acted(by: ben, .meeting(.presented(.alert(.discard)))),
        rejectedWith: .invalidAction("Ana saved and ended the meeting: no meeting is running."))
      await clock.advance(by: .seconds(20))
      await store.finish()
    }
  }

  /// Ben resumes the meeting as Ana presses Save and end in the same alert: her answer is
  /// refused saying who resumed it, and that it goes on.
  @Test func anAnswerToTheEndAlertSomeoneResumedFirstSaysWho() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = makeStore(clock: clock)
      store.exhaustivity = .off
      await store.send(.acted(by: ana, .startMeetingButtonTapped))
      await store.send(.acted(by: ana, .meeting(.presented(.endMeetingButtonTapped))))
      await store.send(.acted(by: ben, .meeting(.presented(.alert(.resume))))) {
        $0.meeting?.alert = nil
      }
      await store.send(
        .acted(by: ana, .meeting(.presented(.alert(.saveAndEnd)))),
        rejectedWith: .invalidAction("Ben resumed the meeting: it goes on."))
      #expect(store.state.meeting != nil)
      #expect(store.state.standup.meetings.isEmpty)
      await store.send(.acted(by: ana, .meeting(.presented(.endMeetingButtonTapped))))
      await store.send(.acted(by: ana, .meeting(.presented(.alert(.discard)))))
      await store.skipInFlightEffects()
    }
  }

  /// Ana starts the meeting and discards it; returns its Undo's `seq` (0 if there is none).
  func startAndDiscard(_ store: TestStore<Room>) async -> Int {
    await store.send(.acted(by: ana, .startMeetingButtonTapped))
    await store.send(.acted(by: ana, .meeting(.presented(.endMeetingButtonTapped))))
    await store.send(.acted(by: ana, .meeting(.presented(.alert(.discard)))))
    return (try? #require(store.state.undo?.activity.seq)) ?? 0
  }

  /// Cy arrives while a discarded meeting can still be brought back: brought back, it has him
  /// among those present (he was there while it ran), as a meeting running when he came would.
  @Test func aDiscardedMeetingBroughtBackCountsWhoCameMeanwhile() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = makeStore(clock: clock)
      store.exhaustivity = .off
      let seq = await startAndDiscard(store)
      await store.send(.participantJoined(Participant(id: "p3", name: "Cy", person: "cy-key")))
      await store.send(.acted(by: ana, .undoButtonTapped(seq: seq))) {
        $0.meeting?.present = ["Ana", "Ben", "Cy"]
        $0.meeting?.presentBy = ["Cy": ["cy-key"]]
      }
      await store.skipInFlightEffects()
    }
  }

  /// Cy signs in again while a discarded meeting can still be brought back (his session
  /// ended): brought back, it has him once, not once for each sign-in.
  @Test func aDiscardedMeetingBroughtBackCountsSomeoneWhoSignedInAgainMeanwhileOnce() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = makeStore(clock: clock)
      store.exhaustivity = .off
      let cy = Participant(id: "p3", name: "Cy", person: "cy-key")
      await store.send(.participantJoined(cy))
      let seq = await startAndDiscard(store)
      await store.send(.participantLeft(cy.id))
      await store.send(.participantJoined(Participant(id: "p4", name: "Cy", person: "cy-again")))
      await store.send(.acted(by: ana, .undoButtonTapped(seq: seq))) {
        $0.meeting?.present = ["Ana", "Ben", "Cy"]
        $0.meeting?.presentBy = ["Cy": ["cy-again"]]
      }
      #expect(store.state.meeting?.presentPeople == ["Ana", "Ben", "Cy"])
      await store.skipInFlightEffects()
    }
  }

  /// A note whose save failed after its meeting was discarded is not in the meeting Undo
  /// brings back: its sender was told it was not taken.
  @Test func aRefusedNoteIsNotInTheDiscardedMeetingUndoBringsBack() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = makeStore(clock: clock)
      store.exhaustivity = .off
      await store.send(.acted(by: ana, .startMeetingButtonTapped))
      let before = store.state
      await store.send(
        .acted(by: ana, .meeting(.presented(.noteSubmitted(author: "Ana", text: "Lost")))))
      let after = store.state
      await store.send(.acted(by: ben, .meeting(.presented(.endMeetingButtonTapped))))
      await store.send(.acted(by: ben, .meeting(.presented(.alert(.discard)))))
      await store.send(.saveFailed(before: before, after: after))
      let seq = try? #require(store.state.undo?.activity.seq)
      await store.send(.acted(by: ben, .undoButtonTapped(seq: seq ?? 0)))
      #expect(store.state.meeting?.notes == [])
      #expect(store.state.meeting?.transcript == "")
      await store.skipInFlightEffects()
    }
  }

  @Test func aNewMeetingTakesTheDiscardedOnesPlaceAndItsUndoGoes() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      store.exhaustivity = .off
      await store.send(.acted(by: ana, .startMeetingButtonTapped))
      await store.send(.acted(by: ana, .meeting(.presented(.endMeetingButtonTapped))))
      await store.send(.acted(by: ana, .meeting(.presented(.alert(.discard)))))
      #expect(store.state.undo?.activity.kind == .discardedMeeting)
      await store.send(.acted(by: ben, .startMeetingButtonTapped)) {
        $0.undo = nil
        $0.activity = Activity(seq: 4, kind: .startedMeeting, by: ben)
        $0.activityCount = 4
      }
      await store.skipInFlightEffects()
    }
  }

  @Test func theUndoWindowEndsAfterTenSeconds() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      await store.send(.acted(by: ana, .editButtonTapped)) {
        $0.destination = .edit(StandupForm.State(standup: standup))
        $0.activity = Activity(seq: 1, kind: .startedEditing, by: ana)
        $0.activityCount = 1
      }
      let draft = StandupForm.State(standup: standup)
      await store.send(.acted(by: ben, .cancelEditButtonTapped)) {
        $0.destination = nil
        $0.activity = Activity(seq: 2, kind: .cancelledEditing, by: ben)
        $0.activityCount = 2
        $0.undo = Undo(activity: $0.activity!, restore: .draft(draft))
      }
      await clock.advance(by: .seconds(10))
      await store.receive(\.undoWindowEnded) { $0.undo = nil }
      await store.send(
        .acted(by: ana, .undoButtonTapped(seq: 2)),
        rejectedWith: .stale("That can no longer be undone."))
      await store.finish()
    }
  }

  @Test func aCancelledDraftComesBackAsItWas() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      await store.send(.acted(by: ana, .editButtonTapped)) {
        $0.destination = .edit(StandupForm.State(standup: standup))
        $0.activity = Activity(seq: 1, kind: .startedEditing, by: ana)
        $0.activityCount = 1
      }
      await store.send(
        .acted(by: ana, .destination(.presented(.edit(.binding(.set(\.$title, "Retro"))))))
      ) {
        guard case .edit(var form) = $0.destination else { return }
        form.title = "Retro"
        $0.destination = .edit(form)
      }
      let draft = store.state.destination
      await store.send(.acted(by: ben, .cancelEditButtonTapped)) {
        $0.destination = nil
        $0.activity = Activity(seq: 2, kind: .cancelledEditing, by: ben)
        $0.activityCount = 2
        guard case .edit(let form) = draft else { return }
        $0.undo = Undo(activity: $0.activity!, restore: .draft(form))
      }
      await store.send(.acted(by: ana, .undoButtonTapped(seq: 2))) {
        $0.destination = draft
        $0.undo = nil
        $0.activity = Activity(seq: 3, kind: .restoredDraft, by: ana)
        $0.activityCount = 3
      }
      await store.finish()
    }
  }

  /// Ana asks to delete and confirms, in front of people: the deletion waits for its window.
  func deleteWithUndo(_ store: TestStore<Room>, firstSeq seq: Int) async {
    await store.send(.acted(by: ana, .deleteButtonTapped)) {
      $0.destination = .alert(.confirmDeletion)
      $0.activity = Activity(seq: seq, kind: .askedToDelete, by: ana)
      $0.activityCount = seq
    }
    await store.send(.acted(by: ana, .destination(.presented(.alert(.confirmDeletion))))) {
      $0.destination = nil
      $0.activity = Activity(seq: seq + 1, kind: .deletedStandup, by: ana)
      $0.activityCount = seq + 1
      $0.undo = Undo(activity: $0.activity!, restore: .deletion)
    }
  }

  @Test func aDeletionWaitsForItsWindowAndCanBeUndone() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = makeStore(clock: clock)
      await deleteWithUndo(store, firstSeq: 1)
      // While it waits, nothing else can start.
      await store.send(
        .acted(by: ben, .startMeetingButtonTapped),
        rejectedWith: .invalidAction("This standup is being deleted: Undo keeps it."))
      await store.send(.acted(by: ben, .undoButtonTapped(seq: 2))) {
        $0.undo = nil
        $0.activity = Activity(seq: 3, kind: .restoredStandup, by: ben)
        $0.activityCount = 3
      }
      await clock.advance(by: .seconds(30))
      #expect(!store.state.isDeleted)
      // Deleted again, and nobody undoes it: the window ends, the standup goes.
      await deleteWithUndo(store, firstSeq: 4)
      await clock.advance(by: .seconds(10))
      await store.receive(\.undoWindowEnded) {
        $0.undo = nil
        $0.isDeleted = true
      }
      // What was queued behind the window's end is refused: nothing saves the standup again.
      for action in [Room.Action.editButtonTapped, .startMeetingButtonTapped, .deleteButtonTapped] {
        await store.send(
          .acted(by: ben, action), rejectedWith: .invalidAction("This standup was deleted."))
      }
      await store.finish()
    }
  }

  @Test func whenEveryoneLeavesAWaitingDeletionIsCarriedOut() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = makeStore(clock: clock)
      await deleteWithUndo(store, firstSeq: 1)
      await store.send(.participantLeft("p1")) { $0.participants.remove(id: "p1") }
      await store.send(.participantLeft("p2")) {
        $0.participants.remove(id: "p2")
        $0.undo = nil
        $0.isDeleted = true
      }
      await store.skipInFlightEffects()
    }
  }

  @Test func withNobodyInTheRoomADeletionIsImmediate() async {
    let clock = TestClock()
    let store = TestStore(initialState: Room.State(standup: .mock())) {
      Room()
    } withDependencies: {
      $0.continuousClock = clock
    }
    await store.send(.acted(by: ana, .deleteButtonTapped)) {
      $0.destination = .alert(.confirmDeletion)
      $0.activity = Activity(seq: 1, kind: .askedToDelete, by: ana)
      $0.activityCount = 1
      $0.alertAskedFromOutside = true
    }
    // Someone passing through the room leaves the question to its asker (BOTS.md).
    let ben = Participant(id: "p2", name: "Ben")
    await store.send(.participantJoined(ben)) { $0.participants = [ben] }
    await store.send(.participantLeft("p2")) { $0.participants = [] }
    await store.send(.acted(by: ana, .destination(.presented(.alert(.confirmDeletion))))) {
      $0.destination = nil
      $0.isDeleted = true
      $0.activity = Activity(seq: 2, kind: .deletedStandup, by: ana)
      $0.activityCount = 2
    }
  }

  /// Asked for by someone in the room, the question closes once the room empties: nobody is
  /// there to answer it.
  @Test func aQuestionAskedInTheRoomClosesWhenTheRoomEmpties() async {
    let clock = TestClock()
    let store = TestStore(initialState: Room.State(standup: .mock())) {
      Room()
    } withDependencies: {
      $0.continuousClock = clock
    }
    let ben = Participant(id: "p2", name: "Ben")
    await store.send(.participantJoined(ben)) { $0.participants = [ben] }
    await store.send(.acted(by: Actor(id: "p2", name: "Ben"), .deleteButtonTapped)) {
      $0.destination = .alert(.confirmDeletion)
      $0.activity = Activity(seq: 1, kind: .askedToDelete, by: Actor(id: "p2", name: "Ben"))
      $0.activityCount = 1
    }
    await store.send(.participantLeft("p2")) {
      $0.participants = []
      $0.destination = nil
    }
  }

  @Test func everyKindHasASentence() {
    for kind in Activity.Kind.allCases {
      let sentence = Activity(seq: 1, kind: kind, by: ana).sentence
      #expect(sentence.hasPrefix("Ana "), "\(kind)")
    }
  }
}
