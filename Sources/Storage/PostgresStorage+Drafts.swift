import Foundation
import PostgresNIO
import StandupsFeatures

extension PostgresStorage {
  public func loadDraft(_ id: Standup.ID) async throws -> StandupDraft? {
    for try await (standupID, body) in try await client.query(
      "SELECT standup_id, body FROM draft WHERE standup_id = \(id)", logger: logger
    ).decode((UUID, String).self) {
      return StandupDraft(standupID: standupID, body: body)
    }
    return nil
  }

  /// Records an open form's draft (nil: it closed); in a cluster, fenced like every write of
  /// a room.
  public func saveDraft(
    _ standupID: Standup.ID, _ draft: StandupDraft?, fence: WriteFence? = nil
  ) async throws {
    guard let body = try draft?.encodedBody() else {
      try await write(fence) { connection in
        try await connection.query(
          "DELETE FROM draft WHERE standup_id = \(standupID)", logger: logger)
      }
      return
    }
    // NB: only for a standup that still exists (a delete may have won the race).
    try await write(fence) { connection in
      try await connection.query(
        """
        INSERT INTO draft (standup_id, body, saved_at)
        SELECT \(standupID), \(body), now()
        WHERE EXISTS (SELECT 1 FROM standup WHERE id = \(standupID))
        ON CONFLICT (standup_id) DO UPDATE SET body = excluded.body, saved_at = excluded.saved_at
        """, logger: logger)
    }
  }
}
