// Any bytes on a new connection to the HTTP server (requests, pipelined requests, bodies,
// upgrades and the WebSocket frames after them), then the end of the client's side. The
// server must finish with the connection — answer, refuse or close — within a few seconds,
// never hang or spin on it, and afterwards still answer `GET /healthz` on a new connection.
// The server is the transport (`WebSocketTransport`, libwebsockets and its Swift side) with a
// small application: its answers come from another thread, as a room's do. Built by
// `make fuzz` (STANDUPS_FUZZ=1 in Package.swift).
import Foundation
import FuzzDriver
import Synchronization
import WebSocketTransport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let port = server.port
  let connection = Connection(port: port)
  connection.send(UnsafeRawBufferPointer(start: data, count: size))
  connection.endWriting()
  guard connection.readUntilClosed() != nil else {
    fatalError("The server kept a connection open \(Connection.timeoutSeconds) s after its end")
  }
  let check = Connection(port: port)
  check.send(Array("GET /healthz HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n".utf8))
  check.endWriting()
  guard let answer = check.readUntilClosed(), answer.starts(with: Array("HTTP/1.1 200".utf8))
  else {
    fatalError("The server no longer answers /healthz after that input")
  }
  return 0
}

/// Answers the application paths from another thread, and echoes WebSocket messages.
final class Application: WebSocketServerDelegate {
  let server = Mutex<WebSocketServer?>(nil)

  func shouldUpgrade(_ request: HTTPRequest) -> UpgradeDecision {
    request.path == "/refuse" ? .refuse(HTTPResponse(status: 401, text: "No.")) : .accept()
  }

  func webSocketOpened(_ connection: ConnectionID, request: HTTPRequest, context: (any Sendable)?) {
  }

  func webSocket(_ connection: ConnectionID, received message: InboundMessage) {
    let bytes: [UInt8]
    switch message {
    case .text(let text): bytes = text
    case .binary(let binary): bytes = binary
    case .tooLarge: bytes = Array("too large".utf8)
    }
    server.withLock { $0?.send(OutboundMessage(bytes), to: connection) }
  }

  func webSocketClosed(_ connection: ConnectionID) {}

  func handleHTTP(_ request: HTTPRequest, respond: HTTPResponder) {
    DispatchQueue.global().async {
      respond(.json(Array("{\"path\":\(request.path.count),\"body\":\(request.body.count)}".utf8)))
    }
  }
}

private let server: WebSocketServer = {
  let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
    "http-fuzz-\(getpid())")
  try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  try? Data("<!doctype html><title>fuzz</title>".utf8).write(
    to: folder.appendingPathComponent("index.html"))
  var configuration = WebSocketServerConfiguration()
  configuration.port = 0
  configuration.publicDirectory = folder.path
  configuration.maxHeaderBytes = 4096
  configuration.maxMessageBytes = 4096
  let application = Application()
  do {
    let server = try WebSocketServer(configuration: configuration, delegate: application)
    application.server.withLock { $0 = server }
    return server
  } catch {
    fatalError("The server does not start: \(error)")
  }
}()

/// A blocking TCP connection to the server, with a deadline on every read.
final class Connection {
  /// Longer than libwebsockets' own limit for a request that never completes (5 s): some
  /// inputs are held that long after the client's end (a request line with NULs), and only
  /// what outlasts it is a hang.
  static let timeoutSeconds = 10
  let fd: Int32

  init(port: Int) {
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var timeout = timeval(tv_sec: Self.timeoutSeconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connect = {
      withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.connect(self.fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    // NB: libFuzzer's timer (SIGALRM, every second) interrupts calls: a connect it interrupts
    // goes on in the background, and is done once the socket is writable.
    var connected = connect()
    while connected != 0, errno == EINTR || errno == EALREADY {
      var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
      _ = poll(&ready, 1, 1000)
      connected = connect()
      if connected != 0, errno == EISCONN { connected = 0 }
    }
    precondition(connected == 0, "Cannot connect to the server: errno \(errno)")
  }

  deinit { close(fd) }

  /// Sends what it can; the server may close before taking it all (a refusal).
  func send(_ bytes: some ContiguousBytes) {
    bytes.withUnsafeBytes { buffer in
      guard let start = buffer.baseAddress else { return }
      var sent = 0
      while sent < buffer.count {
        let count = Glibc.send(fd, start + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
        if count < 0, errno == EINTR { continue }
        if count <= 0 { return }
        sent += count
      }
    }
  }

  func endWriting() { shutdown(fd, Int32(SHUT_WR)) }

  /// Everything the server sent until it closed; nil if it was still open at the deadline.
  func readUntilClosed() -> [UInt8]? {
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count > 0 {
        received += buffer[0..<count]
      } else if count == 0 || errno == ECONNRESET {
        return received
      } else if errno == EINTR {
        continue
      } else {
        return nil
      }
    }
  }
}

@_cdecl("http_fuzz_main")
public func fuzzMain(
  _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
  FuzzDriver.run(argc, argv, fuzz)
}
