import CasePaths
import Dependencies
import Foundation
import IdentifiedCollections
import StoreRuntime

/// The field of the shared draft someone is editing. On the wire: `"title"` or
/// `"attendee:{id}"`.
public enum Focus: Hashable, Sendable, Encodable, CustomStringConvertible {
  case title
  case attendee(Attendee.ID)

  /// Reads the wire's text; nil for anything else.
  public init?(_ text: String) {
    if text == "title" {
      self = .title
    } else if text.hasPrefix("attendee:"),
      let id = UUID(uuidString: String(text.dropFirst("attendee:".count)))
    {
      self = .attendee(id)
    } else {
      return nil
    }
  }

  public var description: String {
    switch self {
    case .title: "title"
    case .attendee(let id): "attendee:\(id.uuidString)"
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}

/// Someone (or some bot) in a room.
public struct Participant: Equatable, Identifiable, Sendable, Encodable {
  public var id: String
  public var name: String
  /// The same for every connection of one sign-in (a person's tabs), and different for two
  /// people who chose one name; nil without a session (bots, an `--open` server).
  public var person: String?
  public var isBot: Bool
  /// The form field they are editing, if any.
  public var focus: Focus?

  public init(
    id: String, name: String, person: String? = nil, isBot: Bool = false, focus: Focus? = nil
  ) {
    self.id = id
    self.name = name
    self.person = person
    self.isBot = isBot
    self.focus = focus
  }

  /// The name as the room shows it where people and bots are listed together (a meeting's
  /// "present", the lobby's people): a bot's says so, as its notes are signed, "CI (bot)".
  public var shownName: String { isBot ? "\(name) (bot)" : name }
}

/// One standup's room: its detail, who is here, and the meeting everyone shares.
public struct Room: Reducer {
  public struct State: Equatable, Sendable, Encodable {
    public var standup: Standup
    public var participants: IdentifiedArrayOf<Participant> = []
    public var destination: Destination.State?
    public var meeting: RecordMeeting.State?
    /// Set once deletion is confirmed; the server then removes the standup and closes the room.
    public var isDeleted = false
    /// The last thing someone did that changed what everyone sees.
    public var activity: Activity?
    /// The last destructive change, while it can still be undone.
    public var undo: Undo?
    /// The last activity's number: it only grows, even when an activity is taken back.
    public var activityCount = 0
    /// The alert showing was asked for from outside the room (a request over HTTP, whose
    /// sender is never among the participants): the room emptying leaves it for that sender's
    /// next request to answer (BOTS.md), whoever passed through the room meanwhile.
    public var alertAskedFromOutside = false

    public init(standup: Standup) { self.standup = standup }

    /// A deletion confirmed in front of people waits for its undo window to end.
    public var deletionIsPending: Bool { undo?.restore == .deletion && !isDeleted }

    private enum CodingKeys: String, CodingKey {
      case standup, participants, destination, meeting, activity, undo
    }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(standup, forKey: .standup)
      try container.encode(participants, forKey: .participants)
      try container.encode(destination, forKey: .destination)
      try container.encode(meeting, forKey: .meeting)
      try container.encode(activity, forKey: .activity)
      try container.encode(undo?.activity, forKey: .undo)
    }
  }

  @CasePathable
  public enum Action: Equatable, Sendable {
    case participantJoined(Participant)
    case participantLeft(Participant.ID)
    /// A connection takes the place of another (a page reconnecting, `?replaces=`): the new
    /// one joins and the old one leaves in one change, so that others never see the person
    /// twice, nor the room empty.
    case participantReplaced(Participant.ID, by: Participant)
    /// The room is handed on to another server (a cluster): a running meeting pauses, and
    /// says why where it comes back.
    case roomMoving
    case startMeetingButtonTapped
    case meeting(PresentationAction<RecordMeeting.Action>)
    /// A note for a meeting that ended a moment ago (it was being typed when the meeting
    /// ended), written while `speaker` spoke (nil: not said).
    case historyNoteSubmitted(meeting: Meeting.ID, author: String, text: String, speaker: String?)
    case editButtonTapped
    /// The open form's actions (`edit.*` on the wire) and the alert's buttons (`alert.*`).
    case destination(PresentationAction<Destination.Action>)
    case saveEditButtonTapped
    case cancelEditButtonTapped
    case deleteButtonTapped
    case focusChanged(participant: Participant.ID, field: Focus?)
    /// `seq`: the activity to undo (the room's `undo`).
    case undoButtonTapped(seq: Int)
    /// A person did `action`: it is said to everyone, and may be undone for a while.
    indirect case acted(by: Actor, Action)
    case undoWindowEnded(seq: Int)
    /// A change could not be saved: `before`, the state before the action that made it,
    /// `after`, right after it. What the action did is taken back, and only that (what went on
    /// since stays); a draft or meeting it closed opens again, so that nothing typed is lost.
    case saveFailed(before: State, after: State)
  }

  public enum CancelID: Hashable, Sendable { case undoWindow }

  /// How long a destructive change can be undone (a deletion waits this long).
  public let undoWindow: Duration

  public init(undoWindow: Duration = .seconds(10)) { self.undoWindow = undoWindow }

  @Dependency(\.continuousClock) var clock

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .acted(let actor, let action):
        // NB: actions queued behind the end of an undo window that deleted the standup: none
        // may save it again.
        if state.isDeleted { return .reject(.invalidAction("This standup was deleted.")) }
        return act(action, by: actor, state: &state)
      case .undoWindowEnded(let seq):
        guard let undo = state.undo, undo.activity.seq == seq else { return .none }
        state.undo = nil
        if undo.restore == .deletion { state.isDeleted = true }
        return .none
      default:
        return roomCore.reduce(into: &state, action: action)
      }
    }
  }

  /// What a person's action does, said to everyone (`activity`), undoable if destructive.
  private func act(_ action: Action, by actor: Actor, state: inout State) -> Effect<Action> {
    // NB: most often someone ended the meeting a moment before: who, and how, is said.
    if case .meeting(.presented) = action, state.meeting == nil {
      return .reject(RoomCore.meetingOver(state))
    }
    // NB: an answer to the end alert someone else answered first (Resume) says who.
    if case .meeting(.presented(.alert)) = action, state.meeting?.alert == nil {
      return .reject(RoomCore.alertClosed(state))
    }
    let before = state
    let effect = roomCore.reduce(into: &state, action: action)
    guard effect.rejection == nil,
      let (kind, detail, restore) = Self.activity(of: action, before: before, after: state)
    else { return effect }
    state.activityCount += 1
    let activity = Activity(seq: state.activityCount, kind: kind, by: actor, detail: detail)
    state.activity = activity
    if case .deleteButtonTapped = action {
      state.alertAskedFromOutside = state.participants[id: actor.id] == nil
    }
    if let undo = state.undo, !Self.canRestore(undo, in: state) {
      // A new meeting or form took the place of what was discarded: no Undo that cannot work.
      state.undo = nil
    }
    guard let restore, !state.participants.isEmpty else { return effect }
    if restore == .deletion {
      // NB: a deletion done in front of people waits for its undo window to end.
      state.isDeleted = false
    }
    state.undo = Undo(activity: activity, restore: restore)
    let seq = activity.seq
    return .merge(
      effect,
      .run { [clock, undoWindow] send in
        try await clock.sleep(for: undoWindow)
        await send(.undoWindowEnded(seq: seq))
      }
      .cancellable(id: CancelID.undoWindow, cancelInFlight: true))
  }

  /// Whether `undo` could be carried out now (a meeting or draft needs the room free).
  static func canRestore(_ undo: Undo, in state: State) -> Bool {
    switch undo.restore {
    case .deletion: true
    case .meeting, .draft: state.meeting == nil && state.destination == nil
    }
  }

  /// Everything but attribution, its body built once.
  private let roomCore = RoomCore().core
}
