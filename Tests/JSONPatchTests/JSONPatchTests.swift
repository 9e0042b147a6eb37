import Foundation
import JSONPatch
import Testing

/// A small deterministic generator (SplitMix64), so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Random documents shaped like room state: objects, arrays of objects with ids, scalars.
func randomValue(depth: Int = 0, using rng: inout SeededGenerator) -> JSONValue {
  let choice = Int.random(in: 0..<(depth > 3 ? 5 : 8), using: &rng)
  switch choice {
  case 0: return .null
  case 1: return .bool(Bool.random(using: &rng))
  case 2: return .int(Int.random(in: -5...300, using: &rng))
  case 3:
    return .string(["", "a", "Blob", "x/y~z", "é 🎉", "line\nbreak"].randomElement(using: &rng)!)
  case 4: return .double(Double(Int.random(in: 0...100, using: &rng)) / 4)
  case 5:
    return .array(
      (0..<Int.random(in: 0...4, using: &rng)).map { _ in
        randomValue(depth: depth + 1, using: &rng)
      })
  case 6:
    // An array of objects with distinct ids, like attendees or meetings.
    let ids = Array(0..<8).shuffled(using: &rng).prefix(Int.random(in: 0...5, using: &rng))
    return .array(
      ids.map { id in
        .object(["id": .string("id-\(id)"), "name": randomValue(depth: depth + 2, using: &rng)])
      })
  default:
    var members: [String: JSONValue] = [:]
    for key in ["a", "b", "c/d", "e~f", "0"].shuffled(using: &rng).prefix(
      Int.random(in: 0...4, using: &rng))
    {
      members[key] = randomValue(depth: depth + 1, using: &rng)
    }
    return .object(members)
  }
}

/// A variation of `value`: some members changed, added or dropped, id arrays edited.
func mutate(_ value: JSONValue, using rng: inout SeededGenerator) -> JSONValue {
  switch value {
  case .object(var members):
    for key in members.keys where Bool.random(using: &rng) {
      members[key] =
        Int.random(in: 0..<4, using: &rng) == 0 ? nil : mutate(members[key]!, using: &rng)
    }
    if Bool.random(using: &rng) { members["new"] = randomValue(depth: 3, using: &rng) }
    return .object(members)
  case .array(var elements):
    if !elements.isEmpty, Bool.random(using: &rng) {
      let index = Int.random(in: elements.indices, using: &rng)
      elements[index] = mutate(elements[index], using: &rng)
    }
    if !elements.isEmpty, Bool.random(using: &rng) {
      elements.remove(at: Int.random(in: elements.indices, using: &rng))
    }
    if Bool.random(using: &rng) {
      let fresh: JSONValue =
        elements.first?["id"] != nil
        ? .object(["id": .string("id-new-\(rng.next() % 1000)"), "name": "n"])
        : randomValue(depth: 3, using: &rng)
      elements.insert(fresh, at: Int.random(in: 0...elements.count, using: &rng))
    }
    return .array(elements)
  default:
    return Int.random(in: 0..<3, using: &rng) == 0 ? randomValue(depth: 3, using: &rng) : value
  }
}

@Suite struct JSONPatchTests {
  @Test func diffThenApplyGivesBackTheNewValue() throws {
    var rng = SeededGenerator(state: 2026)
    for _ in 0..<5000 {
      let old = randomValue(using: &rng)
      let new = Bool.random(using: &rng) ? mutate(old, using: &rng) : randomValue(using: &rng)
      let patch = JSONPatch.diff(old, new)
      let applied = try JSONPatch.apply(patch, to: old)
      #expect(applied == new, "old: \(old.encodedString)\nnew: \(new.encodedString)")
      // Through the wire format too: every op survives encoding and parsing.
      let wire = JSONValue.array(patch.map(\.json)).encoded
      let reparsed = try JSONValue(parsing: wire).arrayValue!.map { PatchOperation(json: $0)! }
      #expect(reparsed == patch)
    }
  }

  @Test func anEditInsideAnArrayOfIdentifiedObjectsIsOneReplace() {
    let old: JSONValue = ["attendees": [["id": "a", "name": "Blob"], ["id": "b", "name": "Jr"]]]
    let new: JSONValue = ["attendees": [["id": "a", "name": "Blob"], ["id": "b", "name": "Sr"]]]
    #expect(
      JSONPatch.diff(old, new) == [.replace(path: JSONPointer("/attendees/1/name")!, value: "Sr")])
  }

  @Test func prependingToAnIdentifiedArrayIsOneAdd() {
    let old: JSONValue = ["meetings": [["id": "m1", "transcript": "x"]]]
    let new: JSONValue = [
      "meetings": [["id": "m2", "transcript": "y"], ["id": "m1", "transcript": "x"]]
    ]
    #expect(
      JSONPatch.diff(old, new) == [
        .add(path: JSONPointer("/meetings/0")!, value: ["id": "m2", "transcript": "y"])
      ])
  }

  /// Found by the fuzzer (`make fuzz`): 1e999 parsed as infinity and was written back as null.
  @Test func aNumberPastDoubleRangeIsRefusedNotTurnedIntoNull() throws {
    for text in ["1e999", "-1e400", "[1, 2e308]"] {
      #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
    }
    #expect(try JSONValue(parsing: "1.7e308") == .double(1.7e308))
  }

  /// Found by the fuzzer: a key starting with a combining mark lost it in a pointer's round
  /// trip ("/" and the mark are one Character).
  @Test func aPointerKeepsAKeyThatStartsWithACombiningMark() throws {
    let pointer = JSONPointer(tokens: ["\u{0355}ni", "a/b~c", "~\u{0355}/\u{0301}"])
    #expect(pointer.description == "/\u{0355}ni/a~1b~0c/~0\u{0355}~1\u{0301}")
    #expect(JSONPointer(pointer.description) == pointer)
  }

  @Test func equalDocumentsHaveAnEmptyPatch() {
    let value: JSONValue = ["a": [1, 2, ["b": nil]]]
    #expect(JSONPatch.diff(value, value).isEmpty)
  }

  /// RFC 6902, appendix A (a selection, including the error cases).
  @Test func rfc6902AppendixExamples() throws {
    func check(_ doc: String, _ patch: String, _ expected: String?) throws {
      let operations = try JSONValue(parsing: patch).arrayValue!.map { PatchOperation(json: $0)! }
      let document = try JSONValue(parsing: doc)
      if let expected {
        #expect(try JSONPatch.apply(operations, to: document) == JSONValue(parsing: expected))
      } else {
        #expect(throws: PatchError.self) { try JSONPatch.apply(operations, to: document) }
      }
    }
    try check(
      #"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux"}]"#,
      #"{"baz":"qux","foo":"bar"}"#)
    try check(
      #"{"foo":["bar","baz"]}"#, #"[{"op":"add","path":"/foo/1","value":"qux"}]"#,
      #"{"foo":["bar","qux","baz"]}"#)
    try check(#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"remove","path":"/baz"}]"#, #"{"foo":"bar"}"#)
    try check(
      #"{"foo":["bar","qux","baz"]}"#, #"[{"op":"remove","path":"/foo/1"}]"#,
      #"{"foo":["bar","baz"]}"#)
    try check(
      #"{"baz":"qux","foo":"bar"}"#, #"[{"op":"replace","path":"/baz","value":"boo"}]"#,
      #"{"baz":"boo","foo":"bar"}"#)
    try check(
      #"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#,
      #"[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]"#,
      #"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#)
    try check(
      #"{"foo":["all","grass","cows","eat"]}"#, #"[{"op":"move","from":"/foo/1","path":"/foo/3"}]"#,
      #"{"foo":["all","cows","eat","grass"]}"#)
    try check(
      #"{"baz":"qux","foo":["a",2,"c"]}"#,
      #"[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]"#,
      #"{"baz":"qux","foo":["a",2,"c"]}"#)
    try check(#"{"baz":"qux"}"#, #"[{"op":"test","path":"/baz","value":"bar"}]"#, nil)
    try check(
      #"{"foo":"bar"}"#, #"[{"op":"add","path":"/child","value":{"grandchild":{}}}]"#,
      #"{"foo":"bar","child":{"grandchild":{}}}"#)
    try check(#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz/bat","value":"qux"}]"#, nil)
    try check(
      #"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":10}]"#, #"{"/":9,"~1":10}"#)
    try check(
      #"{"foo":["bar"]}"#, #"[{"op":"add","path":"/foo/-","value":["abc","def"]}]"#,
      #"{"foo":["bar",["abc","def"]]}"#)
    try check(#"{"foo":1}"#, #"[{"op":"copy","from":"/foo","path":"/bar"}]"#, #"{"foo":1,"bar":1}"#)
  }
}

@Suite struct JSONValueTests {
  @Test func parsesAndEncodesCompactlyWithSortedKeys() throws {
    let value = try JSONValue(
      parsing: #" { "b" : [1, -2.5, true, null], "a": "x\"\\\n\u00e9\ud83c\udf89" } "#)
    #expect(value.encodedString == #"{"a":"x\"\\\né🎉","b":[1,-2.5,true,null]}"#)
  }

  @Test func rejectsWhatIsNotJSON() throws {
    for text in ["", "{", "[1,]", "{\"a\" 1}", "tru", "01", "1.", "\"\\x\"", "{} {}", "\"\u{01}\""]
    {
      #expect(throws: JSONParseError.self, "\(text)") { try JSONValue(parsing: text) }
    }
    let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
    #expect(throws: JSONParseError.self) { try JSONValue(parsing: deep) }
    // Bytes that are not UTF-8, in a value or a name: a stray byte, a sequence cut short, an
    // overlong form, a surrogate written out.
    for bytes: [UInt8] in [[0xFF], [0xC3], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80]] {
      let value = Array(#"{"text":"a"#.utf8) + bytes + Array(#"b"}"#.utf8)
      #expect(throws: JSONParseError.self, "\(bytes)") { try JSONValue(parsing: value) }
      let name = Array(#"{"a"#.utf8) + bytes + Array(#"":1}"#.utf8)
      #expect(throws: JSONParseError.self, "\(bytes)") { try JSONValue(parsing: name) }
    }
    #expect(try JSONValue(parsing: Array(#"["é€🎉"]"#.utf8)) == .array([.string("é€🎉")]))
    #expect(try JSONValue(parsing: #"["\ud83c\udf89"]"#) == .array([.string("🎉")]))
    // A name twice, half a surrogate pair, a number past a Double.
    for text in [
      #"{"a":1,"a":2}"#, #"{"a":{"b":1,"b":1}}"#, #"["\ud83d"]"#, #"["\udf89\ud83c"]"#,
      #"["\ud83dx"]"#, #"["\ud83d\u0041"]"#, "[1e400]", "[-1e400]",
    ] {
      #expect(throws: JSONParseError.self, "\(text)") { try JSONValue(parsing: text) }
    }
  }

  /// A document whose structure is sound is read past its flawed values (for a refused
  /// message's `ref`); one whose structure is broken is not read at all.
  @Test func salvagesWhatASoundStructureSays() throws {
    #expect(
      JSONValue.salvaging(Array(#"{"ref":"r","v":"a\ud83d","n":1e400,"x":1,"x":2}"#.utf8))
        == ["ref": "r", "v": "a\u{FFFD}", "n": nil, "x": 2])
    #expect(JSONValue.salvaging(Array(#"["\ud83d\u0041"]"#.utf8)) == ["\u{FFFD}A"])
    #expect(
      JSONValue.salvaging(Array(#"["a"#.utf8) + [0xFF] + Array(#"b"]"#.utf8)) == ["a\u{FFFD}b"])
    #expect(JSONValue.salvaging(Array("[\"a\u{01}b\"]".utf8)) == ["a\u{01}b"])
    for broken in ["", "{", #"{"ref":"r""#, #"{"ref":"r",}"#, "[1,]", "{} {}", #"["\x"]"#] {
      #expect(JSONValue.salvaging(Array(broken.utf8)) == nil, "\(broken)")
    }
  }

  @Test func encodesCodableValues() throws {
    struct Meeting: Encodable {
      var id = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
      var date = Date(timeIntervalSince1970: 1_795_338_000)
      var transcript: String? = nil
      var seconds = [1, 2]
      var ratio = 0.5
    }
    let encoded = try JSONValue(encoding: Meeting())
    #expect(
      encoded == [
        "id": "00000000-0000-0000-0000-000000000001", "date": "2026-11-22T09:00:00Z",
        "transcript": nil, "seconds": [1, 2], "ratio": 0.5,
      ], "\(encoded.encodedString)")
  }

  @Test func pointersEscapeAndUnescape() {
    let pointer = JSONPointer(tokens: ["a/b", "c~d", "0"])
    #expect(pointer.description == "/a~1b/c~0d/0")
    #expect(JSONPointer(pointer.description) == pointer)
    #expect(JSONPointer("no-slash") == nil)
    #expect(JSONPointer("/bad~2") == nil)
  }

  /// A patch is written straight to bytes; it must be exactly what its objects encode to.
  @Test func operationsAreWrittenAsTheirObjectsEncode() {
    let tricky = JSONPointer(tokens: ["a/b", "c~d", "q\"u\\o", "line\nbreak\u{1}", "é 🎉", ""])
    let value: JSONValue = ["x": [1, "two", nil, true, 2.5], "a": ["b": "c"]]
    let operations: [PatchOperation] = [
      .add(path: tricky, value: value), .remove(path: tricky),
      .replace(path: JSONPointer(tokens: ["meeting", "secondsElapsed"]), value: 5),
      .move(from: tricky, path: JSONPointer()), .copy(from: JSONPointer(), path: tricky),
      .test(path: JSONPointer(tokens: ["0"]), value: .null),
    ]
    for operation in operations {
      var written: [UInt8] = []
      operation.write(to: &written)
      #expect(written == operation.json.encoded, "\(operation)")
    }
    var all: [UInt8] = []
    PatchOperation.write(operations, to: &all)
    #expect(all == JSONValue.array(operations.map(\.json)).encoded)
    var none: [UInt8] = []
    PatchOperation.write([], to: &none)
    #expect(String(decoding: none, as: UTF8.self) == "[]")
  }
}
