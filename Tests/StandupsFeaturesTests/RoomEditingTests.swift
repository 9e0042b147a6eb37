import CasePathsCore
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

@MainActor
@Suite(.serialized)
struct RoomEditingTests {
  let ana = Participant(id: "p1", name: "Ana")
  let ben = Participant(id: "p2", name: "Ben")

  func makeStore(_ standup: Standup = .mock()) -> TestStore<Room> {
    var state = Room.State(standup: standup)
    state.participants = [ana, ben]
    return TestStore(initialState: state) {
      Room()
    } withDependencies: {
      $0.uuid = .incrementing
    }
  }

  /// Opens the form on `standup` and types `title` into it.
  func openFormAndType(_ title: String, in store: TestStore<Room>, standup: Standup) async {
    await store.send(.editButtonTapped) {
      $0.destination = .edit(StandupForm.State(standup: standup))
    }
    await store.send(.destination(.presented(.edit(.binding(.set(\.$title, title)))))) {
      guard case .edit(var form) = $0.destination else { return }
      form.title = title
      $0.destination = .edit(form)
    }
  }

  @Test func editingASharedDraftAndSavingIt() async {
    let standup = Standup.mock()
    let store = makeStore(standup)
    await store.send(.editButtonTapped) {
      $0.destination = .edit(StandupForm.State(standup: standup))
    }
    await store.send(.focusChanged(participant: "p1", field: .title)) {
      $0.participants[0].focus = .title
    }
    await store.send(.destination(.presented(.edit(.binding(.set(\.$title, "Design sync")))))) {
      guard case .edit(var form) = $0.destination else { return }
      form.title = "Design sync"
      $0.destination = .edit(form)
    }
    await store.send(.destination(.presented(.edit(.binding(.set(\.$duration, .seconds(600))))))) {
      guard case .edit(var form) = $0.destination else { return }
      form.duration = .seconds(600)
      $0.destination = .edit(form)
    }
    let second = standup.attendees[1].id
    await store.send(
      .destination(.presented(.edit(.binding(.set(\.$attendees, \.[nameOf: second], "Robin")))))
    ) {
      guard case .edit(var form) = $0.destination else { return }
      form.attendees[id: second]?.name = "Robin"
      $0.destination = .edit(form)
    }
    await store.send(.destination(.presented(.edit(.addAttendeeButtonTapped)))) {
      guard case .edit(var form) = $0.destination else { return }
      form.attendees.append(Attendee(id: UUID(0)))
      $0.destination = .edit(form)
    }
    // Saving drops the blank attendee, commits the draft and clears everyone's focus.
    await store.send(.saveEditButtonTapped) {
      $0.destination = nil
      $0.participants[0].focus = nil
      $0.standup.title = "Design sync"
      $0.standup.duration = .seconds(600)
      $0.standup.attendees[id: second]?.name = "Robin"
    }
  }

  @Test func badValuesAreRejectedAndLeaveTheDraftAsItWas() async {
    let standup = Standup.mock()
    let store = makeStore(standup)
    await store.send(.editButtonTapped) {
      $0.destination = .edit(StandupForm.State(standup: standup))
    }
    await store.send(
      .destination(.presented(.edit(.binding(.set(\.$title, String(repeating: "x", count: 101)))))),
      rejectedWith: .invalidValue("The title has 101 characters; it holds 100 at most."))
    // NB: counted as it is saved, trimmed.
    let padded = "  " + String(repeating: "x", count: 100) + "  "
    await store.send(.destination(.presented(.edit(.binding(.set(\.$title, padded)))))) {
      var form = StandupForm.State(standup: standup)
      form.title = padded
      $0.destination = .edit(form)
    }
    await store.send(.destination(.presented(.edit(.binding(.set(\.$title, standup.title)))))) {
      $0.destination = .edit(StandupForm.State(standup: standup))
    }
    // …but not spaces without end around it: the draft is kept and sent to everyone.
    let spaces = String(repeating: " ", count: 150)
    await store.send(
      .destination(.presented(.edit(.binding(.set(\.$title, spaces + "Design" + spaces))))),
      rejectedWith: .invalidValue("The title has 306 characters; it holds 100 at most."))
    await store.send(
      .destination(.presented(.edit(.binding(.set(\.$title, "Design\r\nReview"))))),
      rejectedWith: .invalidValue(
        "The title cannot contain control characters (such as line breaks), invisible marks (such as direction marks), or more than 15 marks stacked on one character."
      ))
    await store.send(
      .destination(.presented(.edit(.binding(.set(\.$duration, .seconds(330)))))),
      rejectedWith: .invalidValue(
        "The duration must be 5 to 30 whole minutes (300 to 1800 seconds, in steps of 60)."))
    await store.send(
      .destination(
        .presented(
          .edit(
            .binding(
              .set(
                \.$attendees, \.[nameOf: standup.attendees[0].id], String(repeating: "n", count: 41)
              )
            )))),
      rejectedWith: .invalidValue("An attendee's name has 41 characters; it holds 40 at most."))
    await store.send(
      .destination(.presented(.edit(.binding(.set(\.$attendees, \.[nameOf: UUID(999)], "Ghost"))))),
      rejectedWith: .invalidValue("That field is not in the form: it was removed, or never was."))
    await store.send(
      .focusChanged(participant: "p1", field: .attendee(UUID(999))),
      rejectedWith: .invalidValue("That attendee is not in the draft: it was removed."))
    await store.send(
      .destination(.presented(.edit(.deleteAttendeesTapped(ids: standup.attendees.map(\.id))))),
      rejectedWith: .invalidAction("A standup keeps at least one attendee."))
    await store.send(
      .startMeetingButtonTapped,
      rejectedWith: .invalidAction("The edit form is open: save or cancel it first."))
    await store.send(.cancelEditButtonTapped) { $0.destination = nil }
    await store.send(
      .destination(.presented(.edit(.addAttendeeButtonTapped))),
      rejectedWith: .invalidAction("Nothing is being edited: tap Edit first."))
  }

  /// Two people pressing the same button at once: the second is told who was first, not a
  /// rule ("close the form first") that reads as their own mistake.
  @Test func whoeverPressesSecondIsToldWhoWasFirst() async {
    let standup = Standup.mock()
    let store = makeStore(standup)
    let anaActor = Actor(id: "p1", name: "Ana")
    let benActor = Actor(id: "p2", name: "Ben")
    await store.send(.acted(by: anaActor, .editButtonTapped)) {
      $0.destination = .edit(StandupForm.State(standup: standup))
      $0.activity = Activity(seq: 1, kind: .startedEditing, by: anaActor)
      $0.activityCount = 1
    }
    await store.send(
      .acted(by: benActor, .editButtonTapped),
      rejectedWith: .invalidAction(
        "Ana opened the edit form: it is open for everyone, edit together."))
    // A Start or a Delete (a bot's, or pressed as the form opened) waits for the form.
    await store.send(
      .acted(by: benActor, .deleteButtonTapped),
      rejectedWith: .invalidAction("Ana opened the edit form: save or cancel it first."))
    await store.send(
      .acted(by: benActor, .startMeetingButtonTapped),
      rejectedWith: .invalidAction("Ana opened the edit form: save or cancel it first."))
    await store.send(.acted(by: anaActor, .saveEditButtonTapped)) {
      $0.destination = nil
      $0.activity = Activity(seq: 2, kind: .savedChanges, by: anaActor)
      $0.activityCount = 2
    }
    await store.send(
      .acted(by: benActor, .saveEditButtonTapped),
      rejectedWith: .invalidAction("Ana saved the changes: the form is closed."))
    await store.send(
      .acted(by: benActor, .cancelEditButtonTapped),
      rejectedWith: .invalidAction("Ana saved the changes: the form is closed."))
    await store.send(.acted(by: anaActor, .deleteButtonTapped)) {
      $0.destination = .alert(.confirmDeletion)
      $0.activity = Activity(seq: 3, kind: .askedToDelete, by: anaActor)
      $0.activityCount = 3
    }
    await store.send(
      .acted(by: benActor, .editButtonTapped),
      rejectedWith: .invalidAction("Ana asked to delete this standup: keep it or delete it first."))
  }

  @Test func deletingAttendeesMovesFocusToTheNearestOne() async {
    let standup = Standup.mock(attendees: 4)
    let ids = standup.attendees.map(\.id)
    let store = makeStore(standup)
    await store.send(.editButtonTapped) {
      $0.destination = .edit(StandupForm.State(standup: standup))
    }
    await store.send(.focusChanged(participant: "p1", field: .attendee(ids[1]))) {
      $0.participants[0].focus = .attendee(ids[1])
    }
    await store.send(.focusChanged(participant: "p2", field: .attendee(ids[3]))) {
      $0.participants[1].focus = .attendee(ids[3])
    }
    await store.send(
      .destination(.presented(.edit(.deleteAttendeesTapped(ids: [ids[1], ids[3]]))))
    ) {
      guard case .edit(var form) = $0.destination else { return }
      form.attendees = [standup.attendees[0], standup.attendees[2]]
      $0.destination = .edit(form)
      // Ana was on the second: the third moved into its place. Ben was on the last: now the last.
      $0.participants[0].focus = .attendee(ids[2])
      $0.participants[1].focus = .attendee(ids[2])
    }
    await store.send(.cancelEditButtonTapped) {
      $0.destination = nil
      $0.participants[0].focus = nil
      $0.participants[1].focus = nil
    }
  }

  @Test func deleteNeedsConfirmation() async {
    let store = makeStore()
    await store.send(.deleteButtonTapped) { $0.destination = .alert(.confirmDeletion) }
    await store.send(.destination(.presented(.alert(.dismissed)))) { $0.destination = nil }
    await store.send(
      .destination(.presented(.alert(.confirmDeletion))),
      rejectedWith: .invalidAction("No alert is showing."))
    await store.send(.deleteButtonTapped) { $0.destination = .alert(.confirmDeletion) }
    await store.send(.destination(.presented(.alert(.confirmDeletion)))) {
      $0.destination = nil
      $0.isDeleted = true
    }
  }

  @Test func savingWithNoNamedAttendeesOrNoTitleIsRejected() async {
    let standup = Standup.mock(attendees: 1)
    let store = makeStore(standup)
    await store.send(.editButtonTapped) {
      $0.destination = .edit(StandupForm.State(standup: standup))
    }
    await store.send(
      .destination(
        .presented(.edit(.binding(.set(\.$attendees, \.[nameOf: standup.attendees[0].id], "  ")))))
    ) {
      guard case .edit(var form) = $0.destination else { return }
      form.attendees[0].name = "  "
      $0.destination = .edit(form)
    }
    await store.send(
      .saveEditButtonTapped,
      rejectedWith: .invalidValue(
        "A standup needs at least one attendee with a name.",
        field: "attendee:\(standup.attendees[0].id.uuidString)"))
    await store.send(.destination(.presented(.edit(.binding(.set(\.$title, " ")))))) {
      guard case .edit(var form) = $0.destination else { return }
      form.title = " "
      $0.destination = .edit(form)
    }
    await store.send(
      .saveEditButtonTapped,
      rejectedWith: .invalidValue("A standup needs a title.", field: "title"))
  }

  @Test func savingTwoAttendeesOfOneNameIsRejectedAtTheSecond() async {
    let standup = Standup.mock(attendees: 3)
    let store = makeStore(standup)
    await store.send(.editButtonTapped) {
      $0.destination = .edit(StandupForm.State(standup: standup))
    }
    let first = standup.attendees[0].name
    let second = standup.attendees[1].id
    await store.send(
      .destination(.presented(.edit(.binding(.set(\.$attendees, \.[nameOf: second], first)))))
    ) {
      guard case .edit(var form) = $0.destination else { return }
      form.attendees[id: second]?.name = first
      $0.destination = .edit(form)
    }
    await store.send(
      .saveEditButtonTapped,
      rejectedWith: .invalidValue(
        "Two attendees are called \"\(first)\": give each a name of their own.",
        field: "attendee:\(second.uuidString)"))
  }

  @Test func aSaveThatFailedPutsTheStandupBackAndReopensTheDraft() async {
    let standup = Standup.mock()
    let store = makeStore(standup)
    await openFormAndType("Retro", in: store, standup: standup)
    let before = store.state
    await store.send(.acted(by: Actor(id: "p1", name: "Ana"), .saveEditButtonTapped)) {
      $0.destination = nil
      $0.standup.title = "Retro"
      $0.activity = Activity(seq: 1, kind: .savedChanges, by: Actor(id: "p1", name: "Ana"))
      $0.activityCount = 1
    }
    // What was said of it is taken back too.
    await store.send(.saveFailed(before: before, after: store.state)) {
      $0.standup.title = "Design"
      $0.destination = before.destination
      $0.activity = nil
    }
  }

  @Test func aDraftChangeThatCouldNotBeSavedIsTakenBackAndFocusFollowsTheDraft() async {
    let standup = Standup.mock()
    let store = makeStore(standup)
    let opened = store.state
    await store.send(.editButtonTapped) {
      $0.destination = .edit(StandupForm.State(standup: standup))
    }
    let saved = store.state
    await store.send(.destination(.presented(.edit(.addAttendeeButtonTapped)))) {
      guard case .edit(var form) = $0.destination else { return }
      form.attendees.append(Attendee(id: UUID(0)))
      $0.destination = .edit(form)
    }
    await store.send(.focusChanged(participant: "p1", field: .attendee(UUID(0)))) {
      $0.participants[0].focus = .attendee(UUID(0))
    }
    await store.send(.focusChanged(participant: "p2", field: .title)) {
      $0.participants[1].focus = .title
    }
    // The new attendee was not saved: it goes, and Ana's focus on it with it.
    await store.send(.saveFailed(before: saved, after: store.state)) {
      $0.destination = saved.destination
      $0.participants[0].focus = nil
    }
    // Opening the form was not saved either: it closes, and nobody is focused on it.
    await store.send(.saveFailed(before: opened, after: store.state)) {
      $0.destination = nil
      $0.participants[1].focus = nil
    }
  }

  @Test func whenEveryoneLeavesTheDraftStaysOpenButAnAlertCloses() async {
    let standup = Standup.mock()
    let store = makeStore(standup)
    await openFormAndType("Retro", in: store, standup: standup)
    await store.send(.focusChanged(participant: "p1", field: .title)) {
      $0.participants[0].focus = .title
    }
    await store.send(.participantLeft("p1")) { $0.participants.remove(id: "p1") }
    // The draft is there for whoever comes back (the server saves it).
    await store.send(.participantLeft("p2")) { $0.participants = [] }
    await store.send(.participantJoined(ana)) { $0.participants = [ana] }
    await store.send(.cancelEditButtonTapped) { $0.destination = nil }
    await store.send(.deleteButtonTapped) { $0.destination = .alert(.confirmDeletion) }
    await store.send(.participantLeft("p1")) {
      $0.participants = []
      $0.destination = nil
    }
  }

  @Test func savingTheFormKeepsTheCountOfOlderMeetings() async {
    var standup = Standup.mock()
    standup.olderMeetingCount = 7
    let store = makeStore(standup)
    await openFormAndType("Retro", in: store, standup: standup)
    await store.send(.saveEditButtonTapped) {
      $0.destination = nil
      $0.standup.title = "Retro"
    }
    #expect(store.state.standup.olderMeetingCount == 7)
  }

  @Test func aStandupKeepsAtMost5000Meetings() async {
    var standup = Standup.mock()
    standup.olderMeetingCount = StandupRules.meetingsPerStandup
    let store = makeStore(standup)
    await store.send(
      .startMeetingButtonTapped,
      rejectedWith: .quotaExceeded(
        "This standup has 5000 meetings, the most it keeps: download its history and start a new standup.",
        limit: 5000))
  }
}
