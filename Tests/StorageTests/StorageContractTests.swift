import Fixtures
import Foundation
import IdentifiedCollections
import Logging
import NIOSSL
import PostgresNIO
import StandupsFeatures
import Storage
import Synchronization
import Testing

/// What every storage keeps, the same way: in memory, SQLite and PostgreSQL.
@Suite(.serialized)
struct StorageContractTests {
  @Test(arguments: StorageKind.allCases)
  func savesLoadsEditsAndDeletesStandupsInCreationOrder(_ kind: StorageKind) async throws {
    guard let (storage, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    var design = Standup.design
    design.meetings = [
      Meeting(
        id: UUID(), date: Date(timeIntervalSince1970: 1_795_338_000), transcript: "Ana: later",
        seconds: 300, present: ["Ana", "Ben"],
        notes: [Note(author: "Ana", text: "ship it", speaker: "Ana")]),
      Meeting(
        id: UUID(), date: Date(timeIntervalSince1970: 1_795_251_600), transcript: "Ben: earlier"),
    ]
    let ops = Standup(
      id: UUID(), attendees: [Attendee(id: UUID(), name: "Cy")], duration: .seconds(900),
      theme: .navy, title: "Ops — “quoted” ✓")
    try await storage.save(design)
    try await storage.save(ops)
    #expect(try await storage.load() == [design, ops])
    #expect(try await storage.loadStandup(ops.id) == ops)
    #expect(try await storage.loadStandup(UUID()) == nil)

    // An edit replaces the attendees and keeps the standup's place.
    design.title = "Design sync"
    design.attendees.remove(at: 1)
    design.attendees.append(Attendee(id: UUID(), name: "Dee"))
    design.meetings.insert(
      Meeting(id: UUID(), date: Date(timeIntervalSince1970: 1_795_400_000), transcript: ""), at: 0)
    try await storage.save(design)
    #expect(try await storage.load() == [design, ops])
    #expect(try await storage.loadStandup(design.id) == design)

    try await storage.delete(design.id)
    try await storage.delete(design.id)
    #expect(try await storage.load() == [ops])
  }

  /// A database a newer server migrated (an upgrade rolled back on one node) is refused,
  /// saying why, as a SQLite file is: this server would not keep what it does not know of.
  @Test func aDatabaseANewerServerMigratedIsRefused() async throws {
    guard let (_, keep) = try await StorageKind.postgres.make(),
      let storage = keep as? PostgresStorage
    else { return }
    try await storage.save(.design)
    try await storage.client.query(
      "INSERT INTO schema_migration VALUES (999, 'from the future', now())")
    await #expect {
      _ = try await PostgresStorage(url: storage.url, logger: Logger(label: "test"))
    } throws: { error in
      "\(error)".contains("was migrated by a newer Standups server (schema version 999")
        && "\(error)".contains("Nothing was changed: run the newer server.")
    }
    #expect(try await storage.load() == [.design])
  }

  /// `sslmode=require` against a PostgreSQL without TLS (as the tests' is) says what to do,
  /// not a bare error code.
  @Test func requiringTLSOfAServerWithoutItSaysSo() async throws {
    guard let (_, keep) = try await StorageKind.postgres.make(),
      let storage = keep as? PostgresStorage
    else { return }
    var url = storage.url
    for mode in ["require", "verify-full"] {
      url.tlsMode = mode
      await #expect {
        _ = try await PostgresStorage(url: url, logger: Logger(label: "test"))
      } throws: { error in
        // NB: it was reached: whether PostgreSQL runs there is not asked.
        "\(error)".contains("the server does not offer TLS, which sslmode=\(mode) asks for")
          && !"\(error)".contains("Is PostgreSQL running there")
      }
    }
  }

  /// When a room emptied is said the same by every node, whatever time each machine keeps:
  /// someone back 5 s later, through another node, finds the meeting going on by itself.
  @Test func whenARoomEmptiedReadsTheSameOnANodeWhoseClockIsAhead() async throws {
    guard let (_, keep) = try await StorageKind.postgres.make(),
      let writer = keep as? PostgresStorage
    else { return }
    let ahead = try await PostgresStorage(
      url: writer.url, logger: Logger(label: "test"), clock: { Date().addingTimeInterval(20) })
    defer { ahead.close() }
    let id = Standup.design.id
    try await writer.save(.design)
    var paused = MeetingCheckpoint(
      standupID: id, meetingID: UUID(), secondsElapsed: 30, speakerIndex: 0, transcript: "",
      secondsRun: 30, pausedBecause: .everyoneLeft)
    paused.emptiedAt = Date().addingTimeInterval(-5)
    try await writer.saveCheckpoint(id, paused)
    let read = try #require(try await ahead.loadCheckpoint(id)?.emptiedAt)
    // 5 s ago by the reader's own clock: 20 s ahead of the writer's.
    #expect(abs(Date().addingTimeInterval(20).timeIntervalSince(read) - 5) < 1)
    // And back: what the node ahead writes reads as as long ago on the writer.
    paused.emptiedAt = Date().addingTimeInterval(20 - 8)
    try await ahead.saveCheckpoint(id, paused)
    let back = try #require(try await writer.loadCheckpoint(id)?.emptiedAt)
    #expect(abs(Date().timeIntervalSince(back) - 8) < 1)
  }

  /// A call the database does not answer (a connection the network left half-open; here, a
  /// table locked by another session) is given up after the storage's deadline, with a
  /// storage error, rather than hold its room until TCP gives up; the next call works.
  @Test func aCallTheDatabaseDoesNotAnswerIsGivenUpAtItsDeadline() async throws {
    guard let (_, keep) = try await StorageKind.postgres.make(),
      let storage = keep as? PostgresStorage
    else { return }
    let hasty = try await PostgresStorage(
      url: storage.url, logger: Logger(label: "test"), deadline: .seconds(1))
    defer { hasty.close() }
    try await hasty.storageClient.save(.design)
    var renamed = Standup.design
    renamed.title = "Renamed"
    let told = Mutex(0)
    let sessions = Mutex<[Int32?]>([])
    hasty.whenAWriteGoesUnanswered { session in
      told.withLock { $0 += 1 }
      sessions.withLock { $0.append(session) }
    }
    try await whileLocked("standup", in: storage.url) {
      // A reading given up changes nothing: it is only said.
      await #expect {
        _ = try await hasty.storageClient.loadStandup(renamed.id)
      } throws: { error in
        // NB: not the lock's own timeout (10 s): the deadline's.
        "\(error)".contains("did not answer within 1")
      }
      #expect(told.withLock { $0 } == 0)
      // A write given up may still land: whoever runs the rooms is told (a node ends its session).
      await #expect {
        try await hasty.storageClient.save(renamed)
      } throws: { error in
        "\(error)".contains("did not answer within 1")
          && "\(error)".contains("whether it was saved")
      }
      #expect(told.withLock { $0 } == 1)
      // In a cluster, one that began while the node had no session is said to be of none
      // (the node reads again rather than end the session begun since); one that began under
      // a session, of that one.
      hasty.fenceClocks { nil }
      await #expect(throws: WriteOutcomeUnknown.self) {
        try await hasty.storageClient.save(renamed)
      }
      hasty.fenceClocks { 42 }
      await #expect(throws: WriteOutcomeUnknown.self) {
        try await hasty.storageClient.save(renamed)
      }
      #expect(sessions.withLock { $0 } == [nil, nil, 42])
    }
    try await hasty.storageClient.save(renamed)
    #expect(try await hasty.storageClient.loadStandup(renamed.id)?.title == "Renamed")
  }

  /// A reading beside a writer sees each standup as one save left it, never part of one save
  /// and part of the next (another node's lobby reads while the room's node saves).
  @Test(arguments: StorageKind.allCases)
  func aReadingSeesAStandupAsOneSaveLeftIt(_ kind: StorageKind) async throws {
    guard let (storage, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    func standup(_ title: String, _ names: [String]) -> Standup {
      var standup = Standup.design
      standup.title = title
      standup.attendees = IdentifiedArray(
        uniqueElements: names.map { Attendee(id: UUID(), name: $0) })
      return standup
    }
    let one = standup("One", ["Ana"])
    let two = standup("Two", ["Ben", "Cy"])
    try await storage.save(one)
    // NB: both go on at once, for as long as the other, about.
    async let saving: Void = {
      for round in 0..<150 { try await storage.save(round.isMultiple(of: 2) ? two : one) }
    }()
    var torn: [String] = []
    for _ in 0..<100 {
      for read in [try await storage.loadStandup(one.id), try await storage.load().first] {
        guard let read, read == one || read == two else {
          torn.append(read.map { "\($0.title): \($0.attendees.map(\.name))" } ?? "nil")
          continue
        }
      }
    }
    try await saving
    let tornReads = torn.count
    #expect(tornReads == 0, "Read part of one save and part of another: \(torn.prefix(3))")
  }

  @Test(arguments: StorageKind.allCases)
  func aStandupLoadsWithItsRecentMeetingsAndPagesTheRest(_ kind: StorageKind) async throws {
    guard let (storage, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    var design = Standup.design
    try await storage.save(design)
    let meetings = (0..<13).map { index in
      Meeting(
        id: UUID(), date: Date(timeIntervalSince1970: 1_795_000_000 + Double(index) * 86_400),
        transcript: "Ana: day \(index)", seconds: 60 + index, present: ["Ana"],
        notes: [Note(author: "Ana", text: "day \(index)", speaker: "Blob")])
    }
    for meeting in meetings {
      design.addMeeting(meeting)
      try await storage.save(design)
    }
    #expect(try await storage.load() == [design])
    #expect(try await storage.loadStandup(design.id) == design)
    let newestFirst = Array(meetings.reversed())
    #expect(
      try await storage.loadMeetings(design.id, 10, 20)
        == MeetingPage(meetings: Array(newestFirst[10...]), total: 13))
    #expect(
      try await storage.loadMeetings(design.id, 0, 2)
        == MeetingPage(meetings: Array(newestFirst[..<2]), total: 13))
  }

  @Test(arguments: StorageKind.allCases)
  func aRunningMeetingsCheckpointMovesOnlyForwardAndGoesWithItsStandup(_ kind: StorageKind)
    async throws
  {
    guard let (storage, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    let id = Standup.design.id
    try await storage.save(.design)
    let checkpoint = MeetingCheckpoint(
      standupID: id, meetingID: UUID(), secondsElapsed: 120, speakerIndex: 1,
      transcript: "Ana: hi", notes: [Note(author: "Ana", text: "hi", speaker: "Blob")],
      present: ["Ana", "Ben"], presentBy: ["Ana": ["p-ana", "p-ana-2"], "Ben": [""]],
      secondsRun: 120)
    var paused = checkpoint
    paused.pausedBecause = .everyoneLeft
    // NB: whole seconds: SQLite keeps milliseconds, PostgreSQL microseconds.
    paused.emptiedAt = Date(timeIntervalSince1970: 1_795_338_000)
    try await storage.saveCheckpoint(id, paused)
    // NB: PostgreSQL keeps when a room emptied by its own clock (read back by the node's, as
    // how long ago): within a moment, then.
    var loaded = try #require(try await storage.loadCheckpoint(id))
    #expect(
      abs(try #require(loaded.emptiedAt).timeIntervalSince(try #require(paused.emptiedAt))) < 1)
    loaded.emptiedAt = paused.emptiedAt
    #expect(loaded == paused)
    try await storage.saveCheckpoint(id, checkpoint)
    #expect(try await storage.loadCheckpoints() == [checkpoint])
    #expect(try await storage.loadCheckpoint(id) == checkpoint)

    // The heartbeat moves the clock on, never back, and only for the same meeting.
    try await storage.saveMeetingClocks([
      MeetingClock(
        standupID: id, meetingID: checkpoint.meetingID, secondsElapsed: 125, speakerIndex: 2,
        secondsRun: 125),
      MeetingClock(
        standupID: UUID(), meetingID: UUID(), secondsElapsed: 9, speakerIndex: 0, secondsRun: 9),
    ])
    try await storage.saveMeetingClocks([
      MeetingClock(
        standupID: id, meetingID: checkpoint.meetingID, secondsElapsed: 121, speakerIndex: 1,
        secondsRun: 121),
      MeetingClock(
        standupID: id, meetingID: UUID(), secondsElapsed: 500, speakerIndex: 0, secondsRun: 500),
    ])
    var moved = checkpoint
    moved.secondsElapsed = 125
    moved.speakerIndex = 2
    moved.secondsRun = 125
    #expect(try await storage.loadCheckpoint(id) == moved)

    try await storage.saveCheckpoint(id, nil)
    #expect(try await storage.loadCheckpoints() == [])
    // A meeting saved into its standup's history runs no more: its checkpoint goes in the same
    // save; another meeting's stays.
    try await storage.saveCheckpoint(id, checkpoint)
    var withOther = Standup.design
    withOther.addMeeting(Meeting(id: UUID(), date: Date(), transcript: "other"))
    try await storage.save(withOther)
    #expect(try await storage.loadCheckpoint(id) == checkpoint)
    var ended = withOther
    ended.addMeeting(Meeting(id: checkpoint.meetingID, date: Date(), transcript: "Ana: hi"))
    try await storage.save(ended)
    #expect(try await storage.loadCheckpoint(id) == nil)
    // Not kept for a standup that is gone.
    try await storage.saveCheckpoint(id, checkpoint)
    try await storage.delete(id)
    #expect(try await storage.loadCheckpoints() == [])
    try await storage.saveCheckpoint(id, checkpoint)
    #expect(try await storage.loadCheckpoint(id) == nil)
  }

  @Test(arguments: StorageKind.allCases)
  func anOpenFormsDraftIsKeptAsTypedUntilItClosesAndGoesWithItsStandup(_ kind: StorageKind)
    async throws
  {
    guard let (storage, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    let id = Standup.design.id
    try await storage.save(.design)
    #expect(try await storage.loadDraft(id) == nil)

    // Kept exactly as typed: blank names, spaces, an unsaved length and theme.
    var form = StandupForm.State(standup: .design)
    form.title = "  Design — draft 2 "
    form.duration = .seconds(1200)
    form.theme = .navy
    form.attendees.append(Attendee(id: UUID()))
    form.attendees[0].name = "Ana (lead)"
    try await storage.saveDraft(id, form.savedDraft)
    #expect(try await storage.loadDraft(id) == form.savedDraft)
    form.title = "Design"
    try await storage.saveDraft(id, form.savedDraft)
    #expect(try await storage.loadDraft(id) == form.savedDraft)
    #expect(
      StandupForm.State(restoring: try #require(try await storage.loadDraft(id)), standup: .design)
        == form)

    // A closed form leaves nothing; nor does saving the standup (in the same write), nor a
    // standup that is gone.
    try await storage.saveDraft(id, nil)
    #expect(try await storage.loadDraft(id) == nil)
    try await storage.saveDraft(id, form.savedDraft)
    try await storage.save(form.draft)
    #expect(try await storage.loadDraft(id) == nil)
    try await storage.saveDraft(id, form.savedDraft)
    try await storage.delete(id)
    #expect(try await storage.loadDraft(id) == nil)
    try await storage.saveDraft(id, form.savedDraft)
    #expect(try await storage.loadDraft(id) == nil)
  }

  /// A standup saved while its form stays open (a late note for a meeting whose save had
  /// failed): the standup, its meetings and the form's draft in one write.
  @Test(arguments: StorageKind.allCases)
  func aStandupSavedUnderAnOpenFormKeepsTheFormsDraft(_ kind: StorageKind) async throws {
    guard let (storage, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    var design = Standup.design
    try await storage.save(design)
    var form = StandupForm.State(standup: design)
    form.title = "Typed before"
    try await storage.saveDraft(design.id, form.savedDraft)

    let meeting = Meeting(
      id: UUID(), date: Date(timeIntervalSince1970: 1_795_338_000), transcript: "Ben: late",
      seconds: 300, present: ["Ben"], notes: [Note(author: "Ben", text: "late", speaker: "")])
    design.meetings = [meeting]
    form.title = "Typed since"
    try await storage.saveKeepingDraft(design, form.savedDraft)
    #expect(try await storage.loadStandup(design.id) == design)
    #expect(try await storage.loadDraft(design.id) == form.savedDraft)

    // The form's draft is replaced, not added to; a plain save still forgets it.
    #expect(try await storage.loadDraft(design.id)?.title == "Typed since")
    try await storage.save(design)
    #expect(try await storage.loadDraft(design.id) == nil)
  }

  /// A note for a meeting that had just ended: that meeting's notes are written, and nothing
  /// else (an open form's draft stays); a meeting that is not saved is an error.
  @Test(arguments: StorageKind.allCases)
  func aLateNoteRewritesItsMeetingsNotesAndLeavesTheDraft(_ kind: StorageKind) async throws {
    guard let (storage, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    var design = Standup.design
    var meeting = Meeting(
      id: UUID(), date: Date(timeIntervalSince1970: 1_795_338_000), transcript: "Ana: one",
      seconds: 300, present: ["Ana"], notes: [Note(author: "Ana", text: "one", speaker: "Ana")])
    let earlier = Meeting(
      id: UUID(), date: Date(timeIntervalSince1970: 1_795_251_600), transcript: "Ben: earlier")
    design.meetings = [meeting, earlier]
    try await storage.save(design)
    var form = StandupForm.State(standup: design)
    form.title = "Typed, not saved"
    try await storage.saveDraft(design.id, form.savedDraft)

    #expect(meeting.addNote("late", author: "Ben", speaker: "") == nil)
    try await storage.saveMeetingNotes(design.id, meeting)
    design.meetings[id: meeting.id] = meeting
    #expect(try await storage.loadStandup(design.id) == design)
    #expect(try await storage.loadDraft(design.id) == form.savedDraft)

    // Never a meeting that is not saved, nor one of a standup that is gone.
    var unsaved = meeting
    unsaved.id = UUID()
    await #expect(throws: (any Error).self) {
      try await storage.saveMeetingNotes(design.id, unsaved)
    }
    try await storage.delete(design.id)
    await #expect(throws: (any Error).self) {
      try await storage.saveMeetingNotes(design.id, meeting)
    }
    #expect(try await storage.loadStandup(design.id) == nil)
  }

  @Test(arguments: StorageKind.allCases)
  func reservesEachRoomsVersionsOnceAndTakesBackOnlyTheLastBlock(_ kind: StorageKind)
    async throws
  {
    guard let (storage, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    #expect(try await storage.reserveVersions("lobby", 10) == 1)
    #expect(try await storage.reserveVersions("lobby", 10) == 11)
    #expect(try await storage.reserveVersions("room", 5) == 1)
    #expect(try await storage.reserveVersions("lobby", 10) == 21)
    // Giving back the unused end of the last reservation: the next one starts there…
    try await storage.returnVersions("lobby", 24, 31)
    #expect(try await storage.reserveVersions("lobby", 10) == 24)
    // …but not once something was reserved since (that reservation ends elsewhere).
    try await storage.returnVersions("lobby", 25, 31)
    #expect(try await storage.reserveVersions("lobby", 10) == 34)
    // Nodes reserving at once get blocks that never overlap.
    let firsts = try await withThrowingTaskGroup(of: Int.self) { group in
      for _ in 0..<20 { group.addTask { try await storage.reserveVersions("busy", 100) } }
      return try await group.reduce(into: [Int]()) { $0.append($1) }
    }
    #expect(firsts.sorted() == Array(stride(from: 1, to: 2_001, by: 100)))
    try await storage.probe()
  }
}

struct DatabaseURLTests {
  @Test func readsTheFormTheOptionTakesAndNeverPrintsThePassword() throws {
    let url = try DatabaseURL("postgres://ana:s%40cret@db.internal:6432/standups?sslmode=require")
    #expect(url.user == "ana")
    #expect(url.host == "db.internal")
    #expect(url.port == 6432)
    #expect(url.database == "standups")
    #expect("\(url)" == "postgres://ana@db.internal:6432/standups")
    #expect(try DatabaseURL("postgresql://ana@localhost/db").port == 5432)
  }

  /// libpq's `sslmode`s, but for `require`, which checks the certificate as `verify-full`
  /// does; `prefer`, the default, encrypts without checking (a self-signed server, as
  /// Debian's PostgreSQL has, is reached; the integration tests connect to one).
  @Test(arguments: [
    ("", "prefer", CertificateVerification.none), ("?sslmode=prefer", "prefer", .none),
    ("?sslmode=require", "require", .fullVerification),
    ("?sslmode=verify-full", "verify-full", .fullVerification),
    ("?sslmode=verify-ca", "verify-ca", .noHostnameVerification),
  ])
  func eachSSLModeChecksTheCertificateAsItsNameSays(
    query: String, mode: String, checks: CertificateVerification
  ) throws {
    let url = try DatabaseURL("postgres://ana@db.internal/standups" + query)
    #expect(url.tlsMode == mode)
    #expect(url.certificateVerification == checks)
    let plain = try DatabaseURL("postgres://ana@db.internal/standups?sslmode=disable")
    #expect(plain.certificateVerification == nil)
  }

  @Test(arguments: [
    ("mysql://ana@host/db", "is not a PostgreSQL URL"),
    ("postgres://host/db", "names no user"),
    ("postgres://ana@host", "names no database"),
    ("postgres://ana@host/db?sslmode=allow", "sslmode=allow is not supported: use disable, prefer"),
    ("postgres://ana:hunter2@", "names no host"),
    (
      "postgres://ana:hunter2@host:port/db",
      "postgres://ana:***@host:port/db is not a PostgreSQL URL"
    ),
    (
      "postgres://ana:hun/ter2@host:5432/db",
      "postgres://ana:***@host:5432/db is not a PostgreSQL URL"
    ),
    ("postgres://ana:hunter2@host/db?x", "x is not supported: sslmode is the only parameter"),
    ("postgres://ana@host/db?connect_timeout=5", "connect_timeout is not supported"),
    ("postgres://ana@host/db?sslmode=disable&sslmode=require", "names sslmode more than once"),
  ])
  func refusesWhatItCannotUseSayingWhy(_ text: String, _ problem: String) {
    #expect {
      _ = try DatabaseURL(text)
    } throws: { error in
      "\(error)".contains(problem) && !"\(error)".contains("hunter2")
    }
  }

  @Test func aPasswordThatBreaksTheURLIsNotPrintedEither() {
    #expect(
      DatabaseURL.redacted("postgres://ana:hun@t/er2@host:x/db") == "postgres://ana:***@host:x/db")
    #expect(DatabaseURL.redacted("postgres://ana@host:x/db") == "postgres://ana@host:x/db")
    #expect(DatabaseURL.redacted("ana:hunter2@db/standups") == "ana:***@db/standups")
    #expect(DatabaseURL.redacted("db.internal:5432/standups") == "db.internal:5432/standups")
    // Read through as the server reads it, whichever message it ends in, never the password.
    for text in [
      "postgres://ana:p@ss/1@host:5432/db", "postgres://ana:p@ss/x?y@host/db",
      "ana:hunter2@db/standups", "postgres://ana:hun/ter2@host/db",
    ] {
      #expect {
        _ = try DatabaseURL(text)
      } throws: { error in
        ["p@ss", "ss/1", "y@host", "hunter2", "hun/ter2", "ter2"].allSatisfy {
          !"\(error)".contains($0)
        }
      }
    }
  }
}
