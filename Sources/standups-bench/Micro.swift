import Foundation
import JSONPatch
import StandupsFeatures
import StandupsServer
import StandupsWire
import StoreRuntime

/// What one tick of a large room costs the server, without the network.
struct MicroResult {
  var microsecondsPerTick: Double
  /// The tick's RFC 6902 document (`ops`).
  var patchBytes: Int
  var snapshotBytes: Int
}

enum Micro {
  /// A standup with 50 attendees and 100 meetings of history, its meeting running: the
  /// room's reducer handles a tick, then what the server does with the new state — encode
  /// the members that changed and diff them against the last version (`RoomStateEncoder`),
  /// write the patch message (`ServerMessage.patch`).
  static func run() -> MicroResult {
    var standup = Standup(id: UUID(), duration: .seconds(1800), theme: .orange, title: "Big")
    for index in 0..<50 { standup.attendees.append(Attendee(id: UUID(), name: "Person \(index)")) }
    for index in 0..<100 {
      standup.meetings.append(
        Meeting(
          id: UUID(), date: Date(),
          transcript: "Person \(index): a note about the work\nPerson 2: another"))
    }
    let initial = {
      var state = Room.State(standup: standup)
      state.meeting = RecordMeeting.State(id: UUID(), standup: standup)
      return state
    }()
    // NB: as the store runs it: the body built once.
    let room = Room().core
    let encoder = RoomStateEncoder()
    let initialJSON = try! JSONValue(encoding: initial)
    var patchBytes = 0
    var snapshotBytes = 0
    /// One meeting's first `ticks` ticks; returns the time per tick.
    func meeting(ticks: Int) -> Double {
      var state = initial
      var previous = state
      var json = initialJSON
      let start = ContinuousClock.now
      var operations: [PatchOperation] = []
      for tick in 0..<ticks {
        _ = room.reduce(into: &state, action: .meeting(.presented(.timerTick)))
        operations = try! encoder.encode(state, previous: previous, json: &json)
        // NB: the message the room sends, written as the server writes it.
        _ = ServerMessage.patch(version: tick, operations: operations)
        previous = state
      }
      let elapsed = ContinuousClock.now - start
      precondition(state.meeting?.secondsElapsed == ticks, "Every tick should have counted.")
      patchBytes = JSONValue.array(operations.map(\.json)).encoded.count
      snapshotBytes = json.encoded.count
      return elapsed.seconds * 1e6 / Double(ticks)
    }
    // A warm-up meeting, then the median of 15 (fewer ticks than the meeting's 1 800
    // seconds: every one is an ordinary tick).
    _ = meeting(ticks: 500)
    let perTick = (0..<15).map { _ in meeting(ticks: 500) }.sorted()[7]
    return MicroResult(
      microsecondsPerTick: perTick, patchBytes: patchBytes, snapshotBytes: snapshotBytes)
  }

  static func report(_ result: MicroResult) -> String {
    """
    ## Micro: one tick of a large room

    A standup with 50 attendees and 100 meetings of history, its meeting running: the room's
    reducer handles a tick, then the server encodes the members that changed and diffs them
    against the last version (`RoomStateEncoder`), and writes the patch message as it is
    sent (`ServerMessage.patch`). The median of 15 meetings of 500 ticks, after one to warm
    up, in the bench process.

    | measure | value |
    | --- | --- |
    | reduce + encode + diff + patch message, per tick | \(String(format: "%.1f", result.microsecondsPerTick)) µs |
    | the tick's JSON Patch (`ops`) | \(result.patchBytes) bytes, vs \(result.snapshotBytes) bytes for the whole state |

    """
  }
}
