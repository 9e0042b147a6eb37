import Foundation
import IdentifiedCollections
import JSONPatch
import RoomRuntime
import StandupsFeatures
import StandupsWire
import WebSocketTransport

/// The HTTP API for bots that cannot hold a socket (and for signed-in people). Every request
/// needs `Authorization: Bearer <token>` or a session cookie; answers are JSON, errors the
/// protocol's `error` object.
///
/// - `GET /api/standups` → `{"version": N, "state": <lobby state>}`
/// - `POST /api/standups`, body an `addStandupSubmitted` action → `{"version": N, "standup":
///   <the standup as the lobby lists it>}` once it is saved
/// - `GET /api/rooms/{id}` → `{"version": N, "state": <room state>}`
/// - `POST /api/rooms/{id}/actions`, body one action message (or a bare action) →
///   `{"version": N}` once it is reduced and saved
/// - `GET /api/rooms/{id}/history.md` and `…/history.csv` → the standup's whole meeting
///   history as a download
/// - `GET /api/rooms/{id}/meetings?offset=10&limit=20` → a page of saved meetings, newest
///   first: `{"offset", "total", "meetings"}`
enum BotAPI {
  /// - Parameter proxyChose: whether a trusted proxy chose this node for a room (in a
  ///   cluster, a room another node serves is then asked back).
  /// The answer to a request whose head already refuses it — no credential, or one that is
  /// not good — before its body is read: an unknown client holds no connection, and no
  /// memory, while it sends one. Signing in is read on (its invite is in the body).
  static func refusalBeforeTheBody(_ request: HTTPRequest, gatekeeper: Gatekeeper)
    -> HTTPResponse?
  {
    guard request.path.hasPrefix("/api/"), request.path != "/api/session" else { return nil }
    switch gatekeeper.identify(request) {
    case .failure(let refusal):
      return response(for: refusal)
    case .success(.person(nil)):
      return response(for: Self.noCredential, ref: nil)
    case .success:
      return nil
    }
  }

  static let noCredential = WireError(
    .unauthorized, "Send \"Authorization: Bearer <token>\" with a bot token.")

  static func handle(
    _ request: HTTPRequest, respond: HTTPResponder, hub: RoomHub,
    proxyChose: (UUID) -> Bool = { _ in false }
  ) {
    let parts = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    let sender: Sender
    var bot: Bot?
    switch hub.gatekeeper.identify(request) {
    case .failure(let refusal):
      return respond(response(for: refusal))
    case .success(.bot(let identified)):
      bot = identified
      sender = Sender(
        participantID: "bot:\(identified.name)", name: identified.name, isBot: true,
        scope: identified.scope, address: request.remoteAddress)
    case .success(.person(let name?)):
      // NB: a name a bot took since the session began is the bot's now, here as on a socket.
      if let problem = TextRules.problem(withDisplayName: name, botNames: hub.gatekeeper.botNames) {
        return respond(response(for: WireError(.invalidValue, problem), ref: nil, status: 409))
      }
      // NB: a browser's cookie goes along on any request to this server: changes (a POST: no
      // route here changes anything by another method, and a method a route has not is
      // answered 405) need a page of our own origin (SameSite=Lax already keeps the cookie
      // off other sites' POSTs).
      guard
        request.method != "POST"
          || (request.header("origin") != nil && hub.gatekeeper.originAllowed(request))
      else {
        return respond(
          response(
            for: WireError(.forbidden, "Changes need a page of this server's own origin."), ref: nil
          ))
      }
      sender = Sender(
        participantID: "api:\(UUID().uuidString.lowercased())", name: name, isBot: false,
        address: request.remoteAddress)
    case .success(.person(nil)) where request.method == "GET" && isHistoryRead(parts):
      // NB: an open server has no sessions; the page's history (its download links, the
      // older meetings it pages through, and whether a standup exists) needs none, as
      // joining the room needs none — from a name this server knows, as joining (a page
      // re-pointed at it by DNS rebinding reads nothing).
      guard hub.gatekeeper.originAllowed(request) else {
        return respond(
          response(
            for: WireError(.forbidden, "This server does not answer to that host name."), ref: nil))
      }
      sender = Sender(
        participantID: "api:\(UUID().uuidString.lowercased())", name: "", isBot: false,
        address: request.remoteAddress)
    case .success(.person(nil)):
      return respond(response(for: Self.noCredential, ref: nil))
    }
    if let wait = hub.admission.takeRequest(
      from: bot.map { "bot:\($0.tokenHash)" }
        ?? "address:\(FailedAttempts.key(for: request.remoteAddress))")
    {
      var refused = response(
        for: WireError(
          .rateLimited,
          "Too many requests: at most \(Int(hub.admission.limits.messagesPerSecond)) a second. Try again in \(wait) s."
        ), ref: nil, status: 429)
      refused.headers.append(("retry-after:", "\(wait)"))
      return respond(refused)
    }
    let isRoom = parts.count >= 3 && parts[0] == "api" && parts[1] == "rooms"
    let roomID = isRoom ? UUID(uuidString: parts[2]) : nil
    if let bot, isRoom || parts == ["api", "standups"], !bot.mayEnter(roomID) {
      return respond(
        response(
          for: WireError(
            .forbidden, "The bot \(bot.name) may not use \(isRoom ? "this standup" : "the lobby")."),
          ref: nil))
    }
    if parts == ["api", "standups"] {
      switch request.method {
      case "GET": hub.lobby.enqueue(.snapshot { respond(snapshot($0)) })
      case "POST": makeStandup(request, sender: sender, hub: hub, respond: respond)
      default: respond(methodNotAllowed(request, allowed: "GET, POST"))
      }
    } else if isRoom && parts.count == 3 {
      guard request.method == "GET" else {
        return respond(methodNotAllowed(request, allowed: "GET"))
      }
      guard let roomID,
        hub.enqueue(
          .snapshot { respond(snapshot($0)) }, inRoom: roomID, viaProxy: proxyChose(roomID))
      else { return respond(notFound(parts[2])) }
    } else if isRoom && parts.count == 4, let format = HistoryFormat(rawValue: parts[3]) {
      guard request.method == "GET" else {
        return respond(methodNotAllowed(request, allowed: "GET"))
      }
      guard let roomID else { return respond(notFound(parts[2])) }
      // NB: `?tz=Europe/Paris`: the Markdown's times where its reader is (the web app's own).
      let zone = request.queryValue("tz").map { TimeZone(identifier: $0) } ?? .gmt
      guard let zone else {
        return respond(
          response(
            for: WireError(
              .invalidValue, "tz must be a time zone's name, such as Europe/Paris or UTC."),
            ref: nil, status: 400))
      }
      Task { [storage = hub.storage] in
        do {
          guard var standup = try await knownStandup(roomID, hub: hub) else {
            return respond(notFound(parts[2]))
          }
          // Every meeting, not just the recent ones the room holds.
          let all = try await storage.loadMeetings(roomID, 0, Int.max)
          standup.meetings = IdentifiedArray(uniqueElements: all.meetings)
          standup.olderMeetingCount = 0
          respond(format.response(for: standup, timeZone: zone))
        } catch {
          respond(response(for: storageUnavailable, ref: nil))
        }
      }
    } else if isRoom && parts.count == 4 && parts[3] == "meetings" {
      guard request.method == "GET" else {
        return respond(methodNotAllowed(request, allowed: "GET"))
      }
      guard let roomID else { return respond(notFound(parts[2])) }
      let page: ClientMessage.HistoryPage
      do {
        page = try ClientMessage.HistoryPage.read(
          offset: request.queryValue("offset").map { Int($0).map(JSONValue.int) ?? .string($0) },
          limit: request.queryValue("limit").map { Int($0).map(JSONValue.int) ?? .string($0) })
      } catch {
        return respond(response(for: error, ref: nil))
      }
      Task { [storage = hub.storage] in
        do {
          guard try await knownStandup(roomID, hub: hub) != nil else {
            return respond(notFound(parts[2]))
          }
          let found = try await storage.loadMeetings(roomID, page.offset, page.limit)
          respond(
            .json(
              JSONValue.object([
                "offset": .int(page.offset), "total": .int(found.total),
                "meetings": try JSONValue(encoding: found.meetings),
              ]).encoded))
        } catch {
          respond(response(for: storageUnavailable, ref: nil))
        }
      }
    } else if isRoom && parts.count == 4 && parts[3] == "actions" {
      guard request.method == "POST" else {
        return respond(methodNotAllowed(request, allowed: "POST"))
      }
      // NB: in a cluster the room opens from the database, which knows a standup another node
      // made a moment ago before this node's catalog hears of it.
      guard let roomID, hub.catalog[roomID] != nil || hub.cluster != nil else {
        return respond(notFound(parts[2]))
      }
      let message: ClientMessage
      do {
        message = try ClientMessage.parse(.text(wrapped(request.body)))
      } catch {
        return respond(response(for: error.error, ref: error.ref))
      }
      guard message.history == nil else {
        return respond(
          response(
            for: WireError(
              .badMessage, "Over HTTP, read history with GET /api/rooms/{id}/meetings."),
            ref: message.ref))
      }
      guard !message.isPing else {
        return respond(
          response(
            for: WireError(
              .badMessage,
              "A ping is for a WebSocket: over HTTP, GET /healthz says the server is up."),
            ref: message.ref))
      }
      let event = RoomChannel<StandupRoomFeature>.Event.request(message, sender) { result in
        switch result {
        case .success(let answer):
          respond(.json(JSONValue.object(["version": .int(answer.version)]).encoded))
        case .failure(let error):
          respond(response(for: error, ref: message.ref))
        }
      }
      if !hub.enqueue(event, inRoom: roomID, viaProxy: proxyChose(roomID)) {
        respond(notFound(parts[2]))
      }
    } else {
      respond(response(for: WireError(.notFound, "Nothing at \(request.path)."), ref: nil))
    }
  }

  /// The standup a request names: the catalog's, or in a cluster (whose catalog hears of a
  /// standup another node made a moment after it was made) the database's.
  private static func knownStandup(_ id: UUID, hub: RoomHub) async throws -> Standup? {
    if let known = hub.catalog[id] { return known }
    guard hub.cluster != nil else { return nil }
    return try await hub.storage.loadStandup(id)
  }

  /// A read of a standup's saved meetings: a download (`/api/rooms/{id}/history.md` or
  /// `…/history.csv`), or a page of `…/meetings`.
  static func isHistoryRead(_ parts: [String]) -> Bool {
    parts.count == 4 && parts[0] == "api" && parts[1] == "rooms"
      && (HistoryFormat(rawValue: parts[3]) != nil || parts[3] == "meetings")
  }

  /// The files a standup's history downloads as.
  enum HistoryFormat: String {
    case markdown = "history.md"
    case csv = "history.csv"

    func response(for standup: Standup, timeZone: TimeZone) -> HTTPResponse {
      let (type, text) =
        switch self {
        case .markdown:
          ("text/markdown; charset=utf-8", HistoryExport.markdown(standup, timeZone: timeZone))
        case .csv: ("text/csv; charset=utf-8; header=present", HistoryExport.csv(standup))
        }
      return HTTPResponse(
        status: 200, contentType: type, body: Array(text.utf8),
        headers: [
          (
            "content-disposition:",
            "attachment; filename=\"\(Self.fileName(standup.title)).\(rawValue.split(separator: ".").last ?? "txt")\""
          )
        ])
    }

    /// "Design sync" → "design-sync-history", "Équipe" → "equipe-history": ASCII letters and
    /// digits only (accents folded), safe in a header.
    static func fileName(_ title: String) -> String {
      let folded = title.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
      let words = folded.lowercased().unicodeScalars.split {
        !($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
      }
      let name = words.map { String(String.UnicodeScalarView($0)) }.prefix(6).joined(separator: "-")
      return (name.isEmpty ? "standup" : name) + "-history"
    }
  }

  static let storageUnavailable = WireError(
    .storageUnavailable, "The history could not be read. Try again in a moment.")

  /// 405, with the methods the path takes (`Allow`, as RFC 9110 asks).
  static func methodNotAllowed(_ request: HTTPRequest, allowed: String) -> HTTPResponse {
    var answer = response(
      for: WireError(.badMessage, "\(request.method) is not allowed on \(request.path)."), ref: nil,
      status: 405)
    answer.headers.append(("allow:", allowed))
    return answer
  }

  /// A bare action (`{"type":"meeting.noteSubmitted",...}`) becomes an action message.
  static func wrapped(_ body: [UInt8]) -> [UInt8] {
    // NB: a `history` or `ping` message is a message, not a bare action: it is refused as
    // such, with what to do over HTTP instead.
    guard let json = try? JSONValue(parsing: body), case .object(let members) = json,
      let type = members["type"]?.stringValue, !["action", "history", "ping"].contains(type)
    else { return body }
    return JSONValue.object(["type": "action", "action": json]).encoded
  }

  static func snapshot(_ result: Result<(version: Int, state: JSONValue), WireError>)
    -> HTTPResponse
  {
    switch result {
    case .success(let snapshot):
      .json(JSONValue.object(["version": .int(snapshot.version), "state": snapshot.state]).encoded)
    case .failure(let error):
      response(for: error, ref: nil)
    }
  }

  static func notFound(_ id: String) -> HTTPResponse {
    response(for: WireError(.notFound, "No standup has the id \"\(id)\"."), ref: nil)
  }

  static func response(for error: WireError, ref: String?, status: Int? = nil) -> HTTPResponse {
    let status =
      status
      ?? {
        switch error.code {
        case .unauthorized: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .invalidAction, .stale: return 409
        case .tooLarge: return 413
        case .rateLimited: return 429
        case .storageUnavailable, .outcomeUnknown, .roomMoving: return 503
        case .quotaExceeded: return 409
        case .badJSON, .badMessage, .unknownAction, .invalidValue: return 400
        }
      }()
    var response = HTTPResponse.json(status: status, error.json(ref: ref).encoded)
    if error.code == .unauthorized { response.headers.append(("www-authenticate:", "Bearer")) }
    if error.code == .storageUnavailable || error.code == .outcomeUnknown {
      response.headers.append(("retry-after:", "5"))
    }
    if error.code == .roomMoving { response.headers.append(("retry-after:", "1")) }
    if let wait = error.retryAfter { response.headers.append(("retry-after:", "\(wait)")) }
    return response
  }

  static func response(for refusal: Gatekeeper.Refusal) -> HTTPResponse {
    var response = response(
      for: WireError(refusal.code, refusal.message), ref: nil, status: refusal.status)
    if let retryAfter = refusal.retryAfter {
      response.headers.append(("retry-after:", "\(retryAfter)"))
    }
    return response
  }
}
