import ArgumentParser
import Foundation
import Logging
import StandupsServer

@main
struct StandupsServerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "standups-server",
    abstract: "Live, collaborative daily standups over WebSocket.",
    discussion: "Every option can also be set as STANDUPS_<OPTION> (STANDUPS_PORT=9000).")

  @Option(help: "Address to listen on.") var host = env("HOST") ?? "127.0.0.1"
  @Option(help: "Port to listen on (0 picks a free one).") var port = Int(env("PORT") ?? "") ?? 8080
  @Option(help: "Folder for the database.") var dataDir = env("DATA_DIR") ?? "./data"
  @Option(help: "Folder of the web app.") var publicDir = env("PUBLIC_DIR") ?? "./public"
  @Option(help: "trace, debug, info, notice, warning, error or critical.")
  var logLevel: Logger.Level = Logger.Level(rawValue: env("LOG_LEVEL") ?? "") ?? .info
  @Option(help: "PEM certificate: serve https and wss (STANDUPS_TLS_CERT).") var tlsCert: String?
  @Option(help: "PEM private key for --tls-cert (STANDUPS_TLS_KEY).") var tlsKey: String?

  @Option(
    name: .customLong("bot-token"),
    help: "A bot allowed in, as NAME=SECRET; repeatable (STANDUPS_BOT_TOKENS=name:secret,...).")
  var botTokens: [String] = []

  @Option(help: "WebSockets open at once; more get 503.")
  var maxConnections = Int(env("MAX_CONNECTIONS") ?? "") ?? ServerLimits().maxConnections
  @Option(help: "WebSockets open at once from one address.")
  var maxConnectionsPerAddress =
    Int(env("MAX_CONNECTIONS_PER_ADDRESS") ?? "") ?? ServerLimits().maxConnectionsPerAddress
  @Option(help: "Messages a connection may send per second (bursts of twice that).")
  var messagesPerSecond = Double(env("MESSAGES_PER_SECOND") ?? "") ?? ServerLimits().messagesPerSecond

  var certificate: String? { tlsCert ?? env("TLS_CERT") }
  var privateKey: String? { tlsKey ?? env("TLS_KEY") }

  func validate() throws {
    guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535.") }
    guard (certificate == nil) == (privateKey == nil) else {
      throw ValidationError("--tls-cert and --tls-key go together.")
    }
    _ = try bots()
    guard maxConnections > 0, maxConnectionsPerAddress > 0, messagesPerSecond > 0 else {
      throw ValidationError("--max-connections, --max-connections-per-address and --messages-per-second must be positive.")
    }
  }

  func run() async throws {
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = logLevel
      return handler
    }
    var configuration = ServerConfiguration()
    configuration.host = host
    configuration.port = port
    configuration.dataDirectory = dataDir
    configuration.publicDirectory = publicDir
    if let certificate, let privateKey { configuration.tls = (certificate, privateKey) }
    configuration.botTokens = try bots()
    configuration.limits.maxConnections = maxConnections
    configuration.limits.maxConnectionsPerAddress = maxConnectionsPerAddress
    configuration.limits.messagesPerSecond = messagesPerSecond
    configuration.limits.burst = messagesPerSecond * 2
    let server: StandupsServer
    do {
      server = try await StandupsServer.start(configuration: configuration)
    } catch {
      throw ValidationError("\(error)")
    }
    _ = await waitForTerminationSignal()
    await server.shutdown()
  }
}

extension StandupsServerCommand {
  func bots() throws -> BotTokens {
    do {
      return try BotTokens(flags: botTokens, environment: env("BOT_TOKENS"))
    } catch {
      throw ValidationError(error.description)
    }
  }
}

private func env(_ name: String) -> String? { ProcessInfo.processInfo.environment["STANDUPS_" + name] }

extension Logger.Level: @retroactive ExpressibleByArgument {}
