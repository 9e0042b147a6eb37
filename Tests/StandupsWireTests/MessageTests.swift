import JSONPatch
import StandupsWire
import StoreRuntime
import Testing
import WebSocketTransport

/// The envelope around actions: what a frame must look like, and what the server answers.
struct MessageTests {
  static func text(_ string: String) -> InboundMessage { .text(Array(string.utf8)) }

  static let badFrames: [(String, InboundMessage, String?, WireError.Code, String)] = [
    ("binary", .binary([1, 2]), nil, .badMessage, "Binary frames are not supported"),
    ("too large", .tooLarge(limit: 65536), nil, .tooLarge, "A message may be at most 64 KiB."),
    (
      "not JSON", text("{"), nil, .badJSON,
      "The message is not valid JSON: at byte 1, expected a member name."
    ),
    ("not an object", text("[]"), nil, .badMessage, "A message must be a JSON object."),
    // A value that cannot be read, in a frame whose ref can: the ref is answered (a client
    // waits for the answer to what it sent, a title's typing above all).
    (
      "a broken character", text(#"{"type":"action","ref":"s1","action":{"value":"a\ud83d"}}"#),
      "s1", .badJSON, "The message is not valid JSON: at byte 54, unpaired surrogate."
    ),
    (
      "a number past a Double", text(#"{"ref":"s2","type":"action","action":{"seq":1e400}}"#),
      "s2", .badJSON, "The message is not valid JSON: at byte 49, number out of range."
    ),
    (
      "a name twice", text(#"{"type":"action","ref":"s3","action":{"text":"x","text":"y"}}"#),
      "s3", .badJSON,
      #"The message is not valid JSON: at byte 49, the member name "text" appears twice."#
    ),
    (
      "a broken frame's ref is not guessed", text(#"{"ref":"s4","type":"action""#), nil, .badJSON,
      "The message is not valid JSON: at byte 27, unexpected end of input."
    ),
    ("ref not a string", text(#"{"type":"action","ref":5}"#), nil, .badMessage, "\"ref\" must be"),
    ("no type", text(#"{"ref":"r1"}"#), "r1", .badMessage, "A message needs a string \"type\""),
    (
      "type not a string", text(#"{"type":5}"#), nil, .badMessage,
      "A message needs a string \"type\""
    ),
    (
      "unknown type", text(#"{"type":"hello","ref":"r2"}"#), "r2", .badMessage,
      "Unknown message type \"hello\""
    ),
    ("no action", text(#"{"type":"action","ref":"r3"}"#), "r3", .badMessage, "\"action\" must be"),
    (
      "action without a type", text(#"{"type":"action","ref":"r4","action":{}}"#), "r4",
      .badMessage, "\"action\" needs a string \"type\""
    ),
    (
      "history past its limit", text(#"{"type":"history","ref":"h","limit":51}"#), "h",
      .invalidValue, "\"limit\" must be a whole number from 1 to 50."
    ),
  ]

  @Test(arguments: badFrames)
  func aBadFrameIsAnsweredWithItsRefAndCode(
    _ name: String, _ frame: InboundMessage, _ ref: String?, _ code: WireError.Code,
    _ message: String
  ) {
    do {
      _ = try ClientMessage.parse(frame)
      Issue.record("\(name) was read")
    } catch {
      #expect(error.ref == ref, "\(name)")
      #expect(error.error.code == code, "\(name)")
      // NB: a message given whole (ending with its full stop) is checked whole; the others
      // by their beginning.
      if message.hasSuffix(".") {
        #expect(error.error.message == message, "\(name)")
      } else {
        #expect(error.error.message.hasPrefix(message), "\(name): \(error.error.message)")
      }
    }
  }

  @Test func aGoodFrameIsRead() throws {
    let action = try ClientMessage.parse(
      Self.text(#"{"type":"action","ref":"c-1","action":{"type":"editButtonTapped"}}"#))
    #expect(action.ref == "c-1")
    #expect(action.actionType == "editButtonTapped")
    #expect(action.history == nil)
    let history = try ClientMessage.parse(Self.text(#"{"type":"history","ref":"h-1"}"#))
    #expect(history.history == ClientMessage.HistoryPage(offset: 0, limit: 20))
    #expect(!history.isPing && !action.isPing)
    let ping = try ClientMessage.parse(Self.text(#"{"type":"ping","ref":"p-1"}"#))
    #expect(ping.isPing && ping.ref == "p-1" && ping.history == nil)
    #expect(
      try JSONValue(parsing: ServerMessage.pong(ref: "p-1").bytes)
        == ["type": "pong", "ref": "p-1"])
    // A refused frame's ref is found even though nothing else is read.
    #expect(ClientMessage.ref(of: Self.text(#"{"ref":"x","type":1}"#)) == "x")
    #expect(ClientMessage.ref(of: .binary([])) == nil)
  }

  @Test func theServersAnswersHaveTheProtocolsShapes() throws {
    #expect(
      try JSONValue(parsing: ServerMessage.ack(ref: "c-1", version: 7).bytes)
        == ["type": "ack", "ref": "c-1", "version": 7])
    // What an answer says besides its version goes beside it, never over its own members.
    #expect(
      try JSONValue(
        parsing: ServerMessage.ack(
          ref: "c-2", version: 8, details: ["standup": ["id": "S"], "version": 1]
        ).bytes) == ["type": "ack", "ref": "c-2", "version": 8, "standup": ["id": "S"]])
    #expect(
      try JSONValue(
        parsing: ServerMessage.error(
          ref: nil, WireError(.quotaExceeded, "Too many.", limit: 500)
        ).bytes)
        == [
          "type": "error", "ref": nil, "code": "quota_exceeded", "message": "Too many.",
          "limit": 500,
        ])
    // `limit` and `field` only where there is one.
    #expect(WireError(.stale, "Gone.").json(ref: "r")["limit"] == nil)
    #expect(WireError(.stale, "Gone.").json(ref: "r")["field"] == nil)
    // A refused save names the field to fix, from the reducer's rejection.
    #expect(
      try JSONValue(
        parsing: ServerMessage.error(
          ref: "c-2", WireError(.invalidValue("A standup needs a title.", field: "title"))
        ).bytes)
        == [
          "type": "error", "ref": "c-2", "code": "invalid_value",
          "message": "A standup needs a title.", "field": "title",
        ])
    #expect(
      try JSONValue(parsing: ServerMessage.patch(version: 3, operations: []))
        == ["type": "patch", "version": 3, "ops": []])
    #expect(
      try JSONValue(
        parsing: ServerMessage.welcome(
          room: "lobby", you: "p1", key: "k1", version: 9, state: nil, resumed: true,
          latest: 12
        ).bytes)
        == [
          "type": "welcome", "room": "lobby", "you": "p1", "key": "k1", "version": 9,
          "state": nil, "resumed": true, "latest": 12,
        ])
    #expect(
      try JSONValue(
        parsing: ServerMessage.welcome(
          room: "lobby", you: "p1", key: "k1", version: 9, state: ["a": 1], resumed: false
        ).bytes)
        == [
          "type": "welcome", "room": "lobby", "you": "p1", "key": "k1", "version": 9,
          "state": ["a": 1],
        ], "An ordinary welcome names no latest: its state is the latest.")
  }
}
