import Foundation
import JSONPatch
import StandupsFeatures
import StandupsServer
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
  /// what changed (`RoomStateEncoder`), diff against the last version, encode the patch.
  static func run() -> MicroResult {
    var standup = Standup(id: UUID(), duration: .seconds(1800), theme: .orange, title: "Big")
    for index in 0..<50 { standup.attendees.append(Attendee(id: UUID(), name: "Person \(index)")) }
    for index in 0..<100 {
      standup.meetings.append(
        Meeting(id: UUID(), date: Date(), transcript: "Person \(index): a note about the work\nPerson 2: another"))
    }
    var state = Room.State(standup: standup)
    state.meeting = RecordMeeting.State(id: UUID(), standup: standup)
    let room = Room()
    let encoder = RoomStateEncoder()
    var previous = (state: state, json: try! JSONValue(encoding: state))
    // Fewer ticks than the meeting's 1 800 seconds: every one is an ordinary tick.
    let iterations = 1500
    var patchBytes = 0
    let start = ContinuousClock.now
    for _ in 0..<iterations {
      _ = room.reduce(into: &state, action: .meeting(.presented(.timerTick)))
      let json = try! encoder.encode(state, previous: previous)
      let operations = JSONPatch.diff(previous.json, json)
      patchBytes = JSONValue.array(operations.map(\.json)).encoded.count
      previous = (state, json)
    }
    let elapsed = ContinuousClock.now - start
    precondition(state.meeting?.secondsElapsed == iterations, "Every tick should have counted.")
    return MicroResult(
      microsecondsPerTick: elapsed.seconds * 1e6 / Double(iterations), patchBytes: patchBytes,
      snapshotBytes: previous.json.encoded.count)
  }

  static func report(_ result: MicroResult) -> String {
    """
    ## Micro: one tick of a large room

    A standup with 50 attendees and 100 meetings of history, its meeting running: the room's
    reducer handles a tick, then the server encodes what changed (`RoomStateEncoder`, reusing
    the unchanged parts of the last version), diffs against the last version and encodes the
    patch. 1 500 ticks in a row, in the bench process.

    | measure | value |
    | --- | --- |
    | reduce + encode + diff + encode patch, per tick | \(String(format: "%.1f", result.microsecondsPerTick)) µs |
    | the tick's JSON Patch (`ops`) | \(result.patchBytes) bytes, vs \(result.snapshotBytes) bytes for the whole state |

    """
  }
}
