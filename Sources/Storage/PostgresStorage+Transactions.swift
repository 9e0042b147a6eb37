import PostgresNIO

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
}
