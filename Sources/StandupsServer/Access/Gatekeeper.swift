import Foundation
import Logging
import StandupsWire
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
public final class Gatekeeper: Sendable {
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
    /// The names of bots that are new, as given: people under names that read like them must go.
    var newBotNames: Set<String> = []
    /// Hashes of sessions signed out since (on any node).
    var signedOut: Set<String> = []
  }

  struct Credentials {
    var secret: TeamSecret
    var bots: [String: Bot]
    /// Stored bots not let in because a `--bot-token` bot has their name (as it reads).
    var clashing: Set<String> = []
    /// Their names, by token hash: their refusal says why.
    var clashingTokens: [String: String] = [:]
    /// Hashes of the sessions signed out that have not expired, as storage last said, with
    /// those signed out here since.
    var signedOut: Set<String> = []
    /// The signed-out sessions storage last said (whose connections were closed then).
    var storedSignedOut: Set<String> = []
  }

  let mode: AccessMode
  let sessionLifetime: Duration
  /// Cookies get `Secure` (the server or its proxy speaks https).
  let secureCookies: Bool
  private let allowedOrigins: Set<String>
  /// Host names of this server besides loopback ones (`--host`, the public URL's).
  private let knownHosts: Set<String>
  private let legacyBots: [String: Bot]
  /// The `--bot-token` bots' names, as they read (`TextRules.readable`).
  private let legacyNames: Set<String>
  let storage: AccessStorage
  let credentials: Mutex<Credentials>
  let failures: FailedAttempts
  private let logger: Logger

  /// Reads the secret and the bots once; throws if storage cannot give them.
  init(
    mode: AccessMode, storage: AccessStorage, legacyBots: [Bot] = [], allowedOrigins: [String] = [],
    publicURL: String? = nil, host: String = "127.0.0.1", secureCookies: Bool = false,
    sessionLifetime: Duration = .seconds(30 * 24 * 3600),
    failures: FailedAttempts = FailedAttempts(), logger: Logger
  ) async throws {
    self.mode = mode
    self.storage = storage
    self.legacyBots = Dictionary(legacyBots.map { ($0.tokenHash, $0) }, uniquingKeysWith: { $1 })
    self.legacyNames = Set(legacyBots.map { TextRules.readable($0.name) })
    // NB: a proxy that rewrites Host still shows the browser's Origin: the public URL's.
    self.allowedOrigins = Set(
      allowedOrigins.map(Self.normalizedOrigin)
        + [publicURL.flatMap(Self.origin(of:))].compactMap { $0 })
    // NB: as a browser sends it: an international name in its ASCII form (`xn--…`).
    self.knownHosts = Set(
      [
        host.lowercased(),
        publicURL.flatMap { URLComponents(string: $0)?.encodedHost?.lowercased() },
      ]
      .compactMap { $0 }
        + allowedOrigins.compactMap { URLComponents(string: $0)?.encodedHost?.lowercased() }
        + (Self.isWildcard(host) ? Self.namesOfThisMachine() : []))
    self.secureCookies = secureCookies
    self.sessionLifetime = sessionLifetime
    self.failures = failures
    self.logger = logger
    let secret = try await storage.teamSecret()
    let stored = try await storage.bots()
    let (bots, clashing) = Self.honored(stored, legacyNames: legacyNames)
    let signedOut = try await storage.signedOutSessions()
    Self.warn(about: clashing, logger: logger)
    credentials = Mutex(
      Credentials(
        secret: secret, bots: Self.byHash(bots), clashing: Set(clashing.map(\.key)),
        clashingTokens: Self.tokens(of: stored, except: bots), signedOut: signedOut,
        storedSignedOut: signedOut))
  }

  private static func byHash(_ bots: [Bot]) -> [String: Bot] {
    Dictionary(bots.map { ($0.tokenHash, $0) }, uniquingKeysWith: { $1 })
  }

  /// The names of the `stored` bots not among `honored`, by token hash.
  private static func tokens(of stored: [Bot], except honored: [Bot]) -> [String: String] {
    let letIn = Set(honored.map(\.tokenHash))
    return byHash(stored.filter { !letIn.contains($0.tokenHash) }).mapValues(\.name)
  }

  /// The stored bots to let in: all but those a `--bot-token` bot shares a name with (the
  /// flag's bot is the one let in; two bots of one name would be one participant in a room).
  private static func honored(_ stored: [Bot], legacyNames: Set<String>)
    -> (bots: [Bot], clashing: [String: String])
  {
    var clashing: [String: String] = [:]
    let bots = stored.filter { bot in
      guard legacyNames.contains(TextRules.readable(bot.name)) else { return true }
      clashing[TextRules.readable(bot.name)] = bot.name
      return false
    }
    return (bots, clashing)
  }

  private static func warn(about clashing: [String: String], logger: Logger) {
    for name in clashing.values.sorted() {
      logger.error(
        "The bot \"\(name)\" added with `bots add` is not let in: a bot of the server's --bot-token or STANDUPS_BOT_TOKENS has that name. Revoke one of them (`standups-server bots revoke \(name)`, or drop that entry)."
      )
    }
  }

  var secret: TeamSecret { credentials.withLock { $0.secret } }

  /// Every bot's name, as it was given: people cannot take them, nor names that read alike
  /// (`TextRules.readable`).
  var botNames: Set<String> {
    credentials.withLock { Set($0.bots.values.map(\.name)) }
      .union(legacyBots.values.map(\.name))
  }

  /// Reads the secret and bots again; says what ended.
  func reload() async throws -> Changes {
    let secret = try await storage.teamSecret()
    let stored = try await storage.bots()
    let (honored, clashing) = Self.honored(stored, legacyNames: legacyNames)
    let bots = Self.byHash(honored)
    let signedOut = try await storage.signedOutSessions()
    return credentials.withLock { credentials in
      Self.warn(
        about: clashing.filter { !credentials.clashing.contains($0.key) }, logger: logger)
      var changes = Changes()
      changes.sessionsEnded = credentials.secret != secret
      changes.revokedBots = Set(credentials.bots.keys).subtracting(bots.keys)
      // NB: names as they were given: `TextRules.readable` maps look-alike capitals (a
      // Cyrillic "М") before it folds case, so a name lower-cased first reads otherwise.
      let known = Set(credentials.bots.values.map { TextRules.readable($0.name) })
      changes.newBotNames = Set(
        bots.values.map(\.name).filter { !known.contains(TextRules.readable($0)) })
      changes.signedOut = signedOut.subtracting(credentials.storedSignedOut)
      // NB: one signed out here may be newer than this reading: it stays until read.
      let signedOutHere = credentials.signedOut.subtracting(credentials.storedSignedOut)
      credentials = Credentials(
        secret: secret, bots: bots, clashing: Set(clashing.keys),
        clashingTokens: Self.tokens(of: stored, except: honored),
        signedOut: signedOut.union(signedOutHere), storedSignedOut: signedOut)
      return changes
    }
  }

  // MARK: Checks

  /// Who `request` is, or why it is refused. Counts failed credentials; an address past its
  /// limit waits (429) for everything but a valid session, which cannot be guessed, and a
  /// person on an open server, who needs no credential — so a stranger guessing from a shared
  /// address (an office, a proxy) locks no person out.
  ///
  /// - Parameter isUpgrade: the request asks for a WebSocket (it may carry `?token=`).
  func identify(_ request: HTTPRequest, isUpgrade: Bool = false) -> Result<Identity, Refusal> {
    let token = Self.bearerToken(in: request, isUpgrade: isUpgrade)
    if token == nil, mode == .team, let cookie = sessionCookie(in: request),
      case .valid(let session) = session(from: cookie)
    {
      return .success(.person(name: session.name))
    }
    if token == nil, mode == .open { return .success(.person(name: nil)) }
    let address = request.remoteAddress
    if let wait = failures.retryAfter(address) {
      return .failure(
        Refusal(
          status: 429, code: .rateLimited,
          message: "Too many failed sign-ins from your address: try again in \(wait) s.",
          retryAfter: wait))
    }
    let result = check(request, token: token)
    if case .failure(let failure) = result, failure.countsAsGuess {
      failures.recordFailure(address)
    }
    return result.mapError(\.refusal)
  }

  /// Why an upgrade let in a moment ago would be refused now, or nil: asked again once its
  /// connection is recorded as open, as a reload may have ended its credential (a rotation, a
  /// sign-out, a revoked bot, a bot given the person's name) after the upgrade was checked and
  /// before the connection could be found among the open ones. Counts nothing.
  func stillLetsIn(_ request: HTTPRequest) -> String? {
    switch check(request, token: Self.bearerToken(in: request, isUpgrade: true)) {
    case .failure(let failure):
      return failure.refusal.message
    case .success(.person(let name?)):
      return TextRules.problem(withDisplayName: name, botNames: botNames)
    case .success:
      return nil
    }
  }

  private struct Failure: Error {
    var refusal: Refusal
    var countsAsGuess: Bool
  }

  private func check(_ request: HTTPRequest, token: String?) -> Result<Identity, Failure> {
    func refuse(_ message: String, guess: Bool) -> Result<Identity, Failure> {
      .failure(
        Failure(
          refusal: Refusal(status: 401, code: .unauthorized, message: message), countsAsGuess: guess
        ))
    }
    if let token {
      let hash = Bot.hash(token: token)
      guard let bot = legacyBots[hash] ?? credentials.withLock({ $0.bots[hash] }) else {
        if let name = credentials.withLock({ $0.clashingTokens[hash] }) {
          return refuse(
            "The bot \"\(name)\" is not let in: a bot of the server's --bot-token or STANDUPS_BOT_TOKENS has that name. Revoke one of them.",
            guess: false)
        }
        return refuse(
          "Unknown bot token: it may have been revoked (a bot added a moment ago is let in within a second).",
          guess: true)
      }
      return .success(.bot(bot))
    }
    if mode == .open { return .success(.person(name: nil)) }
    guard let cookie = sessionCookie(in: request) else {
      // NB: a bot's token in the query of plain HTTP is not read (see `bearerToken`): say so.
      if let token = request.queryValue("token"), !token.isEmpty {
        return refuse(
          "Send the bot's token as \"Authorization: Bearer <token>\": ?token= is read on WebSocket upgrades only.",
          guess: false)
      }
      if hasSessionCookieOfAnotherKey(in: request) {
        // NB: the cookie's name carries the key it was signed with, so a session from before
        // the team's invite was renewed (or another Standups server's on this host: cookies
        // ignore ports) is not ours to read, and cannot be told from one another.
        return refuse(
          "Your sign-in is from an older invite link (or another Standups server at this address): open your team's current invite link.",
          guess: false)
      }
      // NB: another scheme (a bot's `Basic <token>`, or a proxy's own sign-in): no token read.
      if request.header("authorization") != nil {
        return refuse(
          "Sign in first: open your team's invite link (a bot sends its token as \"Authorization: Bearer <token>\").",
          guess: false)
      }
      return refuse("Sign in first: open your team's invite link.", guess: false)
    }
    switch session(from: cookie) {
    case .valid(let session):
      return .success(.person(name: session.name))
    case .ended:
      return refuse(
        "Your session is from an older invite: open your team's current invite link.", guess: false)
    case .expired:
      return refuse("Your session expired: open your team's invite link again.", guess: false)
    case .signedOut:
      return refuse(
        "This session was signed out: open your team's invite link to sign in again.",
        guess: false)
    case .forged:
      // NB: no guess (an HMAC is not guessed): one planted by another site here must not lock out a sign-in.
      return refuse(
        "That session is not one of this team's: open your team's invite link.", guess: false)
    }
  }

  /// A bot's token: `Authorization: Bearer …`, else `?token=` on a WebSocket upgrade (a
  /// browser's `WebSocket` cannot send headers). Other schemes (a proxy's Basic
  /// authentication) are not ours and are ignored.
  ///
  /// NB: never `?token=` on plain HTTP: any page a team member visits could make their browser
  /// send one (an image), and each wrong token counts against the member's address.
  /// An upgrade from another site is refused on its `Origin` before its token is read.
  static func bearerToken(in request: HTTPRequest, isUpgrade: Bool) -> String? {
    if let authorization = request.header("authorization"),
      authorization.lowercased().hasPrefix("bearer ")
    {
      let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
      if !token.isEmpty { return token }
    }
    // NB: an empty token (a client's `?token=${token ?? ""}`, or `Bearer `) is none: a
    // signed-in person's cookie is read then, not refused as an unknown bot.
    return isUpgrade ? request.queryValue("token").flatMap { $0.isEmpty ? nil : $0 } : nil
  }

  /// A refusal for an invite that is wrong (counted as a failed guess), or nil.
  func checkInvite(_ invite: String, from address: String) -> Refusal? {
    if let wait = failures.retryAfter(address) {
      return Refusal(
        status: 429, code: .rateLimited,
        message: "Too many failed sign-ins from your address: try again in \(wait) s.",
        retryAfter: wait)
    }
    guard secret.isInvite(invite) else {
      failures.recordFailure(address)
      return Refusal(
        status: 401, code: .unauthorized,
        message:
          "That invite link is not valid (it may have been renewed): ask your team for the current one."
      )
    }
    return nil
  }

  /// Whether a browser page at the request's `Origin` may use the server: requests without
  /// one (bots, command-line tools) may; pages must come from the server's own origin (the
  /// `Host` they asked for; https only, once cookies are `Secure`: a page that came over plain
  /// http was not served by this server, and may be anyone's) or an origin listed with
  /// `--allowed-origin`.
  ///
  /// An `--open` server also wants a `Host` it knows: a page whose name was re-pointed at
  /// this machine (DNS rebinding) sends a matching `Origin` and `Host`, but not one of ours.
  func originAllowed(_ request: HTTPRequest) -> Bool {
    if !answersTo(request) { return false }
    guard let origin = request.header("origin") else { return true }
    let normalized = Self.normalizedOrigin(origin)
    if allowedOrigins.contains(normalized) { return true }
    guard let host = request.header("host")?.lowercased() else { return false }
    return normalized == Self.normalizedOrigin("https://\(host)")
      || (!secureCookies && normalized == Self.normalizedOrigin("http://\(host)"))
  }

  static func isWildcard(_ host: String) -> Bool {
    host == "0.0.0.0" || host == "::" || host.isEmpty
  }

  /// What a browser on the network may call a server listening on every address: this
  /// machine's name (the one its invite link gives) and each of its addresses.
  static func namesOfThisMachine() -> [String] {
    ([ProcessInfo.processInfo.hostName] + Host.current().addresses).map { name in
      // NB: a link-local IPv6 address carries its interface (`fe80::1%eth0`); a Host has none.
      String(name.prefix { $0 != "%" }).lowercased()
    }
  }

  /// Whether the host name `request` was sent to is one this server answers to: any, but on
  /// an open server, which a page re-pointed at it by DNS rebinding could otherwise use.
  func answersTo(_ request: HTTPRequest) -> Bool {
    mode != .open || hostAllowed(request.header("host"))
  }

  private func hostAllowed(_ header: String?) -> Bool {
    guard let header else { return false }
    var host = header.lowercased()
    if host.hasPrefix("["), let end = host.firstIndex(of: "]") {
      host = String(host[host.index(after: host.startIndex)..<end])
    } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
      host = String(host[..<colon])
    }
    return knownHosts.contains(host) || Self.isLoopback(host)
  }

}

extension CloseCode {
  /// Standups: the room's standup was deleted.
  static let gone = CloseCode(rawValue: 4410)
  /// Standups: the session or bot token that let this connection in has ended.
  static let credentialsEnded = CloseCode(rawValue: 4401)
}
