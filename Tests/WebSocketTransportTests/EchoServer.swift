import Dispatch
import Synchronization
import WebSocketTransport

/// A delegate that echoes text, refuses upgrades to `/refuse`, answers `/healthz`, and
/// records what happened.
final class EchoDelegate: WebSocketServerDelegate {
  let server = Mutex<WebSocketServer?>(nil)
  let events = Mutex<[String]>([])
  let open = Mutex<Set<ConnectionID>>([])
  /// Echo binary messages as binary (the Autobahn run) instead of answering "binary".
  let echoBinary: Bool
  init(echoBinary: Bool = false) { self.echoBinary = echoBinary }

  func shouldUpgrade(_ request: HTTPRequest) -> UpgradeDecision {
    if request.path == "/refuse" {
      return .refuse(HTTPResponse(status: 401, text: "no"))
    }
    return .accept(context: request.queryValue("name"))
  }

  func webSocketOpened(_ connection: ConnectionID, request: HTTPRequest, context: (any Sendable)?) {
    events.withLock { $0.append("open \(request.path) \(context as? String ?? "-")") }
    open.withLock { _ = $0.insert(connection) }
  }

  func webSocket(_ connection: ConnectionID, received message: InboundMessage) {
    let reply: OutboundMessage
    switch message {
    case .text(let bytes):
      if bytes == Array("flood".utf8) {
        // One round: 20 × 32 KiB to everyone (under the 1 MiB cap for a reader that keeps
        // up; a stalled one falls further behind each round).
        let chunk = OutboundMessage(Array(repeating: UInt8(ascii: "x"), count: 32 * 1024))
        let everyone = open.withLock { $0 }
        server.withLock { server in
          for _ in 0..<20 { server?.send(chunk, to: everyone) }
          server?.send(OutboundMessage(text: "round done"), to: everyone)
        }
        return
      }
      if bytes == Array("big".utf8) {
        // One message three times the outbox cap (a large welcome).
        let big = OutboundMessage(Array(repeating: UInt8(ascii: "b"), count: 3 * 1024 * 1024))
        server.withLock { $0?.send(big, to: connection) }
        return
      }
      if bytes == Array("close-me".utf8) {
        server.withLock {
          $0?.close(connection, code: CloseCode(rawValue: 4410), reason: "Deleted")
        }
        return
      }
      reply = OutboundMessage(bytes)
    case .binary(let bytes):
      reply = echoBinary ? OutboundMessage(bytes, binary: true) : OutboundMessage(text: "binary")
    case .tooLarge(let limit): reply = OutboundMessage(text: "too large \(limit)")
    }
    server.withLock { $0?.send(reply, to: connection) }
  }

  func webSocketClosed(_ connection: ConnectionID) {
    open.withLock { _ = $0.remove(connection) }
    events.withLock { $0.append("closed") }
  }

  func handleHTTP(_ request: HTTPRequest, respond: HTTPResponder) {
    // `/api/slow?ms=N`: an answer the application takes N ms to find (a database slow to answer).
    // NB: answered from a dispatch queue, not a task: the test that waits for it blocks a
    // thread of the tasks' pool, which runs other tests' tasks beside it.
    if request.path == "/api/slow", let milliseconds = request.queryValue("ms").flatMap(Int.init) {
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
        respond(HTTPResponse(status: 200, text: "slow \(milliseconds)"))
      }
      return
    }
    respond(HTTPResponse(status: 200, text: "ok \(request.method) \(request.body.count)"))
  }

  func refusalBeforeTheBody(_ request: HTTPRequest) -> HTTPResponse? {
    request.path == "/api/refused" ? HTTPResponse(status: 403, text: "refused by its head") : nil
  }
}

func startEchoServer(
  echoBinary: Bool = false,
  configure: (inout WebSocketServerConfiguration) -> Void = { _ in }
) throws -> (WebSocketServer, EchoDelegate) {
  var configuration = WebSocketServerConfiguration()
  configuration.port = 0
  configure(&configuration)
  let delegate = EchoDelegate(echoBinary: echoBinary)
  let server = try WebSocketServer(configuration: configuration, delegate: delegate)
  delegate.server.withLock { $0 = server }
  return (server, delegate)
}

extension AsyncStream<ClientEvent> {
  /// The next text message as a string, or nil if the connection closed first.
  func nextText() async -> String? {
    var iterator = makeAsyncIterator()
    guard case .text(let bytes)? = await iterator.next() else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }
}
