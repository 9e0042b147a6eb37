import PostgresNIO
import Synchronization

extension PostgresStorage {
  /// What to do when a write goes unanswered (`said`): in a cluster, end the node's session.
  ///
  /// `handler` is given the node session (its backend's pid) the write was fenced by, or that
  /// was current as an unfenced one began (nil: none was, in a cluster): a write of a session
  /// that ended already ends no other.
  public func whenAWriteGoesUnanswered(_ handler: @escaping @Sendable (Int32?) -> Void) {
    unanswered.withLock { $0 = Unanswered(run: handler) }
  }
  // NB: in a class, as `ClockFence` is, for the same reason.
  final class Unanswered: Sendable {
    let run: @Sendable (Int32?) -> Void
    init(run: @escaping @Sendable (Int32?) -> Void) { self.run = run }
  }

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

  /// `body`'s answer, or `NoAnswer` once `limit` has passed without one. `body` is then
  /// cancelled, but not waited for: a query on a connection the network left half-open may
  /// not end until TCP gives up (what it was writing may still land: `said` says what then).
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

  /// A call the database did not answer in time.
  struct NoAnswer: Error {
    var limit: Duration
  }

  /// A call and its deadline: whichever ends first answers, once.
  private final class Race<T: Sendable>: Sendable {
    private struct State {
      var answer: CheckedContinuation<T, any Error>?
      var work: Task<Void, Never>?
      var timer: Task<Void, Never>?
      /// The caller was cancelled (maybe before the work began).
      var cancelled = false
    }
    private let state = Mutex(State())

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
        self.finish(with: .failure(NoAnswer(limit: limit)), timedOut: true)
      }
      // NB: the work may have answered, or the caller been cancelled, before they were kept.
      let (cancelled, answered) = state.withLock { state in
        (state.work, state.timer) = (work, timer)
        return (state.cancelled, state.answer == nil)
      }
      if cancelled { work.cancel() }
      if answered { timer.cancel() }
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

    func cancel() {
      let work = state.withLock { state in
        state.cancelled = true
        return state.work
      }
      work?.cancel()
    }
  }
}
