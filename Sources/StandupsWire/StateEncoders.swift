import HashTreeCollections
import IdentifiedCollections
import JSONPatch
import StandupsFeatures

/// Turns the last version's JSON into a new state's, and says how, without diffing the parts
/// it knows did not change. Every encoder here has the same contract:
/// - `json` is the encoding of `previous`; afterwards it is the encoding of `state`, and the
///   operations returned turn the one into the other (RFC 6902);
/// - when it throws, `json` is untouched.
public enum StateEncoding {
  /// Encodes `state` whole and diffs it against `json`.
  public static func whole(_ state: some Encodable, json: inout JSONValue) throws
    -> [PatchOperation]
  {
    let new = try JSONValue(encoding: state)
    let operations = JSONPatch.diff(json, new)
    json = new
    return operations
  }
}

/// Encodes a room's state for the wire, encoding and diffing only the members that changed.
///
/// A tick changes only `meeting`: the standup (with its history) is encoded again only when
/// it changed, and the members that did not change are not looked at.
public struct RoomStateEncoder: Sendable {
  public init() {}

  public func encode(_ state: Room.State, previous old: Room.State, json: inout JSONValue) throws
    -> [PatchOperation]
  {
    guard case .object(var members) = json else {
      return try StateEncoding.whole(state, json: &json)
    }
    // NB: what may throw is encoded before anything changes: an encoding that throws leaves
    // `json` as it was.
    // (`if`, not `?:`: a JSONValue is also a `nil` literal, so `c ? nil : value` is `.null`.)
    let destination: JSONValue? =
      if state.destination == old.destination {
        nil
      } else {
        try state.destination.map { try JSONValue(encoding: $0) } ?? .null
      }
    let participants: JSONValue? =
      if state.participants == old.participants {
        nil
      } else {
        try JSONValue(encoding: state.participants)
      }
    let standup: JSONValue? =
      if state.standup == old.standup { nil } else { try JSONValue(encoding: state.standup) }
    // NB: `json` lets go of its members while they change (it gets them back at the end), so
    // that they change in place: while both held them, the first change copied the object,
    // and the meeting's object in it, rehashing every key, on every tick.
    json = .null
    defer { json = .object(members) }
    var operations: [PatchOperation] = []
    /// Replaces one member in `members` and adds its patch.
    func replace(_ key: String, with value: JSONValue) {
      let path = JSONPointer(tokens: [key])
      if let oldValue = members[key] {
        operations += JSONPatch.diff(oldValue, value, at: path)
      } else {
        operations.append(.add(path: path, value: value))
      }
      members[key] = value
    }
    /// Replaces some fields of the object `member` (known to have them) and adds their patch.
    func replaceFields(_ changes: [(key: String, value: JSONValue)], of member: String) {
      // NB: taken out while it changes, so that its fields are not copied.
      guard case .object(var fields)? = members.removeValue(forKey: member) else { return }
      for (key, value) in changes {
        operations.append(.replace(path: JSONPointer(tokens: [member, key]), value: value))
        fields[key] = value
      }
      members[member] = .object(fields)
    }
    // NB: members in the order of their keys, as `JSONPatch.diff` writes them.
    if state.activity != old.activity {
      replace("activity", with: state.activity?.wireJSON ?? .null)
    }
    if let destination { replace("destination", with: destination) }
    if state.meeting != old.meeting {
      if let meeting = state.meeting, old.meeting?.id == meeting.id,
        let changes = Self.changedFields(of: meeting, comparedWith: members["meeting"])
      {
        // NB: the same meeting (a tick, a speaker, a note): only its fields that changed are
        // replaced. Building the whole object and diffing it was most of a tick's encoding.
        replaceFields(changes, of: "meeting")
      } else {
        replace("meeting", with: state.meeting?.wireJSON ?? .null)
      }
    }
    if let participants { replace("participants", with: participants) }
    if let standup { replace("standup", with: standup) }
    if state.undo?.activity != old.undo?.activity {
      replace("undo", with: state.undo?.activity.wireJSON ?? .null)
    }
    return operations
  }

  /// The fields of `meeting`'s encoding that differ from `fields`, the same meeting's (its `id`
  /// is not compared), in the order of their keys; nil if `fields` is not a meeting's encoding
  /// (then the caller encodes it whole).
  static func changedFields(
    of meeting: RecordMeeting.State, comparedWith encoded: JSONValue?
  ) -> [(key: String, value: JSONValue)]? {
    guard case .object(let fields)? = encoded, fields["id"] != nil else { return nil }
    var changes: [(key: String, value: JSONValue)] = []
    var compared = 1
    var isMeeting = true
    meeting.forEachWireField(id: false) { key, value in
      guard let old = fields[key] else {
        isMeeting = false
        return
      }
      compared += 1
      if old != value { changes.append((key, value)) }
    }
    return isMeeting && compared == fields.count ? changes : nil
  }
}

/// Encodes the lobby for the wire, costing what an action changed, not what the lobby holds.
///
/// Every join and leave in any room changes the lobby (who is in each room), and a team may
/// keep hundreds of standups: so the lobby neither encodes nor compares the summaries an
/// action did not touch.
/// - An action that names its standup (someone came or went, a standup was saved, deleted or
///   added) rebuilds that one summary and writes the patch for it: nothing else is compared,
///   and the summaries change in place (the last version's JSON is not copied).
/// - Anything else (a refused save taking back what it added) reuses the summaries whose
///   standup and presence did not change, and diffs the result.
///
/// Debug builds check every encoding and patch against a whole encoding.
public struct LobbyStateEncoder: Sendable {
  public init() {}

  /// - Parameter action: the one action that turned `previous` into `state`, if known (nil
  ///   after changes that were not published: the whole lobby is then compared).
  public func encode(
    _ state: Lobby.State, previous old: Lobby.State, json: inout JSONValue,
    after action: Lobby.Action? = nil
  ) throws -> [PatchOperation] {
    #if DEBUG
      let before = json
      let operations = try encodeUnchecked(state, previous: old, json: &json, after: action)
      assert(
        json == (try? JSONValue(encoding: state)),
        "The lobby's encoding after \(String(describing: action)) is not the whole encoding.")
      assert(
        (try? JSONPatch.apply(operations, to: before)) == json,
        "The lobby's patch after \(String(describing: action)) does not rebuild its encoding.")
      return operations
    #else
      return try encodeUnchecked(state, previous: old, json: &json, after: action)
    #endif
  }

  private func encodeUnchecked(
    _ state: Lobby.State, previous old: Lobby.State, json: inout JSONValue,
    after action: Lobby.Action?
  ) throws -> [PatchOperation] {
    guard Self.summaryCount(json) == old.standups.count else {
      return try StateEncoding.whole(state, json: &json)
    }
    if let action, let change = try Self.change(after: action, state, old) {
      return Self.apply(change, to: &json)
    }
    let reused = try Self.reusingUnchanged(state, old, json["standups"]?.arrayValue ?? [])
    let new = JSONValue.object(["standups": .array(reused)])
    let operations = JSONPatch.diff(json, new)
    json = new
    return operations
  }

  /// What an action did to the list of summaries.
  enum Change {
    case nothing
    case replace(index: Int, summary: JSONValue)
    case remove(index: Int)
    case append(summary: JSONValue)
  }

  private static let standupsPath = JSONPointer(tokens: ["standups"])

  /// What `action` changed, found from the action alone: only the summary it names is built.
  /// Nil when the action names no single summary, or the lobby is not the shape the action
  /// leaves (then the whole lobby is looked at).
  static func change(after action: Lobby.Action, _ state: Lobby.State, _ old: Lobby.State)
    throws -> Change?
  {
    switch action {
    case .roomActivityChanged(let id, _):
      return try summaryChange(of: id, state, old)
    case .standupChanged(let standup):
      return try summaryChange(of: standup.id, state, old)
    case .standupDeleted(let id):
      guard let index = old.standups.index(id: id), state.standups[id: id] == nil,
        state.standups.count == old.standups.count - 1
      else { return nil }
      return .remove(index: index)
    case .addStandupSubmitted:
      guard state.standups.count == old.standups.count + 1, let added = state.standups.last,
        old.standups[id: added.id] == nil
      else { return nil }
      return .append(
        summary: try JSONValue(encoding: Lobby.Summary(added, live: state.live[added.id])))
    case .saveFailed:
      return nil
    }
  }

  /// The summary of one standup that kept its place, built again.
  private static func summaryChange(of id: Standup.ID, _ state: Lobby.State, _ old: Lobby.State)
    throws -> Change?
  {
    guard state.standups.count == old.standups.count else { return nil }
    guard let index = state.standups.index(id: id) else {
      // A room the lobby does not list: the lobby ignores it.
      return old.standups.index(id: id) == nil ? .nothing : nil
    }
    guard old.standups.index(id: id) == index else { return nil }
    return .replace(
      index: index,
      summary: try JSONValue(encoding: Lobby.Summary(state.standups[index], live: state.live[id])))
  }

  /// Applies `change` to the summaries in `json`, in place, and returns its patch.
  static func apply(_ change: Change, to json: inout JSONValue) -> [PatchOperation] {
    if case .nothing = change { return [] }
    // NB: taken out of `json` so that this is their only owner: changing one summary then
    // copies neither the members nor the list of summaries.
    guard case .object(var members) = json else { return [] }
    json = .null
    guard case .array(var summaries)? = members.removeValue(forKey: "standups") else {
      json = .object(members)
      return []
    }
    let operations: [PatchOperation]
    switch change {
    case .nothing:
      operations = []
    case .replace(let index, let summary):
      operations = JSONPatch.diff(summaries[index], summary, at: standupsPath.appending(index))
      summaries[index] = summary
    case .remove(let index):
      summaries.remove(at: index)
      operations = [.remove(path: standupsPath.appending(index))]
    case .append(let summary):
      summaries.append(summary)
      operations = [.add(path: standupsPath.appending(summaries.count - 1), value: summary)]
    }
    members["standups"] = .array(summaries)
    json = .object(members)
    return operations
  }

  /// How many summaries `json` holds (nil: not a lobby's shape).
  ///
  /// NB: a function of its own so that nothing else holds the list of summaries while they
  /// change in place.
  private static func summaryCount(_ json: JSONValue) -> Int? {
    json["standups"]?.arrayValue?.count
  }

  /// Every summary, reusing the encoding of those whose standup and presence are unchanged.
  static func reusingUnchanged(
    _ state: Lobby.State, _ old: Lobby.State, _ summaries: [JSONValue]
  ) throws -> [JSONValue] {
    // NB: where each standup was, found once (finding each by a scan would be O(n²)).
    let oldIndex = Dictionary(
      old.standups.ids.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    return try state.standups.map { standup in
      let summary = Lobby.Summary(standup, live: state.live[standup.id])
      if let index = oldIndex[standup.id],
        Lobby.Summary(old.standups[index], live: old.live[standup.id]) == summary
      {
        return summaries[index]
      }
      return try JSONValue(encoding: summary)
    }
  }
}
