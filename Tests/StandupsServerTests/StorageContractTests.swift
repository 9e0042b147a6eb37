import Fixtures
import Foundation
import IdentifiedCollections
import Logging
import PostgresNIO
import StandupsFeatures
import StandupsWire
import Storage
import Synchronization
import Testing

@testable import StandupsServer

/// One storage of each kind, empty, for a contract test.
///
/// PostgreSQL is the one `STANDUPS_TEST_DATABASE_URL` names (`make test` starts a throwaway
/// one: scripts/with-postgres); each test gets a database of its own there. Without it the
/// PostgreSQL cases are skipped — unless `STANDUPS_REQUIRE_POSTGRES=1`, when they fail.
enum StorageKind: String, CaseIterable, CustomTestStringConvertible {
  case memory, sqlite, postgres

  var testDescription: String { rawValue }

  /// A fresh, empty storage with its access (nil: PostgreSQL is not available here).
  func make() async throws -> (storage: StorageClient, access: AccessStorage, keep: Any)? {
    switch self {
    case .memory:
      return (.inMemory(), .inMemory(), ())
    case .sqlite:
      let storage = try SQLiteStorage(directory: temporaryDirectory())
      return (storage.client, storage.access, storage)
    case .postgres:
      guard let storage = try await throwawayDatabase(prefix: "contract") else { return nil }
      return (storage.storageClient, storage.access, storage)
    }
  }
}

/// What any storage keeps of standups is in `StorageTests`; here, what the server adds to it.
@Suite(.serialized)
struct AccessStorageContractTests {
  @Test(arguments: StorageKind.allCases)
  func keepsOneTeamSecretAndTheBots(_ kind: StorageKind) async throws {
    guard let (_, access, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    // Two processes asking at once agree on one secret.
    async let first = access.teamSecret()
    async let second = access.teamSecret()
    let (a, b) = try await (first, second)
    #expect(a.bytes == b.bytes)
    let rotated = try await access.rotateTeamSecret()
    #expect(try await access.teamSecret().bytes == rotated.bytes)
    #expect(rotated.bytes != a.bytes)

    let bot = Bot(
      name: "Deploy", tokenHash: Bot.hash(token: "stb_x"), scope: .drive,
      standups: [Standup.design.id], createdAt: Date(timeIntervalSince1970: 1_795_000_000))
    try await access.addBot(bot)
    await #expect(throws: AccessStorageError.self) {
      try await access.addBot(
        Bot(name: "deploy", tokenHash: "other", scope: .notes, standups: [], createdAt: Date()))
    }
    // A name that reads like it (a zero for the O, a Cyrillic "е" for the e, an invisible
    // grapheme joiner or variation selector) is no other bot.
    for lookAlike in ["Depl0y", "D\u{0435}ploy", "Deploy\u{034F}", "Dep\u{FE0F}loy"] {
      await #expect(throws: AccessStorageError.self) {
        try await access.addBot(
          Bot(name: lookAlike, tokenHash: "another", scope: .notes, createdAt: Date()))
      }
    }
    #expect(try await access.bots() == [bot])
    #expect(try await access.revokeBot("DEPLOY"))
    #expect(try await access.revokeBot("Deploy") == false)
    #expect(try await access.bots() == [])
    // Any case in any script: SQLite's NOCASE folds ASCII letters only.
    try await access.addBot(
      Bot(name: "Маша", tokenHash: "masha", scope: .notes, createdAt: Date()))
    #expect(try await access.revokeBot("маша"))
    #expect(try await access.bots() == [])
  }

  /// A call that waits (a half-open connection, a lock) is given up at the storage's deadline,
  /// not at TCP's: the credentials are read every second.
  @Test func aCallToTheAccessTablesIsGivenUpAtTheDeadline() async throws {
    guard let (_, _, keep) = try await StorageKind.postgres.make(),
      let storage = keep as? PostgresStorage
    else { return }
    let hasty = try await PostgresStorage(
      url: storage.url, logger: Logger(label: "test"), deadline: .seconds(1))
    defer { hasty.close() }
    try await whileLocked("bot", in: storage.url) {
      await #expect {
        _ = try await hasty.access.bots()
      } throws: { error in
        // NB: not the lock's own timeout (10 s): the deadline's.
        "\(error)".contains("did not answer within 1")
      }
    }
    #expect(try await hasty.access.bots() == [])
  }

  @Test(arguments: StorageKind.allCases)
  func keepsSignedOutSessionsUntilTheyExpire(_ kind: StorageKind) async throws {
    guard let (_, access, keep) = try await kind.make() else { return }
    defer { withExtendedLifetime(keep) {} }
    #expect(try await access.signedOutSessions() == [])
    try await access.signOutSession("a", Date().addingTimeInterval(3600))
    try await access.signOutSession("expired", Date().addingTimeInterval(-1))
    // Signing one out twice (two tabs at once) is no error.
    try await access.signOutSession("a", Date().addingTimeInterval(3600))
    #expect(try await access.signedOutSessions() == ["a"])
    try await access.signOutSession("b", Date().addingTimeInterval(3600))
    #expect(try await access.signedOutSessions() == ["a", "b"])
  }
}

struct DatabaseReachTests {
  @Test func aDatabaseThatCannotBeReachedStopsTheNodeSayingWhich() async throws {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.publicDirectory = nil
    configuration.database = try DatabaseURL("postgres://standups:pw@127.0.0.1:1/nowhere")
    await #expect {
      _ = try await StandupsServer.start(configuration: configuration)
    } throws: { error in
      let message = "\(error)"
      return message.contains("Cannot use the database postgres://standups@127.0.0.1:1/nowhere")
        && message.contains("Is PostgreSQL running there") && !message.contains("pw")
    }
  }
}

/// In a cluster a room's writes are fenced by its lock: a node whose session ended (frozen,
/// cut off) writes nothing for the room on waking, whatever it had queued.
@Suite(.serialized)
struct WriteFenceTests {
  /// A fresh PostgreSQL database's storage; nil when no PostgreSQL is here.
  static func database() async throws -> PostgresStorage? {
    try await StorageKind.postgres.make()?.keep as? PostgresStorage
  }

  @Test func aNodeThatLostTheRoomsLockWritesNothingForIt() async throws {
    guard let storage = try await Self.database() else { return }
    let first = NodeSession(storage: storage, logger: Logger(label: "test"))
    let second = NodeSession(storage: storage, logger: Logger(label: "test"))
    try await first.start()
    try await second.start()
    defer {
      Task {
        await first.stop()
        await second.stop()
      }
    }
    var design = Standup.design
    try await storage.save(design)
    let checkpoint = MeetingCheckpoint(
      standupID: design.id, meetingID: UUID(), secondsElapsed: 30, speakerIndex: 0,
      transcript: "", secondsRun: 30)
    try await storage.saveCheckpoint(design.id, checkpoint)

    let hold = try #require(await first.acquire(design.id))
    // Held by another node (only then is it worth asking that node for it), or not now (no session).
    #expect(await second.take(design.id) == .heldElsewhere)
    let down = NodeSession(storage: storage, logger: Logger(label: "test"))
    #expect(await down.take(design.id) == .noDatabase)
    let fence = try #require(first.writeFence(hold))
    design.title = "Saved by the first node"
    try await storage.save(design, fence: fence)
    // NB: both sessions share this storage here; a node has one.
    storage.fenceClocks { fence.pid }
    try await storage.saveMeetingClocks([
      MeetingClock(
        standupID: design.id, meetingID: checkpoint.meetingID, secondsElapsed: 31,
        speakerIndex: 0, secondsRun: 31)
    ])
    #expect(try await storage.loadCheckpoint(design.id)?.secondsRun == 31)

    // PostgreSQL ends the first node's session (as idle_session_timeout does to a frozen
    // node); the second node takes the room and saves.
    try await storage.client.query("SELECT pg_terminate_backend(\(fence.pid))")
    var taken: NodeSession.Hold?
    for _ in 0..<50 where taken == nil {
      taken = await second.acquire(design.id)
      if taken == nil { try await Task.sleep(for: .milliseconds(50)) }
    }
    let takenHold = try #require(taken)
    let secondFence = try #require(second.writeFence(takenHold))
    design.title = "Saved by the second node"
    try await storage.save(design, fence: secondFence)

    // The first node wakes with a save and a clock queued: the database refuses the save even
    // though the node still believes it holds the room, and the clock is not written.
    var stale = design
    stale.title = "Queued on the first node"
    let believing = WriteFence(pid: fence.pid, key: fence.key, holds: { true })
    await #expect(throws: StorageError.self) { try await storage.save(stale, fence: believing) }
    await #expect(throws: StorageError.self) {
      try await storage.delete(design.id, fence: believing)
    }
    try await storage.saveMeetingClocks([
      MeetingClock(
        standupID: design.id, meetingID: checkpoint.meetingID, secondsElapsed: 40,
        speakerIndex: 0, secondsRun: 40)
    ])
    #expect(try await storage.loadStandup(design.id)?.title == "Saved by the second node")
    #expect(try await storage.loadCheckpoint(design.id)?.secondsRun == 31)
  }

  /// A word with people in it, about a room this node no longer holds by the time it can be
  /// sent (the database was away while it waited, and the room moved), is not sent: it would
  /// show the room's people as they were here, over what the room's new node said.
  @Test func aNodeSaysWhoIsInARoomOnlyWhileItHoldsIt() async throws {
    guard let storage = try await Self.database() else { return }
    let speaker = NodeSession(storage: storage, logger: Logger(label: "test"))
    let listener = NodeSession(storage: storage, logger: Logger(label: "test"))
    let heard = Mutex<[UUID]>([])
    listener.attach(
      lost: {},
      heard: { notice in
        if notice.kind == .live, let room = notice.standup { heard.withLock { $0.append(room) } }
      }, listening: {})
    try await speaker.start()
    try await listener.start()
    defer {
      Task {
        await speaker.stop()
        await listener.stop()
      }
    }
    let (left, held) = (UUID(), UUID())
    _ = try #require(await speaker.acquire(held))
    let people = Lobby.Live(participants: 2, meetingRunning: true, meetingPaused: false)
    for room in [left, held] {
      speaker.publish(.init(node: speaker.nodeID, kind: .live, standup: room, live: people))
    }
    // The room left says goodbye, after its lock went back: that is heard.
    speaker.publish(.init(node: speaker.nodeID, kind: .live, standup: left, live: nil))
    try await eventually("The goodbye was not heard.") { heard.withLock { $0.count } == 2 }
    #expect(heard.withLock { $0 } == [held, left])
  }

  /// A write the database does not answer in time may still land: the node's session ends,
  /// so that its rooms close and open again from what the database settles, rather than go
  /// on as if it had failed.
  @Test func aWriteLeftUnansweredEndsTheNodesSession() async throws {
    guard let storage = try await Self.database() else { return }
    let hasty = try await PostgresStorage(
      url: storage.url, logger: Logger(label: "test"), deadline: .seconds(1))
    defer { hasty.close() }
    let (node, lost, hold, room) = try await Self.servingTheDesign(on: hasty)
    defer { Task { await node.stop() } }
    try await whileLocked("draft", in: storage.url) {
      await #expect(throws: WriteOutcomeUnknown.self) { try await Self.saveADraft(room) }
      try await eventually("The session went on.") { lost.count.withLock { $0 } == 1 }
    }
    #expect(!node.holds(hold))
  }

  /// A write of a session that ended while it waited (the room's last copy, its save on a
  /// pool connection through the loss; or the lobby's, which no room fences), given up after
  /// the node opened a new session, ends no later one: that one's rooms go on.
  @Test(arguments: ["draft", "standup"])
  func aWriteOfASessionThatEndedAlreadyEndsNoLaterOne(_ table: String) async throws {
    guard let storage = try await Self.database() else { return }
    let hasty = try await PostgresStorage(
      url: storage.url, logger: Logger(label: "test"), deadline: .seconds(5))
    defer { hasty.close() }
    let (node, lost, _, room) = try await Self.servingTheDesign(on: hasty)
    defer { Task { await node.stop() } }
    let first = try #require(node.pid)
    try await whileLocked(table, in: storage.url) {
      let write = Task {
        if table == "draft" {
          try await Self.saveADraft(room)
        } else {
          try await hasty.storageClient.save(Standup(id: UUID(), title: "Made in the lobby"))
        }
      }
      // The write waits on the lock; meanwhile its session ends, and the node opens another.
      try await eventually("The write never waited on the lock.") {
        var waiting = false
        for try await _ in try await storage.client.query(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE \("%\(table)%")"
        ).decode(Int32.self) {
          waiting = true
        }
        return waiting
      }
      try await storage.client.query("SELECT pg_terminate_backend(\(first))")
      try await eventually("The node never opened a new session.") {
        node.isConnected && node.pid != first
      }
      #expect(lost.count.withLock { $0 } == 1)
      await #expect(throws: WriteOutcomeUnknown.self) { try await write.value }
    }
    // NB: the session would have ended as the write was given up, before it threw.
    #expect(lost.count.withLock { $0 } == 1)
    #expect(node.isConnected)
  }

  /// A lobby write begun while the node has no session (the database was away), given up,
  /// ends none — a session begun since would close its rooms a second time for it — and has
  /// the node read the standups again, for what it may have saved.
  @Test func aWriteBegunWithNoSessionEndsNoneAndHasTheStandupsReadAgain() async throws {
    guard let storage = try await Self.database() else { return }
    let hasty = try await PostgresStorage(
      url: storage.url, logger: Logger(label: "test"), deadline: .seconds(1))
    defer { hasty.close() }
    let node = NodeSession(storage: hasty, logger: Logger(label: "test"))
    let (lost, readAgain) = (Losses(), Losses())
    node.attach(
      lost: { lost.count.withLock { $0 += 1 } }, heard: { _ in }, listening: {},
      readAgain: { readAgain.count.withLock { $0 += 1 } })
    try await node.start()
    await node.stop()
    try await whileLocked("standup", in: storage.url) {
      await #expect(throws: WriteOutcomeUnknown.self) {
        try await hasty.storageClient.save(Standup(id: UUID(), title: "Made in the lobby"))
      }
      try await eventually("The standups were not read again.") {
        readAgain.count.withLock { $0 } == 1
      }
    }
    #expect(lost.count.withLock { $0 } == 0)
  }

  /// A node session on `storage` that holds the design's room, the count of its sessions
  /// lost, and the room's storage.
  static func servingTheDesign(on storage: PostgresStorage) async throws -> (
    NodeSession, Losses, NodeSession.Hold, StorageClient
  ) {
    let node = NodeSession(storage: storage, logger: Logger(label: "test"))
    let lost = Losses()
    node.attach(lost: { lost.count.withLock { $0 += 1 } }, heard: { _ in }, listening: {})
    try await node.start()
    try await storage.storageClient.save(.design)
    let hold = try #require(await node.acquire(Standup.design.id))
    return (node, lost, hold, storage.roomClient { node.writeFence(hold) })
  }

  /// How many times a node's session was lost.
  final class Losses: Sendable {
    let count = Mutex(0)
  }

  static func saveADraft(_ room: StorageClient) async throws {
    try await room.saveDraft(
      Standup.design.id,
      StandupDraft(
        standupID: Standup.design.id, title: "Typed", durationSeconds: 300, theme: .bubblegum,
        attendees: []))
  }

  /// A room whose last owner's writes do not end (a pooled connection gone half-open) is not
  /// served while they might land: the wait for them is given up at the storage's deadline,
  /// like every call, and the room's lock goes back — it is not held, unserved, until TCP
  /// gives up.
  @Test func aRoomWhoseLastWritesDoNotEndIsGivenUpAtTheDeadline() async throws {
    guard let storage = try await Self.database() else { return }
    let hasty = try await PostgresStorage(
      url: storage.url, logger: Logger(label: "test"), deadline: .seconds(1))
    defer { hasty.close() }
    let log = LogLines()
    let node = NodeSession(storage: hasty, logger: log.logger)
    try await node.start()
    defer { Task { await node.stop() } }
    let room = UUID()
    let (first, second) = WriteFence.barrier(NodeSession.lockKey(room))
    try await whileHeld("SELECT pg_advisory_xact_lock(\(first), \(second))", in: storage.url) {
      #expect(await node.acquire(room) == nil)
    }
    #expect(
      log.all.contains {
        $0.contains("writes did not end in time: the database did not answer within")
      })
    #expect(await node.acquire(room) != nil)
  }

  /// Which node session holds a room's lock, as a node asks when another speaks for the room.
  @Test func theDatabaseSaysWhichNodeHoldsARoom() async throws {
    guard let storage = try await Self.database() else { return }
    let node = NodeSession(storage: storage, logger: Logger(label: "test"))
    try await node.start()
    defer { Task { await node.stop() } }
    let room = UUID()
    #expect(try await node.lockHolder(of: room) == nil)
    let hold = try #require(await node.acquire(room))
    let pid = try #require(node.writeFence(hold)?.pid)
    #expect(try await node.lockHolder(of: room) == pid)
    await node.release(hold)
    #expect(try await node.lockHolder(of: room) == nil)
  }

  /// A notice this node cannot read (a node of another version, someone else on the channel)
  /// is ignored, and said in the log once, not once per notice; the next readable one is heard.
  @Test func aNoticeThatCannotBeReadIsLoggedOnceAndSkipped() async throws {
    guard let storage = try await Self.database() else { return }
    let log = LogLines()
    let node = NodeSession(storage: storage, logger: log.logger)
    let heard = Mutex<[NodeSession.Notice]>([])
    let listening = Mutex(false)
    node.attach(
      lost: {}, heard: { notice in heard.withLock { $0.append(notice) } },
      listening: { listening.withLock { $0 = true } })
    try await node.start()
    defer { Task { await node.stop() } }
    // NB: a notice sent before the node listens is never heard (the first one was, at times).
    try await eventually("The node never listened.") { listening.withLock { $0 } }
    let readable = NodeSession.Notice(
      node: "another", kind: .changed, standup: Standup.design.id
    ).text
    for text in [#"{"kind":"from the future"}"#, "not even JSON", readable] {
      try await storage.client.query("SELECT pg_notify(\(NodeSession.channel), \(text))")
    }
    try await eventually("The readable notice was not heard.") {
      heard.withLock { $0.count } == 1
    }
    #expect(heard.withLock { $0.first?.standup } == Standup.design.id)
    let said = log.all.filter { $0.contains("could not be read") }
    #expect(said.count == 1)
    #expect(said.first?.contains("from the future") == true)
  }

  /// A write whose connection is lost on its way (its backend ended, as a failover or a reset
  /// does) may have committed as it went: the node's session ends, as for one left
  /// unanswered, so that its rooms open again from what the database settled.
  @Test func aWriteWhoseConnectionIsLostEndsTheNodesSession() async throws {
    guard let storage = try await Self.database() else { return }
    let (node, lost, hold, room) = try await Self.servingTheDesign(on: storage)
    defer { Task { await node.stop() } }
    try await whileLocked("draft", in: storage.url) {
      let write = Task { try await Self.saveADraft(room) }
      // The write waits on the lock; its backend is ended under it.
      var waiting: Int32?
      try await eventually("The write never waited on the lock.") {
        for try await pid in try await storage.client.query(
          "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%draft%'"
        ).decode(Int32.self) {
          waiting = pid
        }
        return waiting != nil
      }
      let pid = try #require(waiting)
      try await storage.client.query("SELECT pg_terminate_backend(\(pid))")
      await #expect(throws: WriteOutcomeUnknown.self) { try await write.value }
      try await eventually("The session went on.") { lost.count.withLock { $0 } == 1 }
    }
    #expect(!node.holds(hold))
  }

  /// The other nodes hear of a standup saved or deleted from the write's own transaction: of
  /// each write that committed, even if its node died the moment after, and of none that did
  /// not.
  @Test func aStandupsWritesAreToldInTheirOwnTransactions() async throws {
    guard let storage = try await Self.database() else { return }
    let node = NodeSession(storage: storage, logger: Logger(label: "test"))
    let heard = Mutex<[NodeSession.Notice]>([])
    node.attach(
      lost: {}, heard: { notice in heard.withLock { $0.append(notice) } }, listening: {})
    try await node.start()
    defer { Task { await node.stop() } }
    storage.announceWrites(on: NodeSession.channel) { id, deleted in
      NodeSession.Notice(node: "another", kind: deleted ? .deleted : .changed, standup: id).text
    }
    var design = Standup.design
    try await storage.save(design)
    try await eventually("The save was not told.") { heard.withLock { $0.count } == 1 }

    // A write the fence refuses at its commit (this node's session was found untrusted as it
    // ended) is rolled back, and with it what it would have told.
    let hold = try #require(await node.acquire(design.id))
    let fence = try #require(node.writeFence(hold))
    let asked = Mutex(0)
    let untrustedAtTheEnd = WriteFence(
      pid: fence.pid, key: fence.key,
      holds: {
        asked.withLock {
          $0 += 1
          return $0 == 1
        }
      })
    design.title = "Never committed"
    await #expect(throws: StorageError.self) {
      try await storage.save(design, fence: untrustedAtTheEnd)
    }
    #expect(asked.withLock { $0 } == 2)
    try await storage.delete(design.id, fence: fence)
    try await eventually("The deletion was not told.") { heard.withLock { $0.count } == 2 }
    // NB: notifications come in the order their transactions committed: a told rollback
    // would have come before the deletion.
    #expect(
      heard.withLock { $0.map { [$0.kind.rawValue, $0.standup?.uuidString ?? ""] } } == [
        ["changed", design.id.uuidString], ["deleted", design.id.uuidString],
      ])
    #expect(try await storage.loadStandup(design.id) == nil)
  }
}
