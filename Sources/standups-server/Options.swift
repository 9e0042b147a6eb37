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
      "A cluster's PostgreSQL instead of SQLite: postgres://USER@HOST:PORT/DATABASE (STANDUPS_DATABASE_URL)."
  )
  var database: String?

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

/// How people reach the server, for the invite link.
struct AddressOptions: ParsableArguments {
  @Option(name: .customLong("host"), help: "Address to listen on (default 127.0.0.1).")
  var givenHost: String?
  @Option(name: .customLong("port"), help: "Port to listen on (0 picks a free one; default 8080).")
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

  /// Whether any of the address was given, on the command line or in the environment.
  var isGiven: Bool {
    givenHost != nil || givenPort != nil || publicBase != nil || env("HOST") != nil
      || env("PORT") != nil
  }

  /// What the invite link starts with: the public URL, else this address.
  func base(tls: Bool) -> String {
    publicBase ?? StandupsServer.baseURL(host: host, port: port, tls: tls)
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
  static func isFlag(_ value: String) -> Bool {
    ["1", "true", "0", "false"].contains(value.lowercased())
  }
  static func isWholeNumber(_ value: String) -> Bool { Int(value) != nil }
}
