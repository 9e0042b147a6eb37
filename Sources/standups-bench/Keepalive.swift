import ArgumentParser
import Foundation
import Synchronization
import WebSocketTransport

/// What the idle-keepalive run measured at one number of connections.
struct KeepaliveResult {
  var connections: Int
  var seconds: Double
  var cpuSeconds: Double
  var cpuPercent: Double { cpuSeconds / seconds * 100 }
  /// The server pings a connection after this long a silence (`StandupsServer`'s setting).
  static let pingAfterSeconds = 15.0
  /// Each connection is pinged once per 15 s of silence (the client answers at once).
  var pings: Double { Double(connections) * seconds / Self.pingAfterSeconds }
  var microsecondsPerPing: Double { cpuSeconds / pings * 1e6 }
  /// What the same server spends over the same window with no connection at all (its ticker,
  /// its clock and storage threads).
  var idleCPUSeconds = 0.0
  /// CPU per ping once the idle server's own cost is taken out: what each connection adds.
  var microsecondsPerPingAboveIdle: Double { (cpuSeconds - idleCPUSeconds) / pings * 1e6 }
}

enum Keepalive {
  /// A server with no connections first (its own cost), then each size.
  static func runAll(binary: String, sizes: [Int], seconds: Int) async throws
    -> [KeepaliveResult]
  {
    progress("keepalive: a server with no connections for \(seconds) s")
    let idle = try await run(binary: binary, connections: 0, seconds: seconds)
    var runs: [KeepaliveResult] = []
    for connections in sizes {
      progress("keepalive: \(connections) idle connections for \(seconds) s")
      var result = try await run(binary: binary, connections: connections, seconds: seconds)
      result.idleCPUSeconds = idle.cpuSeconds / idle.seconds * result.seconds
      runs.append(result)
    }
    return runs
  }

  /// `connections` lobby connections that say nothing for `seconds` (three keepalive
  /// intervals or more): all the server does is ping them and read their pongs.
  static func run(binary: String, connections count: Int, seconds: Int) async throws
    -> KeepaliveResult
  {
    let server = try ServerProcess(binary: binary)
    defer { server.stop() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let welcomed = Counter()
    let dropped = Counter()
    var connections = try await client.connectAll(
      port: server.port,
      (0..<count).map { index in
        (
          "/ws/lobby?name=idle\(index)", nil,
          { @Sendable event in
            switch event {
            case .text: welcomed.increment()
            case .closed: dropped.increment()
            }
          }
        )
      })
    while welcomed.value < count { try await Task.sleep(for: .milliseconds(50)) }
    progress("  \(count) idle connections open; measuring for \(seconds) s")
    let cpuBefore = server.cpuSeconds
    let start = ContinuousClock.now
    try await Task.sleep(for: .seconds(seconds))
    let elapsed = (ContinuousClock.now - start).seconds
    let cpu = server.cpuSeconds - cpuBefore
    let lost = dropped.value
    for connection in connections { connection.close() }
    connections.removeAll()
    guard lost == 0 else {
      throw BenchError(
        "\(lost) of \(count) idle connections were dropped during the keepalive run.")
    }
    return KeepaliveResult(connections: count, seconds: elapsed, cpuSeconds: cpu)
  }

  static func report(_ runs: [KeepaliveResult]) -> String {
    let rows = runs.map { run in
      "| \(run.connections) | \(String(format: "%.0f", run.seconds)) s | \(String(format: "%.2f", run.cpuSeconds)) s "
        + "| \(String(format: "%.2f", run.cpuPercent)) % | \(String(format: "%.1f", run.microsecondsPerPing)) µs "
        + "| \(String(format: "%.1f", run.microsecondsPerPingAboveIdle)) µs |"
    }
    return """
      ## Idle connections and keepalive

      Lobby connections that say nothing; the server pings each after 15 s of silence and the
      client (libwebsockets) answers. Measured over at least three keepalive intervals, so
      every ping wave is in. CPU per ping is the server's CPU over the window divided by
      connections × window / 15 s; "above idle" first takes out what the same server spends
      over the same window with no connection at all (\(String(format: "%.2f", (runs.first?.idleCPUSeconds ?? 0))) s here).

      | connections | window | server CPU | of one core | CPU per ping | above idle |
      | --- | --- | --- | --- | --- | --- |
      \(rows.joined(separator: "\n"))

      """
  }
}

/// A thread-safe count.
final class Counter: Sendable {
  private let count = Mutex(0)
  func increment() { count.withLock { $0 += 1 } }
  var value: Int { count.withLock { $0 } }
}

struct BenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
