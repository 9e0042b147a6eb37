import CasePaths
import Dependencies
import Foundation
import IdentifiedCollections
import StoreRuntime

/// Someone (or some bot) in a room.
public struct Participant: Equatable, Identifiable, Sendable, Encodable {
  public var id: String
  public var name: String
  public var isBot: Bool
  /// The form field they are editing: `"title"`, `"attendee:{id}"`, or nil.
  public var focus: String?

  public init(id: String, name: String, isBot: Bool = false, focus: String? = nil) {
    self.id = id
    self.name = name
    self.isBot = isBot
    self.focus = focus
  }
}

/// One standup's room: its detail, who is here, and the meeting everyone shares.
public struct Room: Reducer {
  public struct State: Equatable, Sendable, Encodable {
    public var standup: Standup
    public var participants: IdentifiedArrayOf<Participant> = []
    public var destination: Destination?
    public var meeting: RecordMeeting.State?
    /// Set once deletion is confirmed; the server then removes the standup and closes the room.
    public var isDeleted = false

    public init(standup: Standup) { self.standup = standup }

    private enum CodingKeys: String, CodingKey { case standup, participants, destination, meeting }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(standup, forKey: .standup)
      try container.encode(participants, forKey: .participants)
      try container.encode(destination, forKey: .destination)
      try container.encode(meeting, forKey: .meeting)
    }
  }

  /// What the room shows on top of the detail: the shared edit form, or an alert.
  public enum Destination: Equatable, Sendable, Encodable {
    case edit(StandupForm.State)
    case alert(Alert)

    public enum Alert: String, Equatable, Sendable, Encodable { case confirmDeletion }

    private enum CodingKeys: String, CodingKey { case edit, alert }
    private enum EditKeys: String, CodingKey { case draft }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      switch self {
      case .edit(let form):
        var edit = container.nestedContainer(keyedBy: EditKeys.self, forKey: .edit)
        try edit.encode(form, forKey: .draft)
      case .alert(let alert):
        try container.encode(alert, forKey: .alert)
      }
    }
  }

  @CasePathable
  public enum Action: Equatable, Sendable {
    case participantJoined(Participant)
    case participantLeft(Participant.ID)
    case startMeetingButtonTapped
    case meeting(PresentationAction<RecordMeeting.Action>)
    case editButtonTapped
    case edit(StandupForm.Action)
    case saveEditButtonTapped
    case cancelEditButtonTapped
    case deleteButtonTapped
    case alert(AlertAction)
    /// `field`: `"title"`, `"attendee:{id}"`, or nil.
    case focusChanged(participant: Participant.ID, field: String?)

    @CasePathable
    public enum AlertAction: Equatable, Sendable {
      case confirmDeletion
      case dismissed
    }
  }

  @Dependency(\.date.now) var now
  @Dependency(\.uuid) var uuid
  /// The shared draft's reducer, its body built once.
  private let formReducer = StandupForm().core

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .participantJoined(let participant):
        state.participants.append(participant)
        return .none

      case .participantLeft(let id):
        state.participants.remove(id: id)
        guard state.participants.isEmpty else { return .none }
        // The room emptied: close what was open, and stop the clock until someone resumes.
        closeDestination(&state)
        guard state.meeting != nil else { return .none }
        return .send(.meeting(.presented(.roomEmptied)))

      case .startMeetingButtonTapped:
        guard state.meeting == nil else {
          return .reject(.invalidAction("A meeting is already running."))
        }
        if let problem = cannotOpen(state) { return .reject(problem) }
        state.meeting = RecordMeeting.State(id: uuid(), standup: state.standup)
        return .send(.meeting(.presented(.started)))

      case .meeting(.presented(.alert(.saveAndEnd))):
        if let meeting = state.meeting {
          save(meeting, transcript: meeting.transcript, into: &state)
        }
        state.meeting = nil
        return .none

      case .meeting(.presented(.alert(.discard))):
        state.meeting = nil
        return .none

      case .meeting(.presented(.delegate(.saveMeeting(let transcript)))):
        if let meeting = state.meeting {
          save(meeting, transcript: transcript, into: &state)
        }
        return .none

      case .meeting:
        return .none

      case .editButtonTapped:
        if let problem = cannotOpen(state) { return .reject(problem) }
        state.destination = .edit(StandupForm.State(standup: state.standup))
        return .none

      case .edit(let formAction):
        guard case .edit(var form) = state.destination else {
          return .reject(.invalidAction("Nothing is being edited: tap Edit first."))
        }
        let before = form.attendees
        let effect = formReducer.reduce(into: &form, action: formAction)
        if let rejection = effect.rejection { return .reject(rejection) }
        state.destination = .edit(form)
        moveFocus(from: before, to: form.attendees, in: &state)
        return effect.map(Action.edit)

      case .saveEditButtonTapped:
        guard case .edit(let form) = state.destination else {
          return .reject(.invalidAction("Nothing is being edited: tap Edit first."))
        }
        var standup = form.draft
        standup.title = standup.title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !standup.title.isEmpty else {
          return .reject(.invalidValue("A standup needs a title of 1 to 100 characters."))
        }
        standup.attendees = standup.attendees.filter {
          !$0.name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        }
        guard !standup.attendees.isEmpty else {
          return .reject(.invalidValue("A standup needs at least one attendee with a name."))
        }
        for index in standup.attendees.indices {
          standup.attendees[index].name = standup.attendees[index].name
            .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        state.standup = standup
        closeDestination(&state)
        return .none

      case .cancelEditButtonTapped:
        guard case .edit = state.destination else {
          return .reject(.invalidAction("Nothing is being edited."))
        }
        closeDestination(&state)
        return .none

      case .deleteButtonTapped:
        if let problem = cannotOpen(state) { return .reject(problem) }
        state.destination = .alert(.confirmDeletion)
        return .none

      case .alert(let alertAction):
        guard state.destination == .alert(.confirmDeletion) else {
          return .reject(.invalidAction("No alert is showing."))
        }
        closeDestination(&state)
        if alertAction == .confirmDeletion { state.isDeleted = true }
        return .none

      case .focusChanged(let participantID, let field):
        guard case .edit(let form) = state.destination else {
          return .reject(.invalidAction("Nothing is being edited."))
        }
        if let field, field != "title" {
          guard field.hasPrefix("attendee:"),
            let id = UUID(uuidString: String(field.dropFirst("attendee:".count))),
            form.attendees[id: id] != nil
          else {
            return .reject(
              .invalidValue(
                "Focus is \"title\", \"attendee:{id}\" of an attendee in the draft, or null."))
          }
        }
        state.participants[id: participantID]?.focus = field
        return .none
      }
    }
    .ifLet(\.meeting, action: \.meeting, absentMessage: "No meeting is running.") {
      RecordMeeting()
    }
  }

  /// Why the detail's Edit, Delete and Start are not possible now, if they are not.
  private func cannotOpen(_ state: State) -> Rejection? {
    if state.meeting != nil { return .invalidAction("A meeting is running: end it first.") }
    if state.destination != nil {
      return .invalidAction("Close the open form or alert first.")
    }
    return nil
  }

  private func closeDestination(_ state: inout State) {
    state.destination = nil
    for id in state.participants.ids { state.participants[id: id]?.focus = nil }
  }

  /// Participants focused on a deleted attendee move to the one now in its place (or the
  /// last), as the Standups form moves focus.
  private func moveFocus(
    from before: IdentifiedArrayOf<Attendee>, to after: IdentifiedArrayOf<Attendee>,
    in state: inout State
  ) {
    guard before.count != after.count, !after.isEmpty else { return }
    for participant in state.participants {
      guard let focus = participant.focus, focus.hasPrefix("attendee:"),
        let id = UUID(uuidString: String(focus.dropFirst("attendee:".count))),
        after[id: id] == nil, let index = before.index(id: id)
      else { continue }
      let removedBefore = before[..<index].filter { after[id: $0.id] == nil }.count
      let target = after[min(index - removedBefore, after.count - 1)]
      state.participants[id: participant.id]?.focus = "attendee:\(target.id.uuidString)"
    }
  }

  private func save(_ meeting: RecordMeeting.State, transcript: String, into state: inout State) {
    guard state.standup.meetings[id: meeting.id] == nil else { return }
    state.standup.meetings.insert(
      Meeting(id: meeting.id, date: now, transcript: transcript), at: 0)
  }
}
