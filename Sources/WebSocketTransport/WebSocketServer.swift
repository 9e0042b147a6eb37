import CLibWebSockets
import Dispatch
import Foundation
import Logging
import Synchronization

/// How a `WebSocketServer` listens and what it allows.
public struct WebSocketServerConfiguration: Sendable {
  /// The address to bind, e.g. `127.0.0.1`, `0.0.0.0` or `::`.
  public var host = "127.0.0.1"
  /// The port; 0 picks a free one (see `WebSocketServer.port`).
  public var port = 8080
  /// The WebSocket subprotocol (lws's protocol name); clients that name none get it too.
  public var subprotocol = "app"
  /// Static files served at `/`; `nil` serves none.
  public var publicDirectory: String?
  /// Path prefixes answered by `WebSocketServerDelegate.handleHTTP` instead of files.
  public var applicationPaths = ["/healthz", "/api/"]
  /// Headers beyond the common ones (`HTTPRequest.headers`) that requests are read with, in
  /// lower case: a proxy's own, for example.
  public var extraRequestHeaders: [String] = []
  /// Headers every HTTP response carries: files, application answers and refusals alike
  /// (a Content-Security-Policy, `X-Content-Type-Options`, …). Names end with a colon.
  public var responseHeaders: [(name: String, value: String)] = []
  /// Room for one request's headers (cookies included); a request with more is dropped
  /// (this lws cannot answer it with 431).
  public var maxHeaderBytes = 16 * 1024
  /// The largest message a client may send; a larger one is reported as `.tooLarge`.
  public var maxMessageBytes = 64 * 1024
  /// A message this large closes the connection with 1009.
  public var closeAboveBytes = 1024 * 1024
  /// Bytes a connection may have waiting to be written before it is closed with 1008.
  public var outboxLimitBytes = 1024 * 1024
  /// PEM files for https and wss on the same port.
  public var tls: (certificatePath: String, privateKeyPath: String)?
  /// Seconds of silence before the server pings a WebSocket, and before it hangs up.
  public var pingAfterSeconds: UInt16 = 30
  public var hangUpAfterSeconds: UInt16 = 45
  /// Seconds the server waits for the peer's answer to its close frame before hanging up;
  /// also how long a peer that fell behind has to read its close (1008) before it is dropped.
  public var closeAnswerSeconds: Int32 = 5
  /// Seconds a request's body may take to arrive, from its head (lws's own timeout is per
  /// read, so one byte every few seconds would hold the connection for days).
  public var bodySeconds = 30
  /// Seconds the application has to answer a request once it is in (one answer may wait on a
  /// slow database several times, each up to its own deadline): past them the connection is
  /// closed. Without a bound of its own, lws took a request with no body that waited 5 s for
  /// its answer for an idle connection.
  public var answerSeconds: Int32 = 120
  /// Descriptors kept free of connections: one accepted past `open-file limit - this` is
  /// closed at once, so that accepting never fails for want of one (lws would retry it in a
  /// tight loop) and the process can still open its files.
  public var descriptorsKeptFree = 64

  public init() {}
}

/// Why a server could not start.
public struct WebSocketServerError: Error, CustomStringConvertible {
  public let description: String
}

/// An HTTP and WebSocket server on libwebsockets, with one service thread of its own.
///
/// ```swift
/// let server = try WebSocketServer(configuration: configuration, delegate: app)
/// server.send(OutboundMessage(text: "hello"), to: [connection])
/// server.shutdown()
/// ```
///
/// `send` and `close` may be called from any thread; everything else that touches
/// libwebsockets happens on the service thread.
public final class WebSocketServer: Sendable {
  /// The port the server listens on (useful with `port: 0`).
  public let port: Int
  private let engine: ServerEngine

  /// Binds and starts serving; throws if the address, port or certificate is unusable.
  public init(
    configuration: WebSocketServerConfiguration, delegate: some WebSocketServerDelegate,
    logger: Logger = Logger(label: "websocket.server")
  ) throws {
    let engine = try ServerEngine(configuration: configuration, delegate: delegate, logger: logger)
    self.engine = engine
    self.port = engine.port
    engine.start()
  }

  /// When the service thread is woken to write what was queued.
  public enum Wake: Sendable {
    /// At once.
    case now
    /// At the next `wakeIfDeferred()`: a producer that queues many messages in a batch
    /// wakes the service thread once for all of them. The producer must call it.
    case deferred
  }

  /// Queues `message` for every listed WebSocket; ids that are gone are skipped.
  public func send(
    _ message: OutboundMessage, to connections: some Sequence<ConnectionID>, wake: Wake = .now
  ) {
    engine.queues.send(message, to: connections, deferWake: wake == .deferred)
  }

  /// Queues `message` for one WebSocket.
  public func send(_ message: OutboundMessage, to connection: ConnectionID, wake: Wake = .now) {
    engine.queues.send(message, to: CollectionOfOne(connection), deferWake: wake == .deferred)
  }

  /// Wakes the service thread if a `.deferred` send left something for it to write.
  public func wakeIfDeferred() {
    engine.queues.wakeIfDeferred()
  }

  /// Closes a WebSocket with a code and reason, after what is already queued for it.
  public func close(_ connection: ConnectionID, code: CloseCode, reason: String) {
    engine.queues.close(connection, code: code, reason: reason)
  }

  /// The number of open WebSocket connections.
  public var webSocketCount: Int { engine.queues.count }
  /// Connections closed with 1008 so far because they read too slowly.
  public var slowReaderCount: Int { engine.queues.fellBehindCount }
  /// Keepalive pings sent so far: behind a frame, in the same write, or alone.
  public var pingsSent: (behindAFrame: Int, alone: Int) {
    (
      engine.queues.pingsBehindFrames.load(ordering: .relaxed),
      engine.pingsAlone.load(ordering: .relaxed)
    )
  }

  /// Closes every WebSocket with 1001, waits up to `gracePeriod` for them to go, then stops.
  /// Safe to call more than once.
  public func shutdown(gracePeriod: Duration = .seconds(2)) {
    engine.stop(gracePeriod: gracePeriod)
  }

  deinit { engine.stop(gracePeriod: .zero) }
}
