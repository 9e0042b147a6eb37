import ArgumentParser
import Foundation
import Logging
import StandupsServer
import Storage

/// Where the data lives, for every subcommand.
struct DataOptions: ParsableArguments {
  @Option(help: "Folder for the database.") var dataDir = env("DATA_DIR") ?? "./data"
  @Option(
    help:
      "A cluster's PostgreSQL instead of SQLite: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-ca|verify-full] (STANDUPS_DATABASE_URL)."
  )
  var database: String?

  func validate() throws { try Environment.checkNames() }

  /// `--database`, else `STANDUPS_DATABASE_URL`; nil for SQLite.
  func databaseURL() throws -> DatabaseURL? {
    guard let text = database ?? env("DATABASE_URL"), !text.isEmpty else { return nil }
    do {
      return try DatabaseURL(text)
    } catch {
      throw CommandFailure(error.description)
    }
  }

  /// Where a server started on this folder writes the address people open, for `invite`.
  var addressFile: URL { URL(fileURLWithPath: dataDir).appendingPathComponent("address") }

  /// The address the server was last started at on this folder (SQLite only), if known.
  func recordedAddress() -> String? {
    guard (try? databaseURL()) == nil,
      let text = try? String(contentsOf: addressFile, encoding: .utf8)
    else { return nil }
    let address = text.trimmingCharacters(in: .whitespacesAndNewlines)
    return address.isEmpty ? nil : address
  }

  /// The team's secret and bots, of a server that has started at least once.
  func access() async throws -> AccessStorage { try await storage().access }

  /// The data of a server that has started at least once.
  func storage() async throws -> any CommandStorage {
    if let url = try databaseURL() {
      do {
        return try await PostgresStorage(url: url, logger: Logger(label: "standups"))
      } catch {
        throw CommandFailure("\(error)")
      }
    }
    let file = URL(fileURLWithPath: dataDir).appendingPathComponent("standups.sqlite").path
    guard FileManager.default.fileExists(atPath: file) else {
      throw CommandFailure(
        "No Standups data in \(dataDir): pass the server's --data-dir (or STANDUPS_DATA_DIR), or start the server once."
      )
    }
    do {
      return try SQLiteStorage(directory: dataDir)
    } catch {
      throw CommandFailure("\(error)")
    }
  }
}

/// Where the server listens, and how people reach it.
struct AddressOptions: ParsableArguments {
  @Option(name: .customLong("host"), help: "Address to listen on (default 127.0.0.1).")
  var givenHost: String?
  @Option(
    name: .customLong("port"), parsing: .unconditional,
    help: "Port to listen on (0 picks a free one; default 8080).")
  var givenPort: Int?
  @Option(
    help:
      "The address people open, if not http://HOST:PORT (a proxy in front; STANDUPS_PUBLIC_URL).")
  var publicURL: String?

  var host: String { givenHost ?? env("HOST") ?? "127.0.0.1" }
  var port: Int { givenPort ?? Int(env("PORT") ?? "") ?? 8080 }
  var publicBase: String? { publicURL ?? env("PUBLIC_URL") }

  func validate() throws {
    try Environment.check([("PORT", "a port number", Environment.isWholeNumber)])
  }
}

/// The address an invite link starts with (`invite`): what is given, and for a part that is
/// not, the one the server at this folder was last started at (else the server's defaults).
struct LinkAddressOptions: ParsableArguments {
  @Option(help: "The host name or address people open (default: the server's last one).")
  var host: String?
  @Option(parsing: .unconditional, help: "The port people open (default: the server's last one).")
  var port: Int?
  @Option(
    help:
      "The address people open, if not http://HOST:PORT (a proxy in front; STANDUPS_PUBLIC_URL).")
  var publicURL: String?

  /// Says on stderr that a cluster's link leads to this machine when neither a public URL nor
  /// a host was given: its nodes record no address, and only the operator knows the proxy's.
  func warnWithoutPublicURL(base: String) {
    guard publicURL ?? env("PUBLIC_URL") == nil, host == nil else { return }
    FileHandle.standardError.write(
      Data(
        "This link starts with \(base), not the address people open: give the cluster's with --public-url (STANDUPS_PUBLIC_URL).\n"
          .utf8))
  }

  /// Refuses what the server refuses at start: a link made of it would lead nowhere.
  func validate() throws {
    if let problem = (publicURL ?? env("PUBLIC_URL")).flatMap(AddressChecks.publicURLProblem) {
      throw ValidationError(problem)
    }
    if let problem = (host ?? env("HOST")).flatMap(AddressChecks.hostProblem) {
      throw ValidationError(problem)
    }
  }

  /// What the link starts with, given where the server last listened (`recorded`).
  func base(recorded: String?, tls: Bool) -> String {
    if let publicBase = publicURL ?? env("PUBLIC_URL") { return publicBase }
    let host = host ?? env("HOST")
    let port = port ?? env("PORT").flatMap { Int($0) }
    guard let recorded, let parts = URLComponents(string: recorded) else {
      return StandupsServer.baseURL(host: host ?? "127.0.0.1", port: port ?? 8080, tls: tls)
    }
    guard host != nil || port != nil else { return recorded }
    // NB: an IPv6 address comes back in its brackets; `baseURL` adds them.
    let recordedHost = parts.host?.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
    return StandupsServer.baseURL(
      host: host ?? recordedHost ?? "127.0.0.1",
      port: port ?? parts.port ?? (parts.scheme == "https" ? 443 : 80),
      tls: parts.scheme == "https" || tls)
  }
}

/// The `STANDUPS_` variables that hold a number or a choice. A set value that does not read
/// is refused at start with what it should be, rather than quietly replaced by the default.
enum Environment {
  static func check(_ names: [(name: String, expected: String, reads: (String) -> Bool)]) throws {
    for (name, expected, reads) in names {
      guard let value = env(name), !value.isEmpty, !reads(value) else { continue }
      throw ValidationError("STANDUPS_\(name) must be \(expected) (it is \"\(value)\").")
    }
  }

  /// A yes-or-no variable: 1 or true, 0 or false (or unset).
  static func flag(_ name: String) -> Bool { ["1", "true"].contains(env(name)?.lowercased()) }
  static let flagForms = "1 or 0 (or true or false)"
  static func isFlag(_ value: String) -> Bool {
    ["1", "true", "0", "false"].contains(value.lowercased())
  }
  static func isWholeNumber(_ value: String) -> Bool { Int(value) != nil }

  /// A list variable (`a,b`), its blank entries left out.
  static func list(_ name: String) -> [String] {
    (env(name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
      .filter { !$0.isEmpty }
  }
}

extension Environment {
  /// The settings read from `STANDUPS_<NAME>`.
  static let settings: [String] = [
    "ALLOWED_ORIGINS", "BOT_TOKENS", "CREATIONS_PER_MINUTE", "DATABASE_URL", "DATA_DIR", "HOST",
    "LOG_FORMAT", "LOG_LEVEL", "MAX_CONNECTIONS", "MAX_CONNECTIONS_PER_ADDRESS",
    "MESSAGES_PER_SECOND", "OPEN", "OPEN_TO_NETWORK", "PORT", "PRINT_INVITE", "PUBLIC_DIR",
    "PUBLIC_URL", "SHARDS", "TLS_CERT", "TLS_KEY", "TRUSTED_PROXIES",
  ]

  /// A `STANDUPS_` variable that reads like a setting misspelt (`STANDUPS_DATABASE` for
  /// `STANDUPS_DATABASE_URL`, a singular for a plural) is refused at start: it would be
  /// ignored without a word. Others (a bot's `STANDUPS_URL`, HAProxy's `STANDUPS_NODE_A`)
  /// are not the server's to judge.
  static func checkNames(
    _ environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws {
    for key in environment.keys.sorted() where key.hasPrefix("STANDUPS_") {
      let name = String(key.dropFirst("STANDUPS_".count))
      guard !settings.contains(name),
        let meant = settings.first(where: { reads(name, like: $0) })
      else { continue }
      throw ValidationError(
        "\(key) is not a setting of standups-server: did you mean STANDUPS_\(meant)?")
    }
  }

  /// A setting cut short (`DATABASE`, `ALLOWED_ORIGIN`), or a plural written singular
  /// (`TRUSTED_PROXY`). Not any name sharing a beginning: `STANDUPS_DATABASE_USER` may well
  /// be a database's own.
  static func reads(_ name: String, like setting: String) -> Bool {
    (name.count >= 4 && setting.hasPrefix(name))
      || (setting.hasSuffix("IES") && name == setting.dropLast(3) + "Y")
  }
}

/// Addresses given as options, read as what they must be: refused at start with what is
/// wrong, not found out later (an invite link that leads nowhere, a proxy never trusted).
enum AddressChecks {
  /// Why `text` is not a host name or an IP address (`invite --host`), or nil.
  static func hostProblem(_ text: String) -> String? {
    let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-:[]_%"))
    guard !text.isEmpty, text.unicodeScalars.allSatisfy(allowed.contains) else {
      return
        "--host must be the host name or IP address people open, such as standups.example.com or 192.0.2.10 (it is \"\(text)\")."
    }
    return nil
  }

  /// Why `text` is not an http(s) address with a host (`--public-url`), or nil.
  static func publicURLProblem(_ text: String) -> String? {
    guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
      ["http", "https"].contains(scheme), url.host?.isEmpty == false
    else {
      return
        "--public-url must be the http(s) address people open, such as https://standups.example.com (it is \"\(text)\")."
    }
    // NB: the web app asks the server's own paths (/api/…, /ws/…) from the root: it cannot be
    // served under a path of the site.
    guard url.path.isEmpty || url.path == "/" else {
      return
        "--public-url must be the address of the site's root, such as https://standups.example.com: the web app is served from /, not under a path (it is \"\(text)\")."
    }
    // NB: invite links are made by adding a path to it: a query or a fragment would end up
    // in front of it.
    guard url.query == nil, url.fragment == nil else {
      return
        "--public-url must be the address of the site's root with nothing after it, such as https://standups.example.com: no query (?…) or fragment (#…) (it is \"\(text)\")."
    }
    return nil
  }

  /// Why `path` is not a PEM file holding one of `kinds` (`CERTIFICATE`), or nil.
  static func pemProblem(_ path: String, option: String, noun: String, kinds: [String])
    -> String?
  {
    guard let contents = FileManager.default.contents(atPath: path) else {
      return
        "\(option) \(path) cannot be read (it is missing, a folder, or not this user's to read)."
    }
    let text = String(decoding: contents, as: UTF8.self)
    guard kinds.contains(where: { text.contains("-----BEGIN \($0)-----") }) else {
      return
        "\(option) \(path) is not a PEM \(noun) (it has no \"-----BEGIN \(kinds[0])-----\" line)."
    }
    return nil
  }

  /// Why `text` is not an origin (`scheme://host[:port]`, nothing after; an app's own scheme,
  /// such as `tauri://localhost`, too), or nil.
  static func originProblem(_ text: String) -> String? {
    guard let url = URLComponents(string: text), url.scheme?.isEmpty == false,
      url.host?.isEmpty == false,
      url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil
    else {
      return
        "--allowed-origin must be an origin, such as https://intranet.example (it is \"\(text)\")."
    }
    return nil
  }

  /// Why `text` is not one IP address (`--trusted-proxy`: no ranges, no names), or nil.
  static func proxyProblem(_ text: String) -> String? {
    var v4 = in_addr()
    var v6 = in6_addr()
    if inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1 { return nil }
    return
      "--trusted-proxy must be one IP address, as the proxy connects from (no ranges or names; it is \"\(text)\")."
  }
}

/// A command that could not do its work (not a mistake in how it was called): said without
/// the usage.
struct CommandFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

func env(_ name: String) -> String? {
  ProcessInfo.processInfo.environment["STANDUPS_" + name]
}

// swift-format-ignore: AvoidRetroactiveConformances
// NB: swift-log's levels as option values; neither package declares it.
extension Logger.Level: @retroactive ExpressibleByArgument {}
extension Bot.Scope: ExpressibleByArgument {}

/// How the server writes its logs.
enum LogFormat: String, ExpressibleByArgument, CaseIterable {
  case text, json
}

/// What the commands read and change: the access data, and whether a standup exists.
protocol CommandStorage: Sendable {
  var access: AccessStorage { get }
  func standupExists(_ id: UUID) async throws -> Bool
}

extension SQLiteStorage: CommandStorage {
  func standupExists(_ id: UUID) async throws -> Bool { try await loadStandup(id) != nil }
}

extension PostgresStorage: CommandStorage {
  func standupExists(_ id: UUID) async throws -> Bool { try await loadStandup(id) != nil }
}
