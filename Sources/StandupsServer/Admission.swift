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
  /// Refusals a connection may have outstanding before it is closed with 1008. They are
  /// forgiven at the rate (`messagesPerSecond`), however fast or slow the server reads what
  /// was sent: a client sending faster than twice the rate is closed (at three times the
  /// rate, with the defaults, within about 6 s), one at twice the rate or less never.
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
    /// Over the rate for too long (more than `closeAfterRefused` refusals not yet forgiven):
    /// close with 1008.
    case close
  }

  fileprivate struct Meter {
    var address: String
    var tokens: Double
    var refilled: ContinuousClock.Instant
    /// Refusals not yet forgiven: one each, forgiven at the rate tokens come back.
    var refused = 0.0
  }

  fileprivate struct Shared {
    var byAddress: [String: Int] = [:]
    var meters: [ConnectionID: Meter] = [:]
    /// The HTTP API's callers (a bot, an address), metered as a connection's messages are,
    /// and the tokens each address's last connection left (`left:ADDRESS`).
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
  /// which one machine is usually given whole, as failed sign-ins are). Its messages start
  /// from what the address's last connection left them (refilled since): closing and opening
  /// again is no way to a full burst.
  func opened(_ connection: ConnectionID, address: String, now: ContinuousClock.Instant = .now) {
    let key = FailedAttempts.key(for: address)
    shared.withLock { shared in
      shared.byAddress[key, default: 0] += 1
      var meter = Meter(address: key, tokens: limits.burst, refilled: now)
      if let (tokens, refilled) = shared.callers[Self.leftBy(key)] {
        meter.tokens = refilledTokens(tokens, since: refilled, now: now)
      }
      shared.meters[connection] = meter
    }
  }

  func closed(_ connection: ConnectionID, now: ContinuousClock.Instant = .now) {
    shared.withLock { shared in
      guard let meter = shared.meters.removeValue(forKey: connection) else { return }
      shared.byAddress[meter.address, default: 1] -= 1
      if shared.byAddress[meter.address] == 0 { shared.byAddress[meter.address] = nil }
      // NB: kept (and forgotten once full again) as an HTTP caller's bucket is.
      let tokens = refilledTokens(meter.tokens, since: meter.refilled, now: now)
      if tokens < limits.burst {
        keep(tokens, for: Self.leftBy(meter.address), now: now, in: &shared)
      }
    }
  }

  /// The key under which an address's last connection left its tokens.
  private static func leftBy(_ address: String) -> String { "left:\(address)" }

  private func refilledTokens(
    _ tokens: Double, since refilled: ContinuousClock.Instant, now: ContinuousClock.Instant
  ) -> Double {
    min(limits.burst, tokens + seconds(from: refilled, to: now) * limits.messagesPerSecond)
  }

  private func seconds(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant)
    -> Double
  {
    let elapsed = end - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
  }

  /// Takes a token for one message.
  func take(_ connection: ConnectionID, now: ContinuousClock.Instant = .now) -> Verdict {
    shared.withLock { shared in
      guard var meter = shared.meters[connection] else { return .accept }
      // NB: not "refusals in a row": a token that comes back between two reads of a flood
      // would start the count again, so that a server reading slowly (a busy machine) never
      // closed a client sending at many times the rate.
      let forgiven = seconds(from: meter.refilled, to: now) * limits.messagesPerSecond
      meter.refused = max(0, meter.refused - forgiven)
      meter.tokens = refilledTokens(meter.tokens, since: meter.refilled, now: now)
      meter.refilled = now
      let verdict: Verdict
      if meter.tokens >= 1 {
        meter.tokens -= 1
        verdict = .accept
      } else {
        meter.refused += 1
        verdict = meter.refused > Double(limits.closeAfterRefused) ? .close : .refuse
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
      let (left, refilled) = shared.callers[caller] ?? (limits.burst, now)
      let tokens = refilledTokens(left, since: refilled, now: now)
      guard tokens >= 1 else {
        keep(tokens, for: caller, now: now, in: &shared)
        return max(Int(((1 - tokens) / limits.messagesPerSecond).rounded(.up)), 1)
      }
      keep(tokens - 1, for: caller, now: now, in: &shared)
      return nil
    }
  }

  /// Keeps `caller`'s tokens. Callers whose bucket would be full again are forgotten, so that
  /// the table holds only the recent ones (at most once per doubling: a table of recent
  /// callers only is not scanned each time).
  fileprivate func keep(
    _ tokens: Double, for caller: String, now: ContinuousClock.Instant, in shared: inout Shared
  ) {
    let refill = Duration.seconds(limits.burst / limits.messagesPerSecond)
    if shared.callers.count >= shared.pruneAt {
      shared.callers = shared.callers.filter { now - $0.value.refilled < refill }
      shared.pruneAt = max(1024, 2 * shared.callers.count)
    }
    shared.callers[caller] = (tokens, now)
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
