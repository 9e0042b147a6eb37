/// Why bytes could not be read as JSON.
public struct JSONParseError: Error, Equatable, CustomStringConvertible, Sendable {
  public let offset: Int
  public let reason: String
  public var description: String { "Invalid JSON at byte \(offset): \(reason)." }
}

extension JSONValue {
  /// Parses one JSON document (RFC 8259); numbers without a fraction or exponent that fit
  /// an `Int` become `.int`.
  public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
    let array = Array(bytes)
    var parser = JSONParser(bytes: array)
    self = try parser.parseDocument()
  }

  public init(parsing text: String) throws(JSONParseError) {
    try self.init(parsing: Array(text.utf8))
  }

  /// What a document whose structure is sound says, where one of its values is not (an
  /// unpaired surrogate, a number past a `Double`, a string that is not UTF-8, a repeated
  /// member name, a control character in a string): each such value replaced (U+FFFD, null,
  /// the last member). For reading what else a refused document said, such as a message's
  /// `ref`; nil if it is not JSON at all.
  public static func salvaging(_ bytes: some Collection<UInt8>) -> JSONValue? {
    var parser = JSONParser(bytes: Array(bytes), salvaging: true)
    return try? parser.parseDocument()
  }

  /// Compact UTF-8 JSON with object keys sorted, so equal values always encode to equal
  /// bytes.
  public var encoded: [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(256)
    write(to: &output)
    return output
  }

  public var encodedString: String { String(decoding: encoded, as: UTF8.self) }

  /// Appends the compact encoding of this value to `output`.
  public func write(to output: inout [UInt8]) {
    switch self {
    case .null: output.append(contentsOf: "null".utf8)
    case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
    case .int(let value): output.append(contentsOf: String(value).utf8)
    case .double(let value):
      if value.isFinite {
        output.append(contentsOf: String(value).utf8)
      } else {
        output.append(contentsOf: "null".utf8)
      }
    case .string(let value): JSONValue.writeString(value, to: &output)
    case .array(let elements):
      output.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        element.write(to: &output)
      }
      output.append(UInt8(ascii: "]"))
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for (index, (key, value)) in members.sorted(by: { $0.key < $1.key }).enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        JSONValue.writeString(key, to: &output)
        output.append(UInt8(ascii: ":"))
        value.write(to: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
  }

  static func writeString(_ string: String, to output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    for byte in string.utf8 { writeEscaped(byte, to: &output) }
    output.append(UInt8(ascii: "\""))
  }

  /// Appends one byte of a string's UTF-8 as it reads inside a JSON string.
  static func writeEscaped(_ byte: UInt8, to output: inout [UInt8]) {
    switch byte {
    case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
    case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
    case 0x0A: output.append(contentsOf: #"\n"#.utf8)
    case 0x0D: output.append(contentsOf: #"\r"#.utf8)
    case 0x09: output.append(contentsOf: #"\t"#.utf8)
    case 0..<0x20:
      let hex = Array("0123456789abcdef".utf8)
      output.append(contentsOf: #"\u00"#.utf8)
      output.append(hex[Int(byte >> 4)])
      output.append(hex[Int(byte & 0xF)])
    default: output.append(byte)
    }
  }
}

extension JSONPointer {
  /// Appends this pointer as a JSON string, as `JSONValue.string(description)` writes it,
  /// without building `description`.
  public func write(to output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    for token in tokens {
      output.append(UInt8(ascii: "/"))
      for byte in token.utf8 {
        switch byte {
        case UInt8(ascii: "~"): output.append(contentsOf: "~0".utf8)
        case UInt8(ascii: "/"): output.append(contentsOf: "~1".utf8)
        default: JSONValue.writeEscaped(byte, to: &output)
        }
      }
    }
    output.append(UInt8(ascii: "\""))
  }
}

extension PatchOperation {
  /// Appends `operations` as `JSONValue.array(operations.map(\.json))` writes them (each
  /// object's keys sorted: `from`, `op`, `path`, `value`), without building the objects: a
  /// patch is written once per change of every room.
  public static func write(_ operations: [PatchOperation], to output: inout [UInt8]) {
    output.append(UInt8(ascii: "["))
    for (index, operation) in operations.enumerated() {
      if index > 0 { output.append(UInt8(ascii: ",")) }
      operation.write(to: &output)
    }
    output.append(UInt8(ascii: "]"))
  }

  /// Appends this operation as `json.write(to:)` does.
  public func write(to output: inout [UInt8]) {
    switch self {
    case .add(let path, let value): Self.write("add", path: path, value: value, to: &output)
    case .remove(let path): Self.write("remove", path: path, to: &output)
    case .replace(let path, let value): Self.write("replace", path: path, value: value, to: &output)
    case .move(let from, let path): Self.write("move", from: from, path: path, to: &output)
    case .copy(let from, let path): Self.write("copy", from: from, path: path, to: &output)
    case .test(let path, let value): Self.write("test", path: path, value: value, to: &output)
    }
  }

  private static func write(
    _ op: String, from: JSONPointer? = nil, path: JSONPointer, value: JSONValue? = nil,
    to output: inout [UInt8]
  ) {
    output.append(UInt8(ascii: "{"))
    if let from {
      output.append(contentsOf: #""from":"#.utf8)
      from.write(to: &output)
      output.append(UInt8(ascii: ","))
    }
    output.append(contentsOf: #""op":""#.utf8)
    output.append(contentsOf: op.utf8)
    output.append(contentsOf: #"","path":"#.utf8)
    path.write(to: &output)
    if let value {
      output.append(contentsOf: #","value":"#.utf8)
      value.write(to: &output)
    }
    output.append(UInt8(ascii: "}"))
  }
}
