import Foundation
import JSONPatch
import Synchronization
import WebSocketTransport

/// How a fan-out's one sender sends.
enum Load: Equatable {
  /// As fast as answers return, this many in flight.
  case pipelined(inFlight: Int)
  /// At a steady rate, whatever the answers do.
  case paced(perSecond: Int)
}

extension Load {
  /// Sends for `seconds` as this load says. Returns how long the sending took (the rate is
  /// over that), after waiting 200 ms more for the last messages' deliveries.
  func drive(
    seconds: Int, inFlight: () -> Int, waitForAnswer: () async -> Void, sendNext: () -> Void
  ) async throws -> Duration {
    let start = ContinuousClock.now
    var sent = 0
    switch self {
    case .pipelined(let limit):
      while ContinuousClock.now - start < .seconds(seconds) {
        if inFlight() < limit {
          sendNext()
          sent += 1
        } else {
          await waitForAnswer()
        }
      }
    case .paced(let perSecond):
      let interval = Duration.seconds(1) / perSecond
      while ContinuousClock.now - start < .seconds(seconds) {
        try await Task.sleep(until: start + interval * sent, clock: .continuous)
        sendNext()
        sent += 1
      }
    }
    let elapsed = ContinuousClock.now - start
    try await Task.sleep(for: .milliseconds(200))
    return elapsed
  }
}

/// What one fan-out run measured.
struct FanOutResult {
  var deliveries: Int
  var elapsed: Duration
  var cpuSeconds: Double
  var latencies: [Double]
  var rssPerConnection: Int
  /// CPU seconds HAProxy spent, when the clients went through it.
  var proxyCPUSeconds = 0.0
  /// Of `cpuSeconds`, the server's time in the kernel.
  var systemSeconds = 0.0

  /// Several runs of the same kind as one: counts and times added, latencies together.
  static func pooled(_ runs: [FanOutResult]) -> FanOutResult {
    FanOutResult(
      deliveries: runs.reduce(0) { $0 + $1.deliveries },
      elapsed: runs.reduce(.zero) { $0 + $1.elapsed },
      cpuSeconds: runs.reduce(0) { $0 + $1.cpuSeconds },
      latencies: runs.flatMap(\.latencies).sorted(),
      rssPerConnection: runs.first?.rssPerConnection ?? 0,
      proxyCPUSeconds: runs.reduce(0) { $0 + $1.proxyCPUSeconds },
      systemSeconds: runs.reduce(0) { $0 + $1.systemSeconds })
  }

  var seconds: Double { elapsed.seconds }
  var rate: Double { Double(deliveries) / seconds }
  /// Server CPU milliseconds per 1 000 delivered frames.
  var cpuPerThousand: Double { cpuSeconds / Double(max(deliveries, 1)) * 1e6 }
  /// Of that, in the kernel.
  var systemPerThousand: Double { systemSeconds / Double(max(deliveries, 1)) * 1e6 }
}

extension FanOutResult {
  /// What each peer received, against when each message was sent (by its number).
  init(
    arrivals: [[Arrival]], sentAt: [Int: ContinuousClock.Instant], elapsed: Duration,
    cpuSeconds: Double, rssPerConnection: Int
  ) {
    var latencies: [Double] = []
    for arrival in arrivals.joined() {
      if let sent = sentAt[arrival.number] { latencies.append((arrival.at - sent).milliseconds) }
    }
    self.init(
      deliveries: arrivals.reduce(0) { $0 + $1.count }, elapsed: elapsed, cpuSeconds: cpuSeconds,
      latencies: latencies.sorted(), rssPerConnection: rssPerConnection)
  }
}

/// One room, one sender, every other client reading: Standups, and the same through
/// Debian's C server.
enum FanOut {
  /// Standups: the sender toggles the end-meeting alert (`meeting.endMeetingButtonTapped`,
  /// `meeting.alert.resume`), one patch to every peer each.
  ///
  /// - Parameter proxied: the clients connect through HAProxy (deploy/haproxy.cfg) in front.
  static func standups(
    binary: String, peers: Int, load: Load, seconds: Int, proxied: Bool = false
  ) async throws -> FanOutResult {
    try await BenchProcess.waitUntilQuiet()
    let server = try ServerProcess(binary: binary)
    defer { server.stop() }
    let proxy = proxied ? try ProxyProcess(nodes: [server.port]) : nil
    defer { proxy?.stop() }
    let port = proxy?.port ?? server.port
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let id = try await Setup.createStandups(1, attendees: 6, client: client, port: port)[0]
    let baseline = server.residentBytes
    let recorders = (0..<peers).map { _ in Recorder(keepArrivals: true) }
    let connections = try await client.connectAll(
      port: port,
      recorders.enumerated().map { index, recorder in
        ("/ws/rooms/\(id)?name=r\(index)", nil, { recorder.handle($0) })
      })
    let driver = Driver()
    driver.connection = try await client.connect(
      port: port, path: "/ws/rooms/\(id)?name=driver"
    ) {
      driver.handle($0)
    }
    try await Task.sleep(for: .milliseconds(300))
    let perConnection = (server.residentBytes - baseline) / (peers + 1)
    await driver.perform(["type": "startMeetingButtonTapped"], ref: "start")
    try await Task.sleep(for: .milliseconds(100))
    for recorder in recorders { recorder.shared.withLock { $0.reset() } }

    let cpuBefore = server.cpuSeconds
    let systemBefore = server.systemSeconds
    let proxyCPUBefore = proxy?.cpuSeconds ?? 0
    var sent = 0
    func sendNext() {
      let type = sent % 2 == 0 ? "meeting.endMeetingButtonTapped" : "meeting.alert.resume"
      driver.send(["type": .string(type)], ref: "a\(sent)")
      sent += 1
    }
    let elapsed = try await load.drive(
      seconds: seconds, inFlight: { sent - (driver.acked - 1) },
      waitForAnswer: { await driver.waitUntilAcked(driver.acked + 1) }, sendNext: sendNext)
    let cpu = server.cpuSeconds - cpuBefore
    var result = FanOutResult(
      arrivals: recorders.map { recorder in recorder.shared.withLock { $0.arrivals } },
      sentAt: driver.shared.withLock { $0.versionSentAt }, elapsed: elapsed, cpuSeconds: cpu,
      rssPerConnection: perConnection)
    result.proxyCPUSeconds = (proxy?.cpuSeconds ?? 0) - proxyCPUBefore
    result.systemSeconds = server.systemSeconds - systemBefore
    for connection in connections { connection.close() }
    return result
  }

  /// lws-mirror: `lws-mirror-protocol` sends every message a client sends to every client
  /// (the sender included, which paces itself on its own echo). Messages are about the size
  /// of a Standups patch.
  static func mirror(peers: Int, load: Load, seconds: Int) async throws -> FanOutResult {
    try await BenchProcess.waitUntilQuiet()
    let server = try MirrorProcess()
    defer { server.stop() }
    let client = try WebSocketClient(subprotocols: ["lws-mirror-protocol"])
    defer { client.shutdown() }
    let baseline = server.residentBytes
    let recorders = (0..<peers).map { _ in MirrorRecorder() }
    let connections = try await client.connectAll(
      port: server.port,
      recorders.map { recorder in ("/", "lws-mirror-protocol", { recorder.handle($0) }) })
    let sender = MirrorRecorder()
    let connection = try await client.connect(
      port: server.port, path: "/", subprotocol: "lws-mirror-protocol"
    ) { sender.handle($0) }
    try await Task.sleep(for: .milliseconds(300))
    let perConnection = (server.residentBytes - baseline) / (peers + 1)
    let padding = String(repeating: "x", count: 60)
    let cpuBefore = server.cpuSeconds
    let systemBefore = server.systemSeconds
    var sent = 0
    var sentAt: [Int: ContinuousClock.Instant] = [:]
    func sendNext() {
      sentAt[sent + 1] = .now
      sent += 1
      connection.send(text: "\(sent) \(padding)")
    }
    let elapsed = try await load.drive(
      seconds: seconds, inFlight: { sent - sender.highest() },
      waitForAnswer: { await Task.yield() },
      sendNext: sendNext)
    let cpu = server.cpuSeconds - cpuBefore
    var result = FanOutResult(
      arrivals: recorders.map { recorder in recorder.shared.withLock { $0.arrivals } },
      sentAt: sentAt, elapsed: elapsed, cpuSeconds: cpu, rssPerConnection: perConnection)
    result.systemSeconds = server.systemSeconds - systemBefore
    for connection in connections { connection.close() }
    connection.close()
    return result
  }
}

enum Setup {
  /// Creates standups through the lobby; returns their ids.
  static func createStandups(_ count: Int, attendees: Int, client: WebSocketClient, port: Int)
    async throws -> [String]
  {
    let driver = Driver()
    driver.connection = try await client.connect(port: port, path: "/ws/lobby?name=bench") {
      driver.handle($0)
    }
    for index in 0..<count {
      let standup: JSONValue = [
        "title": .string("Bench \(index)"), "duration": 300, "theme": "orange",
        "attendees": .array((0..<attendees).map { .object(["name": .string("Person \($0)")]) }),
      ]
      await driver.perform(["type": "addStandupSubmitted", "standup": standup], ref: "s\(index)")
    }
    driver.connection.close()
    let lobby = Recorder(keepArrivals: false)
    let reader = try await client.connect(port: port, path: "/ws/lobby?name=reader") {
      lobby.handle($0)
    }
    while lobby.shared.withLock({ $0.welcome }) == nil {
      try await Task.sleep(for: .milliseconds(5))
    }
    reader.close()
    let standups = lobby.shared.withLock { $0.welcome?["state"]?["standups"]?.arrayValue } ?? []
    return standups.compactMap { $0["id"]?.stringValue }
  }
}

extension Duration {
  var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
  var milliseconds: Double { seconds * 1e3 }
}

/// The `quantile` of sorted samples, formatted.
func quantile(_ sorted: [Double], _ quantile: Double) -> Double? {
  guard !sorted.isEmpty else { return nil }
  return sorted[min(sorted.count - 1, Int(Double(sorted.count) * quantile))]
}

func ms(_ sorted: [Double], _ q: Double) -> String {
  quantile(sorted, q).map { String(format: "%.2f", $0) } ?? "–"
}
