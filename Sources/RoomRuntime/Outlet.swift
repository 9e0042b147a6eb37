import StoreRuntime
import Synchronization
import WebSocketTransport

/// Where an outlet's frames go: the WebSocket server (`WebSocketServer`), or a test's recorder.
public protocol FrameSink: AnyObject, Sendable {
  /// Queues `message` for every listed connection, without waking the writer: `flush` does.
  /// (An array, not any sequence: a call through the protocol is not specialized.)
  func queue(_ message: OutboundMessage, to connections: [ConnectionID])
  /// Hands what was queued to the writer (one wake-up for a batch of sends).
  func flush()
  /// Closes a connection after what is already queued for it.
  func close(_ connection: ConnectionID, code: CloseCode, reason: String)
}

extension WebSocketServer: FrameSink {
  public func queue(_ message: OutboundMessage, to connections: [ConnectionID]) {
    send(message, to: connections, wake: .deferred)
  }

  public func flush() { wakeIfDeferred() }
}

/// Where rooms send bytes: the transport, once it exists.
///
/// Sends from a shard wake the transport once, when the shard's batch is done: rooms whose
/// timers fired together hand all their frames over with one wake-up.
public final class Outlet: Sendable {
  private let sink = Mutex<(any FrameSink)?>(nil)

  public init() {}

  public func attach(_ sink: any FrameSink) { self.sink.withLock { $0 = sink } }

  public func send(_ message: OutboundMessage, to connections: some Sequence<ConnectionID>) {
    guard let sink = sink.withLock({ $0 }) else { return }
    sink.queue(message, to: Array(connections))
    Shard.atEndOfBatch(ObjectIdentifier(sink)) { sink.flush() }
  }

  public func send(_ message: OutboundMessage, to connection: ConnectionID) {
    send(message, to: CollectionOfOne(connection))
  }

  public func close(_ connection: ConnectionID, code: CloseCode, reason: String) {
    sink.withLock { $0 }?.close(connection, code: code, reason: reason)
  }
}
