import CoreMetrics
import Prometheus
import RoomRuntime
import Synchronization

/// What this process counts, answered at `/metrics` in the Prometheus text format.
///
/// Counted through swift-metrics' API, into a swift-prometheus registry of the process's own
/// (nothing is bootstrapped globally). docs/DEPLOY.md lists every metric.
final class ServerMetrics: Sendable {
  static let shared = ServerMetrics()

  private let registry = PrometheusCollectorRegistry()
  private let factory: PrometheusMetricsFactory
  /// WebSockets open now.
  let connections: CoreMetrics.Gauge
  /// Rooms this node serves now.
  let roomsOwned: CoreMetrics.Gauge
  /// Patches delivered (one per peer) and their bytes.
  let patchesSent: CoreMetrics.Counter
  let bytesSent: CoreMetrics.Counter
  /// How late each timer (meeting ticks, undo windows) woke after its deadline.
  let tickLateness: CoreMetrics.Timer
  /// Connections closed with 1008 because they read too slowly.
  let slowReaderDrops: CoreMetrics.Counter
  /// Keepalive pings sent behind a frame, in the same write, and alone.
  let pingsBehindFrames: CoreMetrics.Counter
  let pingsAlone: CoreMetrics.Counter
  private let counted = Mutex(Counted())

  private struct Counted {
    var actions: [String: CoreMetrics.Counter] = [:]
    var storage: [String: CoreMetrics.Timer] = [:]
    var ownership: [String: CoreMetrics.Counter] = [:]
    /// The transport's own counts at the last scrape.
    var transportSeen = TransportCounts()
  }

  init() {
    var factory = PrometheusMetricsFactory(registry: registry)
    let fine: [Duration] = [
      .microseconds(250), .milliseconds(1), .milliseconds(2), .milliseconds(5),
      .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
      .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
    ]
    factory.durationHistogramBuckets = [
      "standups_tick_lateness_seconds": fine, "standups_storage_seconds": fine,
    ]
    self.factory = factory
    connections = CoreMetrics.Gauge(label: "standups_connections", factory: factory)
    roomsOwned = CoreMetrics.Gauge(label: "standups_rooms_owned", factory: factory)
    patchesSent = CoreMetrics.Counter(label: "standups_patches_sent_total", factory: factory)
    bytesSent = CoreMetrics.Counter(label: "standups_patch_bytes_sent_total", factory: factory)
    tickLateness = CoreMetrics.Timer(label: "standups_tick_lateness_seconds", factory: factory)
    slowReaderDrops = CoreMetrics.Counter(
      label: "standups_slow_reader_drops_total", factory: factory)
    pingsBehindFrames = CoreMetrics.Counter(
      label: "standups_keepalive_pings_total", dimensions: [("sent", "behind_a_frame")],
      factory: factory)
    pingsAlone = CoreMetrics.Counter(
      label: "standups_keepalive_pings_total", dimensions: [("sent", "alone")], factory: factory)
  }

  /// A patch of `bytes` went to `peers` peers.
  func sent(_ bytes: Int, to peers: Int) {
    guard peers > 0 else { return }
    patchesSent.increment(by: peers)
    bytesSent.increment(by: peers * bytes)
  }

  /// A timer woke `late` after its deadline.
  func timerWoke(late: Duration) {
    tickLateness.record(duration: late)
  }

  /// An action answered: `ok`, or the error code it was refused with.
  func action(_ outcome: String) {
    counter(\.actions, "standups_actions_total", ("outcome", outcome)).increment()
  }

  /// Shows the counters a dashboard or an alert reads at 0 from the start, rather than absent
  /// until their first event: answered actions, and a cluster node's room locks.
  func showFromTheStart(cluster: Bool) {
    _ = counter(\.actions, "standups_actions_total", ("outcome", "ok"))
    guard cluster else { return }
    for change in ["acquired", "refused", "released", "lost"] {
      _ = counter(\.ownership, "standups_ownership_changes_total", ("change", change))
    }
  }

  /// A room's lock: `acquired`, `refused` (another node has it), `released`, `lost`.
  func ownership(_ change: String, count: Int = 1) {
    guard count > 0 else { return }
    counter(\.ownership, "standups_ownership_changes_total", ("change", change))
      .increment(by: count)
  }

  /// Times one storage operation.
  func timeStorage<T>(_ operation: String, _ body: () async throws -> T) async rethrows -> T {
    let timer = counted.withLock { counted in
      if let timer = counted.storage[operation] { return timer }
      let timer = CoreMetrics.Timer(
        label: "standups_storage_seconds", dimensions: [("operation", operation)],
        factory: factory)
      counted.storage[operation] = timer
      return timer
    }
    let started = ContinuousClock.now
    defer { timer.record(duration: ContinuousClock.now - started) }
    return try await body()
  }

  private func counter(
    _ path: WritableKeyPath<Counted, [String: CoreMetrics.Counter]>, _ label: String,
    _ dimension: (String, String)
  ) -> CoreMetrics.Counter {
    counted.withLock { counted in
      if let counter = counted[keyPath: path][dimension.1] { return counter }
      let counter = CoreMetrics.Counter(label: label, dimensions: [dimension], factory: factory)
      counted[keyPath: path][dimension.1] = counter
      return counter
    }
  }

  /// What the transport counts itself: read at each scrape, added as it grew.
  struct TransportCounts {
    var connections = 0
    var slowReaders = 0
    var pingsBehindFrames = 0
    var pingsAlone = 0
  }

  /// The text format, after reading what is read rather than counted.
  func render(_ transport: TransportCounts, rooms: Int) -> [UInt8] {
    connections.record(transport.connections)
    roomsOwned.record(rooms)
    let seen = counted.withLock { counted in
      defer { counted.transportSeen = transport }
      return counted.transportSeen
    }
    for (counter, now, before) in [
      (slowReaderDrops, transport.slowReaders, seen.slowReaders),
      (pingsBehindFrames, transport.pingsBehindFrames, seen.pingsBehindFrames),
      (pingsAlone, transport.pingsAlone, seen.pingsAlone),
    ] where now > before {
      counter.increment(by: now - before)
    }
    return Self.described(registry.emitToBuffer())
  }

  /// What each metric means, for Prometheus' `# HELP` lines (docs/DEPLOY.md says the same).
  static let help: [String: String] = [
    "standups_connections": "WebSockets open now.",
    "standups_rooms_owned": "Standup rooms open on this node now.",
    "standups_actions_total": "Actions answered, by ok or the error code they were refused with.",
    "standups_patches_sent_total": "Patches delivered, one per peer.",
    "standups_patch_bytes_sent_total": "Bytes of the patches delivered.",
    "standups_tick_lateness_seconds":
      "How late each server timer (meeting ticks, undo windows) woke after its deadline.",
    "standups_storage_seconds": "Each storage operation's time.",
    "standups_ownership_changes_total":
      "A cluster's room locks: acquired, refused (another node has it), released, lost.",
    "standups_slow_reader_drops_total": "Connections closed with 1008 for reading too slowly.",
    "standups_keepalive_pings_total":
      "Keepalive pings, sent behind a frame in the same write or alone.",
  ]

  /// `text` with a `# HELP` line before each metric's `# TYPE` line. swift-prometheus writes
  /// help only for metrics made on its registry with it; these are counted through
  /// swift-metrics, whose factory gives none.
  static func described(_ text: [UInt8]) -> [UInt8] {
    guard !text.isEmpty else { return text }
    var described: [UInt8] = []
    described.reserveCapacity(text.count + help.count * 80)
    for line in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      if line.starts(with: "# TYPE ".utf8) {
        let name = line.dropFirst(7).prefix { $0 != UInt8(ascii: " ") }
        if let meaning = help[String(decoding: name, as: UTF8.self)] {
          described += "# HELP ".utf8
          described += name
          described += " \(meaning)\n".utf8
        }
      }
      described += line
      described.append(UInt8(ascii: "\n"))
    }
    // NB: the text ends with a newline, which the split gave back as a last, empty line.
    if text.last == UInt8(ascii: "\n") { described.removeLast() }
    return described
  }
}

extension CoreMetrics.Timer {
  func record(duration: Duration) {
    let (seconds, attoseconds) = duration.components
    recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
  }
}

extension RoomMetrics {
  /// Rooms count into `ServerMetrics.shared`.
  static let server = RoomMetrics(
    actionAnswered: { ServerMetrics.shared.action($0) },
    patchSent: { ServerMetrics.shared.sent($0, to: $1) })
}
