import Foundation
import IdentifiedCollections
import Logging
import PostgresNIO
import StandupsFeatures
import Synchronization

/// Standups in PostgreSQL, through postgres-nio: the storage of a cluster. Every save is one
/// transaction, committed before it returns (and so before the action is acknowledged).
///
/// The same contract as `SQLiteStorage` (the storage tests run against both); the schema is
/// brought up to date by numbered migrations, one node at a time.
public final class PostgresStorage: Sendable {
  public let client: PostgresClient
  public let url: DatabaseURL
  /// In a cluster: the backend of this node's session while it is trusted (nil: it is not,
  /// and no clock is written); the heartbeat writes only the clocks of rooms it holds.
  public func fenceClocks(by session: @escaping @Sendable () -> Int32?) {
    clockFence.withLock { $0 = ClockFence(session: session) }
  }
  // NB: the closure sits in a class: a closure read out of a generic `Mutex` comes back
  // behind two more reabstraction thunks on every read (the `inout` is reabstracted both
  // ways and written back), so each call would cost more than the last.
  private final class ClockFence: Sendable {
    let session: @Sendable () -> Int32?
    init(session: @escaping @Sendable () -> Int32?) { self.session = session }
  }
  private let clockFence = Mutex<ClockFence?>(nil)

  /// What a standup's writes tell the other nodes (`announceWrites`).
  let announcer = Mutex<Announcer?>(nil)
  let unanswered = Mutex<Unanswered?>(nil)
  public let logger: Logger
  let clock: @Sendable () -> Date
  /// How long a call to the database may take before it is given up (`said`): longer than a
  /// write waits for a lock (`lock_timeout`, 10 s). A connection the network left half-open
  /// (PostgreSQL failed over, a partition that reset nothing) would otherwise hold the room
  /// waiting on it until TCP gave up, minutes later: its meeting frozen while its people look
  /// connected, and the room's closing (its node's session lost) queued behind it.
  let deadline: Duration
  private let running: Task<Void, Never>

  /// Connects, checks that the database answers, and migrates its schema. Throws a message
  /// that says what to do if the database cannot be reached.
  ///
  /// - Parameter clock: this node's time (what a room's `date` is), which the database's is
  ///   translated to and from where machines must agree (when a room emptied).
  /// - Parameter deadline: how long a call may take (`said`).
  public init(
    url: DatabaseURL, logger: Logger, clock: @escaping @Sendable () -> Date = Date.init,
    deadline: Duration = .seconds(15)
  ) async throws {
    self.url = url
    self.logger = logger
    self.clock = clock
    self.deadline = deadline
    let client = PostgresClient(
      configuration: url.clientConfiguration, backgroundLogger: Self.quietLogger)
    self.client = client
    running = Task { await client.run() }
    do {
      // NB: one connection first: the pool would keep retrying a database that is not there.
      let probe = try await PostgresConnection.connect(
        configuration: try url.connectionConfiguration(), id: 0, logger: Self.quietLogger)
      try await probe.query("SELECT 1", logger: Self.quietLogger)
      try await probe.close()
      _ = try await Self.withTimeout(.seconds(10)) {
        try await client.query("SELECT 1")
      }
      try await migrate()
    } catch let newer as NewerSchema {
      running.cancel()
      throw StorageError("The database \(url) \(newer)")
    } catch {
      running.cancel()
      throw StorageError(Self.cannotUse(url, error))
    }
  }

  deinit { running.cancel() }

  /// postgres-nio's own logs (each failed connection attempt at `info`): warnings only; what
  /// matters is said by the server, once.
  public static var quietLogger: Logger {
    var logger = Logger(label: "postgres")
    logger.logLevel = .warning
    return logger
  }

  /// Stops the connection pool.
  public func close() {
    running.cancel()
  }

  /// Runs `body`, turning a postgres-nio error into one that says what PostgreSQL said (theirs
  /// print a generic text, for fear of leaking a query's values into logs), and giving it up
  /// after `deadline`. A `write` given up may still land (its connection half-open, its
  /// commit on its way): the node's session ends (`whenAWriteGoesUnanswered`), so its rooms
  /// close and open again — here or on another node — only once the database has settled it
  /// (`waitForWritesUnderWay`), never going on as if it had not happened.
  ///
  /// - Parameter session: the node session a fenced write is for (its pid): only that one ends.
  public func said<T: Sendable>(
    write: Bool = false, session: Int32? = nil, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    // NB: an unfenced write (the lobby's) belongs to the session current as it starts (nil:
    // none was): one given up after a new session began ends no later one.
    let session = session ?? (write ? clockFence.withLock { $0 }?.session() : nil)
    do {
      return try await Self.withTimeout(deadline, body)
    } catch let error as PSQLError {
      // NB: a write whose connection went (a failover, a reset, its backend ended) may have
      // committed as it went: as unknown as one left unanswered. One PostgreSQL refused did not.
      if write, Self.connectionWent(error) {
        unanswered.withLock { $0 }?.run(session)
        throw WriteOutcomeUnknown(
          "the connection to the database was lost during the write (\(Self.describe(error))): "
            + "whether it was saved will be known once the room opens again")
      }
      throw StorageError(Self.describe(error))
    } catch let error as NoAnswer {
      guard write else {
        throw StorageError("the database did not answer within \(error.limit)")
      }
      unanswered.withLock { $0 }?.run(session)
      throw WriteOutcomeUnknown(
        "the database did not answer within \(error.limit): whether it was saved will be known "
          + "once the room opens again")
    }
  }

  // MARK: Standups

  static func json(_ value: some Encodable) throws -> String {
    String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
  }

  static func decoded<T: Decodable>(_ type: T.Type, from text: String) -> T? {
    try? JSONDecoder().decode(T.self, from: Data(text.utf8))
  }

  typealias MeetingRow = (UUID, UUID, Date, String, Int, String, String)

  private static func meeting(_ row: MeetingRow) -> Meeting {
    Meeting(
      id: row.1, date: row.2, transcript: row.3, seconds: row.4,
      present: decoded([String].self, from: row.5) ?? [],
      notes: decoded([Note].self, from: row.6) ?? [])
  }

  /// Every standup in creation order, or only `id`, each with its recent meetings.
  private func standups(only id: UUID? = nil) async throws -> [Standup] {
    try await snapshot { connection in
      var attendees: [UUID: [Attendee]] = [:]
      for try await (standup, attendee, name) in try await connection.query(
        "SELECT standup_id, id, name FROM attendee WHERE \(id)::uuid IS NULL OR standup_id = \(id)::uuid ORDER BY position",
        logger: logger
      ).decode((UUID, UUID, String).self) {
        attendees[standup, default: []].append(Attendee(id: attendee, name: name))
      }
      var meetings: [UUID: [Meeting]] = [:]
      for try await row in try await connection.query(
        """
        SELECT standup_id, id, date, transcript, seconds, present, notes FROM (
          SELECT *, ROW_NUMBER() OVER (PARTITION BY standup_id ORDER BY date DESC) AS rank
          FROM meeting WHERE \(id)::uuid IS NULL OR standup_id = \(id)::uuid) recent
        WHERE rank <= \(Standup.recentMeetingLimit) ORDER BY date DESC
        """, logger: logger
      ).decode(MeetingRow.self) {
        meetings[row.0, default: []].append(Self.meeting(row))
      }
      var totals: [UUID: Int] = [:]
      for try await (standup, total) in try await connection.query(
        "SELECT standup_id, COUNT(*)::bigint FROM meeting WHERE \(id)::uuid IS NULL OR standup_id = \(id)::uuid GROUP BY standup_id",
        logger: logger
      ).decode((UUID, Int).self) {
        totals[standup] = total
      }
      var standups: [Standup] = []
      for try await (standupID, title, seconds, themeName) in try await connection.query(
        "SELECT id, title, duration_seconds, theme FROM standup WHERE \(id)::uuid IS NULL OR id = \(id)::uuid ORDER BY position",
        logger: logger
      ).decode((UUID, String, Int, String).self) {
        guard let theme = Theme(rawValue: themeName) else { continue }
        let recent = meetings[standupID] ?? []
        standups.append(
          Standup(
            id: standupID, attendees: IdentifiedArray(uniqueElements: attendees[standupID] ?? []),
            duration: .seconds(seconds), meetings: IdentifiedArray(uniqueElements: recent),
            theme: theme, title: title,
            olderMeetingCount: max(0, (totals[standupID] ?? 0) - recent.count)))
      }
      return standups
    }
  }

  public func load() async throws -> [Standup] { try await standups() }

  /// One standup as saved, with its recent meetings; nil if there is none.
  public func loadStandup(_ id: Standup.ID) async throws -> Standup? {
    try await standups(only: id).first
  }

  public func loadMeetings(_ standupID: Standup.ID, offset: Int, limit: Int) async throws
    -> MeetingPage
  {
    try await snapshot { connection in
      var meetings: [Meeting] = []
      for try await row in try await connection.query(
        """
        SELECT standup_id, id, date, transcript, seconds, present, notes FROM meeting
        WHERE standup_id = \(standupID) ORDER BY date DESC LIMIT \(limit) OFFSET \(offset)
        """, logger: logger
      ).decode(MeetingRow.self) {
        meetings.append(Self.meeting(row))
      }
      var total = 0
      for try await count in try await connection.query(
        "SELECT COUNT(*)::bigint FROM meeting WHERE standup_id = \(standupID)", logger: logger
      ).decode(Int.self) {
        total = count
      }
      return MeetingPage(meetings: meetings, total: total)
    }
  }

  /// Creates or replaces a standup with its attendees and history, in one transaction; its
  /// draft goes in the same one (or is replaced by the one `keeping`: a form still open), and
  /// the checkpoint of a meeting now in its history.
  public func save(
    _ standup: Standup, keeping draft: StandupDraft? = nil, fence: WriteFence? = nil
  ) async throws {
    let body = try draft?.encodedBody()
    let meetings = try standup.meetings.map {
      ($0, try Self.json($0.present), try Self.json($0.notes))
    }
    try await write(fence) { connection in
      try await connection.query(
        """
        INSERT INTO standup (id, title, duration_seconds, theme)
        VALUES (\(standup.id), \(standup.title), \(Int(standup.duration.components.seconds)), \(standup.theme.rawValue))
        ON CONFLICT (id) DO UPDATE SET title = excluded.title,
          duration_seconds = excluded.duration_seconds, theme = excluded.theme
        """, logger: logger)
      if let body {
        try await connection.query(
          """
          INSERT INTO draft (standup_id, body, saved_at) VALUES (\(standup.id), \(body), now())
          ON CONFLICT (standup_id) DO UPDATE SET body = excluded.body, saved_at = excluded.saved_at
          """, logger: logger)
      } else {
        try await connection.query(
          "DELETE FROM draft WHERE standup_id = \(standup.id)", logger: logger)
      }
      try await connection.query(
        "DELETE FROM attendee WHERE standup_id = \(standup.id)", logger: logger)
      for (index, attendee) in standup.attendees.enumerated() {
        try await connection.query(
          "INSERT INTO attendee (standup_id, id, position, name) VALUES (\(standup.id), \(attendee.id), \(index), \(attendee.name))",
          logger: logger)
      }
      // NB: meetings are only added or updated here: the older ones are not in `meetings`.
      for (meeting, present, notes) in meetings {
        try await connection.query(
          """
          INSERT INTO meeting (standup_id, id, date, transcript, seconds, present, notes)
          VALUES (\(standup.id), \(meeting.id), \(meeting.date), \(meeting.transcript), \(meeting.seconds), \(present), \(notes))
          ON CONFLICT (standup_id, id) DO UPDATE SET transcript = excluded.transcript,
            seconds = excluded.seconds, present = excluded.present, notes = excluded.notes
          """, logger: logger)
      }
      // NB: a running meeting saved into its standup is running no more: its checkpoint goes
      // in the same transaction (a crash between the two would bring it back as running).
      try await connection.query(
        """
        DELETE FROM checkpoint WHERE standup_id = \(standup.id)
          AND meeting_id IN (SELECT id FROM meeting WHERE standup_id = \(standup.id))
        """, logger: logger)
      try await announce(standup.id, on: connection)
    }
  }

  public func delete(_ id: Standup.ID, fence: WriteFence? = nil) async throws {
    try await write(fence) { connection in
      try await connection.query("DELETE FROM standup WHERE id = \(id)", logger: logger)
      try await announce(id, deleted: true, on: connection)
    }
  }

  /// Every running meeting's clock in one statement (a checkpoint only moves forward). In a
  /// cluster, only the rooms whose lock this node's session (`fenceClocks`) holds.
  public func saveMeetingClocks(_ clocks: [MeetingClock]) async throws {
    guard !clocks.isEmpty else { return }
    let fence = clockFence.withLock { $0 }
    let pid = fence?.session()
    if fence != nil && pid == nil { return }
    let keys = clocks.map { WriteFence.halves(WriteFence.lockKey($0.standupID)) }
    // NB: in a cluster, each room's barrier first (`WriteFence.check`), held until the commit:
    // a node taking one of the rooms waits for this write rather than have it land after it
    // loaded the room. (Shared locks never wait on one another.)
    let barriers = clocks.map { WriteFence.barrier(WriteFence.lockKey($0.standupID)) }
    try await write(nil) { connection in
      if pid != nil {
        for try await _ in try await connection.query(
          """
          SELECT pg_advisory_xact_lock_shared(key.high, key.low)::text
          FROM unnest(\(barriers.map(\.0)), \(barriers.map(\.1))) AS key(high, low)
          """, logger: logger
        ) {}
      }
      try await connection.query(
        """
        UPDATE checkpoint SET seconds_elapsed = clock.seconds_elapsed,
          speaker_index = clock.speaker_index, seconds_run = clock.seconds_run
        FROM unnest(\(clocks.map(\.standupID)), \(clocks.map(\.meetingID)),
          \(clocks.map(\.secondsElapsed)), \(clocks.map(\.speakerIndex)), \(clocks.map(\.secondsRun)),
          \(keys.map(\.high)), \(keys.map(\.low)))
          AS clock(standup_id, meeting_id, seconds_elapsed, speaker_index, seconds_run, high, low)
        WHERE checkpoint.standup_id = clock.standup_id AND checkpoint.meeting_id = clock.meeting_id
          AND checkpoint.seconds_run < clock.seconds_run
          AND (\(pid)::integer IS NULL OR EXISTS (
            SELECT 1 FROM pg_locks held WHERE held.locktype = 'advisory' AND held.granted
              AND held.pid = \(pid)::integer AND held.objsubid = 1
              AND held.classid = clock.high::oid AND held.objid = clock.low::oid))
        """, logger: logger)
    }
  }

  // MARK: Versions

  /// The next `count` versions of a room: one statement, so that two nodes reserving at once
  /// get blocks that follow each other.
  public func reserveVersions(_ room: String, _ count: Int) async throws -> Int {
    for try await first in try await client.query(
      """
      INSERT INTO room_version (room, next) VALUES (\(room), \(1 + count))
      ON CONFLICT (room) DO UPDATE SET next = room_version.next + \(count)
      RETURNING next - \(count)
      """, logger: logger
    ).decode(Int.self) {
      return first
    }
    throw StorageError("reserving versions for \(room) returned nothing")
  }

  public func returnVersions(_ room: String, next: Int, end: Int) async throws {
    try await client.query(
      "UPDATE room_version SET next = \(next) WHERE room = \(room) AND next = \(end)",
      logger: logger)
  }

  public func probe() async throws {
    try await client.query(
      "INSERT INTO health (id, checked_at) VALUES (1, now()) ON CONFLICT (id) DO UPDATE SET checked_at = now()",
      logger: logger)
  }

  /// The storage client the server's rooms use.
  public var storageClient: StorageClient {
    StorageClient(
      load: { try await self.said { try await self.load() } },
      loadStandup: { id in try await self.said { try await self.loadStandup(id) } },
      save: { standup in try await self.said(write: true) { try await self.save(standup) } },
      saveKeepingDraft: { standup, draft in
        try await self.said(write: true) { try await self.save(standup, keeping: draft) }
      },
      saveMeetingNotes: { id, meeting in
        try await self.said(write: true) { try await self.saveMeetingNotes(id, meeting) }
      },
      loadMeetings: { id, offset, limit in
        try await self.said { try await self.loadMeetings(id, offset: offset, limit: limit) }
      },
      delete: { id in try await self.said(write: true) { try await self.delete(id) } },
      loadCheckpoints: { try await self.said { try await self.loadCheckpoints() } },
      loadCheckpoint: { id in try await self.said { try await self.loadCheckpoint(id) } },
      saveCheckpoint: { id, checkpoint in
        try await self.said(write: true) { try await self.saveCheckpoint(id, checkpoint) }
      },
      loadDraft: { id in try await self.said { try await self.loadDraft(id) } },
      saveDraft: { id, draft in
        try await self.said(write: true) { try await self.saveDraft(id, draft) }
      },
      // NB: these may land unknown to the node without harm (a block of versions skipped, one
      // given back kept, a clock a second behind): not worth every room of the node.
      reserveVersions: { room, count in
        try await self.said { try await self.reserveVersions(room, count) }
      },
      returnVersions: { room, next, end in
        try await self.said { try await self.returnVersions(room, next: next, end: end) }
      },
      saveMeetingClocks: { clocks in
        try await self.said { try await self.saveMeetingClocks(clocks) }
      },
      probe: { try await self.said { try await self.probe() } })
  }
}
