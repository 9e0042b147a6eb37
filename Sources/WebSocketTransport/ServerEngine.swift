import CLibWebSockets
import Dispatch
import Foundation
import Logging
import Synchronization

/// Everything the service thread owns, reached from the C callback through the context's
/// user pointer.
final class ServerEngine: @unchecked Sendable {
  // NB: @unchecked because the mutable properties below are touched only on the service
  // thread (after `init`); the cross-thread parts are `queues`, `control` and `finished`.
  private(set) var port = 0
  let queues: OutboundQueues
  /// How often the keepalive wheel turns: pings go out in batches a tenth of a second apart.
  static let keepaliveTicksPerSecond: UInt32 = 10
  /// How many turns of the keepalive wheel a ping may wait for a frame to go out behind
  /// (1.5 s: a meeting's connections are sent a tick every second), and at most a quarter of
  /// the time the peer has to answer it.
  static let pingWaitTurns: UInt32 = 15
  let delegate: any WebSocketServerDelegate
  let configuration: WebSocketServerConfiguration
  let logger: Logger
  let publicRoot: String?
  var context: OpaquePointer?
  let loop: EventLoop
  let protocols: UnsafeMutablePointer<lws_protocols>
  let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
  let vhostOptions: UnsafeMutablePointer<lws_protocol_vhost_options>
  var cStrings: [UnsafeMutablePointer<CChar>] = []

  // Service-thread state.
  var nextID: UInt64 = 1
  var webSockets: [UInt64: WebSocketState] = [:]
  var keepalive: KeepaliveWheel
  var waitingPings: WaitingPings
  /// Keepalive pings that went alone so far (no frame came to carry them in time).
  let pingsAlone = Atomic<Int>(0)
  /// Set by the one-second ticker; the next wake-up sweeps.
  var keepaliveDue = false
  var httpRequests: [UInt64: HTTPRequestState] = [:]
  /// Requests whose body is in, handed to the delegate at the next wake-up (see
  /// `LWS_CALLBACK_HTTP_BODY_COMPLETION`).
  var bodiesIn: [UInt64] = []
  var acceptedUpgrades: [OpaquePointer: (HTTPRequest, (any Sendable)?)] = [:]
  var stopDeadline: ContinuousClock.Instant?
  /// A connection accepted as this descriptor or above is closed at once (`descriptorsKeptFree`).
  let acceptBelow: Int32
  /// Connections closed so for want of descriptors, and when that was last logged.
  var refusedForDescriptors = 0
  var refusalsLogged: ContinuousClock.Instant?

  struct Control {
    var stopRequested: Duration?
    var httpResponses: [UInt64: HTTPResponse] = [:]
    var state: RunState = .notStarted
  }
  enum RunState { case notStarted, running, stopped }
  let control = Mutex(Control())
  let finished = DispatchSemaphore(value: 0)

  final class WebSocketState {
    let wsi: OpaquePointer
    /// Its outbox, and the id (carrying it) the delegate is given.
    let outbox: OutboxCell
    var connection: ConnectionID { ConnectionID(outbox) }
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
    /// The keepalive wants a ping sent: it goes out behind the next frame written, or alone
    /// when `WaitingPings` says its wait is over.
    var pingWanted = false
    /// Closing either way, or gone: it is pinged no more.
    var isClosing: Bool { closeSent || peerClosed || outbox.isClosing }
    init(wsi: OpaquePointer, outbox: OutboxCell) {
      self.wsi = wsi
      self.outbox = outbox
    }
  }

  final class HTTPRequestState {
    let wsi: OpaquePointer
    var request: HTTPRequest
    var bodyTooLarge = false
    /// Handed to the delegate (once: lws may still report a body for a GET).
    var dispatched = false
    /// lws reported the end of the body (a second report is lws looping: see the callback).
    var bodyCompleted = false
    /// When the body must have come by (`bodySeconds` after the head).
    let bodyDeadline: ContinuousClock.Instant
    /// The answer its head already gave (`refusalBeforeTheBody`): its body is not kept.
    var refusal: HTTPResponse?
    init(wsi: OpaquePointer, request: HTTPRequest, bodySeconds: Int) {
      self.wsi = wsi
      self.request = request
      bodyDeadline = .now + .seconds(bodySeconds)
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
    keepalive = KeepaliveWheel(
      pingAfter: configuration.pingAfterSeconds, hangUpAfter: configuration.hangUpAfterSeconds,
      ticksPerSecond: Self.keepaliveTicksPerSecond)
    waitingPings = WaitingPings(
      turns: Int(min(Self.pingWaitTurns, (keepalive.hangUpAfter - keepalive.pingAfter) / 4)))
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
    // NB: a small limit keeps half free at most: connections are what a server is for.
    let descriptors = clws_raise_nofile_limit()
    acceptBelow =
      descriptors > 0
      ? Int32(clamping: max(descriptors - configuration.descriptorsKeptFree, descriptors / 2))
      : .max
    loop = try EventLoop()

    var strings: [UnsafeMutablePointer<CChar>] = []
    // NB: lws keeps pointers to these strings for the context's lifetime.
    func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
      // NB: strdup fails only out of memory, where nothing can go on.
      guard let copy = strdup(string) else { fatalError("Out of memory copying \"\(string)\".") }
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
    protocols[1].name = UnsafePointer(keep(configuration.subprotocol))
    protocols[1].callback = serverCallback
    protocols[1].per_session_data_size = MemoryLayout<UInt64>.size
    protocols[1].rx_buffer_size = 4096
    protocols[1].tx_packet_size = 0
    protocols[1].id = 1

    retryPolicy = .allocate(capacity: 1)
    retryPolicy.initialize(to: lws_retry_bo_t())
    // NB: zero turns lws's own validity timers off (they keep one sorted list of every
    // connection: O(connections) per ping and pong); `KeepaliveWheel` does the job.
    retryPolicy.pointee.secs_since_valid_ping = 0
    retryPolicy.pointee.secs_since_valid_hangup = 0

    vhostOptions = .allocate(capacity: 2)
    let defaultProtocol = vhostOptions
    defaultProtocol.initialize(repeating: lws_protocol_vhost_options(), count: 2)
    // NB: a client that offers no subprotocol would otherwise bind to protocols[0] and its
    // messages would vanish; the "default" option makes the subprotocol its protocol.
    defaultProtocol[1].name = UnsafePointer(keep("default"))
    defaultProtocol[1].value = UnsafePointer(keep(""))
    defaultProtocol[0].name = UnsafePointer(keep(configuration.subprotocol))
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
    info.max_http_header_data = UInt16(clamping: configuration.maxHeaderBytes)
    info.foreign_loops = loop.foreignLoops

    let unmanaged = Unmanaged.passUnretained(self).toOpaque()
    info.user = unmanaged
    guard let context = lws_create_context(&info) else {
      loop.destroy()
      throw WebSocketServerError(description: "libwebsockets could not create its context.")
    }
    self.context = context

    let iface: String
    switch Self.listenAddress(configuration.host, port: configuration.port) {
    case .success(let address): iface = address
    case .failure(let error):
      lws_context_destroy(context)
      loop.destroy()
      for string in strings { free(string) }
      throw error
    }
    var vhostInfo = info
    vhostInfo.port = Int32(configuration.port)
    vhostInfo.iface = UnsafePointer(keep(iface))
    vhostInfo.vhost_name = UnsafePointer(keep("default"))
    vhostInfo.pvo = UnsafePointer(defaultProtocol)
    if iface.contains(":") == false { vhostInfo.options |= CLWS_OPTION_DISABLE_IPV6 }
    if let tls = configuration.tls {
      for path in [tls.certificatePath, tls.privateKeyPath] where access(path, R_OK) != 0 {
        lws_context_destroy(context)
        loop.destroy()
        for string in strings { free(string) }
        throw WebSocketServerError(description: "The TLS file \(path) cannot be read.")
      }
      vhostInfo.ssl_cert_filepath = UnsafePointer(keep(tls.certificatePath))
      vhostInfo.ssl_private_key_filepath = UnsafePointer(keep(tls.privateKeyPath))
      // NB: HTTP/1.1 only. This lws speaks HTTP/2 when a client offers it (browsers do over
      // TLS), and could carry WebSockets in its streams; frames are written here from the
      // service thread's wake-up, straight to the connection, which an HTTP/2 stream's flow
      // control does not allow.
      vhostInfo.alpn = UnsafePointer(keep("http/1.1"))
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

  /// What libwebsockets is to listen on for `host`: an interface's name as it is, else the
  /// numeric address the name resolves to (lws reads names of interfaces and numbers only:
  /// given `localhost` it listens on nothing), checked by binding a socket to it with `port`.
  /// NB: lws, given an address this machine does not have (yet), would log it and listen on
  /// nothing until it appears; here that is an error at start.
  static func listenAddress(_ host: String, port: Int) -> Result<String, WebSocketServerError> {
    func refuse(_ why: String) -> Result<String, WebSocketServerError> {
      .failure(WebSocketServerError(description: "Cannot listen on \(host):\(port): \(why)."))
    }
    if if_nametoindex(host) != 0 { return .success(host) }
    var hints = addrinfo()
    hints.ai_flags = AI_PASSIVE
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var found: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
      return refuse("no address of this machine has that name")
    }
    defer { freeaddrinfo(found) }
    // NB: a name with both (`localhost`) listens on its IPv4 address, as 127.0.0.1 would.
    var address = first
    var next: UnsafeMutablePointer<addrinfo>? = first
    while let candidate = next {
      if candidate.pointee.ai_family == AF_INET {
        address = candidate
        break
      }
      next = candidate.pointee.ai_next
    }
    var numeric = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    guard
      getnameinfo(
        address.pointee.ai_addr, address.pointee.ai_addrlen, &numeric, socklen_t(numeric.count),
        nil, 0, NI_NUMERICHOST) == 0
    else { return refuse("its address cannot be read") }
    let probe = socket(address.pointee.ai_family, address.pointee.ai_socktype, 0)
    guard probe >= 0 else { return refuse(String(cString: strerror(errno))) }
    defer { close(probe) }
    var yes: Int32 = 1
    setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    guard bind(probe, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
      return refuse(
        errno == EADDRINUSE
          ? "the address is in use"
          : "\(String(cString: strerror(errno))) (not an address of this machine?)")
    }
    return .success(String(nulTerminated: numeric))
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

  func serviceLoop() {
    // NB: Foundation's `Thread.name` does not reach the kernel; this names it for top -H and perf.
    clws_name_thread("lws-service")
    let ticker = clws_ticker_start(
      loop.pointer, UInt64(1000 / Self.keepaliveTicksPerSecond), keepaliveTick,
      Unmanaged.passUnretained(self).toOpaque())
    while control.withLock({ $0.state == .running }) {
      loop.run()
    }
    if let ticker { clws_ticker_stop(ticker) }
    queues.setContext(nil)
    lws_context_destroy(context)
    // NB: a connection lws did not report closed still holds its cell, and its cell it.
    for state in webSockets.values { state.outbox.webSocket = nil }
    loop.destroy()
    context = nil
    finished.signal()
  }
}
