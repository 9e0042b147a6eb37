import Foundation
import StandupsWire
import Synchronization
import WebSocketTransport

/// A person's session: its cookie, its check, signing it out.
extension Gatekeeper {
  /// The session cookie's name names the team's key, so that two Standups servers on one
  /// host (cookies ignore ports) keep their sessions apart.
  var cookieName: String { Self.cookiePrefix + secret.keyID }
  static let cookiePrefix = "standups_session_"

  /// The session cookie `request` carries: of several with its name, a valid one. Another
  /// site on this host (cookies ignore ports) can set one with our name on a longer path,
  /// which browsers send first: read first only, it would sign the person out and count as
  /// a guess against their address.
  func sessionCookie(in request: HTTPRequest) -> String? {
    let name = cookieName
    let values = Self.cookies(in: request.header("cookie")).filter { $0.name == name }.map(\.value)
    guard values.count > 1 else { return values.first }
    return values.first { value in
      if case .valid = session(from: value) { return true }
      return false
    } ?? values.first
  }

  /// Whether `request` carries a Standups session cookie signed with another key.
  func hasSessionCookieOfAnotherKey(in request: HTTPRequest) -> Bool {
    let name = cookieName
    return Self.cookies(in: request.header("cookie")).contains {
      $0.name.hasPrefix(Self.cookiePrefix) && $0.name != name
    }
  }

  func session(from cookie: String, now: Date = Date()) -> SessionCheck {
    let check = secret.verifySession(cookie, now: now)
    guard case .valid(let session) = check, isSignedOut(session) else { return check }
    return .signedOut
  }

  /// Whether `session` was signed out (hashed only if any session was).
  private func isSignedOut(_ session: Session) -> Bool {
    let signedOut = credentials.withLock { $0.signedOut }
    return !signedOut.isEmpty && signedOut.contains(session.signedOutKey)
  }

  /// Signs out every valid session `request` carries, on every node: kept as signed out until
  /// it expires, refused here at once (every cookie of it, renamed or not), and its
  /// connections on other nodes closed at their next reload. `signedOut` is called with each
  /// as soon as it is saved, to close this node's connections of it at once — also when a
  /// later one cannot be saved and this throws. Returns how many were signed out.
  ///
  /// NB: every one, not only the one `sessionCookie(in:)` reads: a neighbour on this host may
  /// have planted a session of its own ahead of the person's, and Sign out must end the
  /// person's too, not only clear their browser's copy. At most a few: each is a write.
  @discardableResult
  func signOut(_ request: HTTPRequest, signedOut: (String) -> Void = { _ in }) async throws -> Int {
    let name = cookieName
    var sessions: [String: Date] = [:]
    for cookie in Self.cookies(in: request.header("cookie")).prefix(Self.cookiesReadAtSignOut)
    where cookie.name == name {
      if case .valid(let session) = session(from: cookie.value) {
        sessions[session.signedOutKey] = session.expires
      }
    }
    for (key, expires) in sessions.sorted(by: { $0.key < $1.key }) {
      try await storage.signOutSession(key, expires)
      credentials.withLock { _ = $0.signedOut.insert(key) }
      signedOut(key)
    }
    return sessions.count
  }

  /// The most cookies a sign-out reads (a `Cookie` header holds far fewer of ours).
  static let cookiesReadAtSignOut = 16

  /// The valid session `request` carries, if it carries one.
  func validSession(in request: HTTPRequest) -> Session? {
    guard let cookie = sessionCookie(in: request), case .valid(let session) = session(from: cookie)
    else { return nil }
    return session
  }

  /// When the valid session `request` carries expires, if it carries one.
  func sessionExpiry(in request: HTTPRequest) -> Date? { validSession(in: request)?.expires }

  /// The `Set-Cookie` value that holds a new session for `name`, until `until` (a renamed
  /// session keeps its end), else for the session lifetime.
  func sessionCookie(for name: String, until: Date? = nil, id: String? = nil, now: Date = Date())
    -> (value: String, expires: Date)
  {
    let lifetime = Double(sessionLifetime.components.seconds)
    let expires = Date(
      timeIntervalSince1970: (until ?? now.addingTimeInterval(lifetime)).timeIntervalSince1970
        .rounded(.down))
    let token = secret.session(name: name, expires: expires, id: id)
    return (cookieAttributes(token, maxAge: max(Int(expires.timeIntervalSince(now)), 0)), expires)
  }

  /// The `Set-Cookie` value that removes the session.
  var signOutCookie: String { cookieAttributes("", maxAge: 0) }

  private func cookieAttributes(_ value: String, maxAge: Int) -> String {
    "\(cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Lax"
      + (secureCookies ? "; Secure" : "")
  }

  /// Every cookie of a `Cookie` header, in order.
  static func cookies(in header: String?) -> [(name: String, value: String)] {
    (header ?? "").split(separator: ";").compactMap { pair in
      let parts = pair.split(separator: "=", maxSplits: 1)
      guard parts.count == 2 else { return nil }
      return (
        parts[0].trimmingCharacters(in: .whitespaces), parts[1].trimmingCharacters(in: .whitespaces)
      )
    }
  }
}
