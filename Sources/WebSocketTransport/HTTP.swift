/// The parts of an HTTP request (or a WebSocket upgrade request) an application looks at.
public struct HTTPRequest: Sendable {
  public var method: String
  /// The path without the query, still percent-encoded as it arrived.
  public var path: String
  /// Query arguments in order, decoded by libwebsockets (`name=Ana%20B` → `("name", "Ana B")`).
  public var query: [(name: String, value: String)]
  public var headers: [String: String]
  public var body: [UInt8]
  /// The peer's IP address as text.
  public var remoteAddress: String

  public init(
    method: String, path: String, query: [(name: String, value: String)] = [],
    headers: [String: String] = [:], body: [UInt8] = [], remoteAddress: String = ""
  ) {
    self.method = method
    self.path = path
    self.query = query
    self.headers = headers
    self.body = body
    self.remoteAddress = remoteAddress
  }

  /// The first query argument with this name.
  public func queryValue(_ name: String) -> String? {
    query.first { $0.name == name }?.value
  }

  /// The first query argument given twice (`limit=1&limit=99`), which no reader should take
  /// one of at random: nil when each is given once.
  public var repeatedQueryName: String? {
    var seen = Set<String>()
    // NB: empty ones (`a=1&&b=2`) are no parameter at all.
    return query.first { !$0.name.isEmpty && !seen.insert($0.name).inserted }?.name
  }

  /// A header by its lower-case name (`authorization`, `origin`, `content-type`).
  public func header(_ name: String) -> String? { headers[name] }
}

/// A complete HTTP response, written in one go.
public struct HTTPResponse: Sendable {
  public var status: Int
  public var contentType: String
  public var body: [UInt8]
  /// Extra headers, e.g. `("www-authenticate:", "Bearer")` (lws wants the colon).
  public var headers: [(name: String, value: String)]
  /// `cache-control`: answers are never stored, unless they say otherwise (a static file is
  /// kept but checked again: "no-cache").
  public var cacheControl = "no-store"

  public init(
    status: Int, contentType: String = "text/plain; charset=utf-8", body: [UInt8],
    headers: [(name: String, value: String)] = []
  ) {
    self.status = status
    self.contentType = contentType
    self.body = body
    self.headers = headers
  }

  public init(status: Int, text: String, headers: [(name: String, value: String)] = []) {
    self.init(status: status, body: Array(text.utf8), headers: headers)
  }

  public static func json(status: Int = 200, _ body: [UInt8]) -> HTTPResponse {
    HTTPResponse(status: status, contentType: "application/json", body: body)
  }

  /// The headers packed as "name:\0value\0" pairs for the C shim.
  var packedHeaders: [CChar] {
    var packed: [CChar] = []
    for (name, value) in headers {
      packed += name.utf8CString
      packed += value.utf8CString
    }
    return packed
  }
}

/// Answers one HTTP request, from any thread, exactly once.
public struct HTTPResponder: Sendable {
  let respond: @Sendable (HTTPResponse) -> Void
  public func callAsFunction(_ response: HTTPResponse) { respond(response) }
}

/// Whether a WebSocket upgrade may go ahead.
public enum UpgradeDecision: Sendable {
  /// Upgrade; `context` is handed back in `webSocketOpened`.
  case accept(context: (any Sendable)? = nil)
  /// Refuse with an HTTP status before the upgrade.
  case refuse(HTTPResponse)
}

/// Content types by file extension for the static files the server hands out.
enum MIMEType {
  static func forPath(_ path: String) -> String {
    let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
    switch ext {
    case "html", "htm": return "text/html; charset=utf-8"
    case "js", "mjs": return "text/javascript; charset=utf-8"
    case "css": return "text/css; charset=utf-8"
    case "json", "map": return "application/json"
    case "svg": return "image/svg+xml"
    case "png": return "image/png"
    case "jpg", "jpeg": return "image/jpeg"
    case "gif": return "image/gif"
    case "ico": return "image/x-icon"
    case "webp": return "image/webp"
    case "woff2": return "font/woff2"
    case "woff": return "font/woff"
    case "txt", "md": return "text/plain; charset=utf-8"
    case "webmanifest": return "application/manifest+json"
    default: return "application/octet-stream"
    }
  }
}
