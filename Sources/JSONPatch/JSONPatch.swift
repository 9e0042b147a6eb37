/// One RFC 6902 operation.
public enum PatchOperation: Hashable, Sendable {
  case add(path: JSONPointer, value: JSONValue)
  case remove(path: JSONPointer)
  case replace(path: JSONPointer, value: JSONValue)
  case move(from: JSONPointer, path: JSONPointer)
  case copy(from: JSONPointer, path: JSONPointer)
  case test(path: JSONPointer, value: JSONValue)

  /// The operation as the JSON object RFC 6902 describes.
  public var json: JSONValue {
    switch self {
    case .add(let path, let value):
      ["op": "add", "path": .string(path.description), "value": value]
    case .remove(let path): ["op": "remove", "path": .string(path.description)]
    case .replace(let path, let value):
      ["op": "replace", "path": .string(path.description), "value": value]
    case .move(let from, let path):
      ["op": "move", "from": .string(from.description), "path": .string(path.description)]
    case .copy(let from, let path):
      ["op": "copy", "from": .string(from.description), "path": .string(path.description)]
    case .test(let path, let value):
      ["op": "test", "path": .string(path.description), "value": value]
    }
  }

  /// Reads an operation object; nil if it is not one.
  public init?(json: JSONValue) {
    guard let op = json["op"]?.stringValue, let pathText = json["path"]?.stringValue,
      let path = JSONPointer(pathText)
    else { return nil }
    func from() -> JSONPointer? { json["from"]?.stringValue.flatMap(JSONPointer.init) }
    switch op {
    case "add":
      guard let value = json["value"] else { return nil }
      self = .add(path: path, value: value)
    case "remove": self = .remove(path: path)
    case "replace":
      guard let value = json["value"] else { return nil }
      self = .replace(path: path, value: value)
    case "move":
      guard let from = from() else { return nil }
      self = .move(from: from, path: path)
    case "copy":
      guard let from = from() else { return nil }
      self = .copy(from: from, path: path)
    case "test":
      guard let value = json["value"] else { return nil }
      self = .test(path: path, value: value)
    default: return nil
    }
  }
}

/// Why a patch could not be applied.
public struct PatchError: Error, Equatable, CustomStringConvertible, Sendable {
  public let description: String
}

/// RFC 6902 JSON Patch: computing one between two documents, and applying one.
public enum JSONPatch {
  /// The operations that turn `old` into `new`.
  ///
  /// Objects are diffed member by member. Arrays whose elements are all objects with distinct
  /// `id` members are diffed by id, so an edit to one element is a change at that element's
  /// path and an insertion is one `add`; other arrays are diffed by position.
  public static func diff(_ old: JSONValue, _ new: JSONValue) -> [PatchOperation] {
    diff(old, new, at: JSONPointer())
  }

  /// The operations that turn `old`, found at `path` in a document, into `new`.
  public static func diff(_ old: JSONValue, _ new: JSONValue, at path: JSONPointer)
    -> [PatchOperation]
  {
    var operations: [PatchOperation] = []
    diff(old, new, at: path, into: &operations)
    return operations
  }

  static func diff(
    _ old: JSONValue, _ new: JSONValue, at path: JSONPointer,
    into operations: inout [PatchOperation]
  ) {
    guard old != new else { return }
    switch (old, new) {
    case (.object(let oldMembers), .object(let newMembers)):
      for key in oldMembers.keys.sorted() where newMembers[key] == nil {
        operations.append(.remove(path: path.appending(key)))
      }
      for (key, newValue) in newMembers.sorted(by: { $0.key < $1.key }) {
        if let oldValue = oldMembers[key] {
          diff(oldValue, newValue, at: path.appending(key), into: &operations)
        } else {
          operations.append(.add(path: path.appending(key), value: newValue))
        }
      }
    case (.array(let oldElements), .array(let newElements)):
      // The common case, cheaply: the same elements in the same places, some of them changed.
      if oldElements.count == newElements.count, !hasMovedElements(oldElements, newElements) {
        for index in oldElements.indices {
          diff(oldElements[index], newElements[index], at: path.appending(index), into: &operations)
        }
        return
      }
      if let oldIDs = ids(of: oldElements), let newIDs = ids(of: newElements),
        diffByID(oldElements, oldIDs, newElements, newIDs, at: path, into: &operations)
      {
        return
      }
      let common = min(oldElements.count, newElements.count)
      for index in 0..<common {
        diff(oldElements[index], newElements[index], at: path.appending(index), into: &operations)
      }
      for index in stride(from: oldElements.count - 1, through: newElements.count, by: -1) {
        operations.append(.remove(path: path.appending(index)))
      }
      for index in oldElements.count..<max(newElements.count, oldElements.count) {
        operations.append(.add(path: path.appending(index), value: newElements[index]))
      }
    default:
      operations.append(.replace(path: path, value: new))
    }
  }

  /// Whether some place holds an element with another `id` than before. When none does, the
  /// id-aware diff would diff the elements place by place, and so does the plain one.
  static func hasMovedElements(_ oldElements: [JSONValue], _ newElements: [JSONValue]) -> Bool {
    for (old, new) in zip(oldElements, newElements) where old != new {
      if let oldID = old["id"], let newID = new["id"], oldID != newID { return true }
    }
    return false
  }

  /// The `id` of every element, or nil unless all are objects with distinct ids.
  static func ids(of elements: [JSONValue]) -> [JSONValue]? {
    guard !elements.isEmpty else { return [] }
    var ids: [JSONValue] = []
    ids.reserveCapacity(elements.count)
    for element in elements {
      guard let id = element["id"] else { return nil }
      ids.append(id)
    }
    return Set(ids).count == ids.count ? ids : nil
  }

  /// Removes what left, adds what came, diffs what stayed; false (nothing emitted) if the
  /// elements that stayed changed order.
  static func diffByID(
    _ oldElements: [JSONValue], _ oldIDs: [JSONValue], _ newElements: [JSONValue],
    _ newIDs: [JSONValue], at path: JSONPointer, into operations: inout [PatchOperation]
  ) -> Bool {
    let newSet = Set(newIDs)
    let oldIndexByID = Dictionary(uniqueKeysWithValues: zip(oldIDs, oldIDs.indices))
    let keptOld = oldIDs.filter { newSet.contains($0) }
    let keptNew = newIDs.filter { oldIndexByID[$0] != nil }
    guard keptOld == keptNew else { return false }
    for index in oldIDs.indices.reversed() where !newSet.contains(oldIDs[index]) {
      operations.append(.remove(path: path.appending(index)))
    }
    for (index, id) in newIDs.enumerated() {
      if let oldIndex = oldIndexByID[id] {
        diff(
          oldElements[oldIndex], newElements[index], at: path.appending(index), into: &operations)
      } else {
        operations.append(.add(path: path.appending(index), value: newElements[index]))
      }
    }
    return true
  }

  /// Applies `operations` in order; throws (leaving nothing half-done) if one fails.
  public static func apply(_ operations: [PatchOperation], to document: JSONValue)
    throws(PatchError)
    -> JSONValue
  {
    var result = document
    for operation in operations {
      switch operation {
      case .add(let path, let value): try add(value, at: path, in: &result)
      case .remove(let path): _ = try remove(at: path, in: &result)
      case .replace(let path, let value):
        if path.tokens.isEmpty {
          result = value
        } else {
          _ = try remove(at: path, in: &result)
          try add(value, at: path, in: &result)
        }
      case .move(let from, let path):
        if path.tokens.starts(with: from.tokens) && path != from {
          throw PatchError(description: "Cannot move \(from) into its own child \(path).")
        }
        let value = try remove(at: from, in: &result)
        try add(value, at: path, in: &result)
      case .copy(let from, let path):
        guard let value = result.value(at: from) else {
          throw PatchError(description: "Nothing at \(from) to copy.")
        }
        try add(value, at: path, in: &result)
      case .test(let path, let value):
        guard let actual = result.value(at: path), jsonEqual(actual, value) else {
          throw PatchError(description: "Test failed at \(path).")
        }
      }
    }
    return result
  }

  /// RFC 6902 equality: numbers compare by value (1 == 1.0).
  static func jsonEqual(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Double(a) == b
    case (.array(let a), .array(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { jsonEqual($0, $1) }
    case (.object(let a), .object(let b)):
      return a.count == b.count
        && a.allSatisfy { key, value in b[key].map { jsonEqual(value, $0) } ?? false }
    default: return lhs == rhs
    }
  }

  static func add(_ value: JSONValue, at path: JSONPointer, in document: inout JSONValue)
    throws(PatchError)
  {
    guard let last = path.tokens.last else {
      document = value
      return
    }
    try modifyParent(of: path, in: &document) { (parent: inout JSONValue) throws(PatchError) in
      switch parent {
      case .object(var members):
        parent = .null  // NB: drop the reference so the mutation below is in place.
        members[last] = value
        parent = .object(members)
      case .array(var elements):
        let index: Int
        if last == "-" {
          index = elements.count
        } else if let parsed = JSONPointer.index(last), parsed <= elements.count {
          index = parsed
        } else {
          throw PatchError(description: "Index \(last) is out of range at \(path).")
        }
        parent = .null
        elements.insert(value, at: index)
        parent = .array(elements)
      default:
        throw PatchError(description: "Cannot add at \(path): its parent is not a container.")
      }
    }
  }

  static func remove(at path: JSONPointer, in document: inout JSONValue) throws(PatchError)
    -> JSONValue
  {
    guard let last = path.tokens.last else {
      throw PatchError(description: "Cannot remove the whole document.")
    }
    var removed = JSONValue.null
    try modifyParent(of: path, in: &document) { (parent: inout JSONValue) throws(PatchError) in
      switch parent {
      case .object(var members):
        guard let value = members.removeValue(forKey: last) else {
          throw PatchError(description: "Nothing at \(path) to remove.")
        }
        removed = value
        parent = .object(members)
      case .array(var elements):
        guard let index = JSONPointer.index(last), elements.indices.contains(index) else {
          throw PatchError(description: "Index \(last) is out of range at \(path).")
        }
        removed = elements.remove(at: index)
        parent = .array(elements)
      default:
        throw PatchError(description: "Nothing at \(path) to remove.")
      }
    }
    return removed
  }

  static func modifyParent(
    of path: JSONPointer, in document: inout JSONValue,
    _ body: (inout JSONValue) throws(PatchError) -> Void
  ) throws(PatchError) {
    try modify(path.tokens.dropLast()[...], in: &document, path: path, body)
  }

  static func modify(
    _ tokens: ArraySlice<String>, in value: inout JSONValue, path: JSONPointer,
    _ body: (inout JSONValue) throws(PatchError) -> Void
  ) throws(PatchError) {
    guard let first = tokens.first else {
      try body(&value)
      return
    }
    switch value {
    case .object(var members):
      guard var child = members[first] else {
        throw PatchError(description: "The path \(path) does not exist.")
      }
      value = .null
      members[first] = nil
      try modify(tokens.dropFirst(), in: &child, path: path, body)
      members[first] = child
      value = .object(members)
    case .array(var elements):
      guard let index = JSONPointer.index(first), elements.indices.contains(index) else {
        throw PatchError(description: "The path \(path) does not exist.")
      }
      value = .null
      var child = elements[index]
      elements[index] = .null
      try modify(tokens.dropFirst(), in: &child, path: path, body)
      elements[index] = child
      value = .array(elements)
    default:
      throw PatchError(description: "The path \(path) does not exist.")
    }
  }
}
