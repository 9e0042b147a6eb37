import Synchronization

/// Async work run one piece at a time, in the order it was enqueued (a room's saves and the
/// lobby notifications that follow them).
final class SerialQueue: Sendable {
  private let tail = Mutex<Task<Void, Never>?>(nil)

  func enqueue(_ operation: @escaping @Sendable () async -> Void) {
    tail.withLock { tail in
      let previous = tail
      tail = Task {
        await previous?.value
        await operation()
      }
    }
  }

  /// Returns once everything enqueued so far has run.
  func drain() async {
    await tail.withLock { $0 }?.value
  }
}
