import ConcurrencyExtras
import Synchronization

/// The effects one store has running, indexed by cancellation id.
///
/// One table per store: cancelling an id here never touches another store's effects.
/// Effects leave the table the moment they are cancelled or finish.
final class EffectTable: Sendable {
  fileprivate struct Entry {
    var task: Task<Void, Never>?
    var cancelIDs: [AnyHashableSendable]
    var origin: String
  }

  fileprivate struct State {
    var nextID = 0
    var entries: [Int: Entry] = [:]
    var byCancelID: [AnyHashableSendable: Set<Int>] = [:]
  }

  private let state = Mutex(State())

  /// Registers an effect before its task exists, so it can be cancelled from the start.
  func reserve(cancelIDs: [AnyHashableSendable], origin: String) -> Int {
    state.withLock { state in
      let id = state.nextID
      state.nextID += 1
      state.entries[id] = Entry(task: nil, cancelIDs: cancelIDs, origin: origin)
      for cancelID in cancelIDs { state.byCancelID[cancelID, default: []].insert(id) }
      return id
    }
  }

  /// Attaches the running task; cancels it at once if the effect was cancelled meanwhile.
  func attach(_ task: Task<Void, Never>, to id: Int) {
    let alive = state.withLock { state -> Bool in
      guard state.entries[id] != nil else { return false }
      state.entries[id]?.task = task
      return true
    }
    if !alive { task.cancel() }
  }

  func isActive(_ id: Int) -> Bool { state.withLock { $0.entries[id] != nil } }

  /// The effect ended by itself.
  func finish(_ id: Int) { _ = state.withLock { $0.remove(id) } }

  func cancel(id cancelID: AnyHashableSendable) {
    let tasks = state.withLock { state in
      (state.byCancelID[cancelID] ?? []).compactMap { state.remove($0) }
    }
    for task in tasks { task.cancel() }
  }

  func cancelAll() {
    let tasks = state.withLock { state in
      state.entries.keys.compactMap { state.remove($0) }
    }
    for task in tasks { task.cancel() }
  }

  var count: Int { state.withLock { $0.entries.count } }

  /// Where each running effect was created (for test failures).
  var origins: [String] { state.withLock { $0.entries.values.map(\.origin).sorted() } }
}

extension EffectTable.State {
  /// Removes an entry; returns its task (which the caller cancels outside the lock).
  fileprivate mutating func remove(_ id: Int) -> Task<Void, Never>? {
    guard let entry = entries.removeValue(forKey: id) else { return nil }
    for cancelID in entry.cancelIDs {
      byCancelID[cancelID]?.remove(id)
      if byCancelID[cancelID]?.isEmpty == true { byCancelID[cancelID] = nil }
    }
    return entry.task
  }
}
