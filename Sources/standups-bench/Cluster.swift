import ArgumentParser
import Foundation

/// HAProxy with the project's own deploy/haproxy.cfg, in front of the given nodes.
final class ProxyProcess {
  let process = Process()
  let port: Int

  init(nodes: [Int]) throws {
    port = try MirrorProcess.freePort()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
    process.arguments = ["-db", "-f", "deploy/haproxy.cfg"]
    // NB: the file names a node B and C only if their variables are set.
    var environment = ProcessInfo.processInfo.environment.filter {
      !$0.key.hasPrefix("STANDUPS_NODE_")
    }
    environment["STANDUPS_PROXY_BIND"] = "127.0.0.1:\(port)"
    for (name, node) in zip(["A", "B", "C"], nodes) {
      environment["STANDUPS_NODE_\(name)"] = "127.0.0.1:\(node)"
    }
    process.environment = environment
    process.standardError = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    // Up once it answers, and its first health checks have passed.
    for _ in 0..<100 {
      Thread.sleep(forTimeInterval: 0.1)
      if Self.healthy(port) { return }
    }
    stop()
    throw ValidationError("HAProxy did not start on port \(port) (is it installed?)")
  }

  static func healthy(_ port: Int) -> Bool {
    guard let url = URL(string: "http://127.0.0.1:\(port)/healthz"),
      let text = try? String(contentsOf: url, encoding: .utf8)
    else { return false }
    return text == "ok"
  }

  var cpuSeconds: Double { ProcessStats.cpuSeconds(process.processIdentifier) }

  func stop() {
    process.terminate()
    process.waitUntilExit()
  }
}

/// The same fan-out straight to a node and through HAProxy, taking turns.
struct ProxyRun {
  var peers: Int
  var load: Load
  var direct: FanOutResult
  var proxied: FanOutResult

  static func run(binary: String, peers: Int, load: Load, seconds: Int, rounds: Int) async throws
    -> ProxyRun
  {
    var direct: [FanOutResult] = []
    var proxied: [FanOutResult] = []
    for _ in 0..<rounds {
      direct.append(
        try await FanOut.standups(binary: binary, peers: peers, load: load, seconds: seconds))
      proxied.append(
        try await FanOut.standups(
          binary: binary, peers: peers, load: load, seconds: seconds, proxied: true))
      progress(
        "  direct: \(Int(direct.last!.rate)) deliveries/s, p99 \(ms(direct.last!.latencies, 0.99)) ms; "
          + "through HAProxy: \(Int(proxied.last!.rate)) deliveries/s, p99 \(ms(proxied.last!.latencies, 0.99)) ms"
      )
    }
    return ProxyRun(peers: peers, load: load, direct: .pooled(direct), proxied: .pooled(proxied))
  }

  static func report(_ runs: [ProxyRun]) -> String {
    var lines = [
      "## Through HAProxy",
      "",
      "The fan-out above (one room, one sender, every other client reading), once straight to a",
      "node and once through HAProxy with `deploy/haproxy.cfg` in front of it, taking turns. CPU",
      "is the node's and HAProxy's, per 1 000 delivered frames; the ratio is through / direct.",
      "",
      "| Peers | Load | Path | Deliveries/s | p50 ms | p99 ms | Node CPU ms/1 000 | HAProxy CPU ms/1 000 |",
      "|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for run in runs {
      for (path, result) in [("direct", run.direct), ("HAProxy", run.proxied)] {
        lines.append(
          "| \(run.peers) | \(run.load) | \(path) | \(Int(result.rate)) | \(ms(result.latencies, 0.5)) | "
            + "\(ms(result.latencies, 0.99)) | \(String(format: "%.2f", result.cpuPerThousand)) | "
            + "\(String(format: "%.2f", result.proxyCPUSeconds / Double(max(result.deliveries, 1)) * 1e6)) |"
        )
      }
      let directCost = run.direct.cpuPerThousand
      let proxiedCost =
        run.proxied.cpuPerThousand + run.proxied.proxyCPUSeconds
        / Double(max(run.proxied.deliveries, 1)) * 1e6
      lines.append(
        "| | | **ratio** | \(String(format: "%.2f", run.proxied.rate / max(run.direct.rate, 1))) | "
          + "\(ratio(run.proxied.latencies, run.direct.latencies, 0.5)) | "
          + "\(ratio(run.proxied.latencies, run.direct.latencies, 0.99)) | "
          + "\(String(format: "%.2f", proxiedCost / max(directCost, 0.001))) (node + proxy) | |")
    }
    return lines.joined(separator: "\n")
  }

  private static func ratio(_ a: [Double], _ b: [Double], _ q: Double) -> String {
    guard let x = quantile(a, q), let y = quantile(b, q), y > 0 else { return "–" }
    return String(format: "%.2f", x / y)
  }
}

/// Kill -9 the node that serves a room with a meeting running, `kills` times, through the
/// cluster harness (Tests/Bench/failover.py: PostgreSQL, three nodes, HAProxy).
struct FailoverResult: Decodable {
  /// Seconds from the kill until the room's people were welcomed back, one per kill.
  var back: [Double]
  /// How far the meeting's clock was from where it stood at the kill, one per kill.
  var drift: [Int]
  var nodes: Int

  static func run(binary: String, kills: Int) throws -> FailoverResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: ".venv/bin/python")
    process.arguments = ["Tests/Bench/failover.py", "--server", binary, "--kills", "\(kills)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0, let last = data.split(separator: UInt8(ascii: "\n")).last
    else { throw ValidationError("The failover bench failed (Tests/Bench/failover.py).") }
    return try JSONDecoder().decode(FailoverResult.self, from: Data(last))
  }

  static func report(_ result: FailoverResult) -> String {
    let sorted = result.back.sorted()
    let format = { (value: Double) in String(format: "%.2f", value) }
    return [
      "## Failover",
      "",
      "PostgreSQL, \(result.nodes) nodes and HAProxy on loopback (`Tests/Bench/failover.py`). Two",
      "people in a room through HAProxy, a meeting running; the node serving the room is killed",
      "with SIGKILL, \(result.back.count) times (it is started again between kills). *Back* is",
      "from the kill until both were welcomed again by another node; *clock* is how far the",
      "meeting's second was from where it stood at the kill.",
      "",
      "| Kills | Back: min | median | max | Clock off by (s) |",
      "|---:|---:|---:|---:|---|",
      "| \(sorted.count) | \(format(sorted.first ?? 0)) s | \(format(sorted[sorted.count / 2])) s | "
        + "\(format(sorted.last ?? 0)) s | \(result.drift.map(String.init).joined(separator: ", ")) |",
    ].joined(separator: "\n")
  }
}
