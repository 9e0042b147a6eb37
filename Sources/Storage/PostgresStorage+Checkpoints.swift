import Foundation
import PostgresNIO
import StandupsFeatures

/// Meetings in progress: their checkpoints (the clocks are written in PostgresStorage, behind
/// its fence).
extension PostgresStorage {
  typealias CheckpointRow = (
    UUID, UUID, Int, Int, String, String, String, String, Int, String?, Double?
  )

  func checkpoints(only id: UUID? = nil) async throws -> [MeetingCheckpoint] {
    // NB: when a room emptied is kept by the database's clock, and read as how long ago, on
    // this node's: the node that reads it back (another one, after a move) may keep another
    // time than the one that wrote it, and someone back after 5 s must find the meeting going
    // on by itself, not after 25 s nor never. (Both clocks read as the row is: the database's
    // as the statement runs, not as its transaction began; this node's once the rows are here,
    // not before a pooled connection was free.)
    var checkpoints: [(MeetingCheckpoint, emptiedAgo: Double?)] = []
    for try await row in try await client.query(
      """
      SELECT standup_id, meeting_id, seconds_elapsed, speaker_index, transcript, notes, present,
        present_by, seconds_run, paused_because, EXTRACT(EPOCH FROM clock_timestamp() - emptied_at)::float8
      FROM checkpoint WHERE \(id)::uuid IS NULL OR standup_id = \(id)::uuid
      """, logger: logger
    ).decode(CheckpointRow.self) {
      let checkpoint = MeetingCheckpoint(
        standupID: row.0, meetingID: row.1, secondsElapsed: row.2, speakerIndex: row.3,
        transcript: row.4, notes: Self.decoded([Note].self, from: row.5) ?? [],
        present: Self.decoded([String].self, from: row.6) ?? [],
        presentBy: Self.decoded([String: Set<String>].self, from: row.7) ?? [:], secondsRun: row.8,
        pausedBecause: row.9.flatMap(RecordMeeting.State.PauseReason.init(rawValue:)))
      checkpoints.append((checkpoint, row.10))
    }
    let now = clock()
    return checkpoints.map { checkpoint, ago in
      var checkpoint = checkpoint
      checkpoint.emptiedAt = ago.map { now.addingTimeInterval(-$0) }
      return checkpoint
    }
  }

  public func loadCheckpoints() async throws -> [MeetingCheckpoint] { try await checkpoints() }

  public func loadCheckpoint(_ id: Standup.ID) async throws -> MeetingCheckpoint? {
    try await checkpoints(only: id).first
  }

  public func saveCheckpoint(
    _ standupID: Standup.ID, _ checkpoint: MeetingCheckpoint?, fence: WriteFence? = nil
  ) async throws {
    guard let checkpoint else {
      try await write(fence) { connection in
        try await connection.query(
          "DELETE FROM checkpoint WHERE standup_id = \(standupID)", logger: logger)
      }
      return
    }
    let notes = try Self.json(checkpoint.notes)
    let present = try Self.json(checkpoint.present)
    let presentBy = try Self.json(checkpoint.presentBy)
    // NB: only for a standup that still exists (a delete may have won the race).
    try await write(fence) { connection in
      // NB: how long ago by this node's clock now, as the row is written by the database's.
      let emptiedAgo = checkpoint.emptiedAt.map { clock().timeIntervalSince($0) }
      try await connection.query(
        """
        INSERT INTO checkpoint (standup_id, meeting_id, seconds_elapsed, speaker_index, transcript,
          notes, present, present_by, seconds_run, paused_because, emptied_at)
        SELECT \(standupID), \(checkpoint.meetingID), \(checkpoint.secondsElapsed), \(checkpoint.speakerIndex),
          \(checkpoint.transcript), \(notes), \(present), \(presentBy), \(checkpoint.secondsRun),
          \(checkpoint.pausedBecause?.rawValue)::text,
          clock_timestamp() - make_interval(secs => \(emptiedAgo)::float8)
        WHERE EXISTS (SELECT 1 FROM standup WHERE id = \(standupID))
        ON CONFLICT (standup_id) DO UPDATE SET meeting_id = excluded.meeting_id,
          seconds_elapsed = excluded.seconds_elapsed, speaker_index = excluded.speaker_index,
          transcript = excluded.transcript, notes = excluded.notes, present = excluded.present,
          present_by = excluded.present_by, seconds_run = excluded.seconds_run, paused_because = excluded.paused_because,
          emptied_at = excluded.emptied_at
        """, logger: logger)
    }
  }
}
