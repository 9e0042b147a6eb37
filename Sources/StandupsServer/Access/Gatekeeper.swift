import Foundation
import Logging
import Synchronization
import WebSocketTransport

/// Who may come in, and how a server checks.
public enum AccessMode: Sendable, Equatable {
  /// People need a session from the team's invite link; bots need a token.
  case team
  /// Anyone who can reach the server joins under the name they give (a local demo).
  case open
}

/// Decides who a request is — a signed-in person, a bot, or nobody — for every door: the
/// WebSocket upgrades, the HTTP API and the session endpoint. Reloads the team's secret and
/// bots from storage every second, so that `invite --rotate` and `bots revoke` take effect
/// on a running server.
final class Gatekeeper: Sendable {
  /// A caller the server knows.
  enum Identity: Sendable, Equatable {
    /// A person: their session's name in team mode; nil in open mode (they give one).
    case person(name: String?)
    case bot(Bot)
  }

  /// Why a request is refused; rendered as text before an upgrade, as JSON by the API.
  struct Refusal: Error, Equatable {
    var status: Int
    var code: WireError.Code
    var message: String
    var retryAfter: Int?

    var httpResponse: HTTPResponse {
      var response = HTTPResponse(status: status, text: message)
      if status == 401 { response.headers.append(("www-authenticate:", "Bearer")) }
      if let retryAfter { response.headers.append(("retry-after:", "\(retryAfter)")) }
      return response
    }
  }

  /// What changed at a reload, for the connections it ends.
  struct Changes: Equatable {
    var sessionsEnded = false
    /// Token hashes of bots that are gone.
    var revokedBots: Set<String> = []
  }

  private struct Credentials {
    var secret: TeamSecret
    var bots: [String: Bot]
  }

  static let cookieName = "standups_session"
  let mode: AccessMode
  let sessionLifetime: Duration
  /// Cookies get `Secure` (the server or its proxy speaks https).
  let secureCookies: Bool
  private let allowedOrigins: Set<String>
  private let legacyBots: [String: Bot]
  private let storage: AccessStorage
  private let credentials: Mutex<Credentials>
  let failures: FailedAttempts
  private let logger: Logger

  /// Reads the secret and the bots once; throws if storage cannot give them.
  init(
    mode: AccessMode, storage: AccessStorage, legacyBots: [Bot] = [], allowedOrigins: [String] = [],
    secureCookies: Bool = false, sessionLifetime: Duration = .seconds(30 * 24 * 3600),
    failures: FailedAttempts = FailedAttempts(), logger: Logger
  ) async throws {
    self.mode = mode
    self.storage = storage
    self.legacyBots = Dictionary(legacyBots.map { ($0.tokenHash, $0) }, uniquingKeysWith: { $1 })
    self.allowedOrigins = Set(allowedOrigins.map(Self.normalizedOrigin))
    self.secureCookies = secureCookies
    self.sessionLifetime = sessionLifetime
    self.failures = failures
    self.logger = logger
    let secret = try await storage.teamSecret()
    let bots = try await storage.bots()
    credentials = Mutex(Credentials(secret: secret, bots: Self.byHash(bots)))
  }

  private static func byHash(_ bots: [Bot]) -> [String: Bot] {
    Dictionary(bots.map { ($0.tokenHash, $0) }, uniquingKeysWith: { $1 })
  }

  var secret: TeamSecret { credentials.withLock { $0.secret } }

  /// Every bot's name, lower-cased: people cannot take them.
  var botNames: Set<String> {
    credentials.withLock { Set($0.bots.values.map { $0.name.lowercased() }) }
      .union(legacyBots.values.map { $0.name.lowercased() })
  }

  /// Reads the secret and bots again; says what ended.
  func reload() async throws -> Changes {
    let secret = try await storage.teamSecret()
    let bots = Self.byHash(try await storage.bots())
    return credentials.withLock { credentials in
      var changes = Changes()
      changes.sessionsEnded = credentials.secret != secret
      changes.revokedBots = Set(credentials.bots.keys).subtracting(bots.keys)
      credentials = Credentials(secret: secret, bots: bots)
      return changes
    }
  }

  // MARK: Checks

  /// Who `request` is, or why it is refused. Counts failed credentials, and refuses every
  /// attempt from an address past its limit.
  func identify(_ request: HTTPRequest) -> Result<Identity, Refusal> {
    let address = request.remoteAddress
    if let wait = failures.retryAfter(address) {
      return .failure(
        Refusal(
          status: 429, code: .rateLimited,
          message: "Too many failed sign-ins from your address: try again in \(wait) s.",
          retryAfter: wait))
    }
    let result = check(request)
    if case .failure(let failure) = result, failure.countsAsGuess { failures.recordFailure(address) }
    return result.mapError(\.refusal)
  }

  private struct Failure: Error {
    var refusal: Refusal
    var countsAsGuess: Bool
  }

  private func check(_ request: HTTPRequest) -> Result<Identity, Failure> {
    func refuse(_ message: String, guess: Bool) -> Result<Identity, Failure> {
      .failure(Failure(refusal: Refusal(status: 401, code: .unauthorized, message: message), countsAsGuess: guess))
    }
    var token = request.queryValue("token")
    if let authorization = request.header("authorization") {
      guard authorization.lowercased().hasPrefix("bearer ") else {
        return refuse("Authorization must be \"Bearer <token>\".", guess: false)
      }
      token = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
    }
    if let token {
      let hash = Bot.hash(token: token)
      guard let bot = legacyBots[hash] ?? credentials.withLock({ $0.bots[hash] }) else {
        return refuse("Unknown bot token: it may have been revoked.", guess: true)
      }
      return .success(.bot(bot))
    }
    if mode == .open { return .success(.person(name: nil)) }
    guard let cookie = Self.cookie(Self.cookieName, in: request.header("cookie")) else {
      return refuse("Sign in first: open your team's invite link.", guess: false)
    }
    switch session(from: cookie) {
    case .valid(let session):
      return .success(.person(name: session.name))
    case .ended:
      return refuse("Your session ended (the invite was renewed): open the new invite link.", guess: false)
    case .expired:
      return refuse("Your session expired: open your team's invite link again.", guess: false)
    case .forged:
      return refuse("That session is not one of this team's: open your team's invite link.", guess: true)
    }
  }

  func session(from cookie: String, now: Date = Date()) -> SessionCheck {
    secret.verifySession(cookie, now: now)
  }

  /// A refusal for an invite that is wrong (counted as a failed guess), or nil.
  func checkInvite(_ invite: String, from address: String) -> Refusal? {
    if let wait = failures.retryAfter(address) {
      return Refusal(
        status: 429, code: .rateLimited,
        message: "Too many failed sign-ins from your address: try again in \(wait) s.", retryAfter: wait)
    }
    guard secret.isInvite(invite) else {
      failures.recordFailure(address)
      return Refusal(
        status: 401, code: .unauthorized,
        message: "That invite link is not valid (it may have been renewed): ask your team for the current one.")
    }
    return nil
  }

  /// Whether a browser page at the request's `Origin` may use the server: requests without
  /// one (bots, command-line tools) may; pages must come from the server's own origin (the
  /// `Host` they asked for) or an origin listed with `--allowed-origin`.
  func originAllowed(_ request: HTTPRequest) -> Bool {
    guard let origin = request.header("origin") else { return true }
    let normalized = Self.normalizedOrigin(origin)
    if allowedOrigins.contains(normalized) { return true }
    guard let host = request.header("host")?.lowercased() else { return false }
    return normalized == "http://\(host)" || normalized == "https://\(host)"
  }

  static func normalizedOrigin(_ origin: String) -> String {
    var origin = origin.trimmingCharacters(in: .whitespaces).lowercased()
    while origin.hasSuffix("/") { origin.removeLast() }
    return origin
  }

  /// The `Set-Cookie` value that holds a new session for `name`.
  func sessionCookie(for name: String, now: Date = Date()) -> (value: String, expires: Date) {
    let seconds = Int(sessionLifetime.components.seconds)
    let expires = now.addingTimeInterval(Double(seconds))
    let token = secret.session(name: name, expires: expires)
    return (cookieAttributes(token, maxAge: seconds), expires)
  }

  /// The `Set-Cookie` value that removes the session.
  var signOutCookie: String { cookieAttributes("", maxAge: 0) }

  private func cookieAttributes(_ value: String, maxAge: Int) -> String {
    "\(Self.cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Lax"
      + (secureCookies ? "; Secure" : "")
  }

  /// A cookie's value from a `Cookie` header.
  static func cookie(_ name: String, in header: String?) -> String? {
    guard let header else { return nil }
    for pair in header.split(separator: ";") {
      let parts = pair.split(separator: "=", maxSplits: 1)
      if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
        return parts[1].trimmingCharacters(in: .whitespaces)
      }
    }
    return nil
  }
}

extension CloseCode {
  /// Standups: the room's standup was deleted.
  static let gone = CloseCode(rawValue: 4410)
  /// Standups: the session or bot token that let this connection in has ended.
  static let credentialsEnded = CloseCode(rawValue: 4401)
}
