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
  var residentBytes: Int
  var tickBytes: Int
  var snapshotBytes: Int
}

enum ManyRooms {
  /// `rooms` rooms of `peers` clients each (one of them the driver, which starts the meeting).
  /// First everyone joins and sits idle; then the meetings start, spread evenly over one
  /// second as people would start them, and tick.
  static func run(binary: String, rooms: Int, peers: Int, seconds: Int) async throws -> ManyRoomsResult {
    let server = try ServerProcess(binary: binary)
    defer { server.stop() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let ids = try await Setup.createStandups(rooms, attendees: 6, client: client, port: server.port)
    try await Task.sleep(for: .milliseconds(200))
    let baseline = server.residentBytes

    var drivers: [Driver] = []
    var recorders: [Recorder] = []
    var requests: [(path: String, subprotocol: String?, handler: @Sendable (ClientEvent) -> Void)] = []
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
    progress("  \(connections.count) connections open in \(String(format: "%.1f", connectSeconds)) s")
    for (index, driver) in drivers.enumerated() { driver.connection = connections[index * peers] }
    // Every welcome in, and the joins' patches delivered.
    while recorders.contains(where: { recorder in recorder.shared.withLock { $0.welcome == nil } }) {
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
    let start = ContinuousClock.now
    try await Task.sleep(for: .seconds(seconds))
    let elapsed = (ContinuousClock.now - start).seconds
    let cpu = server.cpuSeconds - cpuBefore
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
      cpuPercent: cpu / elapsed * 100, residentBytes: rss, tickBytes: tick, snapshotBytes: snapshot)
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

  static func report(_ result: ManyRoomsResult, mirrorIdle: Int) -> String {
    let total = result.rooms * result.peers
    let late = result.lateness
    return """
      ## Many rooms: \(result.rooms) rooms × \(result.peers) clients, meetings ticking

      \(total) WebSocket connections, \(result.peers) in each room (opened in \(String(format: "%.1f", result.connectSeconds)) s,
      64 at a time). First everyone sits idle in the rooms; then each room's driver starts
      its meeting, the \(result.rooms) starts spread evenly over one second, and every meeting
      ticks once a second. A tick's lateness is when a client read it against the ideal grid
      that starts when that client read the meeting's start (second *k* is due *k* s later).

      | measure | value |
      | --- | --- |
      | idle: server RSS per connection, with its room and participant state | \(String(format: "%.1f", Double(result.idleBytesPerConnection) / 1024)) KiB (lws-mirror: \(String(format: "%.1f", Double(mirrorIdle) / 1024)) KiB per bare connection) |
      | tick lateness p50 / p99 / max | \(ms(late, 0.5)) / \(ms(late, 0.99)) / \(late.last.map { String(format: "%.2f", $0) } ?? "–") ms (\(late.count) ticks) |
      | patches delivered | \(Int(result.deliveriesPerSecond)) /s |
      | server CPU | \(String(format: "%.1f", result.cpuPercent)) % of one core |
      | server RSS, meetings running | \(result.residentBytes / 1024 / 1024) MiB |
      | a tick's patch on the wire | \(result.tickBytes) bytes, vs \(result.snapshotBytes) bytes for the whole state |

      """
  }
}
