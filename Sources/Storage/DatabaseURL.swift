import Foundation
import NIOSSL
import PostgresNIO

/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE]`, the form `--database` and
/// `STANDUPS_DATABASE_URL` take (`sslModes`).
public struct DatabaseURL: Sendable, Equatable, CustomStringConvertible {
  public var user: String
  public var password: String?
  public var host: String
  public var port: Int
  public var database: String
  /// One of `sslModes`; `prefer` unless the URL says.
  public var tlsMode: String

  /// The `sslmode`s taken, with libpq's meanings but for `require`, which checks the
  /// certificate as `verify-full` does (a connection that insists on TLS and then believes any
  /// certificate guards against nothing but a passive eavesdropper):
  /// - `disable`: no TLS;
  /// - `prefer`: TLS if the server offers it, its certificate not checked (as libpq's default);
  /// - `require`, `verify-full`: TLS, the certificate checked against this machine's trusted
  ///   roots and the host's name;
  /// - `verify-ca`: TLS, the certificate checked against the roots, whatever name it has.
  public static let sslModes = ["disable", "prefer", "require", "verify-ca", "verify-full"]

  public init(_ text: String) throws(DatabaseURLError) {
    guard let components = URLComponents(string: text),
      components.scheme == "postgres" || components.scheme == "postgresql"
    else {
      throw DatabaseURLError(
        "\(Self.redacted(text)) is not a PostgreSQL URL: use postgres://USER:PASSWORD@HOST:PORT/DATABASE"
          + ", a password's / @ : % # ? written %2F %40 %3A %25 %23 %3F.")
    }
    // NB: an @ past the host is a password's, left unencoded: from there on the URL reads
    // wrong, and what it is then taken for (the database's name, printed in messages) would
    // hold part of the password.
    guard !(components.percentEncodedPath + (components.percentEncodedQuery ?? "")).contains("@")
    else {
      throw DatabaseURLError(
        "The database URL has an @ after its host: a password's @ / : % # ? are written %40 %2F %3A %25 %23 %3F."
      )
    }
    guard let host = components.host, !host.isEmpty else {
      throw DatabaseURLError("The database URL names no host: postgres://USER@HOST:PORT/DATABASE.")
    }
    guard let user = components.user, !user.isEmpty else {
      throw DatabaseURLError("The database URL names no user: postgres://USER@HOST:PORT/DATABASE.")
    }
    let database = String(components.path.drop { $0 == "/" })
    guard !database.isEmpty else {
      throw DatabaseURLError(
        "The database URL names no database: postgres://USER@HOST:PORT/DATABASE.")
    }
    let parameters = components.queryItems ?? []
    if let unknown = parameters.first(where: { $0.name != "sslmode" }) {
      throw DatabaseURLError(
        "The database URL's \(unknown.name) is not supported: sslmode is the only parameter it takes."
      )
    }
    guard parameters.count <= 1 else {
      throw DatabaseURLError("The database URL names sslmode more than once.")
    }
    let mode = parameters.first?.value ?? "prefer"
    guard Self.sslModes.contains(mode) else {
      throw DatabaseURLError(
        "sslmode=\(mode) is not supported: use disable, prefer, require, verify-ca or verify-full.")
    }
    self.user = user.removingPercentEncoding ?? user
    self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
    self.host = host
    self.port = components.port ?? 5432
    self.database = database.removingPercentEncoding ?? database
    self.tlsMode = mode
  }

  /// The URL without its password, for messages and logs.
  public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

  /// `text` with whatever follows the user name in its user part as `***`, found as people
  /// write it and not as a URL parser would: a password that breaks the URL (an unencoded `/`
  /// or `@`, a port that is not a number) is the one most likely to be printed by mistake.
  public static func redacted(_ text: String) -> String {
    // NB: without its scheme ("ana:hunter2@db/standups"), the user part starts the text.
    let start = text.range(of: "://")?.upperBound ?? text.startIndex
    guard let at = text.range(of: "@", options: .backwards), start <= at.lowerBound else {
      return text
    }
    let userPart = text[start..<at.lowerBound]
    guard let colon = userPart.firstIndex(of: ":") else { return text }
    return text[..<colon] + ":***" + text[at.lowerBound...]
  }

  /// How the server's certificate is checked (nil: no TLS).
  public var certificateVerification: CertificateVerification? {
    switch tlsMode {
    case "disable": nil
    case "prefer": CertificateVerification.none
    case "verify-ca": .noHostnameVerification
    default: .fullVerification
    }
  }

  private var tlsConfiguration: TLSConfiguration {
    var configuration = TLSConfiguration.makeClientConfiguration()
    configuration.certificateVerification = certificateVerification ?? .fullVerification
    return configuration
  }

  public var tls: PostgresClient.Configuration.TLS {
    switch tlsMode {
    case "disable": .disable
    case "prefer": .prefer(tlsConfiguration)
    default: .require(tlsConfiguration)
    }
  }

  public var clientConfiguration: PostgresClient.Configuration {
    var configuration = PostgresClient.Configuration(
      host: host, port: port, username: user, password: password, database: database, tls: tls)
    configuration.options.connectTimeout = .seconds(5)
    configuration.options.maximumConnections = 8
    // NB: a node that froze or vanished inside a transaction must not hold its row locks for
    // ever: PostgreSQL ends such a session after 5 s, and a write waits at most 10 s for a
    // lock (then fails: `storage_unavailable`) rather than stalling its room without an answer.
    // No statement runs past 12 s, so that one the node gave up on (`PostgresStorage.deadline`,
    // 15 s) does not go on working in the database (migrations lift it).
    configuration.options.additionalStartupParameters = [
      ("application_name", "standups"),
      ("idle_in_transaction_session_timeout", "5s"),
      ("lock_timeout", "10s"),
      ("statement_timeout", "12s"),
    ]
    return configuration
  }

  public func connectionConfiguration() throws -> PostgresConnection.Configuration {
    let tls: PostgresConnection.Configuration.TLS =
      switch tlsMode {
      case "disable": .disable
      case "prefer": .prefer(try NIOSSLContext(configuration: tlsConfiguration))
      default: .require(try NIOSSLContext(configuration: tlsConfiguration))
      }
    var configuration = PostgresConnection.Configuration(
      host: host, port: port, username: user, password: password, database: database, tls: tls)
    configuration.options.connectTimeout = .seconds(5)
    configuration.options.additionalStartupParameters = [("application_name", "standups-node")]
    return configuration
  }
}

public struct DatabaseURLError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
