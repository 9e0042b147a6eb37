import CLibWebSockets

/// Identifies one connection (HTTP or WebSocket) for as long as the server runs; never reused.
///
/// An id the transport hands out carries the connection's outbox, so that sending to it needs
/// no lookup; ids are equal (and hash) by `rawValue` alone.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
  public let rawValue: UInt64
  let outbox: OutboxCell?
  public init(rawValue: UInt64) {
    self.rawValue = rawValue
    outbox = nil
  }
  init(_ cell: OutboxCell) {
    rawValue = cell.id
    outbox = cell
  }
  public var description: String { "#\(rawValue)" }
  public static func == (lhs: ConnectionID, rhs: ConnectionID) -> Bool {
    lhs.rawValue == rhs.rawValue
  }
  public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

/// One text frame's payload, encoded once and written to any number of connections.
///
/// The bytes live after `CLWS_PRE` bytes of headroom, where libwebsockets writes the frame
/// header in place, so a broadcast shares a single buffer between all of its recipients.
public final class OutboundMessage: @unchecked Sendable {
  // NB: Sendable because the buffer is written once in `init` and only read afterwards
  // (lws writes frame headers into the headroom, on the single service thread).
  let storage: UnsafeMutableRawPointer
  /// The payload's length in bytes.
  public let count: Int
  /// Sent as a binary frame instead of text.
  public let isBinary: Bool

  /// Copies `payload` behind fresh headroom.
  public init(_ payload: some Collection<UInt8>, binary: Bool = false) {
    count = payload.count
    isBinary = binary
    storage = .allocate(byteCount: Int(CLWS_PRE) + max(count, 1), alignment: 16)
    UnsafeMutableRawBufferPointer(start: storage + Int(CLWS_PRE), count: count)
      .copyBytes(from: payload)
  }

  /// Encodes `text` as UTF-8.
  public convenience init(text: String) {
    self.init(Array(text.utf8))
  }

  deinit { storage.deallocate() }

  var payload: UnsafeMutablePointer<UInt8> {
    (storage + Int(CLWS_PRE)).assumingMemoryBound(to: UInt8.self)
  }

  /// The payload, copied out (tests and logs).
  public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: payload, count: count)) }
}

/// What arrived on a WebSocket, reassembled from its fragments.
public enum InboundMessage: Sendable, Equatable {
  /// A complete text message (UTF-8, validated by libwebsockets).
  case text([UInt8])
  /// A complete binary message (an application may refuse these; the bytes are
  /// here for endpoints that echo them, like the conformance tests').
  case binary([UInt8])
  /// A message larger than the configured limit; its bytes were dropped.
  case tooLarge(limit: Int)
}

/// A WebSocket close status code (RFC 6455 §7.4) with the codes this project uses named.
public struct CloseCode: RawRepresentable, Hashable, Sendable {
  public let rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }
  public static let normal = CloseCode(rawValue: 1000)
  public static let goingAway = CloseCode(rawValue: 1001)
  public static let policyViolation = CloseCode(rawValue: 1008)
  public static let messageTooBig = CloseCode(rawValue: 1009)
  public static let internalError = CloseCode(rawValue: 1011)
  /// The server restarts or hands the connection's work to another: reconnect (RFC 6455 §7.4.1).
  public static let serviceRestart = CloseCode(rawValue: 1012)
}
