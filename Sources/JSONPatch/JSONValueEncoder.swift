import Foundation

extension JSONValue {
  /// Encodes any `Encodable` value straight into a `JSONValue` (no bytes in between).
  /// Dates become ISO 8601 strings in UTC (`2026-11-22T09:00:00Z`), UUIDs their strings.
  public init(encoding value: some Encodable) throws {
    self = try JSONValueEncoding.encode(value, codingPath: [])
  }
}

/// The encoder behind `JSONValue(encoding:)`: containers write into reference-typed boxes
/// that are turned into values when encoding finishes.
final class JSONValueEncoding: Encoder {
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }
  var storage: Box?

  init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

  /// - Parameter codingPath: built only for a value with containers of its own (it is an
  ///   array of existentials: building one for every field was a good part of the cost).
  static func encode(_ value: some Encodable, codingPath: @autoclosure () -> [any CodingKey])
    throws -> JSONValue
  {
    switch value {
    case let date as Date: return .string(date.formatted(.iso8601))
    case let uuid as UUID: return .string(uuid.uuidString)
    case let string as String: return .string(string)
    case let int as Int: return .int(int)
    case let bool as Bool: return .bool(bool)
    default:
      let encoder = JSONValueEncoding(codingPath: codingPath())
      try value.encode(to: encoder)
      return encoder.storage?.value ?? .object([:])
    }
  }

  /// A value under construction.
  final class Box {
    enum Content {
      case value(JSONValue)
      case object([String: Box])
      case array([Box])
    }
    var content: Content
    init(_ content: Content) { self.content = content }

    var value: JSONValue {
      switch content {
      case .value(let value): return value
      case .object(let members): return .object(members.mapValues(\.value))
      case .array(let elements): return .array(elements.map(\.value))
      }
    }
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let box: Box
    if let storage, case .object = storage.content {
      box = storage
    } else {
      box = Box(.object([:]))
      storage = box
    }
    return KeyedEncodingContainer(KeyedContainer<Key>(box: box, codingPath: codingPath))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    let box: Box
    if let storage, case .array = storage.content {
      box = storage
    } else {
      box = Box(.array([]))
      storage = box
    }
    return UnkeyedContainer(box: box, codingPath: codingPath)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    SingleContainer(encoder: self)
  }

  struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: Box
    let codingPath: [any CodingKey]

    func set(_ value: Box, for key: Key) {
      guard case .object(var members) = box.content else { return }
      box.content = .value(.null)
      members[key.stringValue] = value
      box.content = .object(members)
    }

    mutating func encodeNil(forKey key: Key) throws { set(Box(.value(.null)), for: key) }

    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
      set(
        Box(.value(try JSONValueEncoding.encode(value, codingPath: codingPath + [key]))), for: key)
    }

    // NB: the plain values a hand-written `encode(to:)` writes most, without the casts of
    // the generic path.
    mutating func encode(_ value: Int, forKey key: Key) throws {
      set(Box(.value(.int(value))), for: key)
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
      set(Box(.value(.string(value))), for: key)
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
      set(Box(.value(.bool(value))), for: key)
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
      set(Box(.value(.double(value))), for: key)
    }

    mutating func encodeIfPresent(_ value: (some Encodable)?, forKey key: Key) throws {
      // NB: state shapes are fixed on the wire: an absent optional is `null`, not missing.
      if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    // NB: synthesized `encode(to:)` calls these concrete overloads, whose defaults skip nil.
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
      try encodeIfPresent(value.map { $0 as String }, forKey: key, generic: ())
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
      try encodeIfPresent(value.map { $0 as Int }, forKey: key, generic: ())
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
      try encodeIfPresent(value.map { $0 as Bool }, forKey: key, generic: ())
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
      try encodeIfPresent(value.map { $0 as Double }, forKey: key, generic: ())
    }
    private mutating func encodeIfPresent(
      _ value: (some Encodable)?, forKey key: Key, generic: Void
    ) throws {
      if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
      let nested = Box(.object([:]))
      set(nested, for: key)
      return KeyedEncodingContainer(
        KeyedContainer<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
      let nested = Box(.array([]))
      set(nested, for: key)
      return UnkeyedContainer(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { JSONValueEncoding(codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
      JSONValueEncoding(codingPath: codingPath + [key])
    }
  }

  struct UnkeyedContainer: UnkeyedEncodingContainer {
    let box: Box
    let codingPath: [any CodingKey]
    var count: Int {
      if case .array(let elements) = box.content { return elements.count }
      return 0
    }

    func append(_ value: Box) {
      guard case .array(var elements) = box.content else { return }
      box.content = .value(.null)
      elements.append(value)
      box.content = .array(elements)
    }

    mutating func encodeNil() throws { append(Box(.value(.null))) }

    mutating func encode(_ value: some Encodable) throws {
      append(Box(.value(try JSONValueEncoding.encode(value, codingPath: codingPath))))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
      -> KeyedEncodingContainer<NestedKey>
    {
      let nested = Box(.object([:]))
      append(nested)
      return KeyedEncodingContainer(KeyedContainer<NestedKey>(box: nested, codingPath: codingPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
      let nested = Box(.array([]))
      append(nested)
      return UnkeyedContainer(box: nested, codingPath: codingPath)
    }

    mutating func superEncoder() -> any Encoder { JSONValueEncoding(codingPath: codingPath) }
  }

  struct SingleContainer: SingleValueEncodingContainer {
    let encoder: JSONValueEncoding
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.storage = Box(.value(.null)) }

    mutating func encode(_ value: some Encodable) throws {
      encoder.storage = Box(.value(try JSONValueEncoding.encode(value, codingPath: codingPath)))
    }

    mutating func encode(_ value: Double) throws {
      encoder.storage = Box(.value(.double(value)))
    }
  }
}
