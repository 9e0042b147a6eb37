import CasePaths
import Dependencies
import Foundation
import HashTreeCollections
import IdentifiedCollections
import StoreRuntime

/// The list of standups, with who is in each room right now.
public struct Lobby: Reducer {
  public struct State: Equatable, Sendable, Encodable {
    /// In creation order, without their meetings (`Standup.withoutHistory`): the lobby's
    /// size does not grow with history. A change costs what it changed (`StandupList`).
    public var standups: StandupList
    /// Who is in each room that has anyone in it.
    ///
    /// NB: a persistent hash tree, not a `Dictionary`: the store keeps the state before each
    /// action (to roll back a rejected one) and the room keeps its last published version, so
    /// every change writes to a shared value. A tree copies only the path to what changed,
    /// O(log n); a dictionary would copy every room's presence for each join.
    public var live: TreeDictionary<Standup.ID, Live> = [:]

    public init(standups: some Sequence<Standup> = [Standup]()) {
      self.standups = StandupList(standups.lazy.map(\.withoutHistory))
    }

    private enum CodingKeys: String, CodingKey { case standups }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(standups.map { Summary($0, live: live[$0.id]) }, forKey: .standups)
    }
  }

  /// What the lobby shows of a standup: no attendee names, no history.
  public struct Summary: Equatable, Encodable, Sendable {
    var id: UUID
    var title: String
    var theme: Theme
    var duration: Int
    var attendeeCount: Int
    var live: Live?

    public init(_ standup: Standup, live: Live?) {
      id = standup.id
      title = standup.title
      theme = standup.theme
      duration = Int(standup.duration.components.seconds)
      attendeeCount = standup.attendees.count
      self.live = live
    }
  }

  /// Who is in a room, and whether a meeting (paused or not) is under way.
  public struct Live: Equatable, Sendable, Codable {
    public var participants: Int
    public var meetingRunning: Bool
    /// The meeting under way is paused (everyone left, the server restarted, it moved).
    public var meetingPaused: Bool
    /// The names of who is there, in the order they came, each once.
    public var people: [String]
    public init(
      participants: Int, meetingRunning: Bool, meetingPaused: Bool = false, people: [String] = []
    ) {
      self.participants = participants
      self.meetingRunning = meetingRunning
      self.meetingPaused = meetingPaused
      self.people = people
    }

    private enum CodingKeys: String, CodingKey {
      case participants, meetingRunning, meetingPaused, people
    }

    // NB: a node of the last release leaves `meetingPaused` out of its notices (a cluster
    // upgraded one node at a time).
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      participants = try container.decode(Int.self, forKey: .participants)
      meetingRunning = try container.decode(Bool.self, forKey: .meetingRunning)
      meetingPaused = try container.decodeIfPresent(Bool.self, forKey: .meetingPaused) ?? false
      people = try container.decode([String].self, forKey: .people)
    }
  }

  /// A standup as the "New standup" form submits it, before validation.
  public struct NewStandup: Equatable, Sendable {
    public var title: String
    public var durationSeconds: Int
    public var theme: String
    public var attendeeNames: [String]
    public init(title: String, durationSeconds: Int, theme: String, attendeeNames: [String]) {
      self.title = title
      self.durationSeconds = durationSeconds
      self.theme = theme
      self.attendeeNames = attendeeNames
    }
  }

  @CasePathable
  public enum Action: Equatable, Sendable {
    case addStandupSubmitted(NewStandup)
    /// A room saved a change to its standup.
    case standupChanged(Standup)
    case standupDeleted(Standup.ID)
    /// A room's presence or meeting changed; nil when it emptied.
    case roomActivityChanged(Standup.ID, Live?)
    /// What an action added could not be saved: the standups it added go away again (and
    /// only those: others may have come since, made elsewhere).
    case saveFailed(added: [Standup.ID])
  }

  @Dependency(\.uuid) var uuid

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .addStandupSubmitted(let new):
        if let quota = StandupRules.quotaProblem(
          standups: state.standups.count, attendees: new.attendeeNames.count)
        {
          return .reject(quota)
        }
        let title = new.title.trimmingCharacters(in: .whitespacesAndNewlines)
        if let problem = StandupRules.validateTitle(title) ?? StandupRules.validateDuration(
          seconds: new.durationSeconds)
          ?? StandupRules.validateAttendeeCount(new.attendeeNames.count)
          ?? new.attendeeNames.lazy.compactMap(StandupRules.validateName).first
          ?? StandupRules.validateDistinctNames(new.attendeeNames)
        {
          return .reject(.invalidValue(problem))
        }
        guard let theme = StandupRules.theme(named: new.theme) else {
          return .reject(
            .invalidValue("Unknown theme \"\(new.theme)\": use one of \(StandupRules.themeList)."))
        }
        let standup = Standup(
          id: uuid(),
          attendees: IdentifiedArray(
            uniqueElements: new.attendeeNames.map {
              Attendee(id: uuid(), name: $0.trimmingCharacters(in: .whitespacesAndNewlines))
            }),
          duration: .seconds(new.durationSeconds), theme: theme, title: title)
        state.standups.append(standup)
        return .none

      case .standupChanged(let standup):
        state.standups[id: standup.id] = standup.withoutHistory
        return .none

      case .standupDeleted(let id):
        state.standups.remove(id: id)
        state.live[id] = nil
        return .none

      case .roomActivityChanged(let id, let live):
        guard state.standups[id: id] != nil else { return .none }
        state.live[id] = live
        return .none

      case .saveFailed(let added):
        for id in added {
          state.standups.remove(id: id)
          state.live[id] = nil
        }
        return .none
      }
    }
  }
}
