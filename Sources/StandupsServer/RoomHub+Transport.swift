import Dependencies
import Foundation
import IdentifiedCollections
import JSONPatch
import Logging
import RoomRuntime
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Synchronization
import WebSocketTransport

extension RoomHub {
  // MARK: WebSocketServerDelegate (service thread)

  func shouldUpgrade(_ request: HTTPRequest) -> UpgradeDecision {
    let proxied = request
    let request = request.fromClient(trusting: admission.limits)
    if let refusal = admission.refusal(for: request) { return .refuse(refusal) }
    guard gatekeeper.answersTo(request) else {
      return .refuse(
        HTTPResponse(
          status: 403,
          text:
            "This server does not answer to that host name: open it at its own address. "
            + "(Behind a proxy, start it with --public-url.)"))
    }
    guard gatekeeper.originAllowed(request) else {
      return .refuse(
        HTTPResponse(
          status: 403,
          text:
            "Pages from \(request.header("origin") ?? "another site") may not use this server. "
            + "(Behind a proxy, start it with --public-url; to allow another site, --allowed-origin.)"
        ))
    }
    if let repeated = Self.repeatedParameter(request) { return .refuse(repeated) }
    let room: UUID?
    if request.path == "/ws/lobby" {
      room = nil
    } else if request.path.hasPrefix("/ws/rooms/") {
      let id = String(request.path.dropFirst("/ws/rooms/".count))
      guard let uuid = UUID(uuidString: id) else { return .refuse(Self.noStandup(id)) }
      room = uuid
    } else {
      return .refuse(
        HTTPResponse(
          status: 404, text: "No WebSocket at \(request.path): use /ws/lobby or /ws/rooms/{id}."))
    }
    let given = (request.queryValue("name") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    let sender: Sender
    let credential: Credential
    switch gatekeeper.identify(request, isUpgrade: true) {
    case .failure(let refusal):
      return .refuse(refusal.httpResponse)
    case .success(.bot(let bot)):
      guard bot.mayEnter(room) else {
        return .refuse(
          HTTPResponse(
            status: 403,
            text:
              "The bot \(bot.name) may not enter \(room.map { "the standup \($0.uuidString)" } ?? "the lobby")."
          ))
      }
      // NB: a bot shows under the name it was added with, whatever ?name= says: a notes bot
      // must not post as "Deploy" or show up as "Ana".
      sender = Sender(
        participantID: UUID().uuidString.lowercased(), name: bot.name, isBot: true,
        scope: bot.scope, address: request.remoteAddress, key: Sender.newKey())
      credential = .bot(bot.tokenHash)
    case .success(.person(let sessionName)):
      let name = sessionName ?? given
      if sessionName == nil && name.isEmpty {
        return .refuse(
          HTTPResponse(status: 400, text: "Add ?name= with your display name (1 to 40 characters).")
        )
      }
      if let problem = TextRules.problem(withDisplayName: name, botNames: gatekeeper.botNames) {
        return .refuse(HTTPResponse(status: sessionName == nil ? 400 : 409, text: problem))
      }
      // NB: the session read once (its signature checked once more, not twice).
      let session = sessionName == nil ? nil : gatekeeper.validSession(in: request)
      sender = Sender(
        participantID: UUID().uuidString.lowercased(), name: name, person: session?.personKey,
        isBot: false, address: request.remoteAddress, key: Sender.newKey())
      credential =
        sessionName.map {
          .session(
            name: $0, expires: session?.expires ?? .distantFuture,
            hash: session?.signedOutKey ?? "")
        } ?? .none
    }
    // NB: whether a standup exists is said only to a caller who may enter it. In a cluster, a
    // standup just made on another node may not have been heard of yet: the room reads it from
    // the database as it opens, and closes if there is none.
    if let room, catalog[room] == nil, cluster == nil {
      return .refuse(Self.noStandup(room.uuidString))
    }
    var since: Int?
    if let text = request.queryValue("since") {
      guard let value = Int(text), value >= 0 else {
        return .refuse(
          HTTPResponse(
            status: 400, text: "since= must be a version number: the last one this client holds."))
      }
      since = value
    }
    let replacing = request.queryValue("replaces")
    if let replacing, replacing.isEmpty || replacing.utf8.count > 64 {
      return .refuse(
        HTTPResponse(
          status: 400,
          text: "replaces= must be the key of your previous connection (its welcome's)."))
    }
    return .accept(
      context: JoinRequest(
        room: room, sender: sender, since: since, replacing: replacing, credential: credential,
        viaProxy: room.map { proxyChoseThisNode(for: $0, proxied) } ?? false))
  }

  /// 400 for a query that gives a parameter twice (`limit=1&limit=99`): which one the
  /// client meant is not for the server to guess.
  static func repeatedParameter(_ request: HTTPRequest) -> HTTPResponse? {
    guard let name = request.repeatedQueryName else { return nil }
    let why = "The query gives \(name)= more than once: give each parameter once."
    return request.path.hasPrefix("/api/")
      ? BotAPI.response(for: WireError(.invalidValue, why), ref: nil)
      : HTTPResponse(status: 400, text: why)
  }

  private static func noStandup(_ id: String) -> HTTPResponse {
    HTTPResponse(status: 404, text: "No standup has the id \"\(id)\".")
  }

  func webSocketOpened(_ connection: ConnectionID, request: HTTPRequest, context: (any Sendable)?) {
    let request = request.fromClient(trusting: admission.limits)
    admission.opened(connection, address: request.remoteAddress)
    guard let join = context as? JoinRequest else {
      outlet.close(connection, code: .policyViolation, reason: "Not a Standups connection")
      return
    }
    shared.withLock { shared in
      shared.credentials[connection] = join.credential
      if case .session(_, let expires, _) = join.credential {
        shared.nextSessionExpiry = min(shared.nextSessionExpiry, expires)
      }
    }
    // NB: a reload that ended the credential after the upgrade was checked may have looked
    // through the open connections before this one was among them (`credentialsChanged`).
    if let ended = gatekeeper.stillLetsIn(request) {
      outlet.close(connection, code: .credentialsEnded, reason: ended)
      return
    }
    guard let roomID = join.room else {
      shared.withLock { $0.routes[connection] = .lobby }
      lobby.enqueue(
        .join(connection, join.sender, since: join.since, replacing: join.replacing))
      return
    }
    deliver(
      .join(connection, join.sender, since: join.since, replacing: join.replacing), to: roomID,
      connection: connection,
      viaProxy: join.viaProxy)
  }

  func webSocket(_ connection: ConnectionID, received message: InboundMessage) {
    switch admission.take(connection) {
    case .accept:
      break
    case .refuse:
      let limit = Int(admission.limits.messagesPerSecond)
      outlet.send(
        ServerMessage.error(
          ref: ClientMessage.ref(of: message),
          WireError(.rateLimited, "Slow down: at most \(limit) messages a second.")),
        to: connection)
      return
    case .close:
      outlet.close(
        connection, code: .policyViolation, reason: "Too many messages: slow down, then reconnect.")
      return
    }
    switch shared.withLock({ $0.routes[connection] }) {
    case .lobby?: lobby.enqueue(.message(connection, message))
    case .room(let channel)?: channel.enqueue(.message(connection, message))
    case nil: break
    }
  }

  func webSocketClosed(_ connection: ConnectionID) {
    admission.closed(connection)
    let route = shared.withLock { shared in
      shared.credentials[connection] = nil
      return shared.routes.removeValue(forKey: connection)
    }
    switch route {
    case .lobby?: lobby.enqueue(.leave(connection))
    case .room(let channel)?: channel.enqueue(.leave(connection))
    case nil: break
    }
  }

  func refusalBeforeTheBody(_ request: HTTPRequest) -> HTTPResponse? {
    BotAPI.refusalBeforeTheBody(
      request.fromClient(trusting: admission.limits), gatekeeper: gatekeeper)
  }

  func handleHTTP(_ request: HTTPRequest, respond: HTTPResponder) {
    let proxied = request
    let request = request.fromClient(trusting: admission.limits)
    if request.path == "/healthz" || request.path == "/metrics",
      request.method != "GET" && request.method != "HEAD"
    {
      return respond(BotAPI.methodNotAllowed(request, allowed: "GET, HEAD"))
    }
    if request.path == "/healthz" {
      // NB: 404, not 503: HAProxy's sign of a server going away (`http-check disable-on-404`).
      // It sends nobody new but keeps the connections, which the rooms then hand on with 1012;
      // a server it marks down has them cut at once (`on-marked-down shutdown-sessions`).
      if draining.value {
        return respond(
          HTTPResponse(status: 404, text: "draining", headers: [("retry-after:", "1")]))
      }
      // NB: a node cut off from the database can serve no room: the proxy should send their
      // people elsewhere until its session is back.
      if let cluster, !cluster.isConnected {
        return respond(
          HTTPResponse(
            status: 503, text: "database_unavailable: this node has no session with the database",
            headers: [("retry-after:", "1")]))
      }
      guard health.problem != nil else {
        return respond(HTTPResponse(status: 200, text: "ok"))
      }
      // NB: while saves fail, each check first tries one, and answers with what it found: the
      // first check after storage recovered says so.
      Task { [health] in
        await probeStorage()
        guard let problem = health.problem else {
          return respond(HTTPResponse(status: 200, text: "ok"))
        }
        respond(
          HTTPResponse(
            status: 503, text: "storage_unavailable: \(problem)", headers: [("retry-after:", "5")]))
      }
      return
    }
    if request.path == "/metrics" {
      return respond(
        HTTPResponse(
          status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
          body: ServerMetrics.shared.render(transportCounts, rooms: openRoomCount)))
    }
    if let repeated = Self.repeatedParameter(request) { return respond(repeated) }
    if request.path.hasPrefix("/ws/") {
      respond(
        HTTPResponse(
          status: 426,
          text:
            "\(request.path) is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket).",
          headers: [("upgrade:", "websocket")]))
      return
    }
    if request.path == "/api/session" {
      SessionAPI.handle(request, respond: respond, gatekeeper: gatekeeper) { [weak self] key in
        self?.credentialsChanged(Gatekeeper.Changes(signedOut: [key]))
      }
      return
    }
    BotAPI.handle(request, respond: respond, hub: self) { proxyChoseThisNode(for: $0, proxied) }
  }

  /// Closes the connections whose credentials just ended (4401): every person's when the
  /// team's secret was rotated, a session's when it was signed out, a bot's when it was
  /// revoked.
  func credentialsChanged(_ changes: Gatekeeper.Changes) {
    // NB: the usual second: nothing changed, and the connections need no look.
    guard changes != Gatekeeper.Changes() else { return }
    let ended = shared.withLock { shared in
      shared.credentials.compactMap { connection, credential -> (ConnectionID, String)? in
        switch credential {
        case .session where changes.sessionsEnded:
          return (connection, "Your session ended: open your team's new invite link.")
        case .session(_, _, let hash) where changes.signedOut.contains(hash):
          return (
            connection,
            "This session was signed out: open your team's invite link to sign in again."
          )
        case .session(let name, _, _)
        where changes.newBotNames.contains(where: {
          TextRules.readable($0) == TextRules.readable(name)
        }):
          // NB: a bot's name is the bot's alone, also for someone who had it before.
          return (
            connection,
            "A bot now has your name: choose another to come back in."
          )
        case .bot(let hash) where changes.revokedBots.contains(hash):
          return (connection, "This bot's token was revoked.")
        default:
          return nil
        }
      }
    }
    for (connection, reason) in ended {
      outlet.close(connection, code: .credentialsEnded, reason: reason)
    }
  }

  /// Closes the connections whose session has expired (4401), as a new connection with it
  /// would be refused.
  func closeExpiredSessions(now: Date = Date()) {
    let expired = shared.withLock { shared -> [ConnectionID] in
      guard shared.nextSessionExpiry <= now else { return [] }
      var expired: [ConnectionID] = []
      shared.nextSessionExpiry = .distantFuture
      for (connection, credential) in shared.credentials {
        guard case .session(_, let expires, _) = credential else { continue }
        if expires <= now {
          expired.append(connection)
        } else {
          shared.nextSessionExpiry = min(shared.nextSessionExpiry, expires)
        }
      }
      return expired
    }
    for connection in expired {
      outlet.close(
        connection, code: .credentialsEnded,
        reason: "Your session expired: open your team's invite link again.")
    }
  }

  /// Whether a trusted proxy (HAProxy) sent this request here.
  func cameThroughProxy(_ request: HTTPRequest) -> Bool {
    admission.limits.trusts(request.remoteAddress)
  }

  /// The header in which the proxy says which room it routed a request by
  /// (deploy/haproxy.cfg): the id from the path, in capitals, as it hashed it; `-` for a
  /// request it did not route by room.
  static let routedRoomHeader = "x-standups-room"

  /// Whether a trusted proxy chose this node for `room` — so that the room should come here
  /// (`wanted`). Not for a request the proxy routed by something else than the room's id
  /// (a path with `..` or `//`, which the proxy takes as it is and libwebsockets resolves):
  /// asking for the room then would take it from the node its people are sent to, and back.
  /// A proxy that does not say (a configuration from before the header) is believed.
  func proxyChoseThisNode(for room: UUID, _ request: HTTPRequest) -> Bool {
    guard cameThroughProxy(request) else { return false }
    guard let routed = request.header(Self.routedRoomHeader) else { return true }
    return routed == room.uuidString
  }
}
