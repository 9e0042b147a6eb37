import Fixtures
import Foundation
import IdentifiedCollections
import StandupsFeatures
import Storage
import Testing

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
      guard let storage = try await throwawayDatabase(prefix: "storage") else { return nil }
      return (storage.storageClient, storage)
    }
  }
}
