import Foundation
import JSONPatch
import Synchronization
import WebSocketTransport

/// What the many-rooms run measured.
struct ManyRoomsResult {
  var rooms: Int
  var peers: Int
  /// Server RSS growth per connection, everyone joined and no meeting running.
  var idleBytesPerConnection: Int
  var connectSeconds: Double
  /// Each tick's arrival against the ideal one-second grid from the meeting's start (ms).
  var lateness: [Double]
  var deliveriesPerSecond: Double
  var cpuPercent: Double
  /// Percent of a core by thread, from their exact run times: the transport's service
  /// thread, the shards together, and every other thread.
  var threads: (service: Double, shards: Double, other: Double) = (0, 0, 0)
  /// The window measured.
  var seconds: Int
  var residentBytes: Int
  var tickBytes: Int
  var snapshotBytes: Int
}

enum ManyRooms {
  /// `rooms` rooms of `peers` clients each (one of them the driver, which starts the meeting).
  /// First everyone joins and sits idle; then the meetings start, spread evenly over one
  /// second as people would start them, and tick.
  static func run(binary: String, rooms: Int, peers: Int, seconds: Int) async throws
    -> ManyRoomsResult
  {
    try await BenchProcess.waitUntilQuiet()
    let server = try ServerProcess(binary: binary)
    defer { server.stop() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let ids = try await Setup.createStandups(rooms, attendees: 6, client: client, port: server.port)
    try await Task.sleep(for: .milliseconds(200))
    let baseline = server.residentBytes

    var drivers: [Driver] = []
    var recorders: [Recorder] = []
    var requests: [(path: String, subprotocol: String?, handler: @Sendable (ClientEvent) -> Void)] =
      []
    for id in ids {
      let driver = Driver(recorder: Recorder(keepArrivals: false, keepTicks: true))
      drivers.append(driver)
      recorders.append(driver.recorder)
      requests.append(("/ws/rooms/\(id)?name=driver", nil, { driver.handle($0) }))
      for index in 1..<peers {
        let recorder = Recorder(keepArrivals: false, keepTicks: true)
        recorders.append(recorder)
        requests.append(("/ws/rooms/\(id)?name=r\(index)", nil, { recorder.handle($0) }))
      }
    }
    let connectStart = ContinuousClock.now
    var connections = try await client.connectAll(port: server.port, requests)
    let connectSeconds = (ContinuousClock.now - connectStart).seconds
    progress(
      "  \(connections.count) connections open in \(String(format: "%.1f", connectSeconds)) s")
    for (index, driver) in drivers.enumerated() { driver.connection = connections[index * peers] }
    // Every welcome in, and the joins' patches delivered.
    while recorders.contains(where: { recorder in recorder.shared.withLock { $0.welcome == nil } })
    {
      try await Task.sleep(for: .milliseconds(50))
    }
    try await Task.sleep(for: .milliseconds(1000))
    let idle = (server.residentBytes - baseline) / (rooms * peers)

    let startAll = ContinuousClock.now
    for (index, driver) in drivers.enumerated() {
      try await Task.sleep(until: startAll + .seconds(1) * index / rooms, clock: .continuous)
      driver.send(["type": "startMeetingButtonTapped"], ref: "start")
    }
    try await Task.sleep(for: .milliseconds(1500))
    let tick = recorders[1].shared.withLock { $0.patchBytes.last } ?? 0
    let snapshot = recorders[1].shared.withLock { $0.welcome?["state"]?.encoded.count } ?? 0
    for recorder in recorders { recorder.shared.withLock { $0.reset() } }

    progress("  meetings running; measuring for \(seconds) s")
    let cpuBefore = server.cpuSeconds
    let threadsBefore = server.threadSeconds
    let start = ContinuousClock.now
    try await Task.sleep(for: .seconds(seconds))
    let elapsed = (ContinuousClock.now - start).seconds
    let cpu = server.cpuSeconds - cpuBefore
    var threads: (service: Double, shards: Double, other: Double) = (0, 0, 0)
    for (name, seconds) in server.threadSeconds {
      let percent = (seconds - (threadsBefore[name] ?? 0)) / elapsed * 100
      if name == "lws-service" {
        threads.service += percent
      } else if name.hasPrefix("shard-") {
        threads.shards += percent
      } else {
        threads.other += percent
      }
    }
    let rss = server.residentBytes
    var lateness: [Double] = []
    var deliveries = 0
    for recorder in recorders {
      recorder.shared.withLock { shared in
        deliveries += shared.deliveries
        guard let started = shared.meetingStarted else { return }
        for tick in shared.ticks {
          lateness.append((tick.at - (started + .seconds(tick.second))).milliseconds)
        }
      }
    }
    for connection in connections { connection.close() }
    connections.removeAll()
    return ManyRoomsResult(
      rooms: rooms, peers: peers, idleBytesPerConnection: idle, connectSeconds: connectSeconds,
      lateness: lateness.sorted(), deliveriesPerSecond: Double(deliveries) / elapsed,
      cpuPercent: cpu / elapsed * 100, threads: threads, seconds: seconds,
      residentBytes: rss, tickBytes: tick, snapshotBytes: snapshot)
  }

  /// The same number of idle connections to the C mirror: its RSS per connection.
  static func mirrorIdle(connections count: Int) async throws -> Int {
    let server = try MirrorProcess()
    defer { server.stop() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    try await Task.sleep(for: .milliseconds(200))
    let baseline = server.residentBytes
    let connections = try await client.connectAll(
      port: server.port,
      (0..<count).map { _ in ("/", "lws-mirror-protocol", { @Sendable _ in }) })
    try await Task.sleep(for: .milliseconds(1000))
    let perConnection = (server.residentBytes - baseline) / count
    for connection in connections { connection.close() }
    return perConnection
  }

  /// `runs`: the scenario at the start of the bench and at its end (this machine's speed
  /// drifts; the targets take their mean), or the one run of `--only many-rooms`.
  static func report(_ runs: [ManyRoomsResult], mirrorIdle: Int?) -> String {
    let comparison =
      mirrorIdle.map {
        " For comparison, Debian's C server\nholds \(String(format: "%.1f", Double($0) / 1024)) KiB per bare idle connection."
      } ?? ""
    let first = runs[0]
    func row(_ name: String, _ value: (ManyRoomsResult) -> String) -> String {
      "| \(name) | " + runs.map(value).joined(separator: " | ") + " |"
    }
    let rows = [
      row("idle: server RSS per connection, with its room and participant state") {
        String(format: "%.1f KiB", Double($0.idleBytesPerConnection) / 1024)
      },
      row("tick lateness p50 / p99 / max") {
        "\(ms($0.lateness, 0.5)) / \(ms($0.lateness, 0.99)) / \($0.lateness.last.map { String(format: "%.2f", $0) } ?? "–") ms (\($0.lateness.count) ticks)"
      },
      row("patches delivered") { "\(Int($0.deliveriesPerSecond)) /s" },
      row("server CPU") { String(format: "%.1f %% of one core", $0.cpuPercent) },
      row("of which, by thread (exact run times)") {
        String(
          format: "service thread %.1f %%, shards %.1f %%, others %.1f %%", $0.threads.service,
          $0.threads.shards, $0.threads.other)
      },
      row("server RSS, meetings running") { "\($0.residentBytes / 1024 / 1024) MiB" },
      row("a tick's patch on the wire") {
        "\($0.tickBytes) bytes, vs \($0.snapshotBytes) for the whole state"
      },
    ]
    return """
      ## Many rooms: \(first.rooms) rooms × \(first.peers) clients, meetings ticking

      \(first.rooms * first.peers) WebSocket connections, \(first.peers) in each room (opened in \(String(format: "%.1f", first.connectSeconds)) s,
      64 at a time). First everyone sits idle in the rooms; then each room's driver starts
      its meeting, the \(first.rooms) starts spread evenly over one second, and every meeting
      ticks once a second. A tick's lateness is when a client read it against the ideal grid
      that starts when that client read the meeting's start (second *k* is due *k* s later).
      \(runs.count == 1 ? "Measured for \(first.seconds) s." : "Run at the start of the bench and again at its end, \(first.seconds) s each.")\(comparison)

      | measure | \(runs.count == 1 ? "this run" : "at the start | at the end") |
      | --- | --- |\(runs.count == 1 ? "" : " --- |")
      \(rows.joined(separator: "\n"))

      """
  }

  /// The runs as one, for the targets: CPU averaged, latenesses together.
  static func combined(_ runs: [ManyRoomsResult]) -> ManyRoomsResult {
    var result = runs[0]
    result.cpuPercent = runs.reduce(0) { $0 + $1.cpuPercent } / Double(runs.count)
    let count = Double(runs.count)
    result.threads = (
      runs.reduce(0) { $0 + $1.threads.service } / count,
      runs.reduce(0) { $0 + $1.threads.shards } / count,
      runs.reduce(0) { $0 + $1.threads.other } / count
    )
    result.lateness = runs.flatMap(\.lateness).sorted()
    result.idleBytesPerConnection = runs.map(\.idleBytesPerConnection).max() ?? 0
    return result
  }
}
