import Foundation
import IdentifiedCollections
import Logging
import PostgresNIO
import StandupsFeatures
import Storage
import Testing

func temporaryDirectory() -> String {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("standups-\(UUID())")
  try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url.path
}

extension Standup {
  static let design = Standup(
    id: UUID(uuidString: "DEADBEEF-0000-4000-8000-000000000001")!,
    attendees: [
      Attendee(id: UUID(uuidString: "A0000000-0000-4000-8000-000000000001")!, name: "Blob"),
      Attendee(id: UUID(uuidString: "A0000000-0000-4000-8000-000000000002")!, name: "Blob Jr"),
      Attendee(id: UUID(uuidString: "A0000000-0000-4000-8000-000000000003")!, name: "Blob Sr"),
    ],
    duration: .seconds(300), theme: .orange, title: "Design")
}

/// One storage of each kind, empty, for a contract test.
///
/// PostgreSQL is the one `STANDUPS_TEST_DATABASE_URL` names (`make test` starts a throwaway
/// one: scripts/with-postgres); each test gets a database of its own there. Without it the
/// PostgreSQL cases are skipped — unless `STANDUPS_REQUIRE_POSTGRES=1`, when they fail.
enum StorageKind: String, CaseIterable, CustomTestStringConvertible {
  case memory, sqlite, postgres

  var testDescription: String { rawValue }

  /// A fresh, empty storage and what must live as long as it (nil: no PostgreSQL here).
  func make() async throws -> (storage: StorageClient, keep: Any)? {
    switch self {
    case .memory:
      return (.inMemory(), ())
    case .sqlite:
      let storage = try SQLiteStorage(directory: temporaryDirectory())
      return (storage.client, storage)
    case .postgres:
      guard let text = ProcessInfo.processInfo.environment["STANDUPS_TEST_DATABASE_URL"] else {
        try #require(
          ProcessInfo.processInfo.environment["STANDUPS_REQUIRE_POSTGRES"] != "1",
          "STANDUPS_TEST_DATABASE_URL is not set: run these tests with scripts/with-postgres")
        return nil
      }
      let base = try DatabaseURL(text)
      let admin = try await PostgresStorage(url: base, logger: Logger(label: "test"))
      let name = "storage_" + UUID().uuidString.lowercased().filter(\.isHexDigit).prefix(16)
      try await admin.client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
      admin.close()
      var url = base
      url.database = name
      let storage = try await PostgresStorage(url: url, logger: Logger(label: "test"))
      return (storage.storageClient, storage)
    }
  }
}
