import Foundation
import GRDB
import StandupsFeatures

extension SQLiteStorage {
  public func loadDraft(_ id: Standup.ID) async throws -> StandupDraft? {
    try await database.read { db in
      try Row.fetchOne(
        db, sql: "SELECT standupId, body FROM draft WHERE standupId = ?", arguments: [id.uuidString]
      ).flatMap { row in
        UUID(uuidString: row["standupId"]).flatMap {
          StandupDraft(standupID: $0, body: row["body"])
        }
      }
    }
  }

  public func saveDraft(_ standupID: Standup.ID, _ draft: StandupDraft?) async throws {
    let body = try draft?.encodedBody()
    try await database.write { db in
      guard let body else {
        try db.execute(
          sql: "DELETE FROM draft WHERE standupId = ?", arguments: [standupID.uuidString])
        return
      }
      // NB: only for a standup that still exists (a delete may have won the race).
      try db.execute(
        sql: """
          INSERT OR REPLACE INTO draft (standupId, body, savedAt)
          SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM standup WHERE id = ?)
          """,
        arguments: [standupID.uuidString, body, Date(), standupID.uuidString])
    }
  }
}
