import ConcurrencyExtras
import Synchronization

/// The effects one store has running, indexed by cancellation id.
///
/// One table per store: cancelling an id here never touches another store's effects.
/// Effects leave the table the moment they are cancelled or finish.
final class EffectTable: Sendable {
  /// What runs an effect: its task, or a shard's timer.
  enum Running: Sendable {
    case task(Task<Void, Never>)
    case timer(Shard.Repeating)

    func cancel() {
      switch self {
      case .task(let task): task.cancel()
      case .timer(let timer): timer.cancel()
      }
    }
  }

  fileprivate struct Entry {
    var running: Running?
    var cancelIDs: [AnyHashableSendable]
    var origin: String
  }

  fileprivate struct State {
    var nextID = 0
    var entries: [Int: Entry] = [:]
    var byCancelID: [AnyHashableSendable: Set<Int>] = [:]
  }

  private let state = Mutex(State())

  /// Registers an effect before it runs, so it can be cancelled from the start.
  func reserve(cancelIDs: [AnyHashableSendable], origin: String) -> Int {
    state.withLock { state in
      let id = state.nextID
      state.nextID += 1
      state.entries[id] = Entry(running: nil, cancelIDs: cancelIDs, origin: origin)
      for cancelID in cancelIDs { state.byCancelID[cancelID, default: []].insert(id) }
      return id
    }
  }

  /// Attaches what runs the effect; cancels it at once if the effect was cancelled meanwhile.
  func attach(_ running: Running, to id: Int) {
    let alive = state.withLock { state -> Bool in
      guard state.entries[id] != nil else { return false }
      state.entries[id]?.running = running
      return true
    }
    if !alive { running.cancel() }
  }

  func isActive(_ id: Int) -> Bool { state.withLock { $0.entries[id] != nil } }

  /// The effect ended by itself.
  func finish(_ id: Int) { _ = state.withLock { $0.remove(id) } }

  func cancel(id cancelID: AnyHashableSendable) {
    let running = state.withLock { state in
      (state.byCancelID[cancelID] ?? []).compactMap { state.remove($0) }
    }
    for effect in running { effect.cancel() }
  }

  func cancelAll() {
    let running = state.withLock { state in
      state.entries.keys.compactMap { state.remove($0) }
    }
    for effect in running { effect.cancel() }
  }

  var count: Int { state.withLock { $0.entries.count } }

  /// Where each running effect was created (for test failures).
  var origins: [String] { state.withLock { $0.entries.values.map(\.origin).sorted() } }
}

extension EffectTable.State {
  /// Removes an entry; returns what runs it (which the caller cancels outside the lock).
  fileprivate mutating func remove(_ id: Int) -> EffectTable.Running? {
    guard let entry = entries.removeValue(forKey: id) else { return nil }
    for cancelID in entry.cancelIDs {
      byCancelID[cancelID]?.remove(id)
      if byCancelID[cancelID]?.isEmpty == true { byCancelID[cancelID] = nil }
    }
    return entry.running
  }
}
