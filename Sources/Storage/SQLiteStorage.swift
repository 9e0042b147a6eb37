import Foundation
import GRDB
import IdentifiedCollections
import StandupsFeatures

/// Standups in SQLite, through GRDB: one file in WAL mode, every save one transaction that is
/// on disk before it returns.
public final class SQLiteStorage: Sendable {
  public let database: DatabasePool
  /// Where the file lives.
  public let path: String

  /// Opens (or creates) `<directory>/standups.sqlite` and brings its schema up to date.
  /// Throws, with a message that says what to do, if the file is not a Standups database.
  public init(directory: String) throws {
    path = URL(fileURLWithPath: directory).appendingPathComponent("standups.sqlite").path
    // NB: SQLite takes an empty file for a new database: a copy that never got its bytes (a
    // full disk during a restore) would start a new team, every session and bot gone.
    if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
      size == 0
    {
      throw StorageError(
        "The database \(path) is empty (0 bytes): a copy that did not finish? Nothing was "
          + "changed: restore it from a backup, or remove it to start a new, empty team.")
    }
    var configuration = Configuration()
    // NB: the server and a command run beside it (`bots add`, `invite`) write the same file: a
    // write that finds the other's under way waits for it (they take milliseconds), rather
    // than fail at once ("database is locked") and undo a person's change.
    configuration.busyMode = .timeout(Self.busyTimeout)
    configuration.prepareDatabase { db in
      // NB: FULL: a committed save survives a power cut too, not only a killed process.
      try db.execute(sql: "PRAGMA synchronous = FULL")
    }
    do {
      database = try DatabasePool(path: path, configuration: configuration)
      // NB: a file a newer server wrote (an upgrade rolled back) holds what this one does not
      // know how to keep: it is refused untouched, as PostgreSQL's schema is.
      let migrator = Self.migrator
      let unknown = try database.read { db in
        try migrator.appliedIdentifiers(db).subtracting(migrator.migrations)
      }
      guard unknown.isEmpty else {
        throw StorageError(
          "The database \(path) was written by a newer Standups server (it has "
            + unknown.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            + ", which this one does not know). Nothing was changed: run the newer server.")
      }
      try migrator.migrate(database)
      // NB: the file holds the team's secret: readable by its owner only (SQLite gives its
      // -wal and -shm files the same permissions).
      for file in [path, path + "-wal", path + "-shm"] { chmod(file, 0o600) }
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    {
      throw StorageError(
        "The database \(path) is damaged or not a Standups database (\(error.message ?? "\(error)")). "
          + "Nothing was changed: restore it from a backup, or move it aside to start empty.")
    } catch let error as DatabaseError {
      throw StorageError("Cannot open the database \(path): \(error.message ?? "\(error)").")
    }
  }

  /// How long a write waits for another connection's (another process's) to end.
  public static let busyTimeout: TimeInterval = 5

  static func json(_ value: some Encodable) throws -> String {
    String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
  }

  static func decoded<T: Decodable>(_ type: T.Type, from text: String?) -> T? {
    text.flatMap { try? JSONDecoder().decode(T.self, from: Data($0.utf8)) }
  }

  /// Every standup in creation order, attendees in order, its most recent meetings newest
  /// first and the count of the older ones.
  public func load() async throws -> [Standup] {
    do {
      return try await standups()
    } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
      throw StorageError(
        "The database \(path) is damaged (\(error.message ?? "\(error)")). If a backup was put "
          + "in its place, standups.sqlite-wal and standups.sqlite-shm of the file before may "
          + "have been left beside it (docs/DEPLOY.md, \"Backups\"). Restore it from a backup.")
    }
  }

  /// One standup as saved, or nil.
  public func loadStandup(_ id: Standup.ID) async throws -> Standup? {
    try await standups(only: id).first
  }

  private func standups(only id: Standup.ID? = nil) async throws -> [Standup] {
    let only = id?.uuidString
    return try await database.read { db in
      let attendees = Dictionary(
        grouping: try Row.fetchAll(
          db, sql: "SELECT * FROM attendee WHERE ?1 IS NULL OR standupId = ?1 ORDER BY position",
          arguments: [only]),
        by: { $0["standupId"] as String })
      let meetings = Dictionary(
        grouping: try Row.fetchAll(
          db,
          sql: """
            SELECT * FROM (
              SELECT *, ROW_NUMBER() OVER (PARTITION BY standupId ORDER BY date DESC) AS rank
              FROM meeting WHERE ?1 IS NULL OR standupId = ?1)
            WHERE rank <= ?2 ORDER BY date DESC
            """, arguments: [only, Standup.recentMeetingLimit]),
        by: { $0["standupId"] as String })
      let totals = Dictionary(
        uniqueKeysWithValues: try Row.fetchAll(
          db,
          sql:
            "SELECT standupId, COUNT(*) AS total FROM meeting WHERE ?1 IS NULL OR standupId = ?1 GROUP BY standupId",
          arguments: [only]
        ).map { ($0["standupId"] as String, $0["total"] as Int) })
      return try Row.fetchAll(
        db, sql: "SELECT * FROM standup WHERE ?1 IS NULL OR id = ?1 ORDER BY position",
        arguments: [only]
      ).compactMap { row in
        let id: String = row["id"]
        guard let uuid = UUID(uuidString: id), let theme = Theme(rawValue: row["theme"]) else {
          return nil
        }
        let recent = (meetings[id] ?? []).compactMap(Self.meeting)
        return Standup(
          id: uuid,
          attendees: IdentifiedArray(
            uniqueElements: (attendees[id] ?? []).compactMap { row in
              UUID(uuidString: row["id"]).map { Attendee(id: $0, name: row["name"]) }
            }),
          duration: .seconds(row["durationSeconds"] as Int),
          meetings: IdentifiedArray(uniqueElements: recent),
          theme: theme, title: row["title"],
          olderMeetingCount: max(0, (totals[id] ?? 0) - recent.count))
      }
    }
  }

  private static func meeting(_ row: Row) -> Meeting? {
    UUID(uuidString: row["id"]).map {
      Meeting(
        id: $0, date: row["date"], transcript: row["transcript"], seconds: row["seconds"],
        present: Self.decoded([String].self, from: row["present"]) ?? [],
        notes: Self.decoded([Note].self, from: row["notes"]) ?? [])
    }
  }

  /// A page of a standup's meetings, newest first, and how many it has.
  public func loadMeetings(_ standupID: Standup.ID, offset: Int, limit: Int) async throws
    -> MeetingPage
  {
    try await database.read { db in
      let id = standupID.uuidString
      let rows = try Row.fetchAll(
        db, sql: "SELECT * FROM meeting WHERE standupId = ? ORDER BY date DESC LIMIT ? OFFSET ?",
        arguments: [id, limit, offset])
      let total =
        try Int.fetchOne(
          db, sql: "SELECT COUNT(*) FROM meeting WHERE standupId = ?", arguments: [id])
        ?? 0
      return MeetingPage(meetings: rows.compactMap(Self.meeting), total: total)
    }
  }

  /// Creates or replaces a standup with its attendees and history, in one transaction; its
  /// draft goes in the same one (or is replaced by the one `keeping`: a form still open), and
  /// the checkpoint of a meeting now in its history.
  public func save(_ standup: Standup, keeping draft: StandupDraft? = nil) async throws {
    let body = try draft?.encodedBody()
    try await database.write { db in
      let id = standup.id.uuidString
      let position =
        try Int.fetchOne(db, sql: "SELECT position FROM standup WHERE id = ?", arguments: [id])
        ?? Int.fetchOne(db, sql: "SELECT COALESCE(MAX(position), -1) + 1 FROM standup") ?? 0
      try db.execute(
        sql: """
          INSERT INTO standup (id, position, title, durationSeconds, theme) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT(id) DO UPDATE SET
            title = excluded.title, durationSeconds = excluded.durationSeconds, theme = excluded.theme
          """,
        arguments: [
          id, position, standup.title, Int(standup.duration.components.seconds),
          standup.theme.rawValue,
        ])
      if let body {
        try db.execute(
          sql: "INSERT OR REPLACE INTO draft (standupId, body, savedAt) VALUES (?, ?, ?)",
          arguments: [id, body, Date()])
      } else {
        try db.execute(sql: "DELETE FROM draft WHERE standupId = ?", arguments: [id])
      }
      try db.execute(sql: "DELETE FROM attendee WHERE standupId = ?", arguments: [id])
      for (index, attendee) in standup.attendees.enumerated() {
        try db.execute(
          sql: "INSERT INTO attendee (id, standupId, position, name) VALUES (?, ?, ?, ?)",
          arguments: [attendee.id.uuidString, id, index, attendee.name])
      }
      // NB: meetings are only added or updated here: the older ones are not in `meetings`.
      for meeting in standup.meetings {
        try db.execute(
          sql: """
            INSERT INTO meeting (id, standupId, date, transcript, seconds, present, notes)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(standupId, id) DO UPDATE SET transcript = excluded.transcript,
              seconds = excluded.seconds, present = excluded.present, notes = excluded.notes
            """,
          arguments: [
            meeting.id.uuidString, id, meeting.date, meeting.transcript, meeting.seconds,
            try Self.json(meeting.present), try Self.json(meeting.notes),
          ])
      }
      // NB: a running meeting saved into its standup is running no more: its checkpoint goes
      // in the same transaction (a crash between the two would bring it back as running).
      try db.execute(
        sql: """
          DELETE FROM checkpoint WHERE standupId = ?1
            AND meetingId IN (SELECT id FROM meeting WHERE standupId = ?1)
          """,
        arguments: [id])
    }
  }

  public func delete(_ id: Standup.ID) async throws {
    try await database.write { db in
      try db.execute(sql: "DELETE FROM standup WHERE id = ?", arguments: [id.uuidString])
    }
  }

  public func reserveVersions(_ room: String, _ count: Int) async throws -> Int {
    try await database.write { db in
      let first =
        try Int.fetchOne(db, sql: "SELECT next FROM roomVersion WHERE room = ?", arguments: [room])
        ?? 1
      try db.execute(
        sql:
          "INSERT INTO roomVersion (room, next) VALUES (?, ?) ON CONFLICT(room) DO UPDATE SET next = excluded.next",
        arguments: [room, first + count])
      return first
    }
  }

  public func returnVersions(_ room: String, next: Int, end: Int) async throws {
    try await database.write { db in
      try db.execute(
        sql: "UPDATE roomVersion SET next = ? WHERE room = ? AND next = ?",
        arguments: [next, room, end])
    }
  }

  public func probe() async throws {
    try await database.write { db in
      try db.execute(
        sql: "INSERT OR REPLACE INTO health (id, checkedAt) VALUES (1, ?)", arguments: [Date()])
    }
  }

  /// The storage client the server's rooms use.
  public var client: StorageClient {
    StorageClient(
      load: { try await self.load() },
      loadStandup: { try await self.loadStandup($0) },
      save: { try await self.save($0) },
      saveKeepingDraft: { try await self.save($0, keeping: $1) },
      saveMeetingNotes: { try await self.saveMeetingNotes($0, $1) },
      loadMeetings: { try await self.loadMeetings($0, offset: $1, limit: $2) },
      delete: { try await self.delete($0) },
      loadCheckpoints: { try await self.loadCheckpoints() },
      loadCheckpoint: { try await self.loadCheckpoint($0) },
      saveCheckpoint: { try await self.saveCheckpoint($0, $1) },
      loadDraft: { try await self.loadDraft($0) },
      saveDraft: { try await self.saveDraft($0, $1) },
      reserveVersions: { try await self.reserveVersions($0, $1) },
      returnVersions: { try await self.returnVersions($0, next: $1, end: $2) },
      saveMeetingClocks: { try await self.saveMeetingClocks($0) },
      probe: { try await self.probe() })
  }
}

/// A storage problem, said so a person can act on it.
public struct StorageError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
