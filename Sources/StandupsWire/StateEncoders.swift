import IdentifiedCollections
import JSONPatch
import StandupsFeatures

/// Encodes a room's state for the wire, reusing what did not change since the last version.
///
/// A tick changes only `meeting`: the standup (with its history) is encoded again only when
/// it changed, and the unchanged parts are the very values of the last version, so diffing
/// them against it is an identity check.
public struct RoomStateEncoder: Sendable {
  public init() {}

  public func encode(_ state: Room.State, previous: (state: Room.State, json: JSONValue)) throws
    -> JSONValue
  {
    guard case .object(var members) = previous.json else { return try JSONValue(encoding: state) }
    let old = previous.state
    if state.standup != old.standup { members["standup"] = try JSONValue(encoding: state.standup) }
    if state.participants != old.participants {
      members["participants"] = try JSONValue(encoding: state.participants)
    }
    if state.destination != old.destination {
      members["destination"] = try state.destination.map { try JSONValue(encoding: $0) } ?? .null
    }
    if state.meeting != old.meeting {
      members["meeting"] = try state.meeting.map { try JSONValue(encoding: $0) } ?? .null
    }
    if state.activity != old.activity {
      members["activity"] = try state.activity.map { try JSONValue(encoding: $0) } ?? .null
    }
    if state.undo?.activity != old.undo?.activity {
      members["undo"] = try state.undo.map { try JSONValue(encoding: $0.activity) } ?? .null
    }
    return .object(members)
  }
}

/// Encodes the lobby for the wire, reusing the summaries of the standups that did not change.
///
/// Every join and leave in any room changes the lobby (who is in each room), so with many
/// rooms the lobby must not encode every standup again for each. When only presence changed
/// — the standups are the very values of the last version — it looks only at the rooms'
/// presence and encodes the summaries whose presence changed: no summary of a quiet room is
/// built or compared.
public struct LobbyStateEncoder: Sendable {
  public init() {}

  public func encode(_ state: Lobby.State, previous: (state: Lobby.State, json: JSONValue)) throws
    -> JSONValue
  {
    guard case .object(var members) = previous.json,
      case .array(var summaries)? = members["standups"],
      summaries.count == previous.state.standups.count
    else { return try JSONValue(encoding: state) }
    let old = previous.state
    if state.standups == old.standups {
      for id in Self.changedKeys(state.live, old.live) {
        guard let index = state.standups.index(id: id) else { continue }
        summaries[index] = try JSONValue(
          encoding: Lobby.Summary(state.standups[index], live: state.live[id]))
      }
    } else {
      let oldSummaries = summaries
      summaries = try state.standups.map { standup in
        let summary = Lobby.Summary(standup, live: state.live[standup.id])
        if let index = old.standups.index(id: standup.id),
          Lobby.Summary(old.standups[index], live: old.live[standup.id]) == summary
        {
          return oldSummaries[index]
        }
        return try JSONValue(encoding: summary)
      }
    }
    members["standups"] = .array(summaries)
    return .object(members)
  }

  /// The rooms whose presence is not what it was (came, went, or changed).
  static func changedKeys(
    _ new: [Standup.ID: Lobby.Live], _ old: [Standup.ID: Lobby.Live]
  ) -> [Standup.ID] {
    var changed = new.compactMap { id, live in old[id] == live ? nil : id }
    for id in old.keys where new[id] == nil { changed.append(id) }
    return changed
  }
}
