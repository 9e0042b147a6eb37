import CLibWebSockets
import Dispatch
import Foundation
import Logging
import Synchronization

/// Something that happened on a client connection.
public enum ClientEvent: Sendable, Equatable {
  case text([UInt8])
  /// The connection ended; `code` is the server's close code if it sent one.
  case closed(code: Int?, reason: String)
}

/// Why a client connection could not be opened.
public struct WebSocketConnectError: Error, CustomStringConvertible, Sendable {
  /// The HTTP status the server refused the upgrade with, if it answered with one.
  public let status: Int?
  public let message: String
  public var description: String {
    status.map { "HTTP \($0): \(message)" } ?? message
  }
}

/// WebSocket clients on libwebsockets: many connections share one context and one service
/// thread (tests, the benchmark's load generator, bots).
public final class WebSocketClient: Sendable {
  private let engine: ClientEngine

  /// - Parameter subprotocols: the subprotocols its connections may ask for (lws needs each
  ///   one declared up front).
  /// - Parameter handshakeSeconds: how long each step of opening a connection may take: its
  ///   TCP connect, then the server's answer to its upgrade (a server that accepts and never
  ///   answers, frozen or half-up). Past either, `connect` throws.
  public init(
    subprotocols: [String] = [], handshakeSeconds: Int = 10,
    logger: Logger = Logger(label: "websocket.client")
  ) throws {
    engine = try ClientEngine(
      subprotocols: subprotocols, handshakeSeconds: handshakeSeconds, logger: logger)
    engine.start()
  }

  /// Opens `ws://host:port/path` (or `wss://` with `tls`), sending `headers` with the upgrade.
  ///
  /// - Parameter verifyCertificate: with `tls`, whether the server's certificate must be valid
  ///   for `host` and signed by a trusted authority; only tests of self-signed servers turn it off.
  /// - Parameter onEvent: called on the client's service thread for every event, in order;
  ///   when `nil`, events go to the connection's `events` stream instead.
  public func connect(
    host: String = "127.0.0.1", port: Int, path: String, headers: [String: String] = [:],
    tls: Bool = false, verifyCertificate: Bool = true, subprotocol: String? = nil,
    onEvent: (@Sendable (ClientEvent) -> Void)? = nil
  ) async throws -> WebSocketClientConnection {
    let (stream, continuation) = AsyncStream<ClientEvent>.makeStream()
    let handler: @Sendable (ClientEvent) -> Void =
      onEvent ?? { event in
        continuation.yield(event)
        if case .closed = event { continuation.finish() }
      }
    let id = try await withCheckedThrowingContinuation {
      (connected: CheckedContinuation<UInt64, any Error>) in
      engine.enqueue(
        ClientEngine.PendingConnect(
          host: host, port: port, path: path, headers: headers, tls: tls,
          verifyCertificate: verifyCertificate, subprotocol: subprotocol, handler: handler,
          connected: connected))
    }
    return WebSocketClientConnection(id: id, queues: engine.queues, events: stream)
  }

  /// Closes every connection and stops the service thread.
  public func shutdown() { engine.stop() }

  deinit { engine.stop() }
}

/// One open client WebSocket.
public final class WebSocketClientConnection: Sendable {
  let id: UInt64
  private let queues: OutboundQueues
  /// Every event, in order (empty when the connection was opened with `onEvent`).
  public let events: AsyncStream<ClientEvent>

  init(id: UInt64, queues: OutboundQueues, events: AsyncStream<ClientEvent>) {
    self.id = id
    self.queues = queues
    self.events = events
  }

  public func send(text: String) { send(OutboundMessage(text: text)) }

  public func send(_ message: OutboundMessage) {
    queues.send(message, toIDs: CollectionOfOne(id))
  }

  public func close(code: CloseCode = .normal, reason: String = "") {
    queues.close(ConnectionID(rawValue: id), code: code, reason: reason)
  }
}

final class ClientEngine: @unchecked Sendable {
  // NB: @unchecked: `connections`, `nextID` and `context` are service-thread state; the rest
  // is locked or immutable.
  struct PendingConnect: Sendable {
    var host: String
    var port: Int
    var path: String
    var headers: [String: String]
    var tls: Bool
    var verifyCertificate: Bool
    var subprotocol: String?
    var handler: @Sendable (ClientEvent) -> Void
    var connected: CheckedContinuation<UInt64, any Error>
  }

  final class Connection {
    let pending: PendingConnect
    var wsi: OpaquePointer?
    var isOpen = false
    var received: [UInt8] = []
    var closeCode: Int?
    var closeReason = ""
    /// Our close frame is out; the server's answering close ends the connection.
    var closeSent = false
    var outbox: OutboxCell?
    init(pending: PendingConnect) { self.pending = pending }
  }

  let queues = OutboundQueues(limit: 64 * 1024 * 1024)
  private let logger: Logger
  private var context: OpaquePointer?
  private let loop: EventLoop
  private let protocols: UnsafeMutablePointer<lws_protocols>
  private let protocolNames: [UnsafeMutablePointer<CChar>]
  private var connections: [UInt64: Connection] = [:]
  private var nextID: UInt64 = 1
  private struct Shared {
    var connects: [PendingConnect] = []
    var running = false
    /// When the service thread gives up on connections that do not close.
    var stopDeadline: ContinuousClock.Instant?
  }
  private let pending = Mutex(Shared())
  private let finished = DispatchSemaphore(value: 0)

  init(subprotocols: [String], handshakeSeconds: Int, logger: Logger) throws {
    self.logger = logger
    protocolNames = (["client"] + subprotocols).compactMap { strdup($0) }
    LWSLog.install(logger: logger)
    _ = clws_raise_nofile_limit()
    loop = try EventLoop()
    // NB: lws binds the subprotocol a server accepts to a local protocol of the same name,
    // so each subprotocol a client may ask for needs an entry.
    protocols = .allocate(capacity: protocolNames.count + 1)
    protocols.initialize(repeating: lws_protocols(), count: protocolNames.count + 1)
    for (index, name) in protocolNames.enumerated() {
      protocols[index].name = UnsafePointer(name)
      protocols[index].callback = clientCallback
      protocols[index].rx_buffer_size = 16 * 1024
    }

    var info = lws_context_creation_info()
    info.options = CLWS_OPTION_LIBUV | CLWS_OPTION_SSL_GLOBAL_INIT
    info.port = CONTEXT_PORT_NO_LISTEN
    info.protocols = UnsafePointer(protocols)
    info.gid = -1
    info.uid = -1
    // NB: lws's timeouts for network round trips, the client's handshake among them (its
    // default is 20 s).
    info.timeout_secs = UInt32(max(1, handshakeSeconds))
    info.connect_timeout_secs = UInt32(max(1, handshakeSeconds))
    info.user = Unmanaged.passUnretained(self).toOpaque()
    info.foreign_loops = loop.foreignLoops
    guard let context = lws_create_context(&info) else {
      loop.destroy()
      throw WebSocketConnectError(
        status: nil, message: "libwebsockets could not create a client context.")
    }
    self.context = context
    queues.setContext(ContextHandle(pointer: context))
  }

  deinit {
    protocols.deallocate()
    for name in protocolNames { free(name) }
  }

  func start() {
    pending.withLock { $0.running = true }
    let thread = Thread { [self] in
      clws_name_thread("lws-client")
      while !isDone() { loop.run() }
      queues.setContext(nil)
      lws_context_destroy(context)
      loop.destroy()
      finished.signal()
    }
    thread.name = "lws-client"
    thread.start()
  }

  /// Service thread: stopping, and every connection closed (or the grace period over).
  private func isDone() -> Bool {
    pending.withLock { state in
      guard let deadline = state.stopDeadline else { return false }
      return connections.isEmpty || ContinuousClock.now >= deadline
    }
  }

  func enqueue(_ connect: PendingConnect) {
    let accepted = pending.withLock { state -> Bool in
      guard state.stopDeadline == nil else { return false }
      state.connects.append(connect)
      return true
    }
    guard accepted else {
      connect.connected.resume(
        throwing: WebSocketConnectError(status: nil, message: "The client was shut down."))
      return
    }
    queues.wake()
  }

  func stop() {
    let wait = pending.withLock { state -> Bool in
      guard state.running, state.stopDeadline == nil else { return false }
      state.stopDeadline = .now + .seconds(2)
      return true
    }
    guard wait else { return }
    queues.closeAll(code: .goingAway, reason: "Client shutting down")
    while finished.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
      queues.wake()
    }
  }

  fileprivate func handle(
    _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?,
    _ length: Int
  ) -> Int32 {
    let id = UInt64(UInt(bitPattern: lws_get_opaque_user_data(wsi)))
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
      wakeUp()
      return 0

    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
      guard let connection = connections[id], let input else { return 0 }
      let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
      guard let start = cursor.pointee else { return 0 }
      let end = start + length
      for (name, value) in connection.pending.headers {
        let added = lws_add_http_header_by_name(
          wsi, name.lowercased() + ":", value, Int32(value.utf8.count), cursor, end)
        if added != 0 { return -1 }
      }
      return 0

    case LWS_CALLBACK_CLIENT_ESTABLISHED:
      guard let connection = connections[id] else { return -1 }
      connection.isOpen = true
      connection.outbox = queues.open(id)
      connection.pending.connected.resume(returning: id)
      return 0

    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
      guard let connection = connections.removeValue(forKey: id) else { return 0 }
      let status = Int(clws_client_http_status(wsi))
      let message = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
      connection.pending.connected.resume(
        throwing: WebSocketConnectError(
          status: status == 0 ? nil : status, message: message ?? "The connection failed."))
      return 0

    case LWS_CALLBACK_CLIENT_RECEIVE:
      guard let connection = connections[id] else { return 0 }
      if let input, length > 0 {
        connection.received.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
      }
      if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
        let message = connection.received
        connection.received = []
        connection.pending.handler(.text(message))
      }
      return 0

    case LWS_CALLBACK_CLIENT_WRITEABLE:
      guard let connection = connections[id], let outbox = connection.outbox else { return 0 }
      // NB: never a ping behind a frame here: `clws_write_with_ping` writes a server's
      // unmasked frames, and a client's must be masked.
      var noPing = false
      return queues.drain(outbox, wsi: wsi, ping: &noPing).callbackResult(
        wsi: wsi, waitSeconds: 5
      ) {
        connection.closeSent = true
      }

    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
      guard let connection = connections[id] else { return 0 }
      if let input, length >= 2 {
        let bytes = UnsafeRawBufferPointer(start: input, count: length)
        connection.closeCode = Int(bytes[0]) << 8 | Int(bytes[1])
        connection.closeReason = String(decoding: bytes.dropFirst(2), as: UTF8.self)
      }
      // The answer to our close ends it (nonzero: no echo); otherwise lws answers in kind.
      return connection.closeSent ? 1 : 0

    // NB: every connection ends in one of these: an open one with CLIENT_CLOSED; one that
    // never opened with CLIENT_CONNECTION_ERROR (above) or, when lws's handshake timeout
    // closes it (a server that took the connection and never answered), with no callback but
    // its destruction: the `connect` waiting for it then fails, or it would wait for ever.
    case LWS_CALLBACK_CLIENT_CLOSED, LWS_CALLBACK_WSI_DESTROY:
      guard let connection = connections.removeValue(forKey: id) else { return 0 }
      queues.remove(id)
      guard connection.isOpen else {
        connection.pending.connected.resume(
          throwing: WebSocketConnectError(
            status: nil, message: "The server did not answer the connection's handshake."))
        return 0
      }
      connection.pending.handler(
        .closed(code: connection.closeCode, reason: connection.closeReason))
      return 0

    default:
      return 0
    }
  }

  private func wakeUp() {
    let connects = pending.withLock { state in
      defer { state.connects.removeAll() }
      return state.connects
    }
    for connect in connects { open(connect) }
    let (wake, fellBehind) = queues.takeWakeList()
    for id in wake.map(\.id) + fellBehind {
      if let wsi = connections[id]?.wsi { lws_callback_on_writable(wsi) }
    }
    if isDone() { loop.stop() }
  }

  private func open(_ connect: PendingConnect) {
    let id = nextID
    nextID += 1
    let connection = Connection(pending: connect)
    connections[id] = connection
    let host = strdup(connect.host)
    // NB: RFC 7230 §5.4: Host names the port unless it is the scheme's default.
    let hostHeader = strdup(
      connect.port == (connect.tls ? 443 : 80) ? connect.host : "\(connect.host):\(connect.port)")
    let path = strdup(connect.path)
    let subprotocol = connect.subprotocol.map { strdup($0) }
    defer {
      free(host)
      free(hostHeader)
      free(path)
      free(subprotocol ?? nil)
    }
    var info = lws_client_connect_info()
    info.context = context
    info.address = UnsafePointer(host)
    info.host = UnsafePointer(hostHeader)
    // NB: no Origin: this is not a browser page (a caller may still send one in `headers`).
    info.port = Int32(connect.port)
    info.path = UnsafePointer(path)
    if connect.tls {
      var flags = LCCSCF_USE_SSL.rawValue
      if !connect.verifyCertificate {
        flags |= LCCSCF_ALLOW_SELFSIGNED.rawValue | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue
      }
      info.ssl_connection = Int32(flags)
    }
    info.ietf_version_or_minus_one = -1
    info.local_protocol_name = UnsafePointer(protocolNames[0])
    if let subprotocol { info.protocol = UnsafePointer(subprotocol) }
    info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(id))
    let result = lws_client_connect_via_info(&info)
    if result == nil, connections[id] != nil {
      connections[id] = nil
      connect.connected.resume(
        throwing: WebSocketConnectError(
          status: nil, message: "Cannot connect to \(connect.host):\(connect.port)."))
      return
    }
    connections[id]?.wsi = result
  }
}

private func clientCallback(
  wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
  input: UnsafeMutableRawPointer?, length: Int
) -> Int32 {
  guard let wsi, let context = lws_get_context(wsi), let pointer = lws_context_user(context)
  else { return 0 }
  let engine = Unmanaged<ClientEngine>.fromOpaque(pointer).takeUnretainedValue()
  return engine.handle(wsi, reason, input, length)
}
