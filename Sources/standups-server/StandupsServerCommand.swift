import ArgumentParser
import Foundation
import Logging
import StandupsServer
import StandupsWire
import Storage
import StoreRuntime

@main
struct StandupsServerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "standups-server",
    abstract: "Live, collaborative daily standups over WebSocket.",
    discussion:
      "An option can also be set as STANDUPS_<OPTION> (STANDUPS_PORT=9000); where its variable is named otherwise, its help says so (STANDUPS_DATABASE_URL, STANDUPS_ALLOWED_ORIGINS=a,b).",
    subcommands: [Serve.self, Invite.self, Bots.self, Backup.self],
    defaultSubcommand: Serve.self)
}

struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serve the web app and the rooms (the default).")

  @OptionGroup var data: DataOptions
  @OptionGroup var address: AddressOptions
  @Option(help: "Folder of the web app.") var publicDir = env("PUBLIC_DIR") ?? "./public"
  @Option(help: "trace, debug, info, notice, warning, error or critical.")
  var logLevel: Logger.Level = Logger.Level(rawValue: env("LOG_LEVEL") ?? "") ?? .info
  @Option(
    help: "text, or json: one JSON object per line, for a log collector (STANDUPS_LOG_FORMAT).")
  var logFormat: LogFormat = LogFormat(rawValue: env("LOG_FORMAT") ?? "") ?? .text
  @Option(help: "PEM certificate: serve https and wss (STANDUPS_TLS_CERT).") var tlsCert: String?
  @Option(help: "PEM private key for --tls-cert (STANDUPS_TLS_KEY).") var tlsKey: String?

  @Flag(
    help:
      "Print the invite link at start even when standard output is not a terminal, where a log collector may keep it (STANDUPS_PRINT_INVITE=1)."
  )
  var printInvite = false
  // NB: a flag's default cannot be true (the parser refuses to start), so the environment is
  // read beside it, as for --open.
  var printsInvite: Bool { printInvite || Environment.flag("PRINT_INVITE") }

  @Option(
    name: .customLong("bot-token"),
    help:
      "An admin bot as NAME=SECRET, kept for compatibility (prefer `bots add`); repeatable (STANDUPS_BOT_TOKENS=name:secret,...)."
  )
  var botTokens: [String] = []

  @Flag(
    help:
      "Let anyone who can reach the server in, without the invite (a local demo; STANDUPS_OPEN=1).")
  var open = false
  @Flag(help: "Allow --open on an address other than loopback (STANDUPS_OPEN_TO_NETWORK=1).")
  var openToNetwork = false
  @Option(
    name: .customLong("allowed-origin"),
    help:
      "Another origin whose pages may use the server (https://intranet.example); repeatable (STANDUPS_ALLOWED_ORIGINS=a,b)."
  )
  var allowedOrigins: [String] = []

  // NB: numbers are read `.unconditional`ly, so that `--max-connections -1` is refused for its
  // number, where the parser took it for an option and said the value was missing.
  @Option(parsing: .unconditional, help: "WebSockets open at once; more get 503.")
  var maxConnections = Int(env("MAX_CONNECTIONS") ?? "") ?? ServerLimits().maxConnections
  @Option(parsing: .unconditional, help: "WebSockets open at once from one address.")
  var maxConnectionsPerAddress =
    Int(env("MAX_CONNECTIONS_PER_ADDRESS") ?? "") ?? ServerLimits().maxConnectionsPerAddress
  @Option(
    parsing: .unconditional,
    help: "Messages a connection may send per second (bursts of twice that).")
  var messagesPerSecond =
    Double(env("MESSAGES_PER_SECOND") ?? "") ?? ServerLimits().messagesPerSecond
  @Option(parsing: .unconditional, help: "New standups one address may create per minute.")
  var creationsPerMinute =
    Int(env("CREATIONS_PER_MINUTE") ?? "")
    ?? ServerLimits().standupsPerMinutePerAddress
  @Option(
    parsing: .unconditional,
    help: "Threads the rooms run on, 1 to 256 (default: one per core but one).")
  var shards = Int(env("SHARDS") ?? "") ?? Shard.defaultCount

  @Option(
    name: .customLong("trusted-proxy"),
    help:
      "A proxy's address whose X-Forwarded-For names the client (HAProxy in front); repeatable (STANDUPS_TRUSTED_PROXIES=a,b)."
  )
  var trustedProxies: [String] = []

  var certificate: String? { tlsCert ?? env("TLS_CERT") }
  var privateKey: String? { tlsKey ?? env("TLS_KEY") }
  var isOpen: Bool { open || Environment.flag("OPEN") }
  var mayOpenToNetwork: Bool { openToNetwork || Environment.flag("OPEN_TO_NETWORK") }
  var proxies: [String] { trustedProxies + Environment.list("TRUSTED_PROXIES") }
  var origins: [String] { allowedOrigins + Environment.list("ALLOWED_ORIGINS") }

  func validate() throws {
    try Environment.check([
      ("MAX_CONNECTIONS", "a whole number", Environment.isWholeNumber),
      ("MAX_CONNECTIONS_PER_ADDRESS", "a whole number", Environment.isWholeNumber),
      ("MESSAGES_PER_SECOND", "a number", { Double($0)?.isFinite == true }),
      ("CREATIONS_PER_MINUTE", "a whole number", Environment.isWholeNumber),
      ("SHARDS", "a whole number", Environment.isWholeNumber),
      (
        "LOG_LEVEL", "one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "),
        {
          Logger.Level(rawValue: $0) != nil
        }
      ),
      ("LOG_FORMAT", "text or json", { LogFormat(rawValue: $0) != nil }),
      ("OPEN", Environment.flagForms, Environment.isFlag),
      ("OPEN_TO_NETWORK", Environment.flagForms, Environment.isFlag),
      ("PRINT_INVITE", Environment.flagForms, Environment.isFlag),
    ])
    guard (0...65535).contains(address.port) else {
      throw ValidationError("--port must be 0 to 65535.")
    }
    guard (certificate == nil) == (privateKey == nil) else {
      throw ValidationError("--tls-cert and --tls-key go together.")
    }
    // NB: libwebsockets says only that it cannot listen: a file that is no PEM is named here.
    if let certificate,
      let problem = AddressChecks.pemProblem(
        certificate, option: "--tls-cert", noun: "certificate", kinds: ["CERTIFICATE"])
    {
      throw ValidationError(problem)
    }
    if let privateKey,
      let problem = AddressChecks.pemProblem(
        privateKey, option: "--tls-key", noun: "private key",
        kinds: ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"])
    {
      throw ValidationError(problem)
    }
    _ = try bots()
    for (option, value) in [
      ("max-connections", Double(maxConnections)),
      ("max-connections-per-address", Double(maxConnectionsPerAddress)),
      ("messages-per-second", messagesPerSecond),
      ("creations-per-minute", Double(creationsPerMinute)),
    ] where !(value > 0 && value.isFinite) {
      let variable = "STANDUPS_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
      throw ValidationError(
        "--\(option) (\(variable)) must be more than 0 (it is "
          + (value.isFinite && value == value.rounded() ? "\(Int(value))" : "\(value)") + ").")
    }
    guard (1...256).contains(shards) else {
      throw ValidationError("--shards (STANDUPS_SHARDS) must be 1 to 256 (it is \(shards)).")
    }
    if let problem = address.publicBase.flatMap(AddressChecks.publicURLProblem)
      ?? origins.lazy.compactMap(AddressChecks.originProblem).first
      ?? proxies.lazy.compactMap(AddressChecks.proxyProblem).first
    {
      throw ValidationError(problem)
    }
    if isOpen && !Gatekeeper.isLoopback(address.host) && !mayOpenToNetwork {
      throw ValidationError(
        "--open lets anyone who can reach \(address.host) read, change and delete every standup. "
          + "Listen on 127.0.0.1, or add --open-to-network if that is really what you want.")
    }
  }

  func run() async throws {
    Shard.configure(count: shards)
    LoggingSystem.bootstrap { [logLevel, logFormat] label in
      switch logFormat {
      case .text:
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = logLevel
        return handler
      case .json:
        var handler = JSONLogHandler(label: label)
        handler.logLevel = logLevel
        return handler
      }
    }
    var configuration = ServerConfiguration()
    configuration.host = address.host
    configuration.port = address.port
    configuration.publicURL = address.publicBase
    configuration.dataDirectory = data.dataDir
    configuration.database = try data.databaseURL()
    configuration.publicDirectory = publicDir
    if let certificate, let privateKey { configuration.tls = (certificate, privateKey) }
    configuration.botTokens = try bots()
    configuration.access = isOpen ? .open : .team
    configuration.allowedOrigins = origins
    configuration.limits.maxConnections = maxConnections
    configuration.limits.maxConnectionsPerAddress = maxConnectionsPerAddress
    configuration.limits.messagesPerSecond = messagesPerSecond
    configuration.limits.standupsPerMinutePerAddress = creationsPerMinute
    configuration.limits.burst = messagesPerSecond * 2
    configuration.limits.trustedProxies = Set(proxies)
    let signals = TerminationSignals()
    let server: StandupsServer
    do {
      server = try await StandupsServer.start(configuration: configuration)
    } catch {
      throw CommandFailure("\(error)")
    }
    if (try data.databaseURL()) == nil {
      // NB: for `standups-server invite`, which would otherwise print a link with its own
      // defaults' port. Not a secret: the address alone lets nobody in.
      do {
        try (server.address + "\n").write(to: data.addressFile, atomically: true, encoding: .utf8)
      } catch {
        Logger(label: "standups").warning(
          "Could not note this server's address for `standups-server invite` in \(data.addressFile.path): \(error)"
        )
      }
    }
    // NB: the link goes to standard output only, never into the logs; and only to a terminal
    // unless asked, since a container's or a service manager's output is kept like its logs.
    if let link = server.inviteLink {
      if printsInvite || isatty(STDOUT_FILENO) == 1 {
        print("Invite your team with this link (it lets anyone who has it in): \(link)")
      } else {
        print(
          "The invite link is not printed where it may be kept: `standups-server invite` prints it (or start with --print-invite)."
        )
      }
    } else {
      Logger(label: "standups").warning(
        "OPEN MODE: no invite needed — anyone who can reach this server can read, change and delete every standup."
      )
    }
    if !botTokens.isEmpty { Logger(label: "standups").warning("\(BotTokens.onTheCommandLine)") }
    if let short = configuration.botTokens.shortSecretsWarning {
      Logger(label: "standups").warning("\(short)")
    }
    fflush(nil)
    // SIGTERM (a rolling restart) drains: people move to other nodes, rooms are handed on.
    if await signals.first() == SIGTERM {
      Logger(label: "standups").notice(
        configuration.database == nil
          ? "Stopping: every meeting is saved, paused, and people are asked to reconnect."
          : "Draining: handing every room on, then stopping.")
      await server.drain()
    } else {
      await server.shutdown()
    }
  }

  func bots() throws -> BotTokens {
    do {
      return try BotTokens(flags: botTokens, environment: env("BOT_TOKENS"))
    } catch {
      throw ValidationError(error.description)
    }
  }
}

struct Invite: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Print the team's invite link.",
    discussion:
      "--rotate makes a new secret: the old link stops working and every session ends (running servers notice within a second). The link starts with the address the server was last started at on this --data-dir: --host or --port change that part of it, --public-url all of it."
  )

  @OptionGroup var data: DataOptions
  @OptionGroup var address: LinkAddressOptions
  @Flag(help: "Make a new secret, ending every session and the old link.") var rotate = false

  func validate() throws {
    try Environment.check([("PORT", "a port number", Environment.isWholeNumber)])
    // NB: a link names the port people open: 0 only asks a server to pick one.
    let port = address.port ?? env("PORT").flatMap { Int($0) }
    guard
      address.publicURL ?? env("PUBLIC_URL") != nil
        || port.map({ (1...65535).contains($0) }) ?? true
    else {
      throw ValidationError(
        "A link needs the port people open, 1 to 65535: give --port the server's (or --public-url)."
      )
    }
  }

  func run() async throws {
    let access = try await data.access()
    let secret = try await rotate ? access.rotateTeamSecret() : access.teamSecret()
    // NB: what is not given is where the server at this folder was last started: a link
    // with another port would let nobody in.
    let base = address.base(recorded: data.recordedAddress(), tls: env("TLS_CERT") != nil)
    if rotate { print("A new secret is in force: every session and the old link have ended.") }
    print(StandupsServer.inviteLink(base: base, secret: secret))
    if try data.databaseURL() != nil { address.warnWithoutPublicURL(base: base) }
  }
}

struct Bots: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Add, list and revoke the bots allowed in.",
    subcommands: [Add.self, List.self, Revoke.self])

  struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Add a bot and print its token (shown this once).",
      discussion:
        "notes: submit notes. drive: also start, advance, resume and end meetings. admin: everything a person can do."
    )

    @OptionGroup var data: DataOptions
    @Argument(
      help: "The bot's name, as people will see it (with \"(bot)\" after it).",
      transform: { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
    var name: String
    @Option(
      name: .customLong("standup"),
      help: "A standup id it may use; repeatable. Without any: every standup and the lobby.")
    var standups: [String] = []
    @Option(name: .customLong("can"), help: "notes, drive or admin.") var scope: Bot.Scope

    func validate() throws {
      if let problem = Bot.problem(withName: name) { throw ValidationError(problem) }
      for id in standups where UUID(uuidString: id) == nil {
        throw ValidationError("--standup \(id) is not a standup id (a UUID).")
      }
    }

    func run() async throws {
      let storage = try await data.storage()
      // NB: one standup named twice (in any case) is one standup.
      var ids: [UUID] = []
      for id in standups.compactMap(UUID.init(uuidString:)) where !ids.contains(id) {
        ids.append(id)
      }
      for id in ids where try await !storage.standupExists(id) {
        throw CommandFailure(
          "No standup has the id \(id.uuidString) (a standup's id is in its room's address).")
      }
      let token = Bot.makeToken()
      let bot = Bot(
        name: name, tokenHash: Bot.hash(token: token), scope: scope, standups: ids,
        createdAt: Date())
      do {
        try await storage.access.addBot(bot)
      } catch let error as AccessStorageError {
        throw CommandFailure(error.description)
      }
      print("Added the bot \(name) (\(scope.rawValue)). Its token, shown only this once:")
      print(token)
      // NB: said on stderr: a script takes the token from the last line of stdout.
      FileHandle.standardError.write(
        Data(
          ("A name is one bot's or one person's: should anyone be signed in as \(name), they "
            + "leave their rooms and are asked to choose another name.\n").utf8))
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the bots (never their tokens).")
    @OptionGroup var data: DataOptions

    func run() async throws {
      let bots = try await data.access().bots()
      if bots.isEmpty {
        print("No bots yet: add one with `standups-server bots add NAME --can notes`.")
      }
      for bot in bots {
        let standups =
          bot.standups.isEmpty
          ? "every standup" : bot.standups.map(\.uuidString).joined(separator: ", ")
        print(
          "\(bot.name)\t\(bot.scope.rawValue)\t\(standups)\tadded \(ISO8601DateFormatter().string(from: bot.createdAt))"
        )
      }
    }
  }

  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "Revoke a bot: running servers refuse its token and close its connections (4401) within a second."
    )
    @OptionGroup var data: DataOptions
    @Argument(help: "The bot's name.") var name: String

    func run() async throws {
      guard try await data.access().revokeBot(name) else {
        throw CommandFailure("No bot is named \"\(name)\" (see `standups-server bots list`).")
      }
      print("Revoked the bot \(name).")
    }
  }
}
