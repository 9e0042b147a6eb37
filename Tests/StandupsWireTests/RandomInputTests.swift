import JSONPatch
import StandupsFeatures
import StandupsWire
import Testing
import WebSocketTransport

/// Frames no client would send — valid ones with bytes flipped, cut, or repeated, and every
/// action type with values of the wrong kind — read the way a room reads them. The inputs
/// come from a fixed seed, so a failure names an input that fails again.
///
/// (libFuzzer explores the same path, and the reducers after it, in `make fuzz`'s wire target,
/// `Fuzz/Targets/wire-fuzz`; this test is the same seeded run everywhere, in every test run.)
struct RandomInputTests {
  /// SplitMix64: small, fast, and the same sequence everywhere.
  struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  static let senders = [
    Sender(participantID: "p1", name: "Ana", isBot: false),
    Sender(participantID: "b1", name: "Deploy", isBot: true, scope: .notes),
    Sender(participantID: "b2", name: "Driver", isBot: true, scope: .drive),
  ]

  /// Every action the wire knows, as a client would send it.
  static let seeds: [String] =
    ActionDecodingTests.roomActions.map { wire, _ in
      JSONValue.object([
        "type": "action", "ref": "c-1", "action": .object(wire.action),
      ]).encodedString
    } + [
      #"{"type":"history","ref":"h-1","offset":10,"limit":20}"#,
      #"{"type":"action","ref":"l-1","action":{"type":"addStandupSubmitted","standup":{"title":"T","duration":300,"theme":"sky","attendees":[{"name":"A"}]}}}"#,
    ]

  static let oddValues: [JSONValue] = [
    nil, true, 0, -1, 1e300, 2_147_483_648, "", " ", "\u{202E}evil", "attendee:",
    "/attendees//name",
    .string(String(repeating: "x", count: 5000)), [], [nil], ["x"], [:], ["type": "x"],
  ]

  /// Reads a frame as a room (or the lobby) would; checks what comes back is an answer.
  static func read(_ bytes: [UInt8], sender: Sender) {
    let message: ClientMessage
    do {
      message = try ClientMessage.parse(.text(bytes))
    } catch {
      #expect(!error.error.message.isEmpty)
      #expect((error.ref?.count ?? 0) <= 64)
      return
    }
    #expect((message.ref?.count ?? 0) <= 64)
    guard message.history == nil else {
      #expect((message.history?.limit ?? 0) <= ClientMessage.HistoryPage.maximumLimit)
      return
    }
    do {
      _ = try ActionDecoding.roomAction(message.action, type: message.actionType, sender: sender)
      // A bot only gets past decoding with what its scope allows.
      if let scope = sender.scope {
        #expect(BotScope.needed(forRoomAction: message.actionType) <= scope)
      }
    } catch {
      #expect(!error.message.isEmpty)
    }
    do {
      _ = try ActionDecoding.lobbyAction(message.action, type: message.actionType, sender: sender)
    } catch {
      #expect(!error.message.isEmpty)
    }
  }

  @Test func mutatedFramesAreReadOrRefusedWithAnAnswer() {
    var random = Generator(state: 20_261_123)
    for round in 0..<20_000 {
      var bytes = Array(Self.seeds.randomElement(using: &random)!.utf8)
      for _ in 0...Int.random(in: 0...3, using: &random) {
        switch Int.random(in: 0..<5, using: &random) {
        case 0 where !bytes.isEmpty:
          bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(
            in: 0...255, using: &random)
        case 1 where !bytes.isEmpty:
          bytes.removeSubrange(Int.random(in: 0..<bytes.count, using: &random)...)
        case 2 where !bytes.isEmpty:
          let start = Int.random(in: 0..<bytes.count, using: &random)
          let end = min(bytes.count, start + Int.random(in: 1...16, using: &random))
          bytes.insert(
            contentsOf: bytes[start..<end], at: Int.random(in: 0...bytes.count, using: &random))
        case 3:
          bytes.insert(
            [0x00, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0xFF, 0xC3].randomElement(using: &random)!,
            at: Int.random(in: 0...bytes.count, using: &random))
        default:
          if !bytes.isEmpty { bytes.remove(at: Int.random(in: 0..<bytes.count, using: &random)) }
        }
      }
      Self.read(bytes, sender: Self.senders[round % Self.senders.count])
    }
  }

  @Test func everyActionWithValuesOfTheWrongKindIsAnsweredNeverTrusted() throws {
    var random = Generator(state: 6455)
    let fields = ["from", "text", "path", "value", "ids", "seq", "field", "standup"]
    let types = ActionDecodingTests.roomActions.map(\.0.type) + ["addStandupSubmitted", "x"]
    for round in 0..<20_000 {
      var action: [String: JSONValue] = ["type": .string(types.randomElement(using: &random)!)]
      for _ in 0..<Int.random(in: 0...3, using: &random) {
        action[fields.randomElement(using: &random)!] = Self.oddValues.randomElement(
          using: &random)!
      }
      let frame = JSONValue.object(["type": "action", "ref": "r", "action": .object(action)])
      Self.read(Array(frame.encodedString.utf8), sender: Self.senders[round % Self.senders.count])
    }
  }
}
