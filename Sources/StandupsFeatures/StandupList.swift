import Foundation
import HashTreeCollections
import IdentifiedCollections

/// The lobby's standups, in creation order, each once.
///
/// NB: persistent, not an `IdentifiedArray`: the store keeps the state before each action (to
/// roll back a rejected one) and the room its last published version, so every change writes
/// to a shared value. Here a change copies the order (ids only: a copy of plain bytes, no
/// reference counting) and the path to one standup in a hash tree, O(log n); an identified
/// array copied every standup's title and attendees for each rename.
public struct StandupList: Equatable, Sendable, RandomAccessCollection, ExpressibleByArrayLiteral {
  /// Every id, in creation order.
  public private(set) var ids: [Standup.ID] = []
  private var byID: TreeDictionary<Standup.ID, Standup> = [:]

  public init() {}

  /// The standups in this order; a repeated id keeps its first place and its last value.
  public init(_ standups: some Sequence<Standup>) {
    for standup in standups { self[id: standup.id] = standup }
  }

  public init(arrayLiteral standups: Standup...) { self.init(standups) }

  public var startIndex: Int { ids.startIndex }
  public var endIndex: Int { ids.endIndex }

  /// The standup at `position`, in creation order.
  public subscript(position: Int) -> Standup {
    get {
      guard let standup = byID[ids[position]] else {
        preconditionFailure("StandupList lost the standup \(ids[position]).")
      }
      return standup
    }
    set {
      precondition(newValue.id == ids[position], "A standup keeps its place by its id.")
      byID[newValue.id] = newValue
    }
  }

  /// The standup with this id. Setting one that is not here appends it; setting nil removes.
  public subscript(id id: Standup.ID) -> Standup? {
    get { byID[id] }
    set {
      guard let newValue else {
        remove(id: id)
        return
      }
      precondition(newValue.id == id, "A standup is stored under its own id.")
      if byID.updateValue(newValue, forKey: id) == nil { ids.append(id) }
    }
  }

  /// Where the standup with this id is in creation order (a scan of the ids).
  public func index(id: Standup.ID) -> Int? { ids.firstIndex(of: id) }

  /// Adds a standup at the end (or replaces the one with its id, in its place).
  public mutating func append(_ standup: Standup) { self[id: standup.id] = standup }

  /// Removes the standup with this id, if it is here; returns it.
  @discardableResult
  public mutating func remove(id: Standup.ID) -> Standup? {
    guard let removed = byID.removeValue(forKey: id) else { return nil }
    ids.removeAll { $0 == id }
    return removed
  }

  public mutating func removeAll(where shouldBeRemoved: (Standup) throws -> Bool) rethrows {
    for standup in Array(self) where try shouldBeRemoved(standup) { remove(id: standup.id) }
  }

  public static func == (left: Self, right: Self) -> Bool {
    left.ids == right.ids && left.byID == right.byID
  }
}
