import Clocks
import Dependencies
import Foundation
import Logging
import StandupsFeatures
import WebSocketTransport

/// How `standups-server` runs.
public struct ServerConfiguration: Sendable {
  public var host = "127.0.0.1"
  public var port = 8080
  /// Where the database lives.
  public var dataDirectory = "./data"
  /// The web app.
  public var publicDirectory: String? = "./public"
  public var tls: (certificatePath: String, privateKeyPath: String)?
  /// The bots that may join rooms and use the HTTP API.
  public var botTokens = BotTokens()
  /// Connection and message limits.
  public var limits = ServerLimits()
  /// How many versions each room reserves at a time (tests make them small).
  var versionSizes = VersionLease.Sizes()

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
  private let hub: RoomHub

  /// Loads every standup and starts listening.
  ///
  /// - Parameters:
  ///   - storage: where standups live; by default SQLite in the data directory.
  ///   - dependencies: overrides for the rooms' clock, uuid and date (live by default).
  public static func start(
    configuration: ServerConfiguration,
    logger: Logger = Logger(label: "standups"),
    storage: StorageClient? = nil,
    dependencies prepare: (inout DependencyValues) -> Void = { _ in }
  ) async throws -> StandupsServer {
    try prepareDataDirectory(configuration.dataDirectory)
    var dependencies = DependencyValues()
    dependencies.continuousClock = ScheduledClock.shared
    dependencies.uuid = UUIDGenerator { UUID() }
    dependencies.date = DateGenerator { Date() }
    do {
      dependencies.storage = try storage ?? SQLiteStorage(directory: configuration.dataDirectory).client
    } catch {
      throw ServerStartError(description: "\(error)")
    }
    prepare(&dependencies)
    let standups: [Standup]
    let checkpoints: [MeetingCheckpoint]
    do {
      standups = try await dependencies.storage.load()
      checkpoints = try await dependencies.storage.loadCheckpoints()
    } catch {
      throw ServerStartError(description: "Cannot load the standups: \(error)")
    }

    let date = dependencies.date
    let lobbyVersions = VersionLease(
      room: "lobby", storage: dependencies.storage, sizes: configuration.versionSizes,
      logger: logger, now: { date.now })
    await lobbyVersions.start()
    let outlet = Outlet()
    let hub = RoomHub(
      standups: standups, checkpoints: checkpoints, dependencies: dependencies,
      lobbyVersions: lobbyVersions, versionSizes: configuration.versionSizes,
      bots: configuration.botTokens, limits: configuration.limits, outlet: outlet, logger: logger)
    var transportConfiguration = WebSocketServerConfiguration()
    transportConfiguration.host = configuration.host
    transportConfiguration.port = configuration.port
    transportConfiguration.publicDirectory = configuration.publicDirectory
    transportConfiguration.tls = configuration.tls
    let transport: WebSocketServer
    do {
      transport = try WebSocketServer(
        configuration: transportConfiguration, delegate: hub, logger: logger)
    } catch {
      throw ServerStartError(description: "\(error)")
    }
    outlet.attach(transport)
    logger.info(
      "Standups is listening on \(configuration.tls == nil ? "http" : "https")://\(configuration.host):\(transport.port) with \(standups.count) standup(s)."
    )
    return StandupsServer(port: transport.port, transport: transport, hub: hub)
  }

  private init(port: Int, transport: WebSocketServer, hub: RoomHub) {
    self.port = port
    self.transport = transport
    self.hub = hub
  }

  /// Closes every connection (1001), stops every room's effects and waits for saves.
  public func shutdown() async {
    transport.shutdown()
    await hub.stopAll()
  }

  /// Rooms open right now.
  public var openRoomCount: Int { hub.openRoomCount }

  private static func prepareDataDirectory(_ path: String) throws {
    do {
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    } catch {
      throw ServerStartError(description: "Cannot create the data directory \(path): \(error.localizedDescription)")
    }
    guard FileManager.default.isWritableFile(atPath: path) else {
      throw ServerStartError(description: "The data directory \(path) is not writable.")
    }
  }
}
