import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

/// A note that was being typed when the meeting ended (someone pressed Save and end, or its
/// time ran out) still joins it, for a while after: nothing typed is lost to a race.
extension RecordMeetingTests {
  /// Ana's meeting, with her note, saved and ended at `start`.
  func endedMeeting(_ store: TestStore<Room>, standup: Standup) async {
    await joinAndStart(store, standup: standup, with: Participant(id: "p1", name: "Ana"))
    await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "During")))) {
      $0.meeting?.transcript = "Ana: During"
      $0.meeting?.notes = [Note(author: "Ana", text: "During", speaker: "Person 1")]
    }
    await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
      $0.meeting?.alert = .endMeeting
    }
    await store.send(.meeting(.presented(.alert(.saveAndEnd)))) {
      $0.meeting = nil
      $0.standup.meetings = [
        Meeting(
          id: UUID(0), date: Self.start, transcript: "Ana: During", present: ["Ana"],
          notes: [Note(author: "Ana", text: "During", speaker: "Person 1")])
      ]
    }
  }

  /// Ben's late note "Lost" joins Ana's ended meeting (its save will be refused).
  func benAddsLost(_ store: TestStore<Room>) async {
    await store.send(
      .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "Lost", speaker: nil)
    ) {
      $0.standup.meetings[0].transcript = "Ana: During\nBen: Lost"
      $0.standup.meetings[0].notes.append(Note(author: "Ben", text: "Lost", speaker: ""))
    }
  }

  @Test func aNoteTypedAsTheMeetingEndedJoinsItInTheHistory() async {
    await withMainSerialExecutor {
      let now = LockIsolated(Self.start)
      let standup = Standup.mock()
      let store = makeStore(standup, clock: TestClock(), now: now)
      await endedMeeting(store, standup: standup)
      now.withValue { $0 += 30 }
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: " Late ", speaker: "Person 3")
      ) {
        $0.standup.meetings[0].transcript = "Ana: During\nBen: Late"
        $0.standup.meetings[0].notes.append(Note(author: "Ben", text: "Late", speaker: "Person 3"))
      }
      // Under a speaker renamed since (no longer an attendee's name), too.
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "Too", speaker: "Robin ")
      ) {
        $0.standup.meetings[0].transcript += "\nBen: Too"
        $0.standup.meetings[0].notes.append(Note(author: "Ben", text: "Too", speaker: "Robin"))
      }
      // Ten minutes after it ended, still; without a speaker, under none.
      now.withValue { $0 = Self.start + StandupRules.lateNoteSeconds }
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Cy", text: "Last", speaker: nil)
      ) {
        $0.standup.meetings[0].transcript = "Ana: During\nBen: Late\nBen: Too\nCy: Last"
        $0.standup.meetings[0].notes.append(Note(author: "Cy", text: "Last", speaker: ""))
      }
    }
  }

  /// Said to everyone: the history it joins shows no change by itself.
  @Test func aLateNoteIsSaidToEveryone() async {
    await withMainSerialExecutor {
      let standup = Standup.mock()
      let store = makeStore(standup, clock: TestClock())
      await endedMeeting(store, standup: standup)
      let ben = Actor(id: "p2", name: "Ben")
      await store.send(
        .acted(
          by: ben,
          .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "Late", speaker: nil))
      ) {
        $0.standup.meetings[0].transcript = "Ana: During\nBen: Late"
        $0.standup.meetings[0].notes.append(Note(author: "Ben", text: "Late", speaker: ""))
        $0.activityCount = 1
        $0.activity = Activity(seq: 1, kind: .addedLateNote, by: ben)
      }
      #expect(store.state.activity?.sentence == "Ben added a note to a meeting that ended")
    }
  }

  @Test func aLateNoteIsRefusedWhenItCannotJoinTheMeeting() async {
    await withMainSerialExecutor {
      let now = LockIsolated(Self.start)
      let standup = Standup.mock()
      let store = makeStore(standup, clock: TestClock(), now: now)
      await endedMeeting(store, standup: standup)
      await store.send(
        .historyNoteSubmitted(meeting: UUID(99), author: "Ben", text: "Hi", speaker: nil),
        rejectedWith: .invalidAction(
          "That meeting is not in this standup's recent history: it was discarded, or is older."))
      await store.send(
        .historyNoteSubmitted(
          meeting: UUID(0), author: "Ben", text: "Hi", speaker: String(repeating: "x", count: 41)),
        rejectedWith: .invalidValue(
          "\"speaker\" must be an attendee's name: 1 to 40 characters of plain text."))
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "Hi", speaker: " "),
        rejectedWith: .invalidValue(
          "\"speaker\" must be an attendee's name: 1 to 40 characters of plain text."))
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "  ", speaker: nil),
        rejectedWith: .invalidValue("A note must be one line of 1 to 1000 characters."))
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "a\u{202E}b", speaker: nil),
        rejectedWith: .invalidValue("A note " + StandupRules.notPlain))
      now.withValue { $0 = Self.start + StandupRules.lateNoteSeconds + 1 }
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "Hi", speaker: nil),
        rejectedWith: .invalidAction(
          "That meeting ended more than 10 minutes ago: it takes no more notes."))
    }
  }

  /// The late note's save failed: it goes, and only it (a later one, and the meeting, stay).
  @Test func aLateNoteThatCouldNotBeSavedGoesAlone() async {
    await withMainSerialExecutor {
      let standup = Standup.mock()
      let store = makeStore(standup, clock: TestClock())
      await endedMeeting(store, standup: standup)
      let before = store.state
      await benAddsLost(store)
      let after = store.state
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Cy", text: "Kept", speaker: nil)
      ) {
        $0.standup.meetings[0].transcript = "Ana: During\nBen: Lost\nCy: Kept"
        $0.standup.meetings[0].notes.append(Note(author: "Cy", text: "Kept", speaker: ""))
      }
      await store.send(.saveFailed(before: before, after: after)) {
        $0.standup.meetings[0].transcript = "Ana: During\nCy: Kept"
        $0.standup.meetings[0].notes = [
          Note(author: "Ana", text: "During", speaker: "Person 1"),
          Note(author: "Cy", text: "Kept", speaker: ""),
        ]
      }
    }
  }

  /// Someone opened the edit form as the meeting ended, and a late note came in: saving the
  /// form keeps it (the form carries the history it opened with, not the one saved since).
  @Test func savingTheEditFormKeepsANoteThatJoinedTheMeetingMeanwhile() async {
    await withMainSerialExecutor {
      let standup = Standup.mock()
      let store = makeStore(standup, clock: TestClock())
      await endedMeeting(store, standup: standup)
      let opened = store.state.standup
      await store.send(.editButtonTapped) {
        $0.destination = .edit(StandupForm.State(standup: opened))
      }
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "Late", speaker: nil)
      ) {
        $0.standup.meetings[0].transcript = "Ana: During\nBen: Late"
        $0.standup.meetings[0].notes.append(Note(author: "Ben", text: "Late", speaker: ""))
      }
      await store.send(.destination(.presented(.edit(.binding(.set(\.$title, "Retro")))))) {
        guard case .edit(var form) = $0.destination else { return }
        form.title = "Retro"
        $0.destination = .edit(form)
      }
      await store.send(.saveEditButtonTapped) {
        $0.destination = nil
        $0.standup.title = "Retro"
      }
      #expect(store.state.standup.meetings[0].notes.map(\.text) == ["During", "Late"])
    }
  }

  /// The late note's save failed while the edit form was open: the draft, typed since, stays
  /// as it is, and so does what someone did since.
  @Test func aLateNoteRefusedWhileTheFormIsOpenLeavesTheDraftAsTyped() async {
    await withMainSerialExecutor {
      let standup = Standup.mock()
      let store = makeStore(standup, clock: TestClock())
      await endedMeeting(store, standup: standup)
      let opened = store.state.standup
      let ben = Actor(id: "p2", name: "Ben")
      await store.send(.editButtonTapped) {
        $0.destination = .edit(StandupForm.State(standup: opened))
      }
      let before = store.state
      await benAddsLost(store)
      let after = store.state
      await store.send(
        .acted(by: ben, .destination(.presented(.edit(.binding(.set(\.$title, "Retro"))))))
      ) {
        guard case .edit(var form) = $0.destination else { return }
        form.title = "Retro"
        $0.destination = .edit(form)
      }
      await store.send(.acted(by: ben, .cancelEditButtonTapped)) {
        guard case .edit(let form) = $0.destination else { return }
        $0.destination = nil
        $0.activityCount = 1
        $0.activity = Activity(seq: 1, kind: .cancelledEditing, by: ben)
        $0.undo = Undo(activity: $0.activity!, restore: .draft(form))
      }
      await store.send(.saveFailed(before: before, after: after)) {
        $0.standup.meetings[0].transcript = "Ana: During"
        $0.standup.meetings[0].notes.removeLast()
      }
      await store.send(.undoButtonTapped(seq: 1)) {
        guard case .draft(let form) = $0.undo?.restore else { return }
        $0.destination = .edit(form)
        $0.undo = nil
      }
      #expect(store.state.editForm?.title == "Retro")
    }
  }

  /// While a deletion waits for its undo window, a late note is refused (as Edit and Start
  /// are); a note refused after the deletion was carried out does not bring the standup back.
  @Test func aLateNoteAndADeletion() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      store.exhaustivity = .off
      let ana = Actor(id: "p1", name: "Ana")
      await endedMeeting(store, standup: standup)
      let before = store.state
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "Lost", speaker: nil))
      let after = store.state
      await store.send(.acted(by: ana, .deleteButtonTapped))
      await store.send(.acted(by: ana, .destination(.presented(.alert(.confirmDeletion)))))
      #expect(store.state.undo?.restore == .deletion)
      await store.send(
        .historyNoteSubmitted(meeting: UUID(0), author: "Ben", text: "Hi", speaker: nil),
        rejectedWith: .invalidAction("This standup is being deleted: Undo keeps it."))
      await clock.advance(by: .seconds(10))
      await store.receive(\.undoWindowEnded)
      #expect(store.state.isDeleted)
      await store.send(.saveFailed(before: before, after: after))
      #expect(store.state.isDeleted)
      #expect(store.state.standup.meetings[0].notes.map(\.text) == ["During"])
    }
  }

  @Test func onlyNotesDifferIsTrueForANoteAndFalseForAnythingElse() {
    var meeting = Meeting(id: UUID(0), date: Self.start, transcript: "Ana: One")
    var standup = Standup.mock()
    standup.meetings = [meeting]
    var noted = standup
    _ = noted.meetings[0].addNote("Two", author: "Ben", speaker: "")
    #expect(noted.differsOnlyInNotes(from: standup))
    #expect(standup.differsOnlyInNotes(from: standup))
    var renamed = noted
    renamed.title = "Retro"
    #expect(!renamed.differsOnlyInNotes(from: standup))
    var longer = noted
    longer.meetings[0].seconds = 9
    #expect(!longer.differsOnlyInNotes(from: standup))
    meeting.id = UUID(1)
    var another = standup
    another.addMeeting(meeting)
    #expect(!another.differsOnlyInNotes(from: standup))
  }
}
