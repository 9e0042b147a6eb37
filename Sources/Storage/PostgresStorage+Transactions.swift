import PostgresNIO
import Synchronization

extension PostgresStorage {
  /// Runs `body`'s reads in one read-only transaction that sees the database as it was at its
  /// first read: never part of one save and part of the next, which a reading of several
  /// statements beside a writer (another node's lobby, while a room saves) would otherwise.
  func snapshot<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
    do {
      return try await client.withTransaction(logger: logger) { connection in
        try await connection.query(
          "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
        return try await body(connection)
      }
    } catch let error as PostgresTransactionError {
      throw error.closureError ?? error.commitError ?? error.beginError ?? error
    }
  }

  /// Runs `body` in one transaction. With a fence, only while this node's session holds the
  /// room's lock — checked in the database first, and against the heartbeat just before the
  /// commit — so that a node that was frozen or cut off cannot overwrite, on waking, what the
  /// room's next node saved and acknowledged meanwhile.
  func write(
    _ fence: WriteFence?, _ body: (PostgresConnection) async throws -> Void
  ) async throws {
    do {
      try await client.withTransaction(logger: logger) { connection in
        if let fence { try await fence.check(on: connection, logger: logger) }
        try await body(connection)
        if let fence, !fence.holds() { throw WriteFence.notServed }
      }
    } catch let error as PostgresTransactionError {
      // NB: what went wrong, not postgres-nio's wrapper around it.
      throw error.closureError ?? error.commitError ?? error.beginError ?? error
    }
  }

  /// `body`'s answer, or a `StorageError` once `limit` has passed without one. `body` is then
  /// cancelled, but not waited for: a query on a connection the network left half-open may
  /// not end until TCP gives up. (What it was writing may still land then, as any write whose
  /// connection was lost during its commit.)
  static func withTimeout<T: Sendable>(
    _ limit: Duration, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    let race = Race<T>()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        race.start(continuation, within: limit, body)
      }
    } onCancel: {
      race.cancel()
    }
  }

  /// A call and its deadline: whichever ends first answers.
  private final class Race<T: Sendable>: Sendable {
    private let state = Mutex<
      (
        answer: CheckedContinuation<T, any Error>?, work: Task<Void, Never>?,
        timer: Task<Void, Never>?
      )
    >((nil, nil, nil))

    func start(
      _ answer: CheckedContinuation<T, any Error>, within limit: Duration,
      _ body: @escaping @Sendable () async throws -> T
    ) {
      state.withLock { $0.answer = answer }
      let work = Task {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        self.finish(with: result)
      }
      let timer = Task {
        try? await Task.sleep(for: limit)
        guard !Task.isCancelled else { return }
        self.finish(
          with: .failure(StorageError("the database did not answer within \(limit)")),
          timedOut: true)
      }
      state.withLock { ($0.work, $0.timer) = (work, timer) }
    }

    /// Answers once: with the call's result (the timer goes), or its deadline's (the call is
    /// cancelled).
    private func finish(with result: Result<T, any Error>, timedOut: Bool = false) {
      let (answer, work, timer) = state.withLock { state in
        defer { state.answer = nil }
        return (state.answer, state.work, state.timer)
      }
      guard let answer else { return }
      if timedOut { work?.cancel() } else { timer?.cancel() }
      answer.resume(with: result)
    }

    func cancel() { state.withLock { $0.work }?.cancel() }
  }
}
