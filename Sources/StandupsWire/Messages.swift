import JSONPatch
import StandupsFeatures
import StoreRuntime
import WebSocketTransport

/// An `error` the server sends back, with the protocol's code and a sentence to act on.
public struct WireError: Error, Equatable, Sendable {
  public enum Code: String, Sendable {
    case badJSON = "bad_json"
    case badMessage = "bad_message"
    case unknownAction = "unknown_action"
    case invalidValue = "invalid_value"
    case invalidAction = "invalid_action"
    case stale
    case tooLarge = "too_large"
    case rateLimited = "rate_limited"
    case unauthorized
    case forbidden
    case notFound = "not_found"
    case storageUnavailable = "storage_unavailable"
    /// The database went while it saved the change: it may or may not have been saved (the
    /// room reopens with what was); look before doing it again.
    case outcomeUnknown = "outcome_unknown"
    case quotaExceeded = "quota_exceeded"
    /// The standup is served by another node right now (a cluster moving it): retry soon.
    case roomMoving = "room_moving"
  }

  public var code: Code
  public var message: String
  /// The quota passed, for `quota_exceeded`.
  public var limit: Int?
  /// The form's field a refused save is about (`title`, `attendee:<id>`).
  public var field: String?
  /// For `rate_limited`: the seconds to wait, for HTTP's `Retry-After` (the message says it).
  public var retryAfter: Int?

  public init(
    _ code: Code, _ message: String, limit: Int? = nil, field: String? = nil,
    retryAfter: Int? = nil
  ) {
    self.code = code
    self.message = message
    self.limit = limit
    self.field = field
    self.retryAfter = retryAfter
  }

  public init(_ rejection: Rejection) {
    switch rejection.kind {
    case .invalidValue: code = .invalidValue
    case .invalidAction: code = .invalidAction
    case .stale: code = .stale
    case .quotaExceeded: code = .quotaExceeded
    }
    message = rejection.message
    limit = rejection.limit
    field = rejection.field
  }
}

extension WireError {
  /// The protocol's `error` message (`limit` only for `quota_exceeded`, `field` only for a
  /// refusal about one field of the form).
  public func json(ref: String?) -> JSONValue {
    var members: [String: JSONValue] = [
      "type": "error", "ref": ref.map(JSONValue.string) ?? .null,
      "code": .string(code.rawValue), "message": .string(message),
    ]
    if let limit { members["limit"] = .int(limit) }
    if let field { members["field"] = .string(field) }
    return .object(members)
  }
}

/// What a client sent: `{"type":"action","ref":"c-41","action":{...}}`, a request for a
/// page of history: `{"type":"history","ref":"h-1","offset":10,"limit":20}`, or a `ping`
/// (`{"type":"ping","ref":"p-1"}`), which a page sends after a quiet spell to learn that its
/// connection still reaches the room (a browser cannot see WebSocket pings).
public struct ClientMessage: Sendable {
  public var ref: String?
  public var action: [String: JSONValue]
  public var actionType: String
  /// Set for a `history` request.
  public var history: HistoryPage?
  /// A `ping`: answered with `pong`, nothing else.
  public var isPing: Bool

  public init(
    ref: String?, action: [String: JSONValue], actionType: String, history: HistoryPage? = nil,
    isPing: Bool = false
  ) {
    self.ref = ref
    self.action = action
    self.actionType = actionType
    self.history = history
    self.isPing = isPing
  }

  /// Which saved meetings a `history` request (or `GET …/meetings`) asks for.
  public struct HistoryPage: Sendable, Equatable {
    public static let maximumLimit = 50
    public var offset: Int
    public var limit: Int

    public init(offset: Int, limit: Int) {
      self.offset = offset
      self.limit = limit
    }

    /// Reads `offset` (default 0) and `limit` (default 20, at most 50).
    public static func read(offset: JSONValue?, limit: JSONValue?) throws(WireError) -> HistoryPage
    {
      func number(
        _ value: JSONValue?, _ name: String, default fallback: Int, _ range: ClosedRange<Int>
      )
        throws(WireError) -> Int
      {
        guard let value, value != .null else { return fallback }
        guard let int = value.intValue, range.contains(int) else {
          throw WireError(
            .invalidValue,
            "\"\(name)\" must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return int
      }
      return HistoryPage(
        offset: try number(offset, "offset", default: 0, 0...1_000_000),
        limit: try number(limit, "limit", default: 20, 1...maximumLimit))
    }
  }

  /// The `ref` of a message, if it had a usable one, even when the rest is malformed.
  public static func ref(in value: JSONValue?) -> String? {
    guard let ref = value?["ref"]?.stringValue, ref.count <= 64 else { return nil }
    return ref
  }

  /// The `ref` of an inbound frame that is not otherwise read (a refused one).
  public static func ref(of message: InboundMessage) -> String? {
    guard case .text(let bytes) = message else { return nil }
    return ref(in: JSONValue.salvaging(bytes))
  }

  /// Reads one inbound frame; throws the protocol's error for anything else.
  public static func parse(_ message: InboundMessage) throws(WireErrorWithRef) -> ClientMessage {
    let bytes: [UInt8]
    switch message {
    case .binary:
      throw WireErrorWithRef(nil, .badMessage, "Binary frames are not supported: send JSON text.")
    case .tooLarge(let limit):
      throw WireErrorWithRef(nil, .tooLarge, "A message may be at most \(limit / 1024) KiB.")
    case .text(let text):
      bytes = text
    }
    let json: JSONValue
    do {
      json = try JSONValue(parsing: bytes)
    } catch {
      // NB: its `ref` is still answered where it can be read (a broken character in a
      // title): a client waits for the answer to what it sent.
      throw WireErrorWithRef(
        ref(in: JSONValue.salvaging(bytes)), .badJSON,
        "The message is not valid JSON: at byte \(error.offset), \(error.reason).")
    }
    guard case .object(let members) = json else {
      throw WireErrorWithRef(nil, .badMessage, "A message must be a JSON object.")
    }
    let ref = Self.ref(in: json)
    if let rawRef = members["ref"], rawRef != .null, ref == nil {
      throw WireErrorWithRef(nil, .badMessage, "\"ref\" must be a string of at most 64 characters.")
    }
    guard let type = members["type"]?.stringValue else {
      throw WireErrorWithRef(
        ref, .badMessage,
        "A message needs a string \"type\"; send {\"type\":\"action\",\"action\":{...}}."
      )
    }
    if type == "history" {
      do {
        let page = try HistoryPage.read(offset: members["offset"], limit: members["limit"])
        return ClientMessage(ref: ref, action: [:], actionType: "", history: page)
      } catch {
        throw WireErrorWithRef(ref, error.code, error.message)
      }
    }
    if type == "ping" {
      return ClientMessage(ref: ref, action: [:], actionType: "", isPing: true)
    }
    guard type == "action" else {
      throw WireErrorWithRef(
        ref, .badMessage,
        "Unknown message type \"\(type)\": clients send \"action\", \"history\" and \"ping\" messages."
      )
    }
    guard case .object(let action)? = members["action"] else {
      throw WireErrorWithRef(ref, .badMessage, "\"action\" must be an object with a \"type\".")
    }
    guard let actionType = action["type"]?.stringValue else {
      throw WireErrorWithRef(
        ref, .badMessage, "\"action\" needs a string \"type\" naming what was done.")
    }
    return ClientMessage(ref: ref, action: action, actionType: actionType)
  }
}

/// A `WireError` with the `ref` of the message it answers.
public struct WireErrorWithRef: Error, Sendable {
  public var ref: String?
  public var error: WireError
  public init(_ ref: String?, _ code: WireError.Code, _ message: String) {
    self.ref = ref
    self.error = WireError(code, message)
  }
}

/// Server → client messages, encoded once.
public enum ServerMessage {
  /// - Parameter latest: resumed, the version the patches that follow it end at.
  public static func welcome(
    room: String, you: String, key: String? = nil, version: Int, state: JSONValue?,
    resumed: Bool, latest: Int? = nil
  )
    -> OutboundMessage
  {
    var members: [String: JSONValue] = [
      "type": "welcome", "room": .string(room), "you": .string(you), "version": .int(version),
      "state": state ?? .null,
    ]
    if let key { members["key"] = .string(key) }
    if resumed {
      members["resumed"] = true
      members["latest"] = .int(latest ?? version)
    }
    return OutboundMessage(JSONValue.object(members).encoded)
  }

  public static func patch(version: Int, operations: [PatchOperation]) -> [UInt8] {
    // NB: written by hand rather than through a dictionary: this runs once per change per
    // room, and the field order reads better in logs.
    var bytes = Array(#"{"type":"patch","version":"#.utf8)
    bytes.append(contentsOf: String(version).utf8)
    bytes.append(contentsOf: #","ops":"#.utf8)
    PatchOperation.write(operations, to: &bytes)
    bytes.append(UInt8(ascii: "}"))
    return bytes
  }

  /// A page of saved meetings, answering a `history` request.
  public static func history(ref: String?, offset: Int, page: MeetingPage) throws -> OutboundMessage
  {
    OutboundMessage(
      JSONValue.object([
        "type": "history", "ref": ref.map(JSONValue.string) ?? .null, "offset": .int(offset),
        "total": .int(page.total), "meetings": try JSONValue(encoding: page.meetings),
      ]).encoded)
  }

  /// Answers a `ping`, to its sender only.
  public static func pong(ref: String?) -> OutboundMessage {
    OutboundMessage(
      JSONValue.object(["type": "pong", "ref": ref.map(JSONValue.string) ?? .null]).encoded)
  }

  /// `details`: what the answer says besides the version (the lobby's names the standup an
  /// `addStandupSubmitted` made), as the HTTP API's answer does.
  public static func ack(
    ref: String, version: Int, details: [String: JSONValue] = [:]
  ) -> OutboundMessage {
    let ack: [String: JSONValue] = ["type": "ack", "ref": .string(ref), "version": .int(version)]
    return OutboundMessage(
      JSONValue.object(details.isEmpty ? ack : details.merging(ack) { _, answer in answer }).encoded
    )
  }

  public static func error(ref: String?, _ error: WireError) -> OutboundMessage {
    OutboundMessage(error.json(ref: ref).encoded)
  }
}
