import Clocks
import Dependencies
import Foundation
import Logging
import RoomRuntime
import StandupsFeatures
import Storage
import StoreRuntime
import WebSocketTransport

/// How `standups-server` runs.
public struct ServerConfiguration: Sendable {
  public var host = "127.0.0.1"
  public var port = 8080
  /// Where the database lives.
  public var dataDirectory = "./data"
  /// A cluster's PostgreSQL (`--database`); nil: SQLite in `dataDirectory`, one node.
  public var database: DatabaseURL?
  /// The web app.
  public var publicDirectory: String? = "./public"
  public var tls: (certificatePath: String, privateKeyPath: String)?
  /// Whether people need the team's invite (the default) or anyone may join.
  public var access = AccessMode.team
  /// Origins besides the server's own whose pages may open WebSockets (`https://intranet.example`).
  public var allowedOrigins: [String] = []
  /// The address people use to reach the server, if not `http://host:port` (a proxy in front).
  public var publicURL: String?
  /// Bots given on the command line (`--bot-token`): admin bots for every standup.
  public var botTokens = BotTokens()
  /// Connection and message limits.
  public var limits = ServerLimits()
  /// How many versions each room reserves at a time (tests make them small).
  var versionSizes = VersionLease.Sizes()
  /// How long a discarded meeting, a cancelled draft or a deletion can be undone.
  public var undoWindow: Duration = .seconds(10)
  /// How long a person's session lasts (tests make it short).
  var sessionLifetime: Duration = .seconds(30 * 24 * 3600)
  /// On SIGTERM, how long a cluster node's `/healthz` says "draining" before the rooms move
  /// (HAProxy stops sending people to a node at its next check). A single server does not wait.
  public var drainGrace: Duration = .seconds(2)

  public init() {}
}

/// Why the server could not start; the message names the problem.
public struct ServerStartError: Error, CustomStringConvertible {
  public let description: String
}

/// A running Standups server: the transport, the lobby and every open room.
public final class StandupsServer: Sendable {
  /// The port it listens on (useful with port 0).
  public let port: Int
  private let transport: WebSocketServer
  let hub: RoomHub
  private let gatekeeper: Gatekeeper
  private let baseURL: String
  private let reloading: Task<Void, Never>
  /// A cluster's database and this node's session with it.
  private let postgres: PostgresStorage?
  /// One server at a time on a SQLite data directory, and its database there.
  private let dataLock: DataDirectoryLock?
  private let sqlite: SQLiteStorage?
  private let drainGrace: Duration

  /// Loads every standup and starts listening.
  ///
  /// - Parameters:
  ///   - storage: where standups live; by default SQLite in the data directory.
  ///   - dependencies: overrides for the rooms' clock, uuid and date (live by default).
  public static func start(
    configuration: ServerConfiguration,
    logger: Logger = Logger(label: "standups"),
    storage: StorageClient? = nil,
    access accessStorage: AccessStorage? = nil,
    dependencies prepare: (inout DependencyValues) -> Void = { _ in }
  ) async throws -> StandupsServer {
    var dependencies = DependencyValues()
    dependencies.continuousClock = ShardClock()
    Shard.observeWakeUps { ServerMetrics.shared.timerWoke(late: $0) }
    dependencies.uuid = UUIDGenerator { UUID() }
    dependencies.date = DateGenerator { Date() }
    var access: AccessStorage
    var postgres: PostgresStorage?
    var dataLock: DataDirectoryLock?
    var sqliteFile: SQLiteStorage?
    do {
      if let storage {
        try prepareDataDirectory(configuration.dataDirectory)
        dependencies.storage = storage
        access = accessStorage ?? .inMemory()
      } else if let url = configuration.database {
        let database = try await PostgresStorage(url: url, logger: logger)
        postgres = database
        dependencies.storage = database.storageClient
        access = accessStorage ?? database.access
      } else {
        try prepareDataDirectory(configuration.dataDirectory)
        dataLock = try DataDirectoryLock(directory: configuration.dataDirectory)
        let sqlite = try SQLiteStorage(directory: configuration.dataDirectory)
        sqliteFile = sqlite
        dependencies.storage = sqlite.client
        access = accessStorage ?? sqlite.access
      }
    } catch {
      throw ServerStartError(description: "\(error)")
    }
    let session = postgres.map { NodeSession(storage: $0, logger: logger) }
    if let session {
      let signOut = access.signOutSession
      access.signOutSession = { hash, expires in
        if let why = session.cutOff { throw StorageError(why) }
        try await signOut(hash, expires)
      }
    }
    let gatekeeper: Gatekeeper
    do {
      gatekeeper = try await Gatekeeper(
        mode: configuration.access, storage: access, legacyBots: configuration.botTokens.bots,
        allowedOrigins: configuration.allowedOrigins, publicURL: configuration.publicURL,
        host: configuration.host,
        secureCookies: configuration.tls != nil
          || configuration.publicURL?.lowercased().hasPrefix("https:") == true,
        sessionLifetime: configuration.sessionLifetime, logger: logger)
    } catch {
      throw ServerStartError(
        description: "Cannot read the team's secret and bots: \(PostgresStorage.describe(error))")
    }
    prepare(&dependencies)
    dependencies.storage = dependencies.storage.timed()
    if let session {
      dependencies.storage = dependencies.storage.refused { session.cutOff }
    }
    let standups: [Standup]
    let checkpoints: [MeetingCheckpoint]
    do {
      standups = try await dependencies.storage.load()
      checkpoints = try await dependencies.storage.loadCheckpoints()
    } catch {
      throw ServerStartError(description: "Cannot load the standups: \(error)")
    }

    let date = dependencies.date
    ServerMetrics.shared.showFromTheStart(cluster: session != nil)
    // NB: every node of a cluster has a lobby of its own, all open at once; each reserves all
    // the versions it will ever issue at its opening, from one counter, so that no two share
    // one: a page resuming its lobby (`since=`) on another node gets a whole state, never
    // another lobby's patches.
    let lobbyVersions = VersionLease(
      room: "lobby", storage: dependencies.storage,
      sizes: session == nil ? configuration.versionSizes : .wholeOpening,
      logger: logger, now: { date.now })
    await lobbyVersions.start()
    let outlet = Outlet()
    let hub = RoomHub(
      standups: standups, checkpoints: checkpoints, dependencies: dependencies,
      lobbyVersions: lobbyVersions, versionSizes: configuration.versionSizes,
      undoWindow: configuration.undoWindow,
      gatekeeper: gatekeeper, limits: configuration.limits, outlet: outlet, cluster: session,
      logger: logger)
    if let session, let postgres {
      do {
        try await session.start()
      } catch {
        throw ServerStartError(
          description:
            "Cannot open this node's session with the database \(postgres.url): "
            + PostgresStorage.describe(error))
      }
    }
    var transportConfiguration = WebSocketServerConfiguration()
    transportConfiguration.host = configuration.host
    transportConfiguration.port = configuration.port
    transportConfiguration.publicDirectory = configuration.publicDirectory
    transportConfiguration.tls = configuration.tls
    transportConfiguration.responseHeaders = Self.securityHeaders
    // NB: a browser that reached the server over https once never tries plain http again
    // (where cookies and tokens travel in the clear). Only for a public https name: it holds
    // for every port of its host, whose other services a bare --tls-cert may not speak for.
    if let url = configuration.publicURL.flatMap({ URLComponents(string: $0) }),
      url.scheme?.lowercased() == "https", let host = url.host?.lowercased(),
      host != "localhost", !host.hasSuffix(".localhost"),
      ServerLimits.canonicalAddress(host.trimmingCharacters(in: ["[", "]"])) == nil
    {
      transportConfiguration.responseHeaders.append(
        ("strict-transport-security:", "max-age=31536000"))
    }
    transportConfiguration.subprotocol = "standups"
    // Presence tells the truth: a peer that stops answering is gone within 30 s of the last
    // thing it said (pinged after 15 s of silence, dropped 15 s later).
    transportConfiguration.pingAfterSeconds = 15
    transportConfiguration.hangUpAfterSeconds = 30
    // NB: /ws/ too, so that a plain GET of a WebSocket path is answered 426, not 404.
    transportConfiguration.applicationPaths = ["/healthz", "/metrics", "/api/", "/ws/"]
    transportConfiguration.extraRequestHeaders = [RoomHub.routedRoomHeader]
    let transport: WebSocketServer
    do {
      transport = try WebSocketServer(
        configuration: transportConfiguration, delegate: hub, logger: logger)
    } catch {
      throw ServerStartError(description: "\(error)")
    }
    hub.attach(transport)
    let scheme = configuration.tls == nil ? "http" : "https"
    let base =
      configuration.publicURL
      ?? baseURL(host: configuration.host, port: transport.port, tls: configuration.tls != nil)
    // NB: an IPv6 address in brackets, as in a URL: http://[::]:8080.
    let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
    logger.info(
      "Standups is listening on \(scheme)://\(host):\(transport.port) with \(standups.count) standup(s)."
    )
    let reloading = Task { [weak hub, logger] in
      var failing = false
      while !Task.isCancelled {
        try? await Task.sleep(for: .seconds(1))
        guard let hub else { return }
        // NB: whether or not storage answers: an expiry needs no reading.
        hub.closeExpiredSessions()
        do {
          let changes = try await gatekeeper.reload()
          hub.credentialsChanged(changes)
          if failing { logger.notice("The team's secret and bots can be read again.") }
          failing = false
        } catch is CancellationError {
          return  // shutting down
        } catch {
          // NB: once per outage; the last credentials read stay in force meanwhile.
          if !failing { logger.error("Cannot re-read the team's secret and bots: \(error)") }
          failing = true
        }
      }
    }
    return StandupsServer(
      port: transport.port, transport: transport, hub: hub, gatekeeper: gatekeeper,
      baseURL: base, reloading: reloading, postgres: postgres, dataLock: dataLock,
      sqlite: sqliteFile, drainGrace: configuration.drainGrace)
  }

  /// What people open: the public URL, else `http(s)://host:port` with the port it listens on.
  public var address: String { baseURL }

  /// The invite link people open once to join the team (nil when the server is open).
  public var inviteLink: String? {
    gatekeeper.mode == .open
      ? nil : StandupsServer.inviteLink(base: baseURL, secret: gatekeeper.secret)
  }

  /// `http(s)://host:port` as a browser would open it: IPv6 in brackets, and this machine's
  /// name for a wildcard address (0.0.0.0, ::), which no browser can open.
  public static func baseURL(host: String, port: Int, tls: Bool) -> String {
    var name = host
    if Gatekeeper.isWildcard(host) {
      name = ProcessInfo.processInfo.hostName
    } else if host.contains(":") && !host.hasPrefix("[") {
      name = "[\(host)]"
    }
    return "\(tls ? "https" : "http")://\(name):\(port)"
  }

  /// `{base}/join#{invite}`: the invite sits in the fragment, which browsers never send, so it
  /// stays out of server and proxy logs.
  public static func inviteLink(base: String, secret: TeamSecret) -> String {
    var base = base
    while base.hasSuffix("/") { base.removeLast() }
    return "\(base)/join#\(secret.invite)"
  }

  /// Every HTTP answer carries these: only the app's own scripts run, nothing frames it.
  static let securityHeaders: [(name: String, value: String)] = [
    (
      "content-security-policy:",
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    ("x-content-type-options:", "nosniff"),
    ("referrer-policy:", "same-origin"),
    ("x-frame-options:", "DENY"),
  ]

  private init(
    port: Int, transport: WebSocketServer, hub: RoomHub, gatekeeper: Gatekeeper, baseURL: String,
    reloading: Task<Void, Never>, postgres: PostgresStorage?, dataLock: DataDirectoryLock?,
    sqlite: SQLiteStorage?, drainGrace: Duration
  ) {
    self.postgres = postgres
    self.dataLock = dataLock
    self.sqlite = sqlite
    self.drainGrace = drainGrace
    self.port = port
    self.transport = transport
    self.hub = hub
    self.gatekeeper = gatekeeper
    self.baseURL = baseURL
    self.reloading = reloading
  }

  /// Closes every connection (1001), stops every room's effects and waits for saves; in a
  /// cluster, then gives up every room's lock by ending its session.
  public func shutdown() async {
    reloading.cancel()
    // NB: the rooms close their people first, as in a restart (`closeRooms`).
    await hub.closeRooms(
      why: "the server is stopping", code: .goingAway, tell: "The server is stopping.")
    transport.shutdown()
    await hub.stopAll()
    await hub.cluster?.stop()
    hub.remoteRooms.stop()
    postgres?.close()
    // NB: closed, the file holds everything (no `standups.sqlite-wal` beside it). Should it
    // fail, the log stays beside the file, as after a crash: SQLite reads both.
    try? sqlite?.close()
    dataLock?.release()
  }

  /// A rolling restart (SIGTERM in a cluster): `/healthz` answers 404 "draining" and no room
  /// opens here any more; every room stops its timers, records where its meeting is, closes
  /// its people with 1012 (they reconnect, to another node) and gives up its lock; then the
  /// node shuts down.
  /// A single server (no database) has no other node for a proxy to send people to, so it
  /// does not wait the grace: its people are asked to reconnect at once.
  public func drain() async {
    await hub.drain(grace: hub.cluster == nil ? .zero : drainGrace)
    await shutdown()
  }

  /// Rooms open right now.
  public var openRoomCount: Int { hub.openRoomCount }

  private static func prepareDataDirectory(_ path: String) throws {
    do {
      // NB: 0700: the folder holds the team's secret.
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw ServerStartError(
        description: "Cannot create the data directory \(path): \(error.localizedDescription)")
    }
    guard FileManager.default.isWritableFile(atPath: path) else {
      throw ServerStartError(description: "The data directory \(path) is not writable.")
    }
    // NB: a folder that was there already is tightened too (group and others lose access),
    // when it is the server's to change.
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    if let mode = (attributes?[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 {
      try? FileManager.default.setAttributes(
        [.posixPermissions: mode & 0o700], ofItemAtPath: path)
    }
  }
}
