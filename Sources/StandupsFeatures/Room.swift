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
  public var isBot: Bool
  /// The form field they are editing, if any.
  public var focus: Focus?

  public init(id: String, name: String, isBot: Bool = false, focus: Focus? = nil) {
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
    /// The last thing someone did that changed what everyone sees.
    public var activity: Activity?
    /// The last destructive change, while it can still be undone.
    public var undo: Undo?
    /// The last activity's number: it only grows, even when an activity is taken back.
    public var activityCount = 0

    public init(standup: Standup) { self.standup = standup }

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
    case focusChanged(participant: Participant.ID, field: Focus?)
    /// `seq`: the activity to undo (the room's `undo`).
    case undoButtonTapped(seq: Int)
    /// A person did `action`: it is said to everyone, and may be undone for a while.
    indirect case acted(by: Actor, Action)
    case undoWindowEnded(seq: Int)
    /// What an action changed could not be saved (`before`: the room before it): the standup
    /// goes back to what is saved, and a draft or meeting the action closed opens again, so
    /// that nothing typed is lost.
    case saveFailed(before: State)

    @CasePathable
    public enum AlertAction: Equatable, Sendable {
      case confirmDeletion
      case dismissed
    }
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
        return act(action, by: actor, state: &state)
      case .undoWindowEnded(let seq):
        guard let undo = state.undo, undo.activity.seq == seq else { return .none }
        state.undo = nil
        if undo.restore == .deletion { state.isDeleted = true }
        return .none
      default:
        return core.reduce(into: &state, action: action)
      }
    }
  }

  /// What a person's action does, said to everyone (`activity`), undoable if destructive.
  private func act(_ action: Action, by actor: Actor, state: inout State) -> Effect<Action> {
    let before = state
    let effect = core.reduce(into: &state, action: action)
    guard effect.rejection == nil,
      let (kind, detail, restore) = Self.activity(of: action, before: before, after: state)
    else { return effect }
    state.activityCount += 1
    let activity = Activity(seq: state.activityCount, kind: kind, by: actor, detail: detail)
    state.activity = activity
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
  private let core = RoomCore().core
}

/// A room's logic, whoever acts.
struct RoomCore: Reducer {
  typealias State = Room.State
  typealias Action = Room.Action
  typealias Destination = Room.Destination

  @Dependency(\.date.now) var now
  @Dependency(\.uuid) var uuid
  /// The shared draft's reducer, its body built once.
  private let formReducer = StandupForm().core

  var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .acted, .undoWindowEnded:
        return .none

      case .saveFailed(let before):
        state.standup = before.standup
        state.isDeleted = before.isDeleted
        // What was said of the refused action is taken back with it (its number stays
        // used: clients show each number once). An undo it made or used goes: its window
        // no longer runs.
        if state.activity != before.activity { state.activity = nil }
        if state.undo != before.undo { state.undo = nil }
        if case .edit = before.destination, state.destination == nil {
          state.destination = before.destination
        }
        // The meeting as it was: ended again if the action started it, back (its alert up)
        // if the action ended it, its speaker, notes and question as they were otherwise.
        let started = before.meeting != nil && state.meeting == nil
        state.meeting = before.meeting
        return started ? .send(.meeting(.presented(.started))) : .none

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
        state.participants.append(participant)
        if let present = state.meeting?.present, !present.contains(participant.name) {
          state.meeting?.present.append(participant.name)
        }
        return .none

      case .participantLeft(let id):
        state.participants.remove(id: id)
        guard state.participants.isEmpty else { return .none }
        // The room emptied: close what was open, and stop the clock until someone resumes.
        closeDestination(&state)
        // Nobody is left to undo: a deletion waiting for its window is carried out.
        if state.undo?.restore == .deletion { state.isDeleted = true }
        state.undo = nil
        guard state.meeting != nil else { return .none }
        return .send(.meeting(.presented(.roomEmptied)))

      case .startMeetingButtonTapped:
        guard state.meeting == nil else {
          return .reject(.invalidAction("A meeting is already running."))
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
          if !names.contains(person.name) { names.append(person.name) }
        }
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
        if case .attendee(let id)? = field, form.attendees[id: id] == nil {
          return .reject(
            .invalidValue("That attendee is not in the draft: it was removed."))
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
    if state.undo?.restore == .deletion {
      return .invalidAction("This standup is being deleted: Undo keeps it.")
    }
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
      guard case .attendee(let id)? = participant.focus, after[id: id] == nil,
        let index = before.index(id: id)
      else { continue }
      let removedBefore = before[..<index].filter { after[id: $0.id] == nil }.count
      let target = after[min(index - removedBefore, after.count - 1)]
      state.participants[id: participant.id]?.focus = .attendee(target.id)
    }
  }

  private func save(_ meeting: RecordMeeting.State, transcript: String, into state: inout State) {
    guard state.standup.meetings[id: meeting.id] == nil else { return }
    state.standup.addMeeting(
      Meeting(
        id: meeting.id, date: now, transcript: transcript, seconds: meeting.secondsRun,
        present: meeting.present, notes: meeting.notes))
  }
}
