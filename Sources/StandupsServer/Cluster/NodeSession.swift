import Foundation
import Logging
import NIOCore
import PostgresNIO
import StandupsFeatures
import Storage
import Synchronization

/// This node's own session with PostgreSQL: the room locks it holds, and the notices it hears.
///
/// **Ownership** is a session-level advisory lock per room (`pg_try_advisory_lock`). PostgreSQL
/// releases a session's locks the moment the session ends, so a node that crashes or is killed
/// gives its rooms up at once, with no lease to wait out; and the session is told to end
/// itself after `sessionTimeout` without a query (`idle_session_timeout`), so a node that is
/// frozen or cut off loses its locks too.
///
/// **Fencing.** The node queries every `heartbeat`, and believes it still holds its locks only
/// for `trust` after the *start* of the last query that was answered — less than
/// `sessionTimeout`, the soonest PostgreSQL could have ended the session and given a room to
/// another node. Every version a room issues is checked against that (`holds`), so a node that
/// wakes from a pause or a partition sends nothing for a room another node may have taken: its
/// rooms close (1012) and people move.
final class NodeSession: Sendable {
  static let heartbeat: Duration = .seconds(1)
  static let trust: Duration = .milliseconds(3_500)
  static let sessionTimeout: Duration = .seconds(5)
  /// The channel notices go through.
  static let channel = "standups"

  private struct State {
    var connection: PostgresConnection?
    /// Bumped each time a session starts: locks from an older one are not held any more.
    var generation = 0
    var pid: Int32?
    /// The start of the last heartbeat that was answered, in this session.
    var confirmed: ContinuousClock.Instant?
    var held: Set<UUID> = []
    var stopped = false
    /// A session was open once (`start`): from then on, none trusted means it was lost.
    var started = false
  }

  let nodeID = UUID().uuidString.lowercased()
  private let url: DatabaseURL
  let storage: PostgresStorage
  let logger: Logger
  private let state = Mutex(State())
  private let clock = ContinuousClock()
  private let tasks = Mutex<[Task<Void, Never>]>([])
  let outbox: AsyncStream<Notice>.Continuation
  let outgoing: AsyncStream<Notice>
  /// The notices that could not be sent, what each was about (`sayLostAgain`).
  let unsent = Mutex(LostNotices())
  private struct Handlers {
    /// Called when the session is lost: every room must close at once.
    var lost: @Sendable () -> Void = {}
    /// Called with each notice from another node.
    var heard: @Sendable (Notice) async -> Void = { _ in }
    /// Called once a session listens (and has said `hello`), before its first notice: what
    /// changed while no notice could reach this node (before it listened, or between two
    /// sessions) is read then.
    var listening: @Sendable () async -> Void = {}
    /// Called when what the database holds may differ from what this node read, with no
    /// session to end for it: the standups are read again.
    var readAgain: @Sendable () async -> Void = {}
  }
  private let handlers = Mutex(Handlers())

  init(storage: PostgresStorage, logger: Logger) {
    self.url = storage.url
    self.storage = storage
    self.logger = logger
    (outgoing, outbox) = AsyncStream<Notice>.makeStream()
  }

  /// Who is told when the session is lost and what the other nodes say (before `start`).
  func attach(
    lost: @escaping @Sendable () -> Void, heard: @escaping @Sendable (Notice) async -> Void,
    listening: @escaping @Sendable () async -> Void,
    readAgain: @escaping @Sendable () async -> Void = {}
  ) {
    handlers.withLock {
      $0 = Handlers(lost: lost, heard: heard, listening: listening, readAgain: readAgain)
    }
  }

  private func lost() { handlers.withLock { $0.lost }() }
  private func heard(_ notice: Notice) async { await handlers.withLock { $0.heard }(notice) }

  /// Opens the session (throws if the database cannot be reached) and keeps it: heartbeats,
  /// a watchdog, reconnection, and the notices in both directions.
  func start() async throws {
    storage.fenceClocks { [weak self] in
      guard let self, self.isConnected else { return nil }
      return self.pid
    }
    // NB: a write whose outcome is unknown (it may still land) must not leave a room going on
    // as if it had failed: every room closes, and opens again once the database settled it.
    storage.whenAWriteGoesUnanswered { [weak self] session in
      guard let self else { return }
      // NB: a lobby write begun while the node had no session ends none (not the one begun
      // since: its rooms would close a second time); what it may have saved is read again.
      guard let session else {
        Task { await self.handlers.withLock { $0.readAgain }() }
        return
      }
      self.abandon(
        because:
          "a write went unanswered or lost its connection, so whether it landed is not known yet",
        ifSession: session)
    }
    try await connect()
    state.withLock { $0.started = true }
    let keeping = Task { [self] in await keep() }
    let watching = Task { [self] in await watch() }
    let sending = Task { [self] in await sendNotices() }
    tasks.withLock { $0 += [keeping, watching, sending] }
  }

  /// Gives up every lock (by ending the session) and stops.
  func stop() async {
    let connection = state.withLock { state -> PostgresConnection? in
      state.stopped = true
      state.held.removeAll()
      defer { state.connection = nil }
      return state.connection
    }
    outbox.finish()
    for task in tasks.withLock({ $0 }) { task.cancel() }
    try? await connection?.close()
  }

  private func connect() async throws {
    let connection = try await PostgresConnection.connect(
      configuration: try url.connectionConfiguration(), id: 1, logger: PostgresStorage.quietLogger)
    let started = clock.now
    do {
      // NB: within the storage's deadline: a network gone right after the handshake would
      // otherwise hold the reconnection (and every room of the node) until TCP gave up.
      let pid = try await storage.said { [logger] in
        try await connection.query(
          PostgresQuery(
            unsafeSQL: "SET idle_session_timeout = \(Self.milliseconds(Self.sessionTimeout))"),
          logger: logger)
        var pid: Int32?
        for try await value in try await connection.query(
          "SELECT pg_backend_pid()", logger: logger
        ).decode(Int32.self) {
          pid = value
        }
        return pid
      }
      let generation = state.withLock { state in
        state.connection = connection
        state.generation += 1
        state.pid = pid
        state.confirmed = started
        state.held.removeAll()
        return state.generation
      }
      let listening = Task { [self] in
        await listen(on: connection, generation: generation, pid: pid)
      }
      tasks.withLock { $0.append(listening) }
    } catch {
      try? await connection.close()
      throw error
    }
  }

  private func listen(on connection: PostgresConnection, generation: Int, pid: Int32?) async {
    do {
      try await connection.listen(on: Self.channel) { notifications in
        // NB: once listening: the others answer `hello` with who is in their rooms, and this
        // node must hear each answer (they are read after `listening` returns).
        publish(Notice(node: nodeID, kind: .hello, pid: pid))
        await handlers.withLock { $0.listening }()
        var unreadable = 0
        for try await notification in notifications {
          let notice: Notice
          do {
            notice = try JSONDecoder().decode(Notice.self, from: Data(notification.payload.utf8))
          } catch {
            // NB: a node of another version, or someone else on the channel: said once per
            // session, so that a mixed cluster shows in the log without flooding it.
            unreadable += 1
            if unreadable == 1 {
              logger.warning(
                "A notice on the '\(Self.channel)' channel could not be read, and is ignored (further ones this session are not logged): \(notification.payload.prefix(200))"
              )
            }
            continue
          }
          guard notice.node != nodeID else { continue }
          await heard(notice)
        }
      }
      stoppedListening(connection, generation, because: "listening stopped")
    } catch {
      stoppedListening(
        connection, generation,
        because: "listening stopped: \(PostgresStorage.describe(error))")
    }
  }

  /// A node that hears nothing (no `wanted`, no `hello`) cannot serve rooms safely: the
  /// session ends (a no-op if it ended already, or was stopped), and the next one listens
  /// again — whether the listening failed or its notifications simply ended.
  private func stoppedListening(
    _ connection: PostgresConnection, _ generation: Int, because why: String
  ) {
    if state.withLock({ $0.generation == generation && !$0.stopped }) {
      end(connection, because: why)
    }
  }

  /// Heartbeats while the session lives; a new session when it is lost.
  private func keep() async {
    while !Task.isCancelled {
      try? await Task.sleep(for: Self.heartbeat)
      guard let connection = state.withLock({ $0.stopped ? nil : $0.connection }) else {
        if state.withLock({ $0.stopped }) { return }
        do {
          try await connect()
          logger.notice("The database session is back: rooms can be served again.")
        } catch {
          logger.debug("Reconnecting to the database failed: \(error)")
        }
        continue
      }
      // NB: not awaited here: on a connection the server dropped a query may never answer.
      // The watchdog decides when the session is lost; this loop must go on, to reconnect.
      let started = clock.now
      Task { [self] in
        do {
          try await connection.query("SELECT 1", logger: logger)
          state.withLock { state in
            if state.connection === connection { state.confirmed = started }
          }
        } catch {
          end(connection, because: "\(PostgresStorage.describe(error))")
        }
      }
    }
  }

  /// Ends the rooms as soon as the session can no longer be trusted.
  private func watch() async {
    while !Task.isCancelled {
      try? await Task.sleep(for: .milliseconds(250))
      let connection = state.withLock { state -> PostgresConnection? in
        guard let confirmed = state.confirmed, state.connection != nil,
          clock.now - confirmed > Self.trust
        else { return nil }
        return state.connection
      }
      if let connection { end(connection, because: "no answer for \(Self.trust)") }
    }
  }

  /// Ends the session now, if there is one (and, given `session`, if it is that one: a write
  /// of a session that ended already, given up late, ends no later session).
  func abandon(because reason: String, ifSession session: Int32? = nil) {
    guard
      let connection = state.withLock({ state in
        session == nil || state.pid == session ? state.connection : nil
      })
    else { return }
    end(connection, because: reason)
  }

  private func end(_ connection: PostgresConnection, because reason: String) {
    let ended = state.withLock { state -> Int? in
      guard state.connection === connection else { return nil }
      state.connection = nil
      state.confirmed = nil
      defer { state.held.removeAll() }
      return state.held.count
    }
    guard let ended else { return }
    ServerMetrics.shared.ownership("lost", count: ended)
    logger.error(
      "Lost the database session (\(reason)): closing every room this node served; their people reconnect (to another node, or here once the session is back)."
    )
    // NB: the connection lives until its channel has closed: postgres-nio asserts that
    // nothing lets go of an open connection (the listening task may hold the last reference).
    connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    lost()
  }

  // MARK: Ownership

  /// Takes a room's lock if no other node holds it, saying why not.
  func take(_ room: UUID) async -> Acquisition {
    guard
      let (connection, generation) = state.withLock({ state in
        state.connection.map { ($0, state.generation) }
      })
    else { return .noDatabase }
    // NB: PostgreSQL counts a session's advisory lock taken twice, and one unlock would leave
    // it held by neither copy of the room: never two holds of one room.
    guard !state.withLock({ $0.held.contains(room) }) else {
      logger.error("Room \(room) was opened again while this node still holds it.")
      return .unavailable
    }
    do {
      var taken = false
      for try await value in try await connection.query(
        "SELECT pg_try_advisory_lock(\(Self.lockKey(room)))", logger: logger
      ).decode(Bool.self) {
        taken = value
      }
      guard taken else {
        ServerMetrics.shared.ownership("refused")
        return .heldElsewhere
      }
      let held = state.withLock { state -> Bool in
        guard state.generation == generation, state.connection != nil else { return false }
        state.held.insert(room)
        return true
      }
      guard held else { return .noDatabase }
      let hold = Hold(room: room, generation: generation)
      do {
        try await storage.waitForWritesUnderWay(Self.lockKey(room))
      } catch {
        logger.error("Room \(room): the last owner's writes did not end in time: \(error)")
        await release(hold)
        return .unavailable
      }
      ServerMetrics.shared.ownership("acquired")
      return .held(hold)
    } catch {
      logger.warning("Room \(room): asking for its lock failed: \(PostgresStorage.describe(error))")
      return .noDatabase
    }
  }

  /// Whether the node may still act for the room: the lock's session is the current one, and
  /// PostgreSQL answered it recently enough that it cannot have ended yet. Cheap (no I/O).
  func holds(_ hold: Hold) -> Bool {
    state.withLock { state in
      guard state.generation == hold.generation, state.held.contains(hold.room),
        let confirmed = state.confirmed
      else { return false }
      return clock.now - confirmed <= Self.trust
    }
  }

  /// Gives a room's lock back (the room closed).
  func release(_ hold: Hold) async {
    guard
      let connection = state.withLock({ state -> PostgresConnection? in
        guard state.generation == hold.generation, state.held.remove(hold.room) != nil else {
          return nil
        }
        return state.connection
      })
    else { return }
    ServerMetrics.shared.ownership("released")
    _ = try? await connection.query(
      "SELECT pg_advisory_unlock(\(Self.lockKey(hold.room)))", logger: logger)
  }

  /// Why what people ask of the database is refused at once (`StorageClient.refused`): this
  /// node's session with it was lost and is not back yet. Nil while it is up, and before it
  /// first opened (a node loading its standups as it starts).
  var cutOff: String? {
    guard state.withLock({ $0.started && !$0.stopped }), !isConnected else { return nil }
    return "this node has no session with the database right now, so nothing was sent to it"
  }

  /// Whether the session is up and trusted now (`/healthz`).
  var isConnected: Bool {
    state.withLock { state in
      guard state.connection != nil, let confirmed = state.confirmed else { return false }
      return clock.now - confirmed <= Self.trust
    }
  }

  /// What lets a room write while `hold` lasts (nil once it is over).
  func writeFence(_ hold: Hold) -> WriteFence? {
    guard let pid = state.withLock({ $0.generation == hold.generation ? $0.pid : nil }) else {
      return nil
    }
    return WriteFence(pid: pid, key: Self.lockKey(hold.room), holds: { self.holds(hold) })
  }

  /// Rooms locked now.
  var heldCount: Int { state.withLock { $0.held.count } }

  /// Whether this session holds `room`'s lock now.
  func holdsLock(of room: UUID) -> Bool { state.withLock { $0.held.contains(room) } }

  /// The session's backend, named in this node's notices.
  var pid: Int32? { state.withLock { $0.pid } }
}
