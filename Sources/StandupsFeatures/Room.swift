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
    case edit(draft: Standup)
    case alert(Alert)

    public enum Alert: String, Equatable, Sendable, Encodable { case confirmDeletion }

    private enum CodingKeys: String, CodingKey { case edit, alert }
    private enum EditKeys: String, CodingKey { case draft }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      switch self {
      case .edit(let draft):
        var edit = container.nestedContainer(keyedBy: EditKeys.self, forKey: .edit)
        try edit.encode(draft, forKey: .draft)
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
  }

  @Dependency(\.date.now) var now
  @Dependency(\.uuid) var uuid

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
        state.destination = nil
        guard state.meeting != nil else { return .none }
        return .send(.meeting(.presented(.roomEmptied)))

      case .startMeetingButtonTapped:
        guard state.meeting == nil else {
          return .reject(.invalidAction("A meeting is already running."))
        }
        guard state.destination == nil else {
          return .reject(.invalidAction("Close the open form or alert before starting a meeting."))
        }
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
      }
    }
    .ifLet(\.meeting, action: \.meeting, absentMessage: "No meeting is running.") {
      RecordMeeting()
    }
  }

  private func save(_ meeting: RecordMeeting.State, transcript: String, into state: inout State) {
    guard state.standup.meetings[id: meeting.id] == nil else { return }
    state.standup.meetings.insert(
      Meeting(id: meeting.id, date: now, transcript: transcript), at: 0)
  }
}
