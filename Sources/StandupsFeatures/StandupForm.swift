import CasePaths
import Dependencies
import Foundation
import IdentifiedCollections
import StoreRuntime

/// The shared edit form: one draft of the standup that everyone in the room edits live.
///
/// Fields change through bindings (`BindingReducer` first); the reducer after it checks
/// the new value and rejects it, leaving the draft as it was, if it breaks a rule. The draft
/// may hold blank names while editing; saving drops them.
public struct StandupForm: Reducer {
  public struct State: Equatable, Sendable, Encodable {
    public let id: Standup.ID
    @BindingState public var title: String
    @BindingState public var duration: Duration
    @BindingState public var theme: Theme
    @BindingState public var attendees: IdentifiedArrayOf<Attendee>
    /// Carried through unchanged: editing never touches history.
    public let meetings: IdentifiedArrayOf<Meeting>
    public let olderMeetingCount: Int

    public init(standup: Standup) {
      id = standup.id
      title = standup.title
      duration = standup.duration
      theme = standup.theme
      attendees = standup.attendees
      meetings = standup.meetings
      olderMeetingCount = standup.olderMeetingCount
    }

    /// The draft as a standup, exactly as it is now.
    public var draft: Standup {
      Standup(
        id: id, attendees: attendees, duration: duration, meetings: meetings, theme: theme,
        title: title, olderMeetingCount: olderMeetingCount)
    }

    public func encode(to encoder: any Encoder) throws { try draft.encode(to: encoder) }
  }

  @CasePathable
  public enum Action: Equatable, Sendable {
    case binding(BindingAction<State>)
    /// Someone typed in a text field: `value` is its text as they see it, `base` the draft's
    /// text it started from. Others' typing since `base` is kept (`TextMerge`).
    case typed(in: Focus, base: String, value: String)
    case addAttendeeButtonTapped
    case deleteAttendeesTapped(ids: [Attendee.ID])
  }

  @Dependency(\.uuid) var uuid

  public init() {}

  public var body: some ReducerOf<Self> {
    BindingReducer(action: \.binding)
    Reduce { state, action in
      switch action {
      case .binding(\.$title):
        return Self.checkTitle(state)

      case .binding(\.$duration):
        let seconds = Int(state.duration.components.seconds)
        return StandupRules.validateDuration(seconds: seconds).map { .reject(.invalidValue($0)) }
          ?? .none

      case .binding(\.$attendees):
        return Self.checkNames(state)

      case .binding:
        return .none

      case .typed(in: .title, let base, let value):
        let merged = TextMerge.merge(base: base, mine: value, theirs: state.title)
        if let problem = Self.tooLong(
          ("The title", "the title"), sent: value, merged: merged,
          limit: StandupRules.titleLength.upperBound)
        {
          return .reject(.invalidValue(problem))
        }
        state.title = merged
        return Self.checkTitle(state)

      case .typed(in: .attendee(let id), let base, let value):
        guard let name = state.attendees[id: id]?.name else {
          return .reject(.invalidValue("That attendee was removed from the draft."))
        }
        let merged = TextMerge.merge(base: base, mine: value, theirs: name)
        if let problem = Self.tooLong(
          ("An attendee's name", "this name"), sent: value, merged: merged,
          limit: StandupRules.nameLength.upperBound)
        {
          return .reject(.invalidValue(problem))
        }
        state.attendees[id: id]?.name = merged
        return Self.checkNames(state)

      case .addAttendeeButtonTapped:
        guard state.attendees.count < StandupRules.attendeeCount.upperBound else {
          return .reject(
            .quotaExceeded(
              "A standup has at most \(StandupRules.attendeeCount.upperBound) attendees.",
              limit: StandupRules.attendeeCount.upperBound))
        }
        state.attendees.append(Attendee(id: uuid()))
        return .none

      case .deleteAttendeesTapped(let ids):
        let remaining = state.attendees.filter { !ids.contains($0.id) }
        guard !remaining.isEmpty else {
          return .reject(.invalidAction("A standup keeps at least one attendee."))
        }
        state.attendees = remaining
        return .none
      }
    }
  }
}

extension StandupForm {
  /// A title the draft may hold (blank while editing, but not too long once trimmed, as it
  /// is saved, and plain text).
  static func checkTitle(_ state: State) -> Effect<Action> {
    let limit = StandupRules.titleLength.upperBound
    let count = state.title.trimmingCharacters(in: .whitespacesAndNewlines).count
    // NB: and the spaces around it within reason: the draft is kept and sent to everyone.
    guard count <= limit, state.title.count <= 2 * limit else {
      return .reject(
        .invalidValue(
          StandupRules.tooLong("The title", count: max(count, state.title.count), limit: limit)))
    }
    return StandupRules.isPlainText(state.title)
      ? .none : .reject(.invalidValue("The title " + StandupRules.notPlain))
  }

  /// Why typed text is too long for its field (`what`: the field as a sentence starts and
  /// within one): as sent, or once merged with others' typing; nil if it fits.
  static func tooLong(
    _ what: (start: String, within: String), sent: String, merged: String, limit: Int
  ) -> String? {
    let sentCount = sent.trimmingCharacters(in: .whitespacesAndNewlines).count
    if sentCount > limit { return StandupRules.tooLong(what.start, count: sentCount, limit: limit) }
    let count = merged.trimmingCharacters(in: .whitespacesAndNewlines).count
    guard count > limit else { return nil }
    return "With what others typed meanwhile, \(what.within) would have \(count) characters; "
      + "it holds \(limit) at most."
  }

  /// Names the draft may hold (blank while editing, but not too long, and plain text).
  static func checkNames(_ state: State) -> Effect<Action> {
    let limit = StandupRules.nameLength.upperBound
    let longest =
      state.attendees.map {
        $0.name.trimmingCharacters(in: .whitespacesAndNewlines).count
      }.max() ?? 0
    if longest > limit {
      return .reject(
        .invalidValue(StandupRules.tooLong("An attendee's name", count: longest, limit: limit)))
    }
    return state.attendees.allSatisfy({ StandupRules.isPlainText($0.name) })
      ? .none : .reject(.invalidValue("An attendee's name " + StandupRules.notPlain))
  }
}

extension IdentifiedArray where Element == Attendee, ID == Attendee.ID {
  /// An attendee's name by id, as a writable key path for bindings:
  /// `.set(\.$attendees, \.[nameOf: id], "Blob")`. Nil when no attendee has that id.
  public subscript(nameOf id: Attendee.ID) -> String? {
    get { self[id: id]?.name }
    set {
      guard let newValue, self[id: id] != nil else { return }
      self[id: id]?.name = newValue
    }
  }
}
