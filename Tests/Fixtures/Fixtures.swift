import Foundation
import IdentifiedCollections
import Logging
import PostgresNIO
import StandupsFeatures
import Storage

// What several test targets share: a fresh directory, a standup, a throwaway PostgreSQL
// database. (A library target, not a test target: test targets cannot import each other.)

/// A new, empty directory under the system's temporary directory.
public func temporaryDirectory() -> String {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("standups-\(UUID())")
  try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url.path
}

extension Standup {
  /// Three attendees, five minutes, no history.
  public static let design = Standup(
    id: UUID(uuidString: "DEADBEEF-0000-4000-8000-000000000001")!,
    attendees: [
      Attendee(id: UUID(uuidString: "A0000000-0000-4000-8000-000000000001")!, name: "Blob"),
      Attendee(id: UUID(uuidString: "A0000000-0000-4000-8000-000000000002")!, name: "Blob Jr"),
      Attendee(id: UUID(uuidString: "A0000000-0000-4000-8000-000000000003")!, name: "Blob Sr"),
    ],
    duration: .seconds(300), theme: .orange, title: "Design")
}

/// Why a test that needs PostgreSQL cannot have it.
public struct NoTestDatabase: Error, CustomStringConvertible {
  public var description: String {
    "STANDUPS_TEST_DATABASE_URL is not set: run these tests with scripts/with-postgres"
  }
}

/// A new, empty database on the server `STANDUPS_TEST_DATABASE_URL` names (`make test`
/// starts a throwaway one: scripts/with-postgres), opened.
///
/// - Returns: nil when no server is named — the caller skips — unless
///   `STANDUPS_REQUIRE_POSTGRES=1`, when it throws `NoTestDatabase`.
public func throwawayDatabase(prefix: String) async throws -> PostgresStorage? {
  let environment = ProcessInfo.processInfo.environment
  guard let text = environment["STANDUPS_TEST_DATABASE_URL"] else {
    if environment["STANDUPS_REQUIRE_POSTGRES"] == "1" { throw NoTestDatabase() }
    return nil
  }
  let base = try DatabaseURL(text)
  let admin = try await PostgresStorage(url: base, logger: Logger(label: "test"))
  let name = prefix + "_" + UUID().uuidString.lowercased().filter(\.isHexDigit).prefix(16)
  try await admin.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
  admin.close()
  var url = base
  url.database = name
  return try await PostgresStorage(url: url, logger: Logger(label: "test"))
}

/// Runs `body` while another session holds `table` locked (`ACCESS EXCLUSIVE`), as a database
/// that does not answer would be for every query of that table. The lock goes, and that
/// session with it, however `body` ends.
public func whileLocked<T>(
  _ table: String, in url: DatabaseURL, _ body: () async throws -> T
) async throws -> T {
  try await whileHeld("LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE", in: url, body)
}

/// Runs `body` while another session holds what `statement` takes, in a transaction of its own
/// (a table's lock, an advisory lock): released, and that session closed, however `body` ends.
public func whileHeld<T>(
  _ statement: String, in url: DatabaseURL, _ body: () async throws -> T
) async throws -> T {
  let logger = Logger(label: "test")
  let blocker = try await PostgresConnection.connect(
    configuration: try url.connectionConfiguration(), id: 9, logger: logger)
  do {
    try await blocker.query("BEGIN", logger: logger)
    try await blocker.query(PostgresQuery(unsafeSQL: statement), logger: logger)
    // NB: a query's rows come once the statements before it on the connection have run: the
    // lock is held from here on.
    for try await _ in try await blocker.query("SELECT 1", logger: logger).decode(Int.self) {}
    let result = try await body()
    try await blocker.query("ROLLBACK", logger: logger)
    try await blocker.close()
    return result
  } catch {
    // NB: postgres-nio asserts that no connection goes unclosed.
    try? await blocker.close()
    throw error
  }
}
