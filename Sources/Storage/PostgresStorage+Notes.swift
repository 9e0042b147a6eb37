import Foundation
import PostgresNIO
import StandupsFeatures

extension PostgresStorage {
  /// Records a saved meeting's notes again (one added after it ended); nothing else of its
  /// standup is written, so an edit form's draft stays. A meeting not saved is an error. In a
  /// cluster, fenced like every write of a room.
  public func saveMeetingNotes(
    _ standupID: Standup.ID, _ meeting: Meeting, fence: WriteFence? = nil
  ) async throws {
    let notes = try Self.json(meeting.notes)
    try await write(fence) { connection in
      var updated = false
      for try await _ in try await connection.query(
        """
        UPDATE meeting SET transcript = \(meeting.transcript), notes = \(notes)
        WHERE standup_id = \(standupID) AND id = \(meeting.id) RETURNING 1
        """, logger: logger
      ).decode(Int32.self) {
        updated = true
      }
      guard updated else { throw StorageError.meetingNotSaved }
    }
  }
}
