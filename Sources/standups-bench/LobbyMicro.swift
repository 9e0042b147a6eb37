import Foundation
import HashTreeCollections
import JSONPatch
import StandupsFeatures
import StandupsWire
import StoreRuntime

/// What one change to the lobby costs the server as the lobby grows, without the network:
/// the lobby's reducer, then `LobbyStateEncoder` turning the last version's JSON into the new
/// one and writing the patch, as a room publishes.
struct LobbyMicroResult {
  struct Row {
    var standups: Int
    var liveRooms: Int
    /// Someone joins or leaves a room (presence changes).
    var microsecondsPerJoin: Double
    /// A standup's title changes.
    var microsecondsPerEdit: Double
  }
  var rows: [Row]
}

enum LobbyMicro {
  static func run(sizes: [Int] = [100, 500, 5_000]) -> LobbyMicroResult {
    LobbyMicroResult(rows: sizes.map(measure))
  }

  /// `standups` standups of 5 attendees, every other one with people in its room.
  private static func measure(standups count: Int) -> LobbyMicroResult.Row {
    var state = Lobby.State()
    for index in 0..<count {
      var standup = Standup(
        id: UUID(), duration: .seconds(900), theme: .orange, title: "Standup \(index)")
      for person in 0..<5 { standup.attendees.append(Attendee(id: UUID(), name: "P\(person)")) }
      state.standups.append(standup)
      if index.isMultiple(of: 2) {
        state.live[standup.id] = Lobby.Live(participants: 3, meetingRunning: false, people: ["A"])
      }
    }
    // NB: as the store runs it: the body built once.
    let lobby = Lobby().core
    let encoder = LobbyStateEncoder()
    var previous = state
    var json = (try? JSONValue(encoding: state)) ?? .null
    let liveAtStart = state.live.count
    let originals = Array(state.standups)
    let ids = originals.map(\.id)

    /// Numbers every change of the run, so that no change repeats an earlier one.
    var serial = 0
    /// The median time of 7 runs of `changes` actions, after one run to warm up.
    func time(_ changes: Int, _ action: (Int) -> Lobby.Action) -> Double {
      func once() -> Double {
        let start = ContinuousClock.now
        for _ in 0..<changes {
          serial += 1
          let action = action(serial)
          _ = lobby.reduce(into: &state, action: action)
          // NB: as a room publishes: the last version's JSON becomes the new one in place.
          let operations =
            (try? encoder.encode(state, previous: previous, json: &json, after: action)) ?? []
          precondition(!operations.isEmpty, "Every change should change the lobby.")
          previous = state
        }
        return (ContinuousClock.now - start).seconds * 1e6 / Double(changes)
      }
      _ = once()
      return (0..<7).map { _ in once() }.sorted()[3]
    }
    let join = time(2_000) { change in
      // Every action changes one room's presence (its count is new each time).
      .roomActivityChanged(
        ids[(change * 7919) % ids.count],
        Lobby.Live(participants: change, meetingRunning: false, people: ["A"]))
    }
    let edit = time(500) { change in
      var standup = originals[(change * 7919) % ids.count]
      standup.title = "Renamed \(change)"
      return .standupChanged(standup)
    }
    return .init(
      standups: count, liveRooms: liveAtStart, microsecondsPerJoin: join,
      microsecondsPerEdit: edit)
  }

  static func report(_ result: LobbyMicroResult) -> String {
    let rows = result.rows.map { row in
      "| \(row.standups) | \(row.liveRooms) | \(String(format: "%.1f", row.microsecondsPerJoin)) µs | \(String(format: "%.1f", row.microsecondsPerEdit)) µs |"
    }
    return """
      ## Micro: one change to a growing lobby

      The lobby's reducer, then `LobbyStateEncoder`, which rebuilds only the summary the
      action names and writes its patch into the last version's JSON in place, as a room
      publishes, in the bench process: someone joins or leaves a room (its presence
      changes), or a standup is renamed. Standups of 5
      attendees, every other room with people in it at the start; the median of 7 runs after
      one to warm up. A team may keep at most 500 standups (docs/PROTOCOL.md, "Quotas").

      | standups | rooms with people at the start | a join or leave | a rename |
      | --- | --- | --- | --- |
      \(rows.joined(separator: "\n"))

      """
  }
}
