import PostgresNIO

/// What went wrong with a call to PostgreSQL.
extension PostgresStorage {
  /// Whether `error` is the connection going (closed, reset, lost in the middle of a message,
  /// or its backend ended: SQLSTATE class 08, and 57P01–57P03), rather than PostgreSQL
  /// refusing a statement or a call that never left (the pool closed, too many parameters).
  static func connectionWent(_ error: PSQLError) -> Bool {
    let went: [PSQLError.Code] = [
      .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown,
      .messageDecodingFailure, .unexpectedBackendMessage,
    ]
    guard error.code == .server else { return went.contains(error.code) }
    let state = error.serverInfo?[.sqlState] ?? ""
    return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
  }

  /// Why `url` could not be used at start, and what to check.
  static func cannotUse(_ url: DatabaseURL, _ error: any Error) -> String {
    // NB: refused over TLS, the database was reached: whether it runs there is not asked.
    if let advice = tlsAdvice(error, mode: url.tlsMode) {
      return "Cannot use the database \(url): \(advice)."
    }
    return "Cannot use the database \(url): \(describe(error)). Is PostgreSQL running there, "
      + "and may \(url.user) connect to \(url.database)?"
  }

  /// What went wrong, in PostgreSQL's own words when it said something.
  public static func describe(_ error: any Error) -> String {
    if let error = error as? PSQLError {
      if let message = error.serverInfo?[.message] { return message }
      if let advice = tlsAdvice(error) { return advice }
      guard let underlying = error.underlying else { return "\(error.code)" }
      return "\(error.code): \(underlying)"
    }
    return "\(error)"
  }

  /// What to do about a connection refused over TLS (`mode`: the URL's sslmode), or nil.
  static func tlsAdvice(_ error: any Error, mode: String = "require") -> String? {
    guard let error = error as? PSQLError else { return nil }
    if error.code == .sslUnsupported {
      return "the server does not offer TLS, which sslmode=\(mode) asks for (turn on ssl in "
        + "PostgreSQL, or use sslmode=disable where the connection stays on a trusted network)"
    }
    guard let underlying = error.underlying.map({ "\($0)" }) else { return nil }
    if underlying.contains("failedToValidateHostname") {
      return "the database's certificate is not made out to that host name (\(underlying)): name "
        + "the host as its certificate does, or use sslmode=verify-ca, which checks who signed it "
        + "but not the name"
    }
    if underlying.contains("CERTIFICATE_VERIFY_FAILED") {
      return "the database's certificate is not one this machine trusts (\(underlying)): "
        + "sslmode=require, verify-ca and verify-full check it against the system's trusted "
        + "roots. Add the authority that signed it to them (update-ca-certificates), or use "
        + "sslmode=prefer, which encrypts without checking it"
    }
    return nil
  }
}
