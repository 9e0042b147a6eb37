import Foundation
import GRDB
import StandupsFeatures

extension SQLiteStorage {
  /// Records a saved meeting's notes again (one added after it ended); nothing else of its
  /// standup is written, so an edit form's draft stays. A meeting not saved is an error.
  public func saveMeetingNotes(_ standupID: Standup.ID, _ meeting: Meeting) async throws {
    let notes = try Self.json(meeting.notes)
    try await database.write { db in
      try db.execute(
        sql: "UPDATE meeting SET transcript = ?, notes = ? WHERE standupId = ? AND id = ?",
        arguments: [meeting.transcript, notes, standupID.uuidString, meeting.id.uuidString])
      guard db.changesCount > 0 else { throw StorageError.meetingNotSaved }
    }
  }
}

extension StorageError {
  /// Notes for a meeting that is not in storage: its standup was deleted, or its save failed.
  static let meetingNotSaved = StorageError("That meeting is not saved: its notes cannot change.")
}
