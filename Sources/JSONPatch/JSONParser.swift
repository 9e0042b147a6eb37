/// A recursive-descent JSON reader over UTF-8 bytes.
struct JSONParser {
  let bytes: [UInt8]
  var position = 0
  var depth = 0
  static let maxDepth = 64
  /// Goes past a flawed value (`flaw`) rather than refusing the document.
  let salvaging: Bool

  init(bytes: [UInt8], salvaging: Bool = false) {
    self.bytes = bytes
    self.salvaging = salvaging
  }

  mutating func parseDocument() throws(JSONParseError) -> JSONValue {
    skipWhitespace()
    let value = try parseValue()
    skipWhitespace()
    guard position == bytes.count else { throw fail("unexpected text after the value") }
    return value
  }

  func fail(_ reason: String) -> JSONParseError {
    JSONParseError(offset: position, reason: reason)
  }

  /// A value that cannot be taken, in a document whose structure may still be read.
  func flaw(_ reason: String) throws(JSONParseError) {
    if !salvaging { throw fail(reason) }
  }

  mutating func skipWhitespace() {
    while position < bytes.count,
      bytes[position] == 0x20 || bytes[position] == 0x0A || bytes[position] == 0x0D
        || bytes[position] == 0x09
    {
      position += 1
    }
  }

  mutating func parseValue() throws(JSONParseError) -> JSONValue {
    guard position < bytes.count else { throw fail("unexpected end of input") }
    switch bytes[position] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"):
      try expect("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try expect("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try expect("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
    default: throw fail("unexpected character")
    }
  }

  mutating func expect(_ literal: StaticString) throws(JSONParseError) {
    let count = literal.utf8CodeUnitCount
    guard position + count <= bytes.count else { throw fail("unexpected end of input") }
    for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] {
      throw fail("unexpected character")
    }
    position += count
  }

  mutating func parseObject() throws(JSONParseError) -> JSONValue {
    depth += 1
    guard depth <= Self.maxDepth else { throw fail("nested too deeply") }
    defer { depth -= 1 }
    position += 1
    var members: [String: JSONValue] = [:]
    skipWhitespace()
    if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
      position += 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
        throw fail("expected a member name")
      }
      let keyStart = position
      let key = try parseString()
      // NB: RFC 8259 §4 leaves a repeated name to the reader; taking the last one would
      // accept `{"text":"x","text":"y"}` as what its sender may not have meant.
      if members[key] != nil {
        let after = position
        position = keyStart
        try flaw("the member name \"\(key)\" appears twice")
        position = after
      }
      skipWhitespace()
      guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
        throw fail("expected ':'")
      }
      position += 1
      skipWhitespace()
      members[key] = try parseValue()
      skipWhitespace()
      guard position < bytes.count else { throw fail("unexpected end of input") }
      if bytes[position] == UInt8(ascii: ",") {
        position += 1
      } else if bytes[position] == UInt8(ascii: "}") {
        position += 1
        return .object(members)
      } else {
        throw fail("expected ',' or '}'")
      }
    }
  }

  mutating func parseArray() throws(JSONParseError) -> JSONValue {
    depth += 1
    guard depth <= Self.maxDepth else { throw fail("nested too deeply") }
    defer { depth -= 1 }
    position += 1
    var elements: [JSONValue] = []
    skipWhitespace()
    if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
      position += 1
      return .array(elements)
    }
    while true {
      skipWhitespace()
      elements.append(try parseValue())
      skipWhitespace()
      guard position < bytes.count else { throw fail("unexpected end of input") }
      if bytes[position] == UInt8(ascii: ",") {
        position += 1
      } else if bytes[position] == UInt8(ascii: "]") {
        position += 1
        return .array(elements)
      } else {
        throw fail("expected ',' or ']'")
      }
    }
  }

  mutating func parseString() throws(JSONParseError) -> String {
    position += 1
    var scalars: [UInt8] = []
    while true {
      guard position < bytes.count else { throw fail("unterminated string") }
      let byte = bytes[position]
      position += 1
      switch byte {
      case UInt8(ascii: "\""):
        // NB: JSON text is UTF-8 (RFC 8259 §8.1): bytes that are not are refused, not repaired
        // into U+FFFD (an HTTP body is not checked on its way in, as a text frame is).
        guard let string = String(validating: scalars, as: UTF8.self) else {
          try flaw("a string that is not UTF-8")
          return String(decoding: scalars, as: UTF8.self)
        }
        return string
      case UInt8(ascii: "\\"):
        guard position < bytes.count else { throw fail("unterminated string") }
        let escape = bytes[position]
        position += 1
        switch escape {
        case UInt8(ascii: "\""): scalars.append(0x22)
        case UInt8(ascii: "\\"): scalars.append(0x5C)
        case UInt8(ascii: "/"): scalars.append(0x2F)
        case UInt8(ascii: "b"): scalars.append(0x08)
        case UInt8(ascii: "f"): scalars.append(0x0C)
        case UInt8(ascii: "n"): scalars.append(0x0A)
        case UInt8(ascii: "r"): scalars.append(0x0D)
        case UInt8(ascii: "t"): scalars.append(0x09)
        case UInt8(ascii: "u"):
          var code = try parseHex4()
          if (0xD800..<0xDC00).contains(code), position + 5 < bytes.count,
            bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
          {
            let high = code
            position += 2
            let low = try parseHex4()
            if (0xDC00..<0xE000).contains(low) {
              code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            } else {
              // NB: salvaged, the high half is lost and the escape after it read again.
              position -= 6
            }
          }
          guard let scalar = Unicode.Scalar(code) else {
            try flaw("unpaired surrogate")
            scalars.append(contentsOf: "\u{FFFD}".utf8)
            continue
          }
          scalars.append(contentsOf: String(scalar).utf8)
        default:
          throw fail("invalid escape")
        }
      case 0..<0x20:
        try flaw("control character in string")
        scalars.append(byte)
      default:
        scalars.append(byte)
      }
    }
  }

  mutating func parseHex4() throws(JSONParseError) -> UInt32 {
    guard position + 4 <= bytes.count else { throw fail("unexpected end of input") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[position]
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default: throw fail("invalid \\u escape")
      }
      value = value << 4 | digit
      position += 1
    }
    return value
  }

  mutating func parseNumber() throws(JSONParseError) -> JSONValue {
    let start = position
    var isInteger = true
    if bytes[position] == UInt8(ascii: "-") { position += 1 }
    guard position < bytes.count, isDigit(bytes[position]) else { throw fail("invalid number") }
    if bytes[position] == UInt8(ascii: "0") {
      position += 1
    } else {
      while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }
    if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
      isInteger = false
      position += 1
      guard position < bytes.count, isDigit(bytes[position]) else { throw fail("invalid number") }
      while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }
    if position < bytes.count,
      bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E")
    {
      isInteger = false
      position += 1
      if position < bytes.count,
        bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
      {
        position += 1
      }
      guard position < bytes.count, isDigit(bytes[position]) else { throw fail("invalid number") }
      while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }
    let text = String(decoding: bytes[start..<position], as: UTF8.self)
    if isInteger, let value = Int(text) { return .int(value) }
    guard let value = Double(text) else { throw fail("invalid number") }
    // NB: a number past Double's range (1e999) would become infinity, which JSON cannot say:
    // written back it would be null. Refuse it instead (RFC 8259 §6 allows the limit).
    guard value.isFinite else {
      try flaw("number out of range")
      return .null
    }
    return .double(value)
  }

  func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
