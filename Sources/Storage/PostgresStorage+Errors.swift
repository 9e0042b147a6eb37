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
    let said = describe(error)
    // NB: a refusal over TLS (it names an sslmode) was the database's: it runs there.
    let question =
      said.contains("sslmode=")
      ? "" : " Is PostgreSQL running there, and may \(url.user) connect to \(url.database)?"
    return "Cannot use the database \(url): \(said).\(question)"
  }

  /// What went wrong, in PostgreSQL's own words when it said something.
  public static func describe(_ error: any Error) -> String {
    if let error = error as? PSQLError {
      if let message = error.serverInfo?[.message] { return message }
      if error.code == .sslUnsupported {
        return "the server does not offer TLS, which sslmode=require asks for (turn on ssl in "
          + "PostgreSQL, or use sslmode=disable where the connection stays on a trusted network)"
      }
      guard let underlying = error.underlying else { return "\(error.code)" }
      let said = "\(underlying)"
      if said.contains("failedToValidateHostname") {
        return "the database's certificate is not made out to that host name (\(said)): name the "
          + "host as its certificate does, or use sslmode=verify-ca, which checks who signed it "
          + "but not the name"
      }
      if said.contains("CERTIFICATE_VERIFY_FAILED") {
        return "the database's certificate is not one this machine trusts (\(said)): "
          + "sslmode=require, verify-ca and verify-full check it against the system's trusted "
          + "roots. Add the authority that signed it to them (update-ca-certificates), or use "
          + "sslmode=prefer, which encrypts without checking it"
      }
      return "\(error.code): \(said)"
    }
    return "\(error)"
  }
}
