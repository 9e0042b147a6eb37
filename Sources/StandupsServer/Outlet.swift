import StandupsWire
import StoreRuntime
import Synchronization
import WebSocketTransport

/// Where rooms send bytes: the transport, once it exists.
///
/// Sends from a shard wake the transport once, when the shard's batch is done: rooms whose
/// timers fired together hand all their frames over with one wake-up.
final class Outlet: Sendable {
  private let server = Mutex<WebSocketServer?>(nil)

  func attach(_ server: WebSocketServer) { self.server.withLock { $0 = server } }

  func send(_ message: OutboundMessage, to connections: some Sequence<ConnectionID>) {
    guard let server = server.withLock({ $0 }) else { return }
    server.send(message, to: connections, wake: .deferred)
    Shard.atEndOfBatch(ObjectIdentifier(server)) { server.wakeIfDeferred() }
  }

  func send(_ message: OutboundMessage, to connection: ConnectionID) {
    send(message, to: CollectionOfOne(connection))
  }

  func close(_ connection: ConnectionID, code: CloseCode, reason: String) {
    server.withLock { $0 }?.close(connection, code: code, reason: reason)
  }

  /// WebSockets open now, and those closed so far for reading too slowly (`/metrics`).
  var counts: (connections: Int, slowReaders: Int) {
    server.withLock { $0 }.map { ($0.webSocketCount, $0.slowReaderCount) } ?? (0, 0)
  }
}

extension ServerMetrics {
  func action(_ result: Result<Int, WireError>) {
    switch result {
    case .success: action("ok")
    case .failure(let error): action(error.code.rawValue)
    }
  }
}
