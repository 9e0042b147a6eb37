/// A JSON document as a value: what room state becomes before it is diffed and sent.
public enum JSONValue: Hashable, Sendable {
  case null
  case bool(Bool)
  case int(Int)
  case double(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  /// The member `key` of an object, or nil.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members[key]
  }

  /// The element at `index` of an array, or nil.
  public subscript(index: Int) -> JSONValue? {
    guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
    return elements[index]
  }

  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  public var intValue: Int? {
    switch self {
    case .int(let value): return value
    case .double(let value) where value.rounded() == value && abs(value) < 9e15: return Int(value)
    default: return nil
    }
  }

  public var objectValue: [String: JSONValue]? {
    if case .object(let value) = self { return value }
    return nil
  }

  public var arrayValue: [JSONValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  public var isNull: Bool { self == .null }

  /// The value at an RFC 6901 JSON Pointer ("" is the whole document).
  public func value(at pointer: JSONPointer) -> JSONValue? {
    var current = self
    for token in pointer.tokens {
      switch current {
      case .object(let members):
        guard let next = members[token] else { return nil }
        current = next
      case .array(let elements):
        guard let index = JSONPointer.index(token), elements.indices.contains(index) else {
          return nil
        }
        current = elements[index]
      default:
        return nil
      }
    }
    return current
  }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
  public init(stringLiteral value: String) { self = .string(value) }
  public init(integerLiteral value: Int) { self = .int(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(nilLiteral: ()) { self = .null }
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
  public init(floatLiteral value: Double) { self = .double(value) }
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
}

/// An RFC 6901 JSON Pointer, e.g. `/standup/attendees/0/name`.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
  public var tokens: [String]

  public init(tokens: [String] = []) { self.tokens = tokens }

  /// Parses `""` or `/a/b~1c`; nil if it does not start with `/` or has a bad escape.
  public init?(_ text: String) {
    guard !text.isEmpty else {
      self.tokens = []
      return
    }
    // NB: by Unicode scalars, not Characters: a "/" followed by a combining mark is one
    // Character, and splitting or dropping by Characters would lose the mark (found by the
    // fuzzer).
    let scalars = text.unicodeScalars
    guard scalars.first == "/" else { return nil }
    var tokens: [String] = []
    for raw in scalars.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
      var token = String.UnicodeScalarView()
      var escaping = false
      for scalar in raw {
        if escaping {
          switch scalar {
          case "0": token.append("~")
          case "1": token.append("/")
          default: return nil
          }
          escaping = false
        } else if scalar == "~" {
          escaping = true
        } else {
          token.append(scalar)
        }
      }
      if escaping { return nil }
      tokens.append(String(token))
    }
    self.tokens = tokens
  }

  public func appending(_ token: String) -> JSONPointer {
    JSONPointer(tokens: tokens + [token])
  }

  public func appending(_ index: Int) -> JSONPointer { appending(String(index)) }

  public var description: String {
    tokens.map {
      "/" + $0.replacingOccurrences("~", with: "~0").replacingOccurrences("/", with: "~1")
    }.joined()
  }

  /// An array index token: digits only, no leading zero.
  static func index(_ token: String) -> Int? {
    guard !token.isEmpty, token.allSatisfy(\.isASCII), token.allSatisfy(\.isNumber),
      token == "0" || !token.hasPrefix("0")
    else { return nil }
    return Int(token)
  }
}

extension String {
  /// `target` replaced, by Unicode scalar: a "~" followed by a combining mark is one
  /// Character but still a "~" to RFC 6901 (found by the fuzzer).
  fileprivate func replacingOccurrences(_ target: Unicode.Scalar, with replacement: String)
    -> String
  {
    guard unicodeScalars.contains(target) else { return self }
    var result = String.UnicodeScalarView()
    for scalar in unicodeScalars {
      if scalar == target {
        result.append(contentsOf: replacement.unicodeScalars)
      } else {
        result.append(scalar)
      }
    }
    return String(result)
  }
}
