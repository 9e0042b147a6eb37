import Foundation
import Synchronization
import WebSocketTransport

/// How many connections the server takes, and how fast each may send.
public struct ServerLimits: Sendable, Equatable {
  /// Addresses of proxies (HAProxy) whose `X-Forwarded-For` names the client: the per-address
  /// limits count the client, not the proxy. Nobody else's header is believed.
  public var trustedProxies: Set<String> = [] {
    didSet { trusted = Set(trustedProxies.map { Self.canonicalAddress($0) ?? $0 }) }
  }
  /// `trustedProxies`, each in one spelling (`canonicalAddress`), once.
  private var trusted: Set<String> = []

  /// Whether `address` is one of `trustedProxies`, however either is spelled (`::1` and
  /// `0:0:0:0:0:0:0:1`, `10.0.0.5` and `::ffff:10.0.0.5`): a proxy not recognised would
  /// count every client as itself, so that one caller's failed guesses lock out everyone.
  public func trusts(_ address: String) -> Bool {
    !trusted.isEmpty && trusted.contains(Self.canonicalAddress(address) ?? address)
  }

  /// An IP address in one spelling (an IPv4-mapped IPv6 address as its IPv4 address); nil if
  /// `text` is not one.
  public static func canonicalAddress(_ text: String) -> String? {
    var v4 = in_addr()
    var v6 = in6_addr()
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    if inet_pton(AF_INET, text, &v4) == 1 {
      return inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
    }
    guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
    let bytes = withUnsafeBytes(of: v6) { Array($0) }
    if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
      return bytes[12...].map(String.init).joined(separator: ".")
    }
    return inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
  }
  /// WebSockets open at once; more are refused with 503 before the upgrade.
  public var maxConnections = 20_000
  /// WebSockets open at once from one address (people behind one office NAT share one).
  public var maxConnectionsPerAddress = 500
  /// Messages a connection may send per second, on average…
  public var messagesPerSecond = 20.0
  /// …and in one burst.
  public var burst = 40.0
  /// Messages refused in a row before the connection is closed with 1008.
  public var closeAfterRefused = 100
  /// The recent patches each room keeps for `since=` resumes, in bytes (and at most 512 of
  /// them); a resume from before them gets the whole state.
  public var resumeBytes = 256 * 1024
  /// New standups one address may create per minute (all its connections together).
  public var standupsPerMinutePerAddress = 10

  public init() {}
}

/// Admits connections and meters their messages (a token bucket per connection).
final class Admission: Sendable {
  enum Verdict: Equatable {
    case accept
    /// Over the rate: answer `rate_limited`, drop the message.
    case refuse
    /// Over the rate for too long: close with 1008.
    case close
  }

  private struct Meter {
    var address: String
    var tokens: Double
    var refilled: ContinuousClock.Instant
    var refusedInARow = 0
  }

  private struct Shared {
    var byAddress: [String: Int] = [:]
    var meters: [ConnectionID: Meter] = [:]
    /// The HTTP API's callers (a bot, an address), metered as a connection's messages are.
    var callers: [String: (tokens: Double, refilled: ContinuousClock.Instant)] = [:]
    /// The table's size at which the callers whose bucket is full again are forgotten.
    var pruneAt = 1024
  }

  let limits: ServerLimits
  private let shared = Mutex(Shared())

  init(limits: ServerLimits) { self.limits = limits }

  /// A refusal for an upgrade the limits do not allow, or nil.
  func refusal(for request: HTTPRequest) -> HTTPResponse? {
    let (total, fromAddress) = shared.withLock {
      ($0.meters.count, $0.byAddress[FailedAttempts.key(for: request.remoteAddress)] ?? 0)
    }
    if total >= limits.maxConnections {
      return HTTPResponse(
        status: 503, text: "The server is full: try again in a moment.",
        headers: [("retry-after:", "10")])
    }
    if fromAddress >= limits.maxConnectionsPerAddress {
      return HTTPResponse(
        status: 503,
        text:
          "Too many connections from your address (\(limits.maxConnectionsPerAddress)): close some first.",
        headers: [("retry-after:", "30")])
    }
    return nil
  }

  /// A connection opened from `address`: counted against it (an IPv6 address with its /64,
  /// which one machine is usually given whole, as failed sign-ins are).
  func opened(_ connection: ConnectionID, address: String) {
    let key = FailedAttempts.key(for: address)
    shared.withLock { shared in
      shared.byAddress[key, default: 0] += 1
      shared.meters[connection] = Meter(address: key, tokens: limits.burst, refilled: .now)
    }
  }

  func closed(_ connection: ConnectionID) {
    shared.withLock { shared in
      guard let meter = shared.meters.removeValue(forKey: connection) else { return }
      shared.byAddress[meter.address, default: 1] -= 1
      if shared.byAddress[meter.address] == 0 { shared.byAddress[meter.address] = nil }
    }
  }

  /// Takes a token for one message.
  func take(_ connection: ConnectionID, now: ContinuousClock.Instant = .now) -> Verdict {
    shared.withLock { shared in
      guard var meter = shared.meters[connection] else { return .accept }
      let elapsed = now - meter.refilled
      let seconds =
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      meter.tokens = min(limits.burst, meter.tokens + seconds * limits.messagesPerSecond)
      meter.refilled = now
      let verdict: Verdict
      if meter.tokens >= 1 {
        meter.tokens -= 1
        meter.refusedInARow = 0
        verdict = .accept
      } else {
        meter.refusedInARow += 1
        verdict = meter.refusedInARow > limits.closeAfterRefused ? .close : .refuse
      }
      shared.meters[connection] = meter
      return verdict
    }
  }
}

extension Admission {
  /// Takes a token for one HTTP API request from `caller`, at the rate and burst a
  /// connection's messages have; nil, or the seconds to wait (answer 429).
  func takeRequest(from caller: String, now: ContinuousClock.Instant = .now) -> Int? {
    shared.withLock { shared in
      // NB: callers whose bucket would be full again are forgotten, so the table holds only
      // the recent ones.
      let refill = Duration.seconds(limits.burst / limits.messagesPerSecond)
      // (At most once per doubling: a table of recent callers only is not scanned each time.)
      if shared.callers.count >= shared.pruneAt {
        shared.callers = shared.callers.filter { now - $0.value.refilled < refill }
        shared.pruneAt = max(1024, 2 * shared.callers.count)
      }
      var (tokens, refilled) = shared.callers[caller] ?? (limits.burst, now)
      let elapsed = now - refilled
      let seconds =
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      tokens = min(limits.burst, tokens + seconds * limits.messagesPerSecond)
      guard tokens >= 1 else {
        shared.callers[caller] = (tokens, now)
        return max(Int(((1 - tokens) / limits.messagesPerSecond).rounded(.up)), 1)
      }
      shared.callers[caller] = (tokens - 1, now)
      return nil
    }
  }
}

extension HTTPRequest {
  /// The request as from the client a trusted proxy names (the last `X-Forwarded-For` entry,
  /// which that proxy appended); unchanged from anyone else.
  func fromClient(trusting limits: ServerLimits) -> HTTPRequest {
    guard limits.trusts(remoteAddress),
      let forwarded = header("x-forwarded-for")?.split(separator: ",").last
    else { return self }
    let client = forwarded.trimmingCharacters(in: .whitespaces)
    guard !client.isEmpty else { return self }
    var request = self
    // NB: one spelling per client, so that its limits count it once.
    request.remoteAddress = ServerLimits.canonicalAddress(client) ?? client
    return request
  }
}
