import Foundation
import JSONPatch
import StandupsFeatures
import StandupsWire
import WebSocketTransport

/// `/api/session`: how a browser signs in with the team's invite.
///
/// - `GET` → `{"open": false, "signedIn": true, "name": "Ana", "expires": "…"}` for a
///   signed-in person, `{"open": false, "signedIn": false, "reason": "…"}` for anyone else
///   (200 either way: a page asks this before it knows), `{"open": true, …}` when the server
///   is open to anyone. A session whose name a bot was given since answers `signedIn: false`
///   with `"mayRename": true` and its `name`: it may `POST` another name.
/// - `POST {"invite": "…", "name": "Ana"}` → the same, with the session cookie. A signed-in
///   person may leave out the invite to change their name.
/// - `DELETE` → signs out: the cookie is cleared, and the session it held is refused from now
///   on, on every node, and its connections closed (4401), wherever a copy of it is used.
enum SessionAPI {
  /// - Parameter signedOut: closes this node's connections of a session just signed out,
  ///   before the answer says so (other nodes close theirs when they next read them).
  static func handle(
    _ request: HTTPRequest, respond: HTTPResponder, gatekeeper: Gatekeeper,
    signedOut: @escaping @Sendable (String) -> Void
  ) {
    switch request.method {
    case "GET": respond(read(request, gatekeeper))
    case "POST": respond(signIn(request, gatekeeper))
    case "DELETE":
      guard gatekeeper.originAllowed(request) else {
        return respond(
          BotAPI.response(
            for: WireError(.forbidden, "Sign out from this server's own page."), ref: nil))
      }
      Task {
        do {
          try await gatekeeper.signOut(request, signedOut: signedOut)
        } catch {
          // NB: the cookie stays, and says so: a sign-out that only cleared this browser's
          // copy would leave the session usable elsewhere.
          return respond(
            BotAPI.response(
              for: WireError(
                .storageUnavailable, "Could not sign out: the server cannot save it now. Try again."
              ),
              ref: nil, status: 503))
        }
        var response = HTTPResponse.json(JSONValue.object(["signedOut": true]).encoded)
        response.headers.append(("set-cookie:", gatekeeper.signOutCookie))
        respond(response)
      }
    default:
      respond(BotAPI.methodNotAllowed(request, allowed: "GET, POST, DELETE"))
    }
  }

  private static func read(_ request: HTTPRequest, _ gatekeeper: Gatekeeper) -> HTTPResponse {
    if gatekeeper.mode == .open {
      return .json(JSONValue.object(["open": true, "signedIn": false]).encoded)
    }
    switch gatekeeper.identify(request) {
    case .failure(let refusal) where refusal.status == 401:
      return .json(
        JSONValue.object(["open": false, "signedIn": false, "reason": .string(refusal.message)])
          .encoded)
    case .failure(let refusal):
      return BotAPI.response(for: refusal)
    case .success(.person(let name?))
    where TextRules.problem(withDisplayName: name, botNames: gatekeeper.botNames) != nil:
      // NB: signed in under a name a bot was given since (or one of a session from before such
      // names were refused: drawn as nothing): the session still holds, and `POST` with
      // another name (no invite needed) is the way back in.
      let reason =
        StandupRules.isBlank(name)
        ? "Your name shows nothing: choose one to come back in."
        : "A bot now has your name: choose another to come back in."
      return .json(
        JSONValue.object([
          "open": false, "signedIn": false, "mayRename": true, "name": .string(name),
          "reason": .string(reason),
        ]).encoded)
    case .success(.person(let name)):
      return answer(name: name ?? "", expires: gatekeeper.sessionExpiry(in: request) ?? Date())
    case .success(.bot(let bot)):
      return .json(
        JSONValue.object(["open": false, "signedIn": true, "bot": .string(bot.name)]).encoded)
    }
  }

  private static func signIn(_ request: HTTPRequest, _ gatekeeper: Gatekeeper) -> HTTPResponse {
    guard gatekeeper.originAllowed(request) else {
      return BotAPI.response(
        for: WireError(
          .forbidden,
          "Sign in from this server's own page. (Behind a proxy, start the server with --public-url set to the address people open.)"
        ),
        ref: nil)
    }
    guard gatekeeper.mode == .team else {
      return BotAPI.response(
        for: WireError(
          .badMessage, "This server is open to anyone: there is nothing to sign in to."), ref: nil,
        status: 409)
    }
    let parsed = try? JSONValue(parsing: request.body)
    guard let body = parsed, case .object = body,
      let name = body["name"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines)
    else {
      // NB: a name sent as a number or null is said so, not only shown the whole shape.
      let named = parsed?["name"].map { _ in "\"name\" must be text. " }
      return BotAPI.response(
        for: WireError(
          .badMessage, (named ?? "") + "Send {\"invite\": \"…\", \"name\": \"your name\"}."),
        ref: nil)
    }
    // NB: the invite is there or not: any other value (`null`, a number) is refused, so that
    // no request is both a rename and a new sign-in (a new session id that a sign-out of the
    // old one would not end).
    let invite: String?
    switch body["invite"] {
    case nil: invite = nil
    case .string(let text)?: invite = text
    case _?:
      return BotAPI.response(
        for: WireError(.badMessage, "invite must be the text after the # of the invite link."),
        ref: nil)
    }
    if let invite {
      if let refusal = gatekeeper.checkInvite(invite, from: request.remoteAddress) {
        return BotAPI.response(for: refusal)
      }
    } else {
      // Renaming: the current session stands in for the invite. NB: a cookie goes along with
      // any request, so, as for changes through the room API, the page must say where it is.
      guard request.header("origin") != nil else {
        return BotAPI.response(
          for: WireError(.forbidden, "Changes need a page of this server's own origin."),
          ref: nil)
      }
      switch gatekeeper.identify(request) {
      case .failure(let refusal): return BotAPI.response(for: refusal)
      case .success(.person(_?)): break
      case .success:
        return BotAPI.response(
          for: WireError(.unauthorized, "Open your team's invite link to sign in."), ref: nil)
      }
    }
    if let problem = TextRules.problem(withDisplayName: name, botNames: gatekeeper.botNames) {
      return BotAPI.response(for: WireError(.invalidValue, problem), ref: nil)
    }
    // NB: a new name is no new sign-in: the session keeps its end and its id (signing out
    // ends it under either name).
    let renamed = invite == nil ? gatekeeper.validSession(in: request) : nil
    let cookie = gatekeeper.sessionCookie(for: name, until: renamed?.expires, id: renamed?.id)
    var response = answer(name: name, expires: cookie.expires)
    response.headers.append(("set-cookie:", cookie.value))
    return response
  }

  private static func answer(name: String, expires: Date) -> HTTPResponse {
    .json(
      JSONValue.object([
        "open": false, "signedIn": true, "name": .string(name),
        "expires": .string(ISO8601DateFormatter().string(from: expires)),
      ]).encoded)
  }
}
