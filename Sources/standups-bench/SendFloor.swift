import Foundation

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
  static func run(rooms: Int, peers: Int, seconds: Int) -> SendFloorResult? {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0])
      .deletingLastPathComponent().appendingPathComponent("standups-send-floor").path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
      progress("the kernel's floor: no \(binary); skipped")
      return nil
    }
    progress("the kernel's floor: bare sends of the many-rooms traffic for \(seconds) s")
    let arguments = ["--rooms", "\(rooms)", "--peers", "\(peers)", "--seconds", "\(seconds)"]
    return Independent.output(of: binary, arguments).map(SendFloorResult.init(table:))
  }

  static func report(_ result: SendFloorResult?) -> String {
    """
    ## The kernel's floor under the many-rooms CPU

    A bare sender in C (`Sources/standups-send-floor`), with no WebSocket library and no
    state, holds as many loopback connections and sends what the server must: a 97-byte frame
    to each room's peers once a second, the rooms spread over the second as the meetings'
    ticks are, and a ping to every connection every 15 s, reading the pongs. A second process
    reads everything on one thread, as the bench's client does. The sending thread's exact run
    time (`/proc/thread-self/schedstat`) is almost all the kernel's: the TCP send path and, on
    loopback, the receiving side's TCP work and wake-ups, which run in the sender's context.
    Any server pays it on this machine for these deliveries; what the many-rooms server uses
    above it is its own work.

    \(result?.table ?? "Not run: `standups-send-floor` was not built.")

    """
  }
}
