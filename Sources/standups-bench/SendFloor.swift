import Foundation
import StoreRuntime

/// The floor under the many-rooms scenario's CPU: what a bare C sender (`standups-send-floor`,
/// built beside the bench) pays for the same traffic on this machine — the ticks' frames,
/// one `send` per delivery, and the keepalive's pings and pongs — with no WebSocket library
/// and no state. Its sending thread's exact run time, almost all of it the kernel's send path
/// and, on loopback, the receiving side's TCP work, which runs in the sender's context.
struct SendFloorResult {
  /// The program's Markdown table.
  var table: String
  /// The sender's CPU in % of one core.
  var percent: Double? { IndependentResult.cells(table)?[5].leadingNumber }
}

enum SendFloor {
  /// Nil if the program is not next to the bench (`swift build -c release` builds it) or fails.
  /// With `handoff` timer threads, each tick is timed on one of them and handed to the sender,
  /// as the server's shards hand their frames to the transport.
  static func run(rooms: Int, peers: Int, seconds: Int, handoff: Int = 0) -> SendFloorResult? {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0])
      .deletingLastPathComponent().appendingPathComponent("standups-send-floor").path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
      progress("the kernel's floor: no \(binary); skipped")
      return nil
    }
    let threads = handoff == 1 ? "1 timer thread" : "\(handoff) timer threads"
    progress(
      "the kernel's floor: bare sends of the many-rooms traffic for \(seconds) s"
        + (handoff > 0 ? ", ticks handed over by \(threads)" : ""))
    let arguments =
      ["--rooms", "\(rooms)", "--peers", "\(peers)", "--seconds", "\(seconds)"]
      + (handoff > 0 ? ["--handoff", "\(handoff)"] : [])
    return Independent.output(of: binary, arguments).map(SendFloorResult.init(table:))
  }

  /// As many timer threads as the server has shards by default.
  static var serverShards: Int { Shard.defaultCount }

  static func report(_ result: SendFloorResult?, handedOver: SendFloorResult?) -> String {
    // NB: one table: the hand-off run's row under the plain run's.
    let handedOverRow = handedOver?.table.split(separator: "\n").last(where: { $0.hasPrefix("| ") })
    let table = [result?.table, handedOverRow.map(String.init)].compactMap { $0 }
      .joined(separator: "\n")
    return """
      ## The kernel's floor under the many-rooms CPU

      A bare sender in C (`Sources/standups-send-floor`), with no WebSocket library and no
      state, holds as many loopback connections and sends what the server must: a 97-byte frame
      to each room's peers once a second, the rooms spread over the second as the meetings'
      ticks are, and a ping to every connection every 15 s in the same `send` as one of its
      ticks, right behind it, as the server writes them, reading the pongs. A second process
      reads everything on one thread, as the bench's client does. The sending thread's exact run
      time (`/proc/thread-self/schedstat`) is almost all the kernel's: the TCP send path and, on
      loopback, the receiving side's TCP work and wake-ups, which run in the sender's context.
      Any server pays it on this machine for these deliveries; what the many-rooms server uses
      above it is its own work. In the second row (`--handoff`) the ticks are timed by as many
      threads as the server has shards, each waking on its own timer and handing the tick to
      the sender through a queue and an eventfd, as the shards hand their frames to the
      transport: the floor of a server that keeps rooms off the thread that sends, with no
      room work at all. Its CPU counts every thread.

      \(table.isEmpty ? "Not run: `standups-send-floor` was not built." : table)

      """
  }
}
