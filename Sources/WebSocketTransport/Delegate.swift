/// What a `WebSocketServer` asks of the application.
///
/// Every method is called on the service thread: return quickly and never block (hand work
/// to a task or a queue). Calls for one connection arrive in order.
public protocol WebSocketServerDelegate: AnyObject, Sendable {
  /// Decides on a WebSocket upgrade while the HTTP request is still open, so a refusal is a
  /// real HTTP status (400, 401, 404, 503) the client can read.
  func shouldUpgrade(_ request: HTTPRequest) -> UpgradeDecision

  /// A WebSocket is open; `context` is what `shouldUpgrade` accepted it with.
  func webSocketOpened(_ connection: ConnectionID, request: HTTPRequest, context: (any Sendable)?)

  /// A whole message arrived.
  func webSocket(_ connection: ConnectionID, received message: InboundMessage)

  /// The WebSocket is gone (closed by either side or dropped); no more calls for it.
  func webSocketClosed(_ connection: ConnectionID)

  /// An HTTP request for one of the configured application paths, body complete.
  /// Answer through `respond`, from any thread, exactly once.
  func handleHTTP(_ request: HTTPRequest, respond: HTTPResponder)

  /// The head of a request for an application path whose body is yet to come: nil reads the
  /// body; an answer refuses the request before a byte of its body is read (a request nothing
  /// in its headers lets in). On the service thread: answer at once.
  func refusalBeforeTheBody(_ request: HTTPRequest) -> HTTPResponse?
}

extension WebSocketServerDelegate {
  public func refusalBeforeTheBody(_ request: HTTPRequest) -> HTTPResponse? { nil }
}
