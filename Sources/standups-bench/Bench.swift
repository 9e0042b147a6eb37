import ArgumentParser
import Foundation

/// Measures a real `standups-server` (a child process) over loopback with the project's own
/// libwebsockets client, beside Debian's C `libwebsockets-test-server`, and writes the results
/// to a Markdown file.
@main
struct Bench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "standups-bench", abstract: "Load and latency benchmarks for standups-server.")

  @Option(help: "Where to write the report.") var output = "docs/BENCHMARKS.md"
  @Option(help: "Seconds each scenario measures for (many-rooms and floor: --many-rooms-seconds).")
  var seconds = 8
  @Option(help: "The server binary (default: next to this one).") var server: String?
  @Option(
    name: .customLong("many-rooms-seconds"),
    help:
      "Seconds the many-rooms scenario and the floor measure for, at the bench's start and at its end (default 90, ≥ 90: every keepalive interval in); with --only, --seconds if not given."
  )
  var manyRoomsSecondsGiven: Int?
  var manyRoomsSeconds: Int { manyRoomsSecondsGiven ?? 90 }
  @Option(help: "Rooms in the many-rooms scenario.") var rooms = 500
  @Option(help: "Clients per room in the many-rooms scenario.") var peersPerRoom = 20
  @Option(help: "Idle connections in the keepalive scenario; repeatable.")
  var idleConnections: [Int] = [2_000, 19_000]
  @Option(help: "Seconds the keepalive scenario measures for (three pings or more: ≥ 90).")
  var keepaliveSeconds = 90
  @Option(help: "Kills in the failover scenario.") var kills = 10
  @Option(
    help:
      "Run only this scenario and print its numbers (micro, fan-out, keepalive, many-rooms, floor, proxy, failover); for profiling."
  )
  var only: String?

  func run() async throws {
    let binary =
      server
      ?? URL(fileURLWithPath: CommandLine.arguments[0])
      .deletingLastPathComponent().appendingPathComponent("standups-server").path

    if let only { return try await runOnly(only, binary: binary) }
    func manyRooms() async throws -> ManyRoomsResult {
      progress("many rooms: \(rooms) rooms × \(peersPerRoom) clients, idle, then meetings ticking")
      let many = try await ManyRooms.run(
        binary: binary, rooms: rooms, peers: peersPerRoom, seconds: manyRoomsSeconds)
      progress(
        "  lateness p99 \(ms(many.lateness, 0.99)) ms, CPU \(String(format: "%.1f", many.cpuPercent)) %"
      )
      return many
    }
    var many = [try await manyRooms()]

    progress("micro: reduce + encode + diff + patch for a 50-attendee standup with 100 meetings")
    let micro = Micro.run()
    progress("micro: one change to a lobby of 100, 500 and 5 000 standups")
    let lobby = LobbyMicro.run()

    var fanOut: [FanOutRun] = []
    // NB: this machine's speed drifts by half over minutes, so the two servers take turns,
    // `rounds` times, and each one's rounds are added up.
    for (peers, load, rounds) in [
      (50, Load.pipelined(inFlight: 4), 3), (500, .pipelined(inFlight: 4), 3),
      (50, .paced(perSecond: 600), 1),
    ] {
      progress(
        "fan-out: one room of \(peers), \(load), against standups-server and libwebsockets-test-server"
      )
      // NB: a fresh server's first seconds cost more per delivery (allocator growth, first
      // uses): at 50 peers, 4 s windows measured 1.29× the C server where 8 s gave 1.18× and
      // 20 s 1.16× (2026-11-24); each round is a full window.
      let roundSeconds = seconds
      var standups: [FanOutResult] = []
      var mirror: [FanOutResult] = []
      for _ in 0..<rounds {
        standups.append(
          try await FanOut.standups(binary: binary, peers: peers, load: load, seconds: roundSeconds)
        )
        mirror.append(try await FanOut.mirror(peers: peers, load: load, seconds: roundSeconds))
        progress(
          "  standups: \(Int(standups.last!.rate)) deliveries/s, \(String(format: "%.2f", standups.last!.cpuPerThousand)) ms CPU per 1 000; "
            + "lws-mirror: \(Int(mirror.last!.rate)) deliveries/s, \(String(format: "%.2f", mirror.last!.cpuPerThousand)) ms"
        )
      }
      fanOut.append(
        FanOutRun(
          peers: peers, load: load, rounds: rounds, standups: .pooled(standups),
          mirror: .pooled(mirror)))
    }

    var proxy: [ProxyRun] = []
    for (peers, load) in [(50, Load.pipelined(inFlight: 4)), (50, .paced(perSecond: 600))] {
      progress("proxy: one room of \(peers), \(load), straight to a node and through HAProxy")
      proxy.append(
        try await ProxyRun.run(
          binary: binary, peers: peers, load: load, seconds: max(3, seconds / 2), rounds: 3))
    }
    progress("failover: kill -9 the node serving a room, \(kills) times")
    let failover = try FailoverResult.run(binary: binary, kills: kills)

    many.append(try await manyRooms())
    progress("idle: \(rooms * peersPerRoom) connections to libwebsockets-test-server")
    let mirrorIdle = try await ManyRooms.mirrorIdle(connections: rooms * peersPerRoom)

    let keepalive = try await Keepalive.runAll(
      binary: binary, sizes: idleConnections, seconds: keepaliveSeconds)

    let independent = Independent.run(
      binary: binary, rooms: rooms, peers: peersPerRoom, manyRoomsSeconds: manyRoomsSeconds,
      idle: idleConnections, keepaliveSeconds: keepaliveSeconds)
    let floor = SendFloor.run(rooms: rooms, peers: peersPerRoom, seconds: manyRoomsSeconds)
    let handedOver = SendFloor.run(
      rooms: rooms, peers: peersPerRoom, seconds: manyRoomsSeconds,
      handoff: SendFloor.serverShards)

    let report = Report.render(
      sections: [
        Targets.report(
          micro: micro, fanOut: fanOut, many: ManyRooms.combined(many), keepalive: keepalive,
          independent: independent, floor: floor, handedOver: handedOver),
        Micro.report(micro),
        LobbyMicro.report(lobby),
        FanOutRun.report(fanOut),
        ManyRooms.report(many, mirrorIdle: mirrorIdle),
        SendFloor.report(floor, handedOver: handedOver),
        Keepalive.report(keepalive),
        Independent.report(independent),
        ProxyRun.report(proxy),
        FailoverResult.report(failover),
      ], seconds: seconds)
    try Report.keepingWhatWasMeasuredByHand(report, in: output)
      .write(toFile: output, atomically: true, encoding: .utf8)
    print(report)
    print("Written to \(output).")
  }
}

extension Bench {
  func runOnly(_ scenario: String, binary: String) async throws {
    switch scenario {
    case "micro":
      print(Micro.report(Micro.run()))
      print(LobbyMicro.report(LobbyMicro.run()))
    case "fan-out":
      // NB: the C server in the same run, taking turns: only the ratio is comparable.
      for peers in [50, 500] {
        let load = Load.pipelined(inFlight: 4)
        let ours = try await FanOut.standups(
          binary: binary, peers: peers, load: load, seconds: seconds)
        let mirror = try await FanOut.mirror(peers: peers, load: load, seconds: seconds)
        print(
          "\(peers) peers: standups \(Int(ours.rate)) deliveries/s, \(String(format: "%.2f", ours.cpuPerThousand)) ms CPU per 1 000 (kernel \(String(format: "%.2f", ours.systemPerThousand))); "
            + "lws-mirror \(Int(mirror.rate)) deliveries/s, \(String(format: "%.2f", mirror.cpuPerThousand)) ms (kernel \(String(format: "%.2f", mirror.systemPerThousand))); "
            + "ratio \(String(format: "%.2f", ours.cpuPerThousand / mirror.cpuPerThousand))×"
        )
      }
    case "keepalive":
      let runs = try await Keepalive.runAll(
        binary: binary, sizes: idleConnections, seconds: keepaliveSeconds)
      print(Keepalive.report(runs))
    case "many-rooms":
      let result = try await ManyRooms.run(
        binary: binary, rooms: rooms, peers: peersPerRoom,
        seconds: manyRoomsSecondsGiven ?? seconds)
      print(ManyRooms.report([result], mirrorIdle: nil))
    case "floor":
      let seconds = manyRoomsSecondsGiven ?? seconds
      print(
        SendFloor.report(
          SendFloor.run(rooms: rooms, peers: peersPerRoom, seconds: seconds),
          handedOver: SendFloor.run(
            rooms: rooms, peers: peersPerRoom, seconds: seconds, handoff: SendFloor.serverShards)))
    case "proxy":
      var runs: [ProxyRun] = []
      for load in [Load.pipelined(inFlight: 4), .paced(perSecond: 600)] {
        runs.append(
          try await ProxyRun.run(binary: binary, peers: 50, load: load, seconds: seconds, rounds: 3)
        )
      }
      print(ProxyRun.report(runs))
    case "failover":
      print(FailoverResult.report(try FailoverResult.run(binary: binary, kills: kills)))
    default:
      throw ValidationError(
        "Unknown scenario \(scenario): micro, fan-out, keepalive, many-rooms, floor, proxy or failover."
      )
    }
  }
}

/// Prints a progress line at once (stdout to a file is block-buffered).
func progress(_ line: String) {
  print(line)
  fflush(nil)
}

/// One fan-out, through both servers.
struct FanOutRun {
  var peers: Int
  var load: Load
  var rounds: Int
  var standups: FanOutResult
  var mirror: FanOutResult

  /// Standups' server CPU per delivery over the C server's.
  var cpuRatio: Double { standups.cpuPerThousand / max(mirror.cpuPerThousand, 0.000_001) }

  var loadDescription: String {
    switch load {
    case .pipelined(let inFlight):
      "as fast as answers return (\(inFlight) in flight), \(rounds) rounds"
    case .paced(let perSecond): "\(perSecond) a second (\(perSecond * peers) deliveries/s)"
    }
  }

  static func report(_ runs: [FanOutRun]) -> String {
    var rows: [String] = []
    for run in runs {
      for (name, result) in [("Standups", run.standups), ("lws-mirror (C)", run.mirror)] {
        rows.append(
          "| \(run.peers) | \(run.loadDescription) | \(name) | \(Int(result.rate)) | \(ms(result.latencies, 0.5)) / \(ms(result.latencies, 0.99)) / \(ms(result.latencies, 0.999)) | \(String(format: "%.2f", result.cpuPerThousand)) ms | \(String(format: "%.1f", Double(result.rssPerConnection) / 1024)) KiB |"
        )
      }
      rows.append(
        "| \(run.peers) | | **ratio** | | | **\(String(format: "%.2f", run.cpuRatio))×** | |")
    }
    return """
      ## Fan-out: one room, side by side with libwebsockets' own C server

      Standups: one driver sends `meeting.endMeetingButtonTapped` / `meeting.alert.resume`;
      each is one patch (~100 bytes) to every peer, and an ack to the driver. lws-mirror:
      Debian's `libwebsockets-test-server` (`lws-mirror-protocol`), one sender whose messages
      of the same size go to every peer. Same client, same load, same run. In the pipelined
      rows the two servers take turns three times and each one's rounds are added up, because
      this machine's speed drifts over minutes. Latency is from the moment the sender queued a
      message to the moment a peer's client thread read it.

      | peers | sender | server | deliveries/s | latency p50 / p99 / p99.9 (ms) | server CPU per 1 000 deliveries | RSS per connection |
      | --- | --- | --- | --- | --- | --- | --- |
      \(rows.joined(separator: "\n"))

      """
  }
}

/// The targets (issue #9's, and #5's that #9 did not replace), each against what this run
/// measured.
enum Targets {
  static func report(
    micro: MicroResult, fanOut: [FanOutRun], many: ManyRoomsResult, keepalive: [KeepaliveResult],
    independent: IndependentResult?, floor: SendFloorResult?, handedOver: SendFloorResult?
  ) -> String {
    func verdict(_ met: Bool) -> String { met ? "met" : "**missed**" }
    func percent(_ value: Double?) -> String { value.map { String(format: "%.1f %%", $0) } ?? "–" }
    var rows: [String] = []
    let pipelined = fanOut.filter { if case .pipelined = $0.load { true } else { false } }
    for run in pipelined {
      let limit = run.peers >= 500 ? 1.0 : 1.2
      rows.append(
        "| server CPU per delivered patch ≤ \(limit)× the C mirror's (\(run.peers) peers, same run) | \(String(format: "%.2f", run.cpuRatio))× (in the kernel: \(String(format: "%.2f", run.standups.systemPerThousand)) ms per 1 000 against \(String(format: "%.2f", run.mirror.systemPerThousand))) | \(verdict(run.cpuRatio <= limit)) |"
      )
    }
    let cpuMet = many.cpuPercent <= 12 && (independent?.manyRoomsCPU ?? .infinity) <= 12
    let ownWork = floor?.percent.map {
      " (\(percent(many.cpuPercent - $0)) of it above the floor; the service thread \(percent(many.threads.service)), the shards \(percent(many.threads.shards)))"
    }
    rows.append(
      "| \(many.rooms) × \(many.peers) ticking rooms ≤ 12 % of one core over ≥ 90 s (\(many.seconds) s here) | bench client \(percent(many.cpuPercent))\(ownWork ?? ""); independent client \(percent(independent?.manyRoomsCPU)); a bare C sender's floor for the same traffic \(percent(floor?.percent)), \(percent(handedOver?.percent)) with each tick handed over from a timer thread as the shards do | \(cpuMet ? "met" : "**missed**: see \"Where the many-rooms CPU goes\"") |"
    )
    let lateness = quantile(many.lateness, 0.99) ?? .infinity
    let independentLateness = independent?.manyRoomsP99
    rows.append(
      "| … with tick lateness p99 ≤ 5 ms | bench client \(String(format: "%.2f", lateness)) ms; independent client (its own read lateness) \(independentLateness.map { String(format: "%.1f", $0) } ?? "–") ms | \(verdict(lateness <= 5 && (independentLateness ?? 0) <= 5)) |"
    )
    for run in fanOut {
      guard case .paced(let perSecond) = run.load else { continue }
      let p99 = quantile(run.standups.latencies, 0.99) ?? .infinity
      let sustained = run.standups.rate >= Double(perSecond * run.peers) * 0.98
      rows.append(
        "| 30 000 deliveries/s sustained, p99 ≤ 5 ms | \(Int(run.standups.rate)) /s, p99 \(String(format: "%.2f", p99)) ms | \(verdict(sustained && p99 <= 5)) |"
      )
    }
    let idle = Double(many.idleBytesPerConnection) / 1024
    rows.append(
      "| ≤ 12 KiB RSS per idle connection, with its participant state | \(String(format: "%.1f", idle)) KiB | \(verdict(idle <= 12)) |"
    )
    rows.append(
      "| a tick's patch ≤ 100 bytes | \(micro.patchBytes) bytes of JSON Patch (the whole message, with its `type` and `version`: \(many.tickBytes) bytes) | \(verdict(micro.patchBytes <= 100)) |"
    )
    rows.append(
      "| reduce + diff + encode ≤ 20 µs per tick | \(String(format: "%.1f", micro.microsecondsPerTick)) µs | \(verdict(micro.microsecondsPerTick <= 20)) |"
    )
    if let small = keepalive.first, let large = keepalive.last, keepalive.count > 1 {
      rows.append(
        "| \(large.connections) idle connections with keepalive ≤ 3 % of one core over ≥ 90 s | \(String(format: "%.2f", large.cpuPercent)) % | \(verdict(large.cpuPercent <= 3)) |"
      )
      let raw = large.microsecondsPerPing / small.microsecondsPerPing
      let ratio = large.microsecondsPerPingAboveIdle / small.microsecondsPerPingAboveIdle
      rows.append(
        "| CPU per ping the same (±20 %) at \(small.connections) and \(large.connections) connections | above an idle server's own cost: \(String(format: "%.1f", small.microsecondsPerPingAboveIdle)) and \(String(format: "%.1f", large.microsecondsPerPingAboveIdle)) µs (×\(String(format: "%.2f", ratio))); all the server's CPU: \(String(format: "%.1f", small.microsecondsPerPing)) and \(String(format: "%.1f", large.microsecondsPerPing)) µs (×\(String(format: "%.2f", raw))) | \(abs(ratio - 1) <= 0.2 ? "met above idle" : ratio < 1 ? "**missed**, downward: nothing grows with the number of connections" : "**missed**") |"
      )
    }
    return """
      ## Targets

      | target | this run | |
      | --- | --- | --- |
      \(rows.joined(separator: "\n"))

      """
  }
}

enum Report {
  /// What separates the generated report from what was measured by hand below it.
  static let marker =
    "<!-- Everything below this line was measured by hand; make bench keeps it. -->"

  /// The new report, followed by the marker and everything after it in the old file.
  static func keepingWhatWasMeasuredByHand(_ report: String, in path: String) -> String {
    guard let old = try? String(contentsOfFile: path, encoding: .utf8),
      let start = old.range(of: marker)?.lowerBound
    else { return report }
    return report + "\n" + old[start...]
  }

  static func render(sections: [String], seconds: Int) -> String {
    let cpu =
      (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
      .split(separator: "\n").first { $0.hasPrefix("model name") }?
      .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    let date = Date().formatted(.iso8601.year().month().day())
    return """
      # Benchmarks

      Measured by `make bench` (`standups-bench --seconds \(seconds)`) on \(date): a release
      `standups-server` in a child process, driven over loopback by the project's own
      libwebsockets client in the bench process. Machine: \(ProcessInfo.processInfo.activeProcessorCount)
      cores (\(cpu)), \(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB; the load
      generator shares the cores with the server. No number here is a test assertion.

      \(sections.joined(separator: "\n"))
      ## Reading the numbers

      \(Notes.text)
      """
  }
}
