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
  /// Static files served at `/`; `nil` serves none.
  public var publicDirectory: String?
  /// Path prefixes answered by `WebSocketServerDelegate.handleHTTP` instead of files.
  public var applicationPaths = ["/healthz", "/api/"]
  /// Headers every HTTP response carries: files, application answers and refusals alike
  /// (a Content-Security-Policy, `X-Content-Type-Options`, …). Names end with a colon.
  public var responseHeaders: [(name: String, value: String)] = []
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
    logger: Logger = Logger(label: "standups.transport")
  ) throws {
    let engine = try ServerEngine(configuration: configuration, delegate: delegate, logger: logger)
    self.engine = engine
    self.port = engine.port
    engine.start()
  }

  /// Queues `message` for every listed WebSocket; ids that are gone are skipped.
  public func send(_ message: OutboundMessage, to connections: some Sequence<ConnectionID>) {
    engine.queues.send(message, to: connections.lazy.map(\.rawValue))
  }

  /// Queues `message` for one WebSocket.
  public func send(_ message: OutboundMessage, to connection: ConnectionID) {
    engine.queues.send(message, to: CollectionOfOne(connection.rawValue))
  }

  /// Closes a WebSocket with a code and reason, after what is already queued for it.
  public func close(_ connection: ConnectionID, code: CloseCode, reason: String) {
    engine.queues.close(connection.rawValue, code: code, reason: reason)
  }

  /// The number of open WebSocket connections.
  public var webSocketCount: Int { engine.queues.count }

  /// Closes every WebSocket with 1001, waits up to `gracePeriod` for them to go, then stops.
  /// Safe to call more than once.
  public func shutdown(gracePeriod: Duration = .seconds(2)) {
    engine.stop(gracePeriod: gracePeriod)
  }

  deinit { engine.stop(gracePeriod: .zero) }
}

/// Everything the service thread owns, reached from the C callback through the context's
/// user pointer.
final class ServerEngine: @unchecked Sendable {
  // NB: @unchecked because the mutable properties below are touched only on the service
  // thread (after `init`); the cross-thread parts are `queues`, `control` and `finished`.
  private(set) var port = 0
  let queues: OutboundQueues
  let delegate: any WebSocketServerDelegate
  let configuration: WebSocketServerConfiguration
  let logger: Logger
  private let publicRoot: String?
  /// The headers a static file goes out with, as raw header lines.
  private let fileHeaders: String
  private var context: OpaquePointer?
  private let loop: EventLoop
  private let protocols: UnsafeMutablePointer<lws_protocols>
  private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
  private let vhostOptions: UnsafeMutablePointer<lws_protocol_vhost_options>
  private var cStrings: [UnsafeMutablePointer<CChar>] = []

  // Service-thread state.
  private var nextID: UInt64 = 1
  private var webSockets: [UInt64: WebSocketState] = [:]
  private var httpRequests: [UInt64: HTTPRequestState] = [:]
  private var acceptedUpgrades: [OpaquePointer: (HTTPRequest, (any Sendable)?)] = [:]
  private var stopDeadline: ContinuousClock.Instant?

  private struct Control {
    var stopRequested: Duration?
    var httpResponses: [UInt64: HTTPResponse] = [:]
    var state: RunState = .notStarted
  }
  private enum RunState { case notStarted, running, stopped }
  private let control = Mutex(Control())
  private let finished = DispatchSemaphore(value: 0)

  final class WebSocketState {
    let wsi: OpaquePointer
    var received: [UInt8] = []
    var isBinary = false
    var byteCount = 0
    var isOversized = false
    /// Whether queued frames may be written at once, outside lws' writable callback. Not
    /// after the peer sent something, until the next writable callback: lws may owe it a
    /// pong (it tells us nothing of pings) or its close answer, and those go first.
    var mayWriteAtOnce = true
    var peerClosed = false
    /// Our close frame is out; the peer's answering close ends the connection.
    var closeSent = false
    init(wsi: OpaquePointer) { self.wsi = wsi }
  }

  final class HTTPRequestState {
    let wsi: OpaquePointer
    var request: HTTPRequest
    var bodyTooLarge = false
    init(wsi: OpaquePointer, request: HTTPRequest) {
      self.wsi = wsi
      self.request = request
    }
  }

  init(
    configuration: WebSocketServerConfiguration, delegate: any WebSocketServerDelegate,
    logger: Logger
  ) throws {
    self.configuration = configuration
    self.delegate = delegate
    self.logger = logger
    self.queues = OutboundQueues(limit: configuration.outboxLimitBytes)
    fileHeaders = (["cache-control: no-cache"] + configuration.responseHeaders.map { "\($0.name) \($0.value)" })
      .map { $0 + "\r\n" }.joined()
    if let directory = configuration.publicDirectory {
      guard let resolved = realpath(directory, nil) else {
        throw WebSocketServerError(description: "The public directory \(directory) does not exist.")
      }
      publicRoot = String(cString: resolved)
      free(resolved)
    } else {
      publicRoot = nil
    }
    LWSLog.install(logger: logger)
    _ = clws_raise_nofile_limit()
    loop = try EventLoop()

    var strings: [UnsafeMutablePointer<CChar>] = []
    // NB: lws keeps pointers to these strings for the context's lifetime.
    func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
      let copy = strdup(string)!
      strings.append(copy)
      return copy
    }

    // protocols[0] serves HTTP (static files, app paths, upgrade decisions);
    // protocols[1] is the WebSocket protocol, the default for clients that name none.
    protocols = .allocate(capacity: 3)
    protocols.initialize(repeating: lws_protocols(), count: 3)
    protocols[0].name = UnsafePointer(keep("http"))
    protocols[0].callback = serverCallback
    protocols[0].per_session_data_size = MemoryLayout<UInt64>.size
    protocols[0].id = 0
    protocols[1].name = UnsafePointer(keep("standups"))
    protocols[1].callback = serverCallback
    protocols[1].per_session_data_size = MemoryLayout<UInt64>.size
    protocols[1].rx_buffer_size = 4096
    protocols[1].tx_packet_size = 0
    protocols[1].id = 1

    retryPolicy = .allocate(capacity: 1)
    retryPolicy.initialize(to: lws_retry_bo_t())
    retryPolicy.pointee.secs_since_valid_ping = configuration.pingAfterSeconds
    retryPolicy.pointee.secs_since_valid_hangup = configuration.hangUpAfterSeconds

    vhostOptions = .allocate(capacity: 2)
    let defaultProtocol = vhostOptions
    defaultProtocol.initialize(repeating: lws_protocol_vhost_options(), count: 2)
    // NB: a client that offers no subprotocol would otherwise bind to protocols[0] and its
    // messages would vanish; the "default" option makes "standups" its protocol.
    defaultProtocol[1].name = UnsafePointer(keep("default"))
    defaultProtocol[1].value = UnsafePointer(keep(""))
    defaultProtocol[0].name = UnsafePointer(keep("standups"))
    defaultProtocol[0].value = UnsafePointer(keep(""))
    defaultProtocol[0].options = UnsafePointer(defaultProtocol + 1)

    var info = lws_context_creation_info()
    info.options = CLWS_OPTION_LIBUV | CLWS_OPTION_VALIDATE_UTF8 | CLWS_OPTION_EXPLICIT_VHOSTS
    if configuration.tls != nil { info.options |= CLWS_OPTION_SSL_GLOBAL_INIT }
    info.port = CONTEXT_PORT_NO_LISTEN
    info.protocols = UnsafePointer(protocols)
    info.gid = -1
    info.uid = -1
    info.retry_and_idle_policy = UnsafePointer(retryPolicy)
    info.pt_serv_buf_size = 16 * 1024
    info.foreign_loops = loop.foreignLoops

    let unmanaged = Unmanaged.passUnretained(self).toOpaque()
    info.user = unmanaged
    guard let context = lws_create_context(&info) else {
      loop.destroy()
      throw WebSocketServerError(description: "libwebsockets could not create its context.")
    }
    self.context = context

    var vhostInfo = info
    vhostInfo.port = Int32(configuration.port)
    vhostInfo.iface = UnsafePointer(keep(configuration.host))
    vhostInfo.vhost_name = UnsafePointer(keep("standups"))
    vhostInfo.pvo = UnsafePointer(defaultProtocol)
    if configuration.host.contains(":") == false { vhostInfo.options |= CLWS_OPTION_DISABLE_IPV6 }
    if let tls = configuration.tls {
      for path in [tls.certificatePath, tls.privateKeyPath] where access(path, R_OK) != 0 {
        lws_context_destroy(context)
        loop.destroy()
        for string in strings { free(string) }
        throw WebSocketServerError(description: "The TLS file \(path) cannot be read.")
      }
      vhostInfo.ssl_cert_filepath = UnsafePointer(keep(tls.certificatePath))
      vhostInfo.ssl_private_key_filepath = UnsafePointer(keep(tls.privateKeyPath))
    }
    guard let vhost = lws_create_vhost(context, &vhostInfo) else {
      lws_context_destroy(context)
      loop.destroy()
      for string in strings { free(string) }
      let what = configuration.tls == nil ? "" : " (or the TLS certificate and key do not match)"
      throw WebSocketServerError(
        description:
          "Cannot listen on \(configuration.host):\(configuration.port): the address is in use or not available\(what)."
      )
    }
    self.port = Int(lws_get_vhost_listen_port(vhost))
    self.cStrings = strings
    queues.setContext(ContextHandle(pointer: context))
  }

  deinit {
    for string in cStrings { free(string) }
    protocols.deallocate()
    retryPolicy.deallocate()
    vhostOptions.deallocate()
  }

  func start() {
    control.withLock { $0.state = .running }
    let thread = Thread { [self] in serviceLoop() }
    thread.name = "lws-service"
    thread.start()
  }

  func stop(gracePeriod: Duration) {
    let wait = control.withLock { control -> Bool in
      guard control.state == .running else { return false }
      if control.stopRequested == nil { control.stopRequested = gracePeriod }
      return true
    }
    guard wait else { return }
    // NB: the service thread checks its deadline whenever it wakes; keep waking it.
    while finished.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
      queues.wake()
    }
    finished.signal()  // let any other caller of `stop` through too
  }

  private func serviceLoop() {
    // NB: Foundation's `Thread.name` does not reach the kernel; this names it for top -H and perf.
    clws_name_thread("lws-service")
    while control.withLock({ $0.state == .running }) {
      loop.run()
    }
    queues.setContext(nil)
    lws_context_destroy(context)
    loop.destroy()
    context = nil
    finished.signal()
  }

  // MARK: - Callbacks (service thread)

  fileprivate func handle(
    _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
  ) -> Int32 {
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
      if lws_get_protocol(wsi)?.pointee.id == 0 { serviceWakeUp() }
      return 0

    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
      let request = readRequest(wsi, path: readPath(wsi))
      switch delegate.shouldUpgrade(request) {
      case .accept(let context):
        acceptedUpgrades[wsi] = (request, context)
        return 0
      case .refuse(let response):
        return write(response, to: wsi, ownStatusLine: true) < 0 ? -1 : 1
      }

    case LWS_CALLBACK_HTTP:
      return startHTTP(wsi, user: user, input: input, length: length)

    case LWS_CALLBACK_HTTP_BODY:
      guard let id = user?.load(as: UInt64.self), let state = httpRequests[id] else { return 0 }
      if state.request.body.count + length > configuration.maxMessageBytes {
        state.bodyTooLarge = true
      } else if let input {
        state.request.body.append(
          contentsOf: UnsafeRawBufferPointer(start: input, count: length))
      }
      return 0

    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
      guard let id = user?.load(as: UInt64.self), let state = httpRequests[id] else { return 0 }
      dispatchHTTP(id: id, state: state)
      return 0

    case LWS_CALLBACK_HTTP_WRITEABLE:
      guard let id = user?.load(as: UInt64.self),
        let response = control.withLock({ $0.httpResponses.removeValue(forKey: id) })
      else { return 0 }
      httpRequests[id] = nil
      if write(response, to: wsi) < 0 { return -1 }
      return lws_http_transaction_completed(wsi) != 0 ? -1 : 0

    case LWS_CALLBACK_HTTP_FILE_COMPLETION:
      return lws_http_transaction_completed(wsi) != 0 ? -1 : 0

    case LWS_CALLBACK_CLOSED_HTTP:
      acceptedUpgrades[wsi] = nil
      if let id = user?.load(as: UInt64.self), id != 0 {
        httpRequests[id] = nil
        _ = control.withLock { $0.httpResponses.removeValue(forKey: id) }
      }
      return 0

    case LWS_CALLBACK_ESTABLISHED:
      let id = nextID
      nextID += 1
      user?.storeBytes(of: id, as: UInt64.self)
      webSockets[id] = WebSocketState(wsi: wsi)
      queues.open(id)
      let (request, context) =
        acceptedUpgrades.removeValue(forKey: wsi) ?? (readRequest(wsi, path: readPath(wsi)), nil)
      delegate.webSocketOpened(ConnectionID(rawValue: id), request: request, context: context)
      if control.withLock({ $0.stopRequested != nil }) {
        queues.close(id, code: .goingAway, reason: "Server shutting down")
      }
      return 0

    case LWS_CALLBACK_RECEIVE:
      guard let id = user?.load(as: UInt64.self), let state = webSockets[id] else { return 0 }
      // NB: once our close frame is out, what the peer still sends is not read.
      if queues.isClosing(id) { return 0 }
      state.mayWriteAtOnce = false
      return receive(id: id, state: state, wsi: wsi, input: input, length: length)

    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
      guard let id = user?.load(as: UInt64.self), let state = webSockets[id] else { return 0 }
      // The answer to our close: nonzero has lws close the connection without echoing it.
      if state.closeSent { return 1 }
      state.peerClosed = true
      return 0  // lws answers with the same close, then closes

    case LWS_CALLBACK_SERVER_WRITEABLE:
      guard let id = user?.load(as: UInt64.self), let state = webSockets[id] else { return 0 }
      state.mayWriteAtOnce = true
      return queues.drain(id, wsi: wsi).callbackResult(
        wsi: wsi, waitSeconds: configuration.closeAnswerSeconds
      ) { state.closeSent = true }

    case LWS_CALLBACK_CLOSED:
      guard let id = user?.load(as: UInt64.self), webSockets.removeValue(forKey: id) != nil
      else { return 0 }
      queues.remove(id)
      delegate.webSocketClosed(ConnectionID(rawValue: id))
      return 0

    default:
      return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
  }

  private func serviceWakeUp() {
    let (wake, fellBehind) = queues.takeWakeList()
    for id in wake {
      guard let state = webSockets[id] else { continue }
      if state.mayWriteAtOnce && !state.peerClosed {
        queues.flush(id, wsi: state.wsi)
      } else {
        lws_callback_on_writable(state.wsi)
      }
    }
    for id in fellBehind {
      guard let state = webSockets[id] else { continue }
      // NB: a socket nobody reads never turns writable: if the peer reads again soon it gets
      // its 1008 (and the closing handshake); otherwise lws drops it at the deadline.
      lws_set_timeout(state.wsi, PENDING_TIMEOUT_CLOSE_SEND, configuration.closeAnswerSeconds)
      lws_callback_on_writable(state.wsi)
    }
    let (stop, responses) = control.withLock { control in
      (control.stopRequested, Array(control.httpResponses.keys))
    }
    for id in responses {
      if let state = httpRequests[id] { lws_callback_on_writable(state.wsi) }
    }
    guard let stop else { return }
    if stopDeadline == nil {
      stopDeadline = .now + stop
      queues.closeAll(code: .goingAway, reason: "Server shutting down")
      for state in webSockets.values { lws_callback_on_writable(state.wsi) }
    }
    if webSockets.isEmpty || ContinuousClock.now >= stopDeadline! {
      control.withLock { $0.state = .stopped }
      loop.stop()
    }
  }

  private func receive(
    id: UInt64, state: WebSocketState, wsi: OpaquePointer, input: UnsafeMutableRawPointer?,
    length: Int
  ) -> Int32 {
    if state.byteCount == 0 { state.isBinary = lws_frame_is_binary(wsi) != 0 }
    state.byteCount += length
    if state.byteCount > configuration.closeAboveBytes {
      clws_close_reason(wsi, Int32(CloseCode.messageTooBig.rawValue), "Message too large")
      return -1
    }
    if state.byteCount > configuration.maxMessageBytes { state.isOversized = true }
    if state.isOversized {
      state.received = []  // dropped: only the byte count matters now
    } else if let input, length > 0 {
      state.received.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
    }
    guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else {
      return 0
    }
    let message: InboundMessage =
      state.isOversized
      ? .tooLarge(limit: configuration.maxMessageBytes)
      : state.isBinary ? .binary(state.received) : .text(state.received)
    state.received = []
    state.byteCount = 0
    state.isBinary = false
    state.isOversized = false
    delegate.webSocket(ConnectionID(rawValue: id), received: message)
    return 0
  }

  private func startHTTP(
    _ wsi: OpaquePointer, user: UnsafeMutableRawPointer?, input: UnsafeMutableRawPointer?,
    length: Int
  ) -> Int32 {
    let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
    let request = readRequest(wsi, path: path)
    if configuration.applicationPaths.contains(where: { path.hasPrefix($0) }) {
      let id = nextID
      nextID += 1
      user?.storeBytes(of: id, as: UInt64.self)
      let state = HTTPRequestState(wsi: wsi, request: request)
      httpRequests[id] = state
      if request.method == "POST" || request.method == "PUT" || request.method == "PATCH" {
        return 0  // wait for the body
      }
      dispatchHTTP(id: id, state: state)
      return 0
    }
    return serveFile(wsi, request: request)
  }

  private func dispatchHTTP(id: UInt64, state: HTTPRequestState) {
    if state.bodyTooLarge {
      respond(
        id,
        HTTPResponse(
          status: 413,
          text: "The request body is larger than \(configuration.maxMessageBytes) bytes."))
      return
    }
    let responder = HTTPResponder { [weak self] response in self?.respond(id, response) }
    delegate.handleHTTP(state.request, respond: responder)
  }

  private func respond(_ id: UInt64, _ response: HTTPResponse) {
    control.withLock { $0.httpResponses[id] = response }
    queues.wake()
  }

  private func serveFile(_ wsi: OpaquePointer, request: HTTPRequest) -> Int32 {
    guard request.method == "GET" || request.method == "HEAD" else {
      return finish(wsi, HTTPResponse(status: 405, text: "Only GET and HEAD are served here."))
    }
    guard let root = publicRoot, let file = resolveFile(root: root, path: request.path) else {
      return finish(wsi, HTTPResponse(status: 404, text: "Not found: \(request.path)"))
    }
    let result = lws_serve_http_file(
      wsi, file, MIMEType.forPath(file), fileHeaders, Int32(fileHeaders.utf8.count))
    if result < 0 { return -1 }
    if result > 0 { return lws_http_transaction_completed(wsi) != 0 ? -1 : 0 }
    return 0
  }

  private func finish(_ wsi: OpaquePointer, _ response: HTTPResponse) -> Int32 {
    if write(response, to: wsi) < 0 { return -1 }
    return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
  }

  /// Maps a URL path to a regular file inside `root`, or nil (missing, or outside it).
  private func resolveFile(root: String, path: String) -> String? {
    let decoded = path.removingPercentEncoding ?? path
    let components = decoded.split(separator: "/", omittingEmptySubsequences: true)
    guard !components.contains(where: { $0 == ".." || $0.hasPrefix(".") || $0.contains("\0") })
    else { return nil }
    var candidate = root + "/" + components.joined(separator: "/")
    var info = stat()
    if stat(candidate, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
      candidate += "/index.html"
    }
    guard let resolved = realpath(candidate, nil) else { return nil }
    defer { free(resolved) }
    let real = String(cString: resolved)
    guard real.hasPrefix(root + "/"), stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG
    else { return nil }
    return real
  }

  private func write(_ response: HTTPResponse, to wsi: OpaquePointer, ownStatusLine: Bool = false)
    -> Int32
  {
    var response = response
    response.headers += configuration.responseHeaders
    let headers = response.packedHeaders
    return response.body.withUnsafeBufferPointer { body in
      headers.withUnsafeBufferPointer { headers in
        clws_respond(
          wsi, UInt32(response.status), response.contentType, headers.baseAddress, headers.count,
          ownStatusLine ? 1 : 0, body.baseAddress, body.count)
      }
    }
  }


  private func readPath(_ wsi: OpaquePointer) -> String {
    HTTPHeaders.copy(wsi, WSI_TOKEN_GET_URI) ?? HTTPHeaders.copy(wsi, WSI_TOKEN_POST_URI) ?? "/"
  }

  private func readRequest(_ wsi: OpaquePointer, path: String) -> HTTPRequest {
    HTTPHeaders.request(wsi, path: path)
  }
}

/// Reads a request's method, query and headers while lws still holds them.
enum HTTPHeaders {
  static func copy(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
    let length = lws_hdr_total_length(wsi, token)
    guard length > 0 else { return nil }
    var buffer = [CChar](repeating: 0, count: Int(length) + 1)
    guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
    return String(nulTerminated: buffer)
  }

  static func request(_ wsi: OpaquePointer, path: String) -> HTTPRequest {
    let methods: [(lws_token_indexes, String)] = [
      (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_HEAD_URI, "HEAD"),
      (WSI_TOKEN_PUT_URI, "PUT"), (WSI_TOKEN_DELETE_URI, "DELETE"),
      (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
    ]
    let method = methods.first(where: { lws_hdr_total_length(wsi, $0.0) > 0 }).map(\.1) ?? "GET"
    var query: [(name: String, value: String)] = []
    var buffer = [CChar](repeating: 0, count: 2048)
    var index: Int32 = 0
    while lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
      >= 0
    {
      let argument = String(nulTerminated: buffer)
      if let equals = argument.firstIndex(of: "=") {
        query.append((String(argument[..<equals]), String(argument[argument.index(after: equals)...])))
      } else {
        query.append((argument, ""))
      }
      index += 1
    }
    var headers: [String: String] = [:]
    let wanted: [(lws_token_indexes, String)] = [
      (WSI_TOKEN_HTTP_AUTHORIZATION, "authorization"), (WSI_TOKEN_ORIGIN, "origin"),
      (WSI_TOKEN_HTTP_CONTENT_TYPE, "content-type"), (WSI_TOKEN_HOST, "host"),
      (WSI_TOKEN_HTTP_USER_AGENT, "user-agent"), (WSI_TOKEN_HTTP_COOKIE, "cookie"),
      (WSI_TOKEN_X_FORWARDED_FOR, "x-forwarded-for"),
    ]
    for (token, name) in wanted {
      if let value = copy(wsi, token) { headers[name] = value }
    }
    var peer = [CChar](repeating: 0, count: 64)
    let remote = lws_get_peer_simple(wsi, &peer, peer.count) == nil ? "" : String(nulTerminated: peer)
    return HTTPRequest(
      method: method, path: path, query: query, headers: headers, remoteAddress: remote)
  }
}

extension String {
  /// Decodes a NUL-terminated C buffer as UTF-8 (invalid bytes become U+FFFD).
  init(nulTerminated buffer: [CChar]) {
    self.init(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

/// The C entry point for both server protocols.
private func serverCallback(
  wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
  input: UnsafeMutableRawPointer?, length: Int
) -> Int32 {
  guard let wsi, let context = lws_get_context(wsi), let pointer = lws_context_user(context)
  else { return 0 }
  let engine = Unmanaged<ServerEngine>.fromOpaque(pointer).takeUnretainedValue()
  return engine.handle(wsi, reason, user, input, length)
}
