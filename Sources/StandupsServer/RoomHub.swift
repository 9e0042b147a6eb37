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
    self.checkpoints = Mutex(Dictionary(checkpoints.map { ($0.standupID, $0) }, uniquingKeysWith: { $1 }))
  }

  /// The checkpoint of the meeting to restore in a room that opens now, once.
  func takeCheckpoint(_ id: Standup.ID) -> MeetingCheckpoint? {
    checkpoints.withLock { $0.removeValue(forKey: id) }
  }
  func replace(with standups: IdentifiedArrayOf<Standup>) { self.standups.withLock { $0 = standups } }
  subscript(id: UUID) -> Standup? { standups.withLock { $0[id: id] } }
}

/// Lets rooms tell the lobby what changed, once the lobby exists.
final class LobbyNotifier: Sendable {
  private let store = Mutex<Store<Lobby>?>(nil)
  func attach(_ store: Store<Lobby>) { self.store.withLock { $0 = store } }
  func send(_ action: Lobby.Action) async { await store.withLock { $0 }?.send(action) }
}

/// Routes connections to rooms: decides upgrades, opens rooms on first join, releases them
/// when they empty.
final class RoomHub: WebSocketServerDelegate {
  /// Where a connection's messages go.
  private enum Route {
    case lobby
    case room(RoomChannel<StandupRoomFeature>)
  }

  /// What an accepted upgrade asked for.
  private struct JoinRequest: Sendable {
    var room: UUID?
    var sender: Sender
    var since: Int?
  }

  private struct Shared {
    var rooms: [UUID: RoomChannel<StandupRoomFeature>] = [:]
    /// Joins routed to a room but not yet processed: it must not be released meanwhile.
    var pendingJoins: [UUID: Int] = [:]
    var routes: [ConnectionID: Route] = [:]
  }

  let lobby: RoomChannel<LobbyFeature>
  let catalog: StandupCatalog
  private let outlet: Outlet
  private let notifier: LobbyNotifier
  private let dependencies: DependencyValues
  private let logger: Logger
  private let bots: BotTokens
  private let admission: Admission
  private let shared = Mutex(Shared())

  private let versionSizes: VersionLease.Sizes

  /// - Parameter lobbyVersions: the lobby's versions, already reserved (`start`ed).
  init(
    standups: [Standup], checkpoints: [MeetingCheckpoint] = [], dependencies: DependencyValues,
    lobbyVersions: VersionLease, versionSizes: VersionLease.Sizes = .init(),
    bots: BotTokens = BotTokens(), limits: ServerLimits = ServerLimits(), outlet: Outlet,
    logger: Logger
  ) {
    self.versionSizes = versionSizes
    self.bots = bots
    self.admission = Admission(limits: limits)
    let catalog = StandupCatalog(IdentifiedArray(uniqueElements: standups), checkpoints: checkpoints)
    let notifier = LobbyNotifier()
    self.catalog = catalog
    self.notifier = notifier
    self.outlet = outlet
    self.dependencies = dependencies
    self.logger = logger
    lobby = RoomChannel(
      feature: LobbyFeature(storage: dependencies.storage, catalog: catalog, logger: logger),
      initialState: Self.lobbyState(standups, checkpoints),
      reducer: Lobby(), dependencies: dependencies,
      versions: lobbyVersions, outlet: outlet, logger: logger,
      onIdle: { _ in })
    notifier.attach(lobby.store)
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
    if let refusal = admission.refusal(for: request) { return .refuse(refusal) }
    let room: UUID?
    if request.path == "/ws/lobby" {
      room = nil
    } else if request.path.hasPrefix("/ws/rooms/") {
      let id = String(request.path.dropFirst("/ws/rooms/".count))
      guard let uuid = UUID(uuidString: id), catalog[uuid] != nil else {
        return .refuse(HTTPResponse(status: 404, text: "No standup has the id \"\(id)\"."))
      }
      room = uuid
    } else {
      return .refuse(
        HTTPResponse(status: 404, text: "No WebSocket at \(request.path): use /ws/lobby or /ws/rooms/{id}."))
    }
    var name = (request.queryValue("name") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    var isBot = false
    switch identify(request) {
    case .refused(let refusal):
      return .refuse(refusal)
    case .bot(let bot):
      isBot = true
      if name.isEmpty { name = bot }
    case .person:
      break
    }
    guard (1...40).contains(name.count) else {
      return .refuse(
        HTTPResponse(status: 400, text: "Add ?name= with your display name (1 to 40 characters)."))
    }
    var since: Int?
    if let text = request.queryValue("since") {
      guard let value = Int(text) else {
        return .refuse(HTTPResponse(status: 400, text: "since= must be a version number."))
      }
      since = value
    }
    let sender = Sender(participantID: UUID().uuidString.lowercased(), name: name, isBot: isBot)
    return .accept(context: JoinRequest(room: room, sender: sender, since: since))
  }

  func webSocketOpened(_ connection: ConnectionID, request: HTTPRequest, context: (any Sendable)?) {
    admission.opened(connection, address: request.remoteAddress)
    guard let join = context as? JoinRequest else {
      outlet.close(connection, code: .policyViolation, reason: "Not a Standups connection")
      return
    }
    guard let roomID = join.room else {
      shared.withLock { $0.routes[connection] = .lobby }
      lobby.enqueue(.join(connection, join.sender, since: join.since))
      return
    }
    guard let channel = arrive(at: roomID, connection: connection) else {
      outlet.close(connection, code: .gone, reason: "This standup was deleted.")
      return
    }
    channel.enqueue(.join(connection, join.sender, since: join.since))
  }

  func webSocket(_ connection: ConnectionID, received message: InboundMessage) {
    switch admission.take(connection) {
    case .accept:
      break
    case .refuse:
      let limit = Int(admission.limits.messagesPerSecond)
      outlet.send(
        ServerMessage.error(
          ref: nil, WireError(.rateLimited, "Slow down: at most \(limit) messages a second.")),
        to: connection)
      return
    case .close:
      outlet.close(connection, code: .policyViolation, reason: "Too many messages: slow down, then reconnect.")
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
    switch shared.withLock({ $0.routes.removeValue(forKey: connection) }) {
    case .lobby?: lobby.enqueue(.leave(connection))
    case .room(let channel)?: channel.enqueue(.leave(connection))
    case nil: break
    }
  }

  func handleHTTP(_ request: HTTPRequest, respond: HTTPResponder) {
    if request.path == "/healthz" {
      respond(HTTPResponse(status: 200, text: "ok"))
      return
    }
    BotAPI.handle(request, respond: respond, hub: self)
  }

  /// For the bot API: who is asking, or the refusal to send.
  func authenticate(_ request: HTTPRequest) -> Result<Sender, WireError> {
    switch identify(request) {
    case .bot(let name):
      return .success(Sender(participantID: "bot:\(name)", name: name, isBot: true))
    case .person:
      return .failure(WireError(.unauthorized, "Send \"Authorization: Bearer <token>\" with a bot token."))
    case .refused:
      return .failure(WireError(.unauthorized, "Unknown bot token."))
    }
  }

  /// Hands an API request to a room (opening it if needed); false if the standup is unknown.
  func enqueue(_ event: RoomChannel<StandupRoomFeature>.Event, inRoom roomID: UUID) -> Bool {
    guard let channel = arrive(at: roomID) else { return false }
    channel.enqueue(event)
    return true
  }

  // MARK: Rooms

  /// The room, opened if needed, with one arrival counted (a join or an HTTP request) that
  /// the room reports back when it has handled it; nil if the standup is gone.
  private func arrive(at roomID: UUID, connection: ConnectionID? = nil) -> RoomChannel<StandupRoomFeature>? {
    // NB: routing and counting the arrival happen under one lock, so `release` never drops
    // a room something is on its way to.
    shared.withLock { shared -> RoomChannel<StandupRoomFeature>? in
      let channel: RoomChannel<StandupRoomFeature>
      if let open = shared.rooms[roomID] {
        channel = open
      } else {
        guard let standup = catalog[roomID] else { return nil }
        channel = makeRoom(standup)
        shared.rooms[roomID] = channel
      }
      if let connection { shared.routes[connection] = .room(channel) }
      shared.pendingJoins[roomID, default: 0] += 1
      return channel
    }
  }

  /// Who a request is: a person (no token), a bot (a good token), or refused.
  private enum Identity {
    case person
    case bot(String)
    case refused(HTTPResponse)
  }

  private func identify(_ request: HTTPRequest) -> Identity {
    func refuse(_ text: String) -> Identity {
      .refused(
        HTTPResponse(
          status: 401, body: Array(text.utf8), extraHeader: ("www-authenticate:", "Bearer")))
    }
    var token = request.queryValue("token")
    if let authorization = request.header("authorization") {
      guard authorization.lowercased().hasPrefix("bearer ") else {
        return refuse("Authorization must be \"Bearer <token>\".")
      }
      token = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
    }
    guard let token else { return .person }
    guard let name = bots.name(for: token) else { return refuse("Unknown bot token.") }
    return .bot(name)
  }

  private func makeRoom(_ standup: Standup) -> RoomChannel<StandupRoomFeature> {
    var state = Room.State(standup: standup)
    if let checkpoint = catalog.takeCheckpoint(standup.id) {
      state.meeting = RecordMeeting.State(restoring: checkpoint, standup: standup)
    }
    return RoomChannel(
      feature: StandupRoomFeature(
        standupID: standup.id, storage: dependencies.storage, lobby: notifier, logger: logger),
      initialState: state, reducer: Room(), dependencies: dependencies,
      versions: VersionLease(
        room: standup.id.uuidString, storage: dependencies.storage, sizes: versionSizes,
        logger: logger, now: { [date = dependencies.date] in date.now }),
      outlet: outlet, logger: logger,
      onJoined: { [weak self] channel in self?.joinProcessed(channel.feature.standupID) },
      onClosed: { [weak self] channel in self?.remove(channel) },
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
    lobby.close()
    await lobby.closed()
    await lobby.work.drain()
  }
}
