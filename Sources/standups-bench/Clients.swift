import Foundation
import JSONPatch
import Synchronization
import WebSocketTransport

/// A message that arrived, by the number that names it (a version, or a mirror sequence).
typealias Arrival = (number: Int, at: ContinuousClock.Instant)

/// What every benchmark client records: when each version arrived, and when each tick did.
final class Recorder: Sendable {
  struct Shared {
    var deliveries = 0
    var arrivals: [Arrival] = []
    var patchBytes: [Int] = []
    var welcome: JSONValue?
    /// When this client saw the meeting start, and each tick's second after that.
    var meetingStarted: ContinuousClock.Instant?
    var ticks: [(second: Int, at: ContinuousClock.Instant)] = []

    /// Forgets what was measured so far (not when the meeting started).
    mutating func reset() {
      deliveries = 0
      arrivals = []
      ticks = []
    }
  }
  let shared = Mutex(Shared())
  let keepArrivals: Bool
  let keepTicks: Bool
  init(keepArrivals: Bool, keepTicks: Bool = false) {
    self.keepArrivals = keepArrivals
    self.keepTicks = keepTicks
  }

  func handle(_ event: ClientEvent) {
    guard case .text(let bytes) = event else { return }
    let now = ContinuousClock.now
    if let version = Self.patchVersion(bytes) {
      let tick = keepTicks ? Self.tickSecond(bytes) : nil
      let started = keepTicks && tick == nil && Self.contains(bytes, Self.meetingStart)
      shared.withLock { shared in
        shared.deliveries += 1
        if keepArrivals { shared.arrivals.append((version, now)) }
        if shared.patchBytes.count < 64 { shared.patchBytes.append(bytes.count) }
        if let tick { shared.ticks.append((tick, now)) }
        if started { shared.meetingStarted = now }
      }
    } else if let json = try? JSONValue(parsing: bytes), json["type"] == "welcome" {
      shared.withLock { $0.welcome = json }
    }
  }

  /// The version of a patch, read without parsing the whole message (the server writes
  /// `{"type":"patch","version":N,...`).
  static func patchVersion(_ bytes: [UInt8]) -> Int? {
    number(in: bytes, after: Array(#"{"type":"patch","version":"#.utf8), at: 0)
  }

  static let tickPath = Array(#""path":"/meeting/secondsElapsed","value":"#.utf8)
  static let meetingStart = Array(#""path":"/meeting","value":{"#.utf8)

  /// The second a tick's patch sets, if the patch is a tick.
  static func tickSecond(_ bytes: [UInt8]) -> Int? {
    guard let start = firstIndex(of: tickPath, in: bytes) else { return nil }
    return number(in: bytes, after: tickPath, at: start)
  }

  static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
    firstIndex(of: needle, in: bytes) != nil
  }

  private static func firstIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
    guard bytes.count >= needle.count else { return nil }
    for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
      if bytes[start..<(start + needle.count)].elementsEqual(needle) { return start }
    }
    return nil
  }

  private static func number(in bytes: [UInt8], after prefix: [UInt8], at start: Int) -> Int? {
    let end = start + prefix.count
    guard bytes.count > end, bytes[start..<end].elementsEqual(prefix) else { return nil }
    var value = 0
    for byte in bytes[end...] {
      guard byte >= 48 && byte <= 57 else { break }
      value = value * 10 + Int(byte - 48)
    }
    return value
  }
}

/// A client that sends actions and matches acks to when each was sent.
final class Driver: Sendable {
  struct Shared {
    var sentAt: [String: ContinuousClock.Instant] = [:]
    var versionSentAt: [Int: ContinuousClock.Instant] = [:]
    var acked = 0
    /// Who waits for how many answers in all.
    var waiters: [(acked: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }
  let shared = Mutex(Shared())
  let recorder: Recorder
  nonisolated(unsafe) var connection: WebSocketClientConnection!

  init(recorder: Recorder = Recorder(keepArrivals: false)) { self.recorder = recorder }

  func handle(_ event: ClientEvent) {
    guard case .text(let bytes) = event else { return }
    guard Recorder.patchVersion(bytes) == nil, let json = try? JSONValue(parsing: bytes),
      let ref = json["ref"]?.stringValue
    else {
      recorder.handle(event)
      return
    }
    let ready = shared.withLock { shared -> [CheckedContinuation<Void, Never>] in
      if let sent = shared.sentAt.removeValue(forKey: ref), let version = json["version"]?.intValue
      {
        shared.versionSentAt[version] = sent
      }
      shared.acked += 1
      let acked = shared.acked
      defer { shared.waiters.removeAll { $0.acked <= acked } }
      return shared.waiters.filter { $0.acked <= acked }.map(\.continuation)
    }
    for waiter in ready { waiter.resume() }
  }

  func send(_ action: JSONValue, ref: String) {
    shared.withLock { $0.sentAt[ref] = .now }
    connection.send(
      text: JSONValue.object(["type": "action", "ref": .string(ref), "action": action])
        .encodedString)
  }

  var acked: Int { shared.withLock { $0.acked } }

  /// Waits until `count` answers came in all (at once if they already have).
  func waitUntilAcked(_ count: Int) async {
    await withCheckedContinuation { continuation in
      let done = shared.withLock { shared -> Bool in
        guard shared.acked < count else { return true }
        shared.waiters.append((count, continuation))
        return false
      }
      if done { continuation.resume() }
    }
  }

  /// Sends an action and waits for its answer.
  func perform(_ action: JSONValue, ref: String) async {
    let answered = acked + 1
    send(action, ref: ref)
    await waitUntilAcked(answered)
  }
}

/// Arrivals of `"{sequence} …"` mirror messages.
final class MirrorRecorder: Sendable {
  struct Shared {
    var arrivals: [Arrival] = []
    var highest = 0
  }
  let shared = Mutex(Shared())

  func handle(_ event: ClientEvent) {
    guard case .text(let bytes) = event else { return }
    let now = ContinuousClock.now
    var sequence = 0
    for byte in bytes {
      guard byte >= 48 && byte <= 57 else { break }
      sequence = sequence * 10 + Int(byte - 48)
    }
    shared.withLock {
      $0.arrivals.append((sequence, now))
      $0.highest = max($0.highest, sequence)
    }
  }

  func highest() -> Int { shared.withLock { $0.highest } }
}

extension WebSocketClient {
  /// Opens many connections, `parallel` at a time; in the order of `requests`.
  func connectAll(
    port: Int,
    _ requests: [(path: String, subprotocol: String?, handler: @Sendable (ClientEvent) -> Void)],
    parallel: Int = 64
  ) async throws -> [WebSocketClientConnection] {
    var connections: [WebSocketClientConnection?] = Array(repeating: nil, count: requests.count)
    for batch in stride(from: 0, to: requests.count, by: parallel) {
      try await withThrowingTaskGroup(of: (Int, WebSocketClientConnection).self) { group in
        for index in batch..<min(batch + parallel, requests.count) {
          let request = requests[index]
          group.addTask {
            let connection = try await self.connect(
              port: port, path: request.path, subprotocol: request.subprotocol,
              onEvent: request.handler)
            return (index, connection)
          }
        }
        for try await (index, connection) in group { connections[index] = connection }
      }
    }
    return connections.map { $0! }
  }
}
