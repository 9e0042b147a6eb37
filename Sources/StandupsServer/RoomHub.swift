import Dependencies
import Foundation
import IdentifiedCollections
import JSONPatch
import Logging
import StandupsFeatures
import StoreRuntime
import Synchronization
import WebSocketTransport

/// Every standup the server knows, readable from the transport's thread (404s, new rooms).
final class StandupCatalog: Sendable {
  private let standups: Mutex<IdentifiedArrayOf<Standup>>
  /// Meetings that were running when the server last stopped, until their room opens.
  private let checkpoints: Mutex<[Standup.ID: MeetingCheckpoint]>

  init(_ standups: IdentifiedArrayOf<Standup>, checkpoints: [MeetingCheckpoint] = []) {
    self.standups = Mutex(standups)
    self.checkpoints = Mutex(
      Dictionary(checkpoints.map { ($0.standupID, $0) }, uniquingKeysWith: { $1 }))
  }

  /// The checkpoint of the meeting to restore in a room that opens now, once.
  func takeCheckpoint(_ id: Standup.ID) -> MeetingCheckpoint? {
    checkpoints.withLock { $0.removeValue(forKey: id) }
  }
  /// A standup saved (or created): rooms open with it from now on.
  func update(_ standup: Standup) {
    standups.withLock { $0[id: standup.id] = standup }
  }

  func remove(_ id: Standup.ID) {
    _ = standups.withLock { $0.remove(id: id) }
  }
  subscript(id: UUID) -> Standup? { standups.withLock { $0[id: id] } }
}

/// Lets rooms tell the lobby what changed, once the lobby exists — and, in a cluster, every
/// other node's lobby too.
final class LobbyNotifier: Sendable {
  private let store = Mutex<Store<Lobby>?>(nil)
  private let relay = Mutex<(@Sendable (Lobby.Action) -> Void)?>(nil)
  func attach(_ store: Store<Lobby>) { self.store.withLock { $0 = store } }
  /// Also tells the other nodes what this node's rooms change.
  func relay(to relay: @escaping @Sendable (Lobby.Action) -> Void) {
    self.relay.withLock { $0 = relay }
  }

  /// This node's lobby, and the other nodes'.
  func send(_ action: Lobby.Action) async {
    await receive(action)
    tellOthers(action)
  }

  /// Only this node's lobby (what another node said).
  func receive(_ action: Lobby.Action) async { await store.withLock { $0 }?.send(action) }

  /// Only the other nodes (a change this node's lobby made itself).
  func tellOthers(_ action: Lobby.Action) { relay.withLock { $0 }?(action) }
}

/// Routes connections to rooms: decides upgrades, opens rooms on first join, releases them
/// when they empty.
final class RoomHub: WebSocketServerDelegate {
  /// Where a connection's messages go.
  enum Route {
    case lobby
    case room(RoomChannel<StandupRoomFeature>)
  }

  /// What an accepted upgrade asked for.
  private struct JoinRequest: Sendable {
    var room: UUID?
    var sender: Sender
    var since: Int?
    var credential: Credential
    /// A trusted proxy chose this node for the room (see `opening`).
    var viaProxy: Bool
  }

  /// What let a connection in, so that it can be closed when that ends.
  enum Credential: Sendable, Equatable {
    case none
    case session
    /// A bot's token hash.
    case bot(String)
  }

  struct Shared {
    var rooms: [UUID: RoomChannel<StandupRoomFeature>] = [:]
    /// Joins routed to a room but not yet processed: it must not be released meanwhile.
    var pendingJoins: [UUID: Int] = [:]
    var routes: [ConnectionID: Route] = [:]
    var credentials: [ConnectionID: Credential] = [:]
  }

  let lobby: RoomChannel<LobbyFeature>
  let catalog: StandupCatalog
  let outlet: Outlet
  let notifier: LobbyNotifier
  /// This node's session with the cluster's database; nil for a single node.
  let cluster: NodeSession?
  /// Set once SIGTERM asked the node to stop: it takes no new room.
  let draining = Flag()
  let dependencies: DependencyValues
  let logger: Logger
  let gatekeeper: Gatekeeper
  private let admission: Admission
  let shared = Mutex(Shared())
  /// Rooms other nodes of a cluster serve, as they said.
  let remoteRooms = RemoteRooms()

  private let versionSizes: VersionLease.Sizes
  /// Where standups live.
  var storage: StorageClient { dependencies.storage }
  /// Whether saves work (`/healthz`).
  let health: StorageHealth
  /// Writes running meetings' clocks once a second.
  let heartbeat: MeetingHeartbeat
  private let undoWindow: Duration

  /// - Parameter lobbyVersions: the lobby's versions, already reserved (`start`ed).
  init(
    standups: [Standup], checkpoints: [MeetingCheckpoint] = [], dependencies: DependencyValues,
    lobbyVersions: VersionLease, versionSizes: VersionLease.Sizes = .init(),
    undoWindow: Duration = .seconds(10),
    gatekeeper: Gatekeeper, limits: ServerLimits = ServerLimits(), outlet: Outlet,
    cluster: NodeSession? = nil, logger: Logger
  ) {
    self.cluster = cluster
    self.versionSizes = versionSizes
    let health = StorageHealth(logger: logger)
    self.health = health
    heartbeat = MeetingHeartbeat(storage: dependencies.storage, health: health)
    heartbeat.start()
    self.undoWindow = undoWindow
    self.gatekeeper = gatekeeper
    self.admission = Admission(limits: limits)
    let catalog = StandupCatalog(
      IdentifiedArray(uniqueElements: standups), checkpoints: checkpoints)
    let notifier = LobbyNotifier()
    self.catalog = catalog
    self.notifier = notifier
    self.outlet = outlet
    self.dependencies = dependencies
    self.logger = logger
    lobby = RoomChannel(
      feature: LobbyFeature(
        storage: dependencies.storage, catalog: catalog, health: health, notifier: notifier,
        creations: FailedAttempts(limit: limits.standupsPerMinutePerAddress)),
      initialState: Self.lobbyState(standups, checkpoints),
      reducer: Lobby(), dependencies: dependencies, resumeBytes: limits.resumeBytes,
      versions: lobbyVersions, outlet: outlet, logger: logger,
      onIdle: { _ in })
    notifier.attach(lobby.store)
    if let cluster { joinCluster(cluster) }
  }

  /// The lobby at startup: a standup with a meeting to restore shows it running.
  static func lobbyState(_ standups: [Standup], _ checkpoints: [MeetingCheckpoint]) -> Lobby.State {
    var state = Lobby.State(standups: IdentifiedArray(uniqueElements: standups))
    for checkpoint in checkpoints where state.standups[id: checkpoint.standupID] != nil {
      state.live[checkpoint.standupID] = Lobby.Live(participants: 0, meetingRunning: true)
    }
    return state
  }

  // MARK: WebSocketServerDelegate (service thread)

  func shouldUpgrade(_ request: HTTPRequest) -> UpgradeDecision {
    let viaProxy = cameThroughProxy(request)
    let request = request.fromClient(trusting: admission.limits.trustedProxies)
    if let refusal = admission.refusal(for: request) { return .refuse(refusal) }
    guard gatekeeper.originAllowed(request) else {
      return .refuse(
        HTTPResponse(
          status: 403,
          text:
            "Pages from \(request.header("origin") ?? request.header("host") ?? "another site") may not use "
            + "this server. (Behind a proxy, start it with --public-url; to allow another site, --allowed-origin.)"
        ))
    }
    let room: UUID?
    if request.path == "/ws/lobby" {
      room = nil
    } else if request.path.hasPrefix("/ws/rooms/") {
      let id = String(request.path.dropFirst("/ws/rooms/".count))
      // NB: in a cluster, a standup just made on another node may not have been heard of
      // yet: the room reads it from the database as it opens, and closes if there is none.
      guard let uuid = UUID(uuidString: id), catalog[uuid] != nil || cluster != nil else {
        return .refuse(HTTPResponse(status: 404, text: "No standup has the id \"\(id)\"."))
      }
      room = uuid
    } else {
      return .refuse(
        HTTPResponse(
          status: 404, text: "No WebSocket at \(request.path): use /ws/lobby or /ws/rooms/{id}."))
    }
    let given = (request.queryValue("name") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    let sender: Sender
    let credential: Credential
    switch gatekeeper.identify(request) {
    case .failure(let refusal):
      return .refuse(refusal.httpResponse)
    case .success(.bot(let bot)):
      guard bot.mayEnter(room) else {
        return .refuse(
          HTTPResponse(
            status: 403,
            text:
              "The bot \(bot.name) may not enter \(room.map { "the standup \($0.uuidString)" } ?? "the lobby")."
          ))
      }
      // NB: a bot shows under the name it was added with, whatever ?name= says: a notes bot
      // must not post as "Deploy" or show up as "Ana".
      sender = Sender(
        participantID: UUID().uuidString.lowercased(), name: bot.name, isBot: true,
        scope: bot.scope,
        address: request.remoteAddress)
      credential = .bot(bot.tokenHash)
    case .success(.person(let sessionName)):
      let name = sessionName ?? given
      if sessionName == nil && name.isEmpty {
        return .refuse(
          HTTPResponse(status: 400, text: "Add ?name= with your display name (1 to 40 characters).")
        )
      }
      if let problem = TextRules.problem(withDisplayName: name, botNames: gatekeeper.botNames) {
        return .refuse(HTTPResponse(status: sessionName == nil ? 400 : 409, text: problem))
      }
      sender = Sender(
        participantID: UUID().uuidString.lowercased(), name: name, isBot: false,
        address: request.remoteAddress)
      credential = sessionName == nil ? .none : .session
    }
    var since: Int?
    if let text = request.queryValue("since") {
      guard let value = Int(text) else {
        return .refuse(HTTPResponse(status: 400, text: "since= must be a version number."))
      }
      since = value
    }
    return .accept(
      context: JoinRequest(
        room: room, sender: sender, since: since, credential: credential, viaProxy: viaProxy))
  }

  func webSocketOpened(_ connection: ConnectionID, request: HTTPRequest, context: (any Sendable)?) {
    let request = request.fromClient(trusting: admission.limits.trustedProxies)
    admission.opened(connection, address: request.remoteAddress)
    guard let join = context as? JoinRequest else {
      outlet.close(connection, code: .policyViolation, reason: "Not a Standups connection")
      return
    }
    shared.withLock { $0.credentials[connection] = join.credential }
    guard let roomID = join.room else {
      shared.withLock { $0.routes[connection] = .lobby }
      lobby.enqueue(.join(connection, join.sender, since: join.since))
      return
    }
    deliver(
      .join(connection, join.sender, since: join.since), to: roomID, connection: connection,
      viaProxy: join.viaProxy)
  }

  func webSocket(_ connection: ConnectionID, received message: InboundMessage) {
    switch admission.take(connection) {
    case .accept:
      break
    case .refuse:
      let limit = Int(admission.limits.messagesPerSecond)
      outlet.send(
        ServerMessage.error(
          ref: ClientMessage.ref(of: message),
          WireError(.rateLimited, "Slow down: at most \(limit) messages a second.")),
        to: connection)
      return
    case .close:
      outlet.close(
        connection, code: .policyViolation, reason: "Too many messages: slow down, then reconnect.")
      return
    }
    switch shared.withLock({ $0.routes[connection] }) {
    case .lobby?: lobby.enqueue(.message(connection, message))
    case .room(let channel)?: channel.enqueue(.message(connection, message))
    case nil: break
    }
  }

  func webSocketClosed(_ connection: ConnectionID) {
    admission.closed(connection)
    let route = shared.withLock { shared in
      shared.credentials[connection] = nil
      return shared.routes.removeValue(forKey: connection)
    }
    switch route {
    case .lobby?: lobby.enqueue(.leave(connection))
    case .room(let channel)?: channel.enqueue(.leave(connection))
    case nil: break
    }
  }

  func handleHTTP(_ request: HTTPRequest, respond: HTTPResponder) {
    let viaProxy = cameThroughProxy(request)
    let request = request.fromClient(trusting: admission.limits.trustedProxies)
    if request.path == "/healthz" {
      if draining.value {
        return respond(
          HTTPResponse(status: 503, text: "draining", headers: [("retry-after:", "1")]))
      }
      // NB: a node cut off from the database can serve no room: the proxy should send their
      // people elsewhere until its session is back.
      if let cluster, !cluster.isConnected {
        return respond(
          HTTPResponse(
            status: 503, text: "database_unavailable: this node has no session with the database",
            headers: [("retry-after:", "1")]))
      }
      guard let problem = health.problem else {
        return respond(HTTPResponse(status: 200, text: "ok"))
      }
      // NB: while saves fail, each check also tries one, so that health comes back by itself.
      probeStorage()
      respond(
        HTTPResponse(
          status: 503, text: "storage_unavailable: \(problem)", headers: [("retry-after:", "5")]))
      return
    }
    if request.path == "/metrics" {
      let counts = outlet.counts
      return respond(
        HTTPResponse(
          status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
          body: ServerMetrics.shared.render(
            connections: counts.connections, rooms: openRoomCount, slowReaders: counts.slowReaders))
      )
    }
    if request.path.hasPrefix("/ws/") {
      respond(
        HTTPResponse(
          status: 426,
          text:
            "\(request.path) is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket).",
          headers: [("upgrade:", "websocket")]))
      return
    }
    if request.path == "/api/session" {
      SessionAPI.handle(request, respond: respond, gatekeeper: gatekeeper)
      return
    }
    BotAPI.handle(request, respond: respond, hub: self, viaProxy: viaProxy)
  }

  /// Closes the connections whose credentials just ended (4401): every person's when the
  /// team's secret was rotated, a bot's when it was revoked.
  func credentialsChanged(_ changes: Gatekeeper.Changes) {
    let ended = shared.withLock { shared in
      shared.credentials.compactMap { connection, credential -> (ConnectionID, String)? in
        switch credential {
        case .session where changes.sessionsEnded:
          return (connection, "Your session ended: open your team's new invite link.")
        case .bot(let hash) where changes.revokedBots.contains(hash):
          return (connection, "This bot's token was revoked.")
        default:
          return nil
        }
      }
    }
    for (connection, reason) in ended {
      outlet.close(connection, code: .credentialsEnded, reason: reason)
    }
  }

  /// Whether a trusted proxy (HAProxy) sent this request here.
  func cameThroughProxy(_ request: HTTPRequest) -> Bool {
    admission.limits.trustedProxies.contains(request.remoteAddress)
  }

  /// Hands an API request to a room (opening it if needed); false if the standup is unknown.
  func enqueue(
    _ event: RoomChannel<StandupRoomFeature>.Event, inRoom roomID: UUID, viaProxy: Bool = false
  ) -> Bool {
    deliver(event, to: roomID, viaProxy: viaProxy)
  }

  /// Hands an arrival (a join or a request) to its room. A room that closed on the way (it
  /// restarted, moved to another node, or its standup was deleted) is opened anew, so that
  /// nobody is left waiting in a room that is gone: the new room serves them or refuses them.
  ///
  /// - Returns: false if the standup is gone (a join is then closed with 4410).
  @discardableResult
  private func deliver(
    _ event: RoomChannel<StandupRoomFeature>.Event, to roomID: UUID,
    connection: ConnectionID? = nil, viaProxy: Bool
  ) -> Bool {
    // NB: a fresh room takes its first events; more than a few rounds means rooms close as
    // fast as they open, and the arrival is refused like one for a room being moved.
    for _ in 0..<4 {
      guard let channel = arrive(at: roomID, connection: connection, viaProxy: viaProxy) else {
        if let connection {
          outlet.close(connection, code: .gone, reason: "This standup was deleted.")
        }
        return false
      }
      if channel.enqueue(event) { return true }
      joinProcessed(roomID)
      remove(channel)
    }
    refuseMoving(event)
    return true
  }

  /// An arrival no room could take: the client retries, as when a room moves.
  private func refuseMoving(_ event: RoomChannel<StandupRoomFeature>.Event) {
    let error = WireError(.roomMoving, "This standup's room is restarting. Try again in a moment.")
    switch event {
    case .join(let connection, _, _):
      outlet.close(connection, code: .serviceRestart, reason: "The room restarts: reconnecting.")
    case .request(_, _, let reply): reply(.failure(error))
    case .snapshot(let reply): reply(.failure(error))
    case .message, .leave, .restart, .closing: break
    }
  }

  /// What a room that closed still had queued comes back here (see `deliver`).
  private func bounced(_ event: RoomChannel<StandupRoomFeature>.Event, roomID: UUID) {
    let connection: ConnectionID?
    switch event {
    case .join(let joining, _, _): connection = joining
    default: connection = nil
    }
    deliver(event, to: roomID, connection: connection, viaProxy: false)
  }

  // MARK: Rooms

  /// The room, opened if needed, with one arrival counted (a join or an HTTP request) that
  /// the room reports back when it has handled it; nil if the standup is gone.
  private func arrive(
    at roomID: UUID, connection: ConnectionID? = nil, viaProxy: Bool = false
  ) -> RoomChannel<
    StandupRoomFeature
  >? {
    // NB: routing and counting the arrival happen under one lock, so `release` never drops
    // a room something is on its way to.
    shared.withLock { shared -> RoomChannel<StandupRoomFeature>? in
      let channel: RoomChannel<StandupRoomFeature>
      if let open = shared.rooms[roomID] {
        channel = open
      } else {
        guard let standup = catalog[roomID] ?? (cluster == nil ? nil : Standup(id: roomID))
        else { return nil }
        channel = makeRoom(standup, viaProxy: viaProxy)
        shared.rooms[roomID] = channel
      }
      if let connection { shared.routes[connection] = .room(channel) }
      shared.pendingJoins[roomID, default: 0] += 1
      return channel
    }
  }

  private func makeRoom(_ standup: Standup, viaProxy: Bool) -> RoomChannel<StandupRoomFeature> {
    var state = Room.State(standup: standup)
    if cluster == nil, let checkpoint = catalog.takeCheckpoint(standup.id) {
      state.meeting = RecordMeeting.State(restoring: checkpoint, standup: standup)
    }
    let versions = VersionLease(
      room: standup.id.uuidString, storage: dependencies.storage, sizes: versionSizes,
      logger: logger, now: { [date = dependencies.date] in date.now })
    // NB: in a cluster the room writes only while its lock lasts (set once it is taken).
    let hold = NodeSession.HoldBox()
    let storage =
      cluster.map { session in
        session.storage.roomClient { hold.value.flatMap(session.writeFence) }.timed()
      } ?? dependencies.storage
    return RoomChannel(
      feature: StandupRoomFeature(
        standupID: standup.id, storage: storage, lobby: notifier, catalog: catalog,
        health: health, heartbeat: heartbeat, releasesWhenEmpty: cluster != nil),
      initialState: state, reducer: Room(undoWindow: undoWindow), dependencies: dependencies,
      resumeBytes: admission.limits.resumeBytes, versions: versions, outlet: outlet, logger: logger,
      opening: cluster.map {
        opening(standup.id, session: $0, versions: versions, hold: hold, viaProxy: viaProxy)
      },
      onJoined: { [weak self] channel in self?.joinProcessed(channel.feature.standupID) },
      onClosed: { [weak self] channel in self?.remove(channel) },
      onBounced: { [weak self] event in self?.bounced(event, roomID: standup.id) },
      onIdle: { [weak self] channel in self?.release(channel) })
  }

  private func joinProcessed(_ roomID: UUID) {
    shared.withLock { shared in
      shared.pendingJoins[roomID, default: 1] -= 1
      if shared.pendingJoins[roomID] == 0 { shared.pendingJoins[roomID] = nil }
    }
  }

  /// Drops a room that closed (its standup was deleted).
  private func remove(_ channel: RoomChannel<StandupRoomFeature>) {
    shared.withLock { shared in
      if shared.rooms[channel.feature.standupID] === channel {
        shared.rooms[channel.feature.standupID] = nil
      }
    }
  }

  /// Drops an empty, idle room, unless someone is joining it right now.
  private func release(_ channel: RoomChannel<StandupRoomFeature>) {
    let roomID = channel.feature.standupID
    let released = shared.withLock { shared -> Bool in
      guard shared.rooms[roomID] === channel, shared.pendingJoins[roomID] == nil,
        channel.peerCount == 0
      else { return false }
      shared.rooms[roomID] = nil
      return true
    }
    if released { channel.close() }
  }

  /// Tries one small write while saves fail; if it works, storage is healthy again.
  private func probeStorage() {
    Task { [storage = dependencies.storage, health] in
      try? await health.checking(StorageHealth.probe) { try await storage.probe() }
    }
  }

  /// Stops taking rooms and hands the open ones on: timers stop, meeting clocks are written,
  /// people are closed with 1012, locks given back once each room has saved.
  ///
  /// - Parameter grace: how long the rooms keep going after `/healthz` turned to 503, so
  ///   that the proxy stops sending people here before they are asked to move.
  func drain(grace: Duration) async {
    draining.set(true)
    try? await Task.sleep(for: grace)
    let rooms = shared.withLock { Array($0.rooms.values) }
    for room in rooms { await room.store.cancelAllEffects() }
    await heartbeat.flush()
    for room in rooms {
      room.enqueue(
        .restart(
          why: "this node is draining", code: .serviceRestart,
          tell: cluster == nil
            ? "The server is restarting: reconnecting."
            : "This server is restarting: reconnecting to another."))
      await room.closed()
      await room.work.drain()
    }
  }

  /// Rooms open right now (tests, metrics).
  var openRoomCount: Int { shared.withLock { $0.rooms.count } }

  /// Shutdown, once the transport is closed: every room stops its effects, handles what is
  /// still in its mailbox (the leaves), saves, and gives back the versions it did not use;
  /// then the lobby does the same.
  func stopAll() async {
    let rooms = shared.withLock { Array($0.rooms.values) }
    for room in rooms {
      await room.store.cancelAllEffects()
      room.close()
      await room.closed()
      await room.work.drain()
    }
    await heartbeat.stop()
    lobby.close()
    await lobby.closed()
    await lobby.work.drain()
  }
}
