import Foundation
import Synchronization

/// Slows guessing: counts failed credentials per address (per /64 for IPv6) in a one-minute
/// window; past the limit, that address waits until the window ends, whatever it sends.
final class FailedAttempts: Sendable {
  struct Window {
    var started: ContinuousClock.Instant
    var failures: Int
  }

  private struct Table {
    var windows: [String: Window] = [:]
    var pruned = ContinuousClock.now
  }

  let limit: Int
  let window: Duration
  /// The addresses counted at most (memory: a caller with many IPv6 networks fails from a new
  /// one each time).
  let capacity: Int
  private let table = Mutex(Table())

  init(limit: Int = 10, window: Duration = .seconds(60), capacity: Int = 100_000) {
    self.limit = limit
    self.window = window
    self.capacity = capacity
  }

  /// How many addresses are being counted now.
  var count: Int { table.withLock { $0.windows.count } }

  /// Whole seconds this address must wait before trying again, or nil.
  func retryAfter(_ address: String, now: ContinuousClock.Instant = .now) -> Int? {
    let key = Self.key(for: address)
    return table.withLock { table -> Int? in
      guard let entry = table.windows[key], entry.failures >= limit else { return nil }
      let left = entry.started + window - now
      guard left > .zero else {
        table.windows[key] = nil
        return nil
      }
      return max(
        1,
        Int(
          (Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18).rounded(
            .up)))
    }
  }

  func recordFailure(_ address: String, now: ContinuousClock.Instant = .now) {
    let key = Self.key(for: address)
    table.withLock { table in
      // NB: expired windows are dropped at most once a window, however many addresses fail.
      if now - table.pruned >= window {
        table.windows = table.windows.filter { now - $0.value.started < window }
        table.pruned = now
      }
      if let entry = table.windows[key], now - entry.started < window {
        table.windows[key]?.failures += 1
        return
      }
      if table.windows.count >= capacity {
        // NB: full: the expired go first, then every address not over its limit (forgetting
        // a few failures of an address guessing from ever new ones lets it guess no faster);
        // those waiting out their window stay.
        table.windows = table.windows.filter { now - $0.value.started < window }
        table.pruned = now
        if table.windows.count >= capacity {
          table.windows = table.windows.filter { $0.value.failures >= limit }
        }
      }
      table.windows[key] = Window(started: now, failures: 1)
    }
  }

  /// An IPv4 address as it is; an IPv6 address by its /64 (one customer's network);
  /// an IPv4-mapped IPv6 address as the IPv4 address.
  static func key(for address: String) -> String {
    var bytes = [UInt8](repeating: 0, count: 16)
    guard address.contains(":"), inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
    if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
      return bytes[12...].map(String.init).joined(separator: ".")
    }
    return stride(from: 0, to: 8, by: 2).map {
      String(format: "%x", Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]))
    }
    .joined(separator: ":") + "::/64"
  }
}
