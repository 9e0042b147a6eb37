import CasePaths
import Dependencies
import Foundation
import IdentifiedCollections
import StoreRuntime

/// A room's logic, whoever acts.
struct RoomCore: Reducer {
  typealias State = Room.State
  typealias Action = Room.Action
  typealias Destination = Room.Destination

  @Dependency(\.date.now) var now
  @Dependency(\.uuid) var uuid

  var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .acted, .undoWindowEnded:
        return .none

      case .saveFailed(let before, let after):
        // The standup as saved, if the action changed it — with the meetings that ended into
        // it since (saved on their own).
        if after.standup != before.standup, after.standup.differsOnlyInNotes(from: before.standup) {
          // A note added to a meeting that had ended: it goes, and only it.
          for meeting in after.standup.meetings {
            guard let was = before.standup.meetings[id: meeting.id], was != meeting else {
              continue
            }
            state.standup.meetings[id: meeting.id]?.takeBackNotes(addedFrom: was, to: meeting)
          }
        } else if after.standup != before.standup {
          var standup = before.standup
          for meeting in state.standup.meetings.reversed()
          where after.standup.meetings[id: meeting.id] == nil {
            standup.addMeeting(meeting)
          }
          state.standup = standup
        }
        // A deletion the action confirmed is not carried out; one that came since (its undo
        // window ended) stands.
        if after.isDeleted != before.isDeleted, state.isDeleted == after.isDeleted {
          state.isDeleted = before.isDeleted
        }
        // What was said of the refused action is taken back with it (its number stays
        // used: clients show each number once); what others did since stays said. An undo it
        // made or used goes: its window no longer runs.
        if after.activity != before.activity, state.activity == after.activity {
          state.activity = nil
        }
        if after.undo != before.undo, state.undo == after.undo { state.undo = nil }
        // A draft the action opened, changed or closed is as it was before it: its change
        // was not saved either. (One it left alone stays as it is now.)
        switch (before.destination, state.destination) {
        case (.edit, .edit), (.edit, nil), (nil, .edit):
          guard after.destination != before.destination else { break }
          state.destination = before.destination
          Self.keepFocus(inDraftOf: &state)
        default:
          break
        }
        // The meeting as it was: ended again if the action started it, back (its alert up)
        // if the action ended it, its speaker, notes and question as they were otherwise —
        // with what went on since kept (its clock, others' notes, a pause; its end).
        let wasOn = state.meeting != nil
        state.meeting = RecordMeeting.State.restoring(
          before.meeting, undoing: after.meeting, since: state.meeting)
        // A note it added to a meeting that ended since (its time ran out meanwhile) goes from
        // the saved meeting too: its sender was told it was not taken, and would send it again.
        // (So does one in a meeting discarded since, from the copy Undo would bring back.)
        if let was = before.meeting, let added = after.meeting, was.id == added.id,
          state.meeting?.id != added.id
        {
          state.standup.meetings[id: added.id]?.takeBackNotes(addedFrom: was, to: added)
          if case .meeting(var discarded)? = state.undo?.restore, discarded.id == added.id {
            discarded.takeBackNotes(addedFrom: was, to: added)
            state.undo?.restore = .meeting(discarded)
          }
        }
        return state.meeting != nil && !wasOn ? .send(.meeting(.presented(.started))) : .none

      case .undoButtonTapped(let seq):
        guard let undo = state.undo, undo.activity.seq == seq else {
          return .reject(.stale("That can no longer be undone."))
        }
        switch undo.restore {
        case .deletion:
          state.undo = nil
          return .cancel(id: Room.CancelID.undoWindow)
        case .meeting(var meeting):
          if let problem = cannotOpen(state) { return .reject(problem) }
          meeting.alert = nil
          // NB: who came while it was gone is in it now: `present` is everyone who was there
          // while it ran.
          for participant in state.participants {
            meeting.notePresent(participant, here: state.participants)
          }
          state.meeting = meeting
          state.undo = nil
          return .merge(
            .cancel(id: Room.CancelID.undoWindow), .send(.meeting(.presented(.started))))
        case .draft(let form):
          if let problem = cannotOpen(state) { return .reject(problem) }
          state.destination = .edit(form)
          state.undo = nil
          return .cancel(id: Room.CancelID.undoWindow)
        }
      case .participantJoined(let participant):
        return join(participant, into: &state)

      case .participantLeft(let id):
        return leave(id, from: &state)

      case .participantReplaced(let id, let participant):
        // NB: joined first: between the two the room is never empty (a meeting would pause).
        return .merge(join(participant, into: &state), leave(id, from: &state))

      case .roomMoving:
        guard state.meeting != nil else { return .none }
        return .send(.meeting(.presented(.roomMoving)))

      case .startMeetingButtonTapped:
        guard state.meeting == nil else {
          return .reject(meetingRunning(state, otherwise: "A meeting is already running."))
        }
        if let problem = cannotOpen(state) { return .reject(problem) }
        guard state.standup.meetingCount < StandupRules.meetingsPerStandup else {
          return .reject(
            .quotaExceeded(
              "This standup has \(StandupRules.meetingsPerStandup) meetings, the most it keeps: "
                + "download its history and start a new standup.",
              limit: StandupRules.meetingsPerStandup))
        }
        state.meeting = RecordMeeting.State(id: uuid(), standup: state.standup)
        state.meeting?.present = state.participants.reduce(into: []) { names, person in
          if !names.contains(person.shownName) { names.append(person.shownName) }
        }
        for participant in state.participants {
          guard let person = participant.person else { continue }
          state.meeting?.presentBy[participant.shownName, default: []].insert(person)
        }
        return .send(.meeting(.presented(.started)))

      case .meeting(.presented(.alert(.saveAndEnd))), .meeting(.presented(.delegate(.timeIsUp))):
        if let meeting = state.meeting {
          save(meeting, into: &state)
        }
        state.meeting = nil
        return .none

      case .meeting(.presented(.alert(.discard))):
        state.meeting = nil
        return .none

      case .meeting:
        return .none

      case .historyNoteSubmitted(let id, let author, let text, let speaker):
        guard var meeting = state.standup.meetings[id: id] else {
          return .reject(
            .invalidAction(
              "That meeting is not in this standup's recent history: it was discarded, or is older."
            ))
        }
        guard now.timeIntervalSince(meeting.date) <= StandupRules.lateNoteSeconds else {
          return .reject(
            .invalidAction(
              "That meeting ended more than \(Int(StandupRules.lateNoteSeconds) / 60) minutes ago: "
                + "it takes no more notes."))
        }
        if state.undo?.restore == .deletion {
          return .reject(.invalidAction("This standup is being deleted: Undo keeps it."))
        }
        // NB: any name an attendee could have: the one whose turn it was may have been renamed
        // since the meeting ended.
        if let speaker, StandupRules.validateName(speaker) != nil {
          return .reject(
            .invalidValue(
              "\"speaker\" must be an attendee's name: 1 to 40 characters of plain text."))
        }
        let under = speaker?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if let problem = meeting.addNote(text, author: author, speaker: under) {
          return .reject(problem)
        }
        state.standup.meetings[id: id] = meeting
        return .none

      case .editButtonTapped:
        if let problem = cannotOpen(state, theForm: true) { return .reject(problem) }
        state.destination = .edit(StandupForm.State(standup: state.standup))
        return .none

      case .destination(.presented(.edit)):
        // NB: the form changed the draft (`Destination`); focus follows it (`onChange` below).
        return .none

      case .saveEditButtonTapped:
        guard case .edit(let form) = state.destination else { return .reject(formNotOpen(state)) }
        var standup = form.draft
        // NB: the history as it is now, not as the form opened: a note may have joined a
        // meeting that had just ended.
        standup.meetings = state.standup.meetings
        standup.olderMeetingCount = state.standup.olderMeetingCount
        standup.title = standup.title.trimmingCharacters(in: .whitespacesAndNewlines)
        // NB: each refusal names the field to fix, so that the page can take the person there.
        if let problem = StandupRules.validateTitle(standup.title) {
          return .reject(.invalidValue(problem, field: Focus.title.description))
        }
        let blankFirst = standup.attendees.first.map { Focus.attendee($0.id).description }
        standup.attendees = standup.attendees.filter {
          !$0.name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        }
        guard !standup.attendees.isEmpty else {
          return .reject(
            .invalidValue("A standup needs at least one attendee with a name.", field: blankFirst))
        }
        for index in standup.attendees.indices {
          standup.attendees[index].name = standup.attendees[index].name
            .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if let repeated = StandupRules.repeatedName(standup.attendees.map(\.name)) {
          let attendee = standup.attendees[repeated]
          return .reject(
            .invalidValue(
              StandupRules.nameTaken(attendee.name),
              field: Focus.attendee(attendee.id).description))
        }
        state.standup = standup
        closeDestination(&state)
        return .none

      case .cancelEditButtonTapped:
        guard case .edit = state.destination else { return .reject(formNotOpen(state)) }
        closeDestination(&state)
        return .none

      case .deleteButtonTapped:
        if let problem = cannotOpen(state) { return .reject(problem) }
        state.destination = .alert(.confirmDeletion)
        return .none

      case .destination(.presented(.alert(let alertAction))):
        guard state.destination == .alert(.confirmDeletion) else {
          return .reject(.invalidAction(Destination.absentMessage(.alert(alertAction))))
        }
        closeDestination(&state)
        if alertAction == .confirmDeletion { state.isDeleted = true }
        return .none

      case .destination(.dismiss):
        closeDestination(&state)
        return .none

      case .focusChanged(let participantID, let field):
        guard case .edit(let form) = state.destination else { return .reject(formNotOpen(state)) }
        if case .attendee(let id)? = field, form.attendees[id: id] == nil {
          return .reject(
            .invalidValue("That attendee is not in the draft: it was removed."))
        }
        state.participants[id: participantID]?.focus = field
        return .none
      }
    }
    .ifLet(\.destination, action: \.destination, absentMessage: Destination.absentMessage) {
      Destination()
    }
    // NB: a closure, not the key path `\.destination?.edit?.attendees`: it is read twice on
    // every action the room takes (each tick), and a key path through an enum's case is
    // looked up at run time.
    .onChange(of: { Self.editedAttendees($0) }) { before, after in
      Reduce { state, _ in
        if let before, let after { Self.moveFocus(from: before, to: after, in: &state) }
        return .none
      }
    }
    .ifLet(\.meeting, action: \.meeting, absentMessage: "No meeting is running.") {
      RecordMeeting()
    }
  }

  /// The attendees of the form being edited, if one is.
  static func editedAttendees(_ state: State) -> IdentifiedArrayOf<Attendee>? {
    guard case .edit(let form)? = state.destination else { return nil }
    return form.attendees
  }

  /// Why the detail's Edit (`theForm`), Delete and Start are not possible now, if they are not.
  private func cannotOpen(_ state: State, theForm: Bool = false) -> Rejection? {
    if state.undo?.restore == .deletion {
      return .invalidAction("This standup is being deleted: Undo keeps it.")
    }
    if state.meeting != nil {
      return meetingRunning(state, otherwise: "A meeting is running: end it first.")
    }
    // NB: most often two people pressed at once: say who got there first.
    let last = state.activity
    switch state.destination {
    case .edit:
      // NB: "edit together" answers only an Edit: a Start or a Delete waits for the form.
      guard last?.kind == .startedEditing else {
        return .invalidAction("The edit form is open: save or cancel it first.")
      }
      let name = last?.by.name ?? "Someone"
      return .invalidAction(
        theForm
          ? "\(name) opened the edit form: it is open for everyone, edit together."
          : "\(name) opened the edit form: save or cancel it first.")
    case .alert:
      return .invalidAction(
        "\(last?.kind == .askedToDelete ? last?.by.name ?? "Someone" : "Someone") asked to delete this standup: keep it or delete it first."
      )
    case nil:
      return nil
    }
  }

  /// Focus stays only on a field of the open draft.
  private static func keepFocus(inDraftOf state: inout State) {
    let attendees = state.editForm?.attendees
    for participant in state.participants {
      let stays =
        switch participant.focus {
        case nil: true
        case .title: attendees != nil
        case .attendee(let id): attendees?[id: id] != nil
        }
      if !stays { state.participants[id: participant.id]?.focus = nil }
    }
  }

  func closeDestination(_ state: inout State) {
    state.destination = nil
    for id in state.participants.ids { state.participants[id: id]?.focus = nil }
  }

  /// Participants focused on a deleted attendee move to the one now in its place (or the
  /// last), as the Standups form moves focus.
  private static func moveFocus(
    from before: IdentifiedArrayOf<Attendee>, to after: IdentifiedArrayOf<Attendee>,
    in state: inout State
  ) {
    guard before.count != after.count, !after.isEmpty else { return }
    for participant in state.participants {
      guard case .attendee(let id)? = participant.focus, after[id: id] == nil,
        let index = before.index(id: id)
      else { continue }
      let removedBefore = before[..<index].filter { after[id: $0.id] == nil }.count
      let target = after[min(index - removedBefore, after.count - 1)]
      state.participants[id: participant.id]?.focus = .attendee(target.id)
    }
  }

  private func save(_ meeting: RecordMeeting.State, into state: inout State) {
    guard state.standup.meetings[id: meeting.id] == nil else { return }
    state.standup.addMeeting(
      Meeting(
        id: meeting.id, date: now, transcript: meeting.transcript, seconds: meeting.secondsRun,
        present: meeting.presentPeople, notes: meeting.notes))
  }
}
