import Dependencies
import Foundation
import HashTreeCollections
import IdentifiedCollections
import JSONPatch
import Logging
import RoomRuntime
import StandupsFeatures
import StandupsWire
import Storage
import StoreRuntime
import Synchronization
import WebSocketTransport

/// Routes connections to rooms: decides upgrades, opens rooms on first join, releases them
/// when they empty.
final class RoomHub: WebSocketServerDelegate {
  /// Where a connection's messages go.
  enum Route {
    case lobby
    case room(RoomChannel<StandupRoomFeature>)
  }

  /// What an accepted upgrade asked for.
  struct JoinRequest: Sendable {
    var room: UUID?
    var sender: Sender
    var since: Int?
    /// The key of the connection this one takes over (`?replaces=`, `Sender.key`).
    var replacing: String?
    var credential: Credential
    /// A trusted proxy chose this node for the room (see `opening`).
    var viaProxy: Bool
  }

  /// What let a connection in, so that it can be closed when that ends.
  enum Credential: Sendable, Equatable {
    case none
    /// A person's session, under this name, until it expires; `hash`: its token's, to close it
    /// when it is signed out.
    case session(name: String, expires: Date, hash: String)
    /// A bot's token hash.
    case bot(String)
  }

  struct Shared {
    var rooms: [UUID: RoomChannel<StandupRoomFeature>] = [:]
    /// Rooms dropped that are still finishing (saving, giving their versions and lock back):
    /// in a cluster, a room's next copy opens only after its last one finished.
    var finishing: [UUID: RoomChannel<StandupRoomFeature>] = [:]
    /// Joins routed to a room but not yet processed: it must not be released meanwhile.
    var pendingJoins: [UUID: Int] = [:]
    var routes: [ConnectionID: Route] = [:]
    var credentials: [ConnectionID: Credential] = [:]
    /// No session among `credentials` expires before this (one may later: a connection that
    /// left is not taken out), so that the check each second looks through them only then.
    var nextSessionExpiry = Date.distantFuture
  }

  let lobby: RoomChannel<LobbyFeature>
  let catalog: StandupCatalog
  let outlet: Outlet
  /// The transport, once it exists (`/metrics` reads its counts).
  private let transport = Mutex<WebSocketServer?>(nil)
  let notifier: LobbyNotifier
  /// This node's session with the cluster's database; nil for a single node.
  let cluster: NodeSession?
  /// Set once SIGTERM asked the node to stop: it takes no new room.
  let draining = Flag()
  /// Set once the rooms are being closed for good (a stop, the end of a drain): no room opens.
  let stopping = Flag()
  let dependencies: DependencyValues
  let logger: Logger
  let gatekeeper: Gatekeeper
  let admission: Admission
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
  let undoWindow: Duration

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
      IdentifiedArray(uniqueElements: standups))
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
      versions: lobbyVersions, outlet: outlet, metrics: .server, logger: logger,
      onIdle: { _ in })
    notifier.attach(lobby)
    if let cluster { joinCluster(cluster) }
  }

  /// Rooms send their frames through `transport` from now on.
  func attach(_ transport: WebSocketServer) {
    self.transport.withLock { $0 = transport }
    outlet.attach(transport)
  }

  /// WebSockets open now, those closed so far for reading too slowly, and the keepalive's
  /// pings so far (`/metrics`).
  var transportCounts: ServerMetrics.TransportCounts {
    guard let transport = transport.withLock({ $0 }) else { return .init() }
    let pings = transport.pingsSent
    return .init(
      connections: transport.webSocketCount, slowReaders: transport.slowReaderCount,
      pingsBehindFrames: pings.behindAFrame, pingsAlone: pings.alone)
  }

  /// The lobby at startup: a standup with a meeting to restore shows it running.
  static func lobbyState(_ standups: [Standup], _ checkpoints: [MeetingCheckpoint]) -> Lobby.State {
    var state = Lobby.State(standups: IdentifiedArray(uniqueElements: standups))
    for checkpoint in checkpoints where state.standups[id: checkpoint.standupID] != nil {
      state.live[checkpoint.standupID] = Lobby.Live(
        participants: 0, meetingRunning: true, meetingPaused: true)
    }
    return state
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
  func deliver(
    _ event: RoomChannel<StandupRoomFeature>.Event, to roomID: UUID,
    connection: ConnectionID? = nil, viaProxy: Bool
  ) -> Bool {
    // NB: a fresh room takes its first events; more than a few rounds means rooms close as
    // fast as they open, and the arrival is refused like one for a room being moved.
    for _ in 0..<4 {
      switch arrive(event, at: roomID, connection: connection, viaProxy: viaProxy) {
      case .enqueued, .connectionClosed: return true
      case .closing(let channel):
        joinProcessed(roomID)
        remove(channel)
      case .standupGone:
        if let connection {
          outlet.close(connection, code: .gone, reason: "This standup was deleted.")
        }
        return false
      case .stopping:
        refuseMoving(event)
        return true
      case .notSavedYet:
        refuseMoving(event, because: "This standup is being saved")
        return true
      }
    }
    refuseMoving(event)
    return true
  }

  /// An arrival no room could take: the client retries, as when a room moves.
  private func refuseMoving(
    _ event: RoomChannel<StandupRoomFeature>.Event,
    because why: String = "This standup's room is restarting"
  ) {
    if case .join(let connection, _, _, _) = event {
      outlet.close(connection, code: .serviceRestart, reason: "\(why): reconnecting.")
    }
    answer(event, WireError(.roomMoving, "\(why). Try again in a moment."))
  }

  /// Answers a request or a snapshot with `error` (other events have no one to answer).
  private func answer(_ event: RoomChannel<StandupRoomFeature>.Event, _ error: WireError) {
    switch event {
    case .request(_, _, let reply): reply(.failure(error))
    case .snapshot(let reply): reply(.failure(error))
    case .join, .message, .leave, .restart: break
    }
  }

  /// What a room that closed still had queued comes back here (see `deliver`). A request
  /// behind the standup's deletion is answered here: its room, and the standup, are gone.
  private func bounced(_ event: RoomChannel<StandupRoomFeature>.Event, roomID: UUID) {
    let connection: ConnectionID?
    switch event {
    case .join(let joining, _, _, _): connection = joining
    default: connection = nil
    }
    guard !deliver(event, to: roomID, connection: connection, viaProxy: false) else { return }
    answer(event, WireError(.notFound, "This standup was deleted."))
  }

  // MARK: Rooms

  private enum Arrival {
    case enqueued
    /// The room takes no more events: it is closing.
    case closing(RoomChannel<StandupRoomFeature>)
    case standupGone
    /// The server is stopping: no room opens.
    case stopping
    /// The standup was made here a moment ago and its save has not landed: no room opens yet.
    case notSavedYet
    /// The connection that joins closed meanwhile: its leave went to the room it was routed
    /// to before (a join that came back from a room that closed), so it joins nowhere.
    case connectionClosed
  }

  /// Hands `event` to the room, opened if needed, with one arrival counted (a join or an
  /// HTTP request) that the room reports back when it has handled it.
  private func arrive(
    _ event: RoomChannel<StandupRoomFeature>.Event, at roomID: UUID,
    connection: ConnectionID? = nil, viaProxy: Bool = false
  ) -> Arrival {
    // NB: routing, counting and queueing the arrival happen under one lock, so `release`
    // never drops a room something is on its way to, and a connection's leave, queued where
    // its route says once it closed, is queued after its join (a join that came back from
    // a room that closed is queued from that room's thread).
    shared.withLock { shared -> Arrival in
      if let connection, shared.credentials[connection] == nil { return .connectionClosed }
      let channel: RoomChannel<StandupRoomFeature>
      if let open = shared.rooms[roomID] {
        channel = open
      } else {
        // NB: a room closed for the stop is not opened again behind it (a join it bounced, a
        // page reconnecting at once): it would take the leaves the stop avoids.
        if stopping.value { return .stopping }
        if catalog.isUnsaved(roomID) { return .notSavedYet }
        guard let standup = catalog[roomID] ?? (cluster == nil ? nil : Standup(id: roomID))
        else { return .standupGone }
        channel = makeRoom(standup, viaProxy: viaProxy, after: shared.finishing[roomID])
        shared.rooms[roomID] = channel
      }
      if let connection { shared.routes[connection] = .room(channel) }
      shared.pendingJoins[roomID, default: 0] += 1
      return channel.enqueue(event) ? .enqueued : .closing(channel)
    }
  }

  /// - Parameter previous: the room's last copy, if it is still finishing: in a cluster this
  ///   one opens after it (the two would otherwise hold one lock, which PostgreSQL counts
  ///   twice for one session, and the first to finish would give it up under the other).
  private func makeRoom(
    _ standup: Standup, viaProxy: Bool, after previous: RoomChannel<StandupRoomFeature>?
  ) -> RoomChannel<StandupRoomFeature> {
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
        health: health, heartbeat: heartbeat, remoteRooms: remoteRooms,
        releasesWhenEmpty: cluster != nil),
      initialState: Room.State(standup: standup), reducer: Room(undoWindow: undoWindow),
      dependencies: dependencies, resumeBytes: admission.limits.resumeBytes, versions: versions,
      outlet: outlet, metrics: .server, logger: logger,
      opening: cluster.map {
        opening(
          standup.id, session: $0, versions: versions, hold: hold, viaProxy: viaProxy,
          after: previous)
      } ?? openingAsSaved(standup, storage: storage),
      onJoined: { [weak self] channel in self?.joinProcessed(channel.feature.standupID) },
      onClosed: { [weak self] channel in self?.remove(channel) },
      onBounced: { [weak self] event in self?.bounced(event, roomID: standup.id) },
      onIdle: { [weak self] channel in self?.release(channel) })
  }

  /// How a room of a single server opens: with its meeting or draft as saved, whenever it
  /// opens (after a restart, or after it restarted on its own).
  /// (It need not wait for a copy still finishing: that copy saved everything before it
  /// closed, and versions it gives back after this one reserved more stay reserved.)
  private func openingAsSaved(_ standup: Standup, storage: StorageClient)
    -> RoomChannel<StandupRoomFeature>.Opening
  {
    RoomChannel.Opening { [logger] in
      do {
        return .owned(
          try await StandupRoomFeature.savedState(of: standup, storage: storage), release: {})
      } catch {
        logger.error("Opening room \(standup.id) failed: \(error)")
        return StandupRoomFeature.unreadable
      }
    }
  }

  private func joinProcessed(_ roomID: UUID) {
    shared.withLock { shared in
      shared.pendingJoins[roomID, default: 1] -= 1
      if shared.pendingJoins[roomID] == 0 { shared.pendingJoins[roomID] = nil }
    }
  }

  /// Drops a room that closed (its standup was deleted, or it restarts).
  private func remove(_ channel: RoomChannel<StandupRoomFeature>) {
    let removed = shared.withLock { shared -> Bool in
      guard shared.rooms[channel.feature.standupID] === channel else { return false }
      shared.rooms[channel.feature.standupID] = nil
      if cluster != nil { shared.finishing[channel.feature.standupID] = channel }
      return true
    }
    if removed { forgetOnceFinished(channel) }
  }

  /// Forgets a dropped room once it has finished (a cluster's `Shared.finishing`, set in the
  /// same lock as the room was dropped, so that no arrival misses it): a copy opened after it
  /// need not wait.
  private func forgetOnceFinished(_ channel: RoomChannel<StandupRoomFeature>) {
    guard cluster != nil else { return }
    Task { [weak self] in
      await channel.closed()
      self?.shared.withLock { shared in
        if shared.finishing[channel.feature.standupID] === channel {
          shared.finishing[channel.feature.standupID] = nil
        }
      }
    }
  }

  /// Drops an empty, idle room, unless someone is joining it right now.
  private func release(_ channel: RoomChannel<StandupRoomFeature>) {
    let roomID = channel.feature.standupID
    let released = shared.withLock { shared -> Bool in
      // NB: the room asks from inside its handling of an event, with nobody in it: it takes
      // its next event (a join) only after this returns.
      guard shared.rooms[roomID] === channel, shared.pendingJoins[roomID] == nil
      else { return false }
      shared.rooms[roomID] = nil
      if cluster != nil { shared.finishing[roomID] = channel }
      return true
    }
    guard released else { return }
    channel.close()
    forgetOnceFinished(channel)
  }

  /// Tries one small write while saves fail; if it works, storage is healthy again.
  func probeStorage() async {
    try? await health.checking(StorageHealth.probe) { try await dependencies.storage.probe() }
  }

  /// Rooms open right now (tests, metrics).
  var openRoomCount: Int { shared.withLock { $0.rooms.count } }
}
