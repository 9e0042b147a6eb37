import Synchronization

/// Async work run one piece at a time, in the order it was enqueued (a room's saves and the
/// lobby notifications that follow them). Each piece has a number; the errors of the pieces
/// that failed are kept (the last 64) until someone asks for them.
final class SerialQueue: Sendable {
  private struct Shared {
    var tail: Task<Void, Never>?
    var count = 0
    var failures: [Int: any Error] = [:]
  }
  private let shared = Mutex(Shared())

  /// How many pieces were enqueued so far: the number the next one gets.
  var count: Int { shared.withLock { $0.count } }

  func enqueue(_ operation: @escaping @Sendable () async throws -> Void) {
    shared.withLock { shared in
      let previous = shared.tail
      let number = shared.count
      shared.count += 1
      // NB: on the global pool, never a room's shard: saves wait on storage.
      shared.tail = Task(executorPreference: globalConcurrentExecutor) { [self] in
        await previous?.value
        do {
          try await operation()
        } catch {
          self.shared.withLock { shared in
            shared.failures[number] = error
            if shared.failures.count > 64, let oldest = shared.failures.keys.min() {
              shared.failures[oldest] = nil
            }
          }
        }
      }
    }
  }

  /// Returns once everything enqueued so far has run.
  func drain() async {
    await shared.withLock { $0.tail }?.value
  }

  /// The errors of the pieces numbered in `range` that failed (they are forgotten).
  func takeFailures(in range: Range<Int>) -> [any Error] {
    shared.withLock { shared in
      range.compactMap { shared.failures.removeValue(forKey: $0) }
    }
  }
}
