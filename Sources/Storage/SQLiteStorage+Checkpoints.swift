import Foundation
import GRDB
import StandupsFeatures

/// Meetings in progress: their checkpoints, and the clocks written once a second.
extension SQLiteStorage {
  public func loadCheckpoints() async throws -> [MeetingCheckpoint] { try await checkpoints() }

  public func loadCheckpoint(_ id: Standup.ID) async throws -> MeetingCheckpoint? {
    try await checkpoints(only: id).first
  }

  func checkpoints(only id: Standup.ID? = nil) async throws -> [MeetingCheckpoint] {
    let only = id?.uuidString
    return try await database.read { db in
      try Row.fetchAll(
        db, sql: "SELECT * FROM checkpoint WHERE ?1 IS NULL OR standupId = ?1", arguments: [only]
      ).compactMap { row in
        guard let standupID = UUID(uuidString: row["standupId"]),
          let meetingID = UUID(uuidString: row["meetingId"])
        else { return nil }
        return MeetingCheckpoint(
          standupID: standupID, meetingID: meetingID, secondsElapsed: row["secondsElapsed"],
          speakerIndex: row["speakerIndex"], transcript: row["transcript"],
          notes: Self.decoded([Note].self, from: row["notes"]) ?? [],
          present: Self.decoded([String].self, from: row["present"]) ?? [],
          presentBy: Self.decoded([String: Set<String>].self, from: row["presentBy"]) ?? [:],
          secondsRun: row["secondsRun"],
          pausedBecause: (row["pausedBecause"] as String?).flatMap(
            RecordMeeting.State.PauseReason.init(rawValue:)),
          emptiedAt: row["emptiedAt"])
      }
    }
  }

  public func saveCheckpoint(_ standupID: Standup.ID, _ checkpoint: MeetingCheckpoint?) async throws
  {
    try await database.write { db in
      guard let checkpoint else {
        try db.execute(
          sql: "DELETE FROM checkpoint WHERE standupId = ?", arguments: [standupID.uuidString])
        return
      }
      // NB: only for a standup that still exists (a delete may have won the race).
      try db.execute(
        sql:
          "INSERT OR REPLACE INTO checkpoint "
          + "(standupId, meetingId, secondsElapsed, speakerIndex, transcript, notes, present, "
          + "presentBy, secondsRun, pausedBecause, emptiedAt) "
          + "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? "
          + "WHERE EXISTS (SELECT 1 FROM standup WHERE id = ?)",
        arguments: [
          standupID.uuidString, checkpoint.meetingID.uuidString, checkpoint.secondsElapsed,
          checkpoint.speakerIndex, checkpoint.transcript, try Self.json(checkpoint.notes),
          try Self.json(checkpoint.present), try Self.json(checkpoint.presentBy),
          checkpoint.secondsRun,
          checkpoint.pausedBecause?.rawValue, checkpoint.emptiedAt, standupID.uuidString,
        ])
    }
  }

  /// Every running meeting's clock in one transaction (a checkpoint only moves forward).
  public func saveMeetingClocks(_ clocks: [MeetingClock]) async throws {
    try await database.write { db in
      // NB: one statement compiled once for every clock (compiling it per clock was most of
      // the heartbeat's cost with 500 meetings running).
      let update = try db.cachedStatement(
        sql: """
          UPDATE checkpoint SET secondsElapsed = ?, speakerIndex = ?, secondsRun = ?
          WHERE standupId = ? AND meetingId = ? AND secondsRun < ?
          """)
      for clock in clocks {
        try update.execute(arguments: [
          clock.secondsElapsed, clock.speakerIndex, clock.secondsRun,
          clock.standupID.uuidString, clock.meetingID.uuidString, clock.secondsRun,
        ])
      }
    }
  }
}
