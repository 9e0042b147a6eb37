import Dependencies
import Fixtures
import Foundation
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import StandupsServer
import Synchronization
import Testing
import WebSocketTransport

/// A real server on 127.0.0.1, port 0, with standups kept in memory.
struct TestServer {
  let server: StandupsServer
  let client: WebSocketClient
  var port: Int { server.port }

  static func start(
    standups: [Standup] = [.design], storage: StorageClient? = nil, access: AccessStorage? = nil,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    dependencies: (inout DependencyValues) -> Void = { _ in }
  ) async throws -> TestServer {
    var configuration = ServerConfiguration()
    configuration.botTokens = try BotTokens(
      flags: ["CI=ci-secret-0001"], environment: "Standup Bot:bot-secret-0002")
    configuration.port = 0
    // NB: most suites test rooms, not sign-in; AccessTests runs the team mode.
    configuration.access = .open
    configuration.publicDirectory = nil
    configuration.dataDirectory =
      FileManager.default.temporaryDirectory
      .appendingPathComponent("standups-tests-\(UUID())").path
    configure(&configuration)
    let server = try await StandupsServer.start(
      configuration: configuration, storage: storage ?? .inMemory(standups), access: access,
      dependencies: dependencies)
    return TestServer(server: server, client: try WebSocketClient())
  }

  func stop() async {
    client.shutdown()
    await server.shutdown()
  }

  func connect(_ path: String) async throws -> TestClient {
    let client = TestClient()
    client.connection = try await self.client.connect(port: port, path: path) { event in
      client.receive(event)
    }
    return client
  }

  func room(
    _ id: UUID = Standup.design.id, name: String, since: Int? = nil, replaces: String? = nil
  ) async throws -> TestClient {
    let query =
      (since.map { "&since=\($0)" } ?? "") + (replaces.map { "&replaces=\($0)" } ?? "")
    let client = try await connect("/ws/rooms/\(id.uuidString)?name=\(name)\(query)")
    _ = try await client.next { $0["type"] == "welcome" }
    return client
  }
}

/// A WebSocket client that keeps every message it got and rebuilds the state from the
/// welcome and the patches, checking versions as it goes.
final class TestClient: @unchecked Sendable {
  // NB: @unchecked: `connection` is set once right after connecting; the rest is locked.
  var connection: WebSocketClientConnection!
  /// Names this client's frames in the frame log.
  let logID = UUID().uuidString
  private struct Inbox {
    var messages: [JSONValue] = []
    var read = 0
    var closed: (code: Int?, reason: String)?
    var state: JSONValue?
    var version: Int?
    var you: String?
    var key: String?
    var problems: [String] = []
  }
  private let inbox = Mutex(Inbox())

  func receive(_ event: ClientEvent) {
    inbox.withLock { inbox in
      switch event {
      case .closed(let code, let reason):
        inbox.closed = (code, reason)
      case .text(let bytes):
        FrameLog.shared.record(bytes, from: "server", connection: logID)
        guard let message = try? JSONValue(parsing: bytes) else {
          inbox.problems.append("not JSON: \(String(decoding: bytes, as: UTF8.self))")
          return
        }
        inbox.messages.append(message)
        Self.track(message, in: &inbox)
      }
    }
  }

  private static func track(_ message: JSONValue, in inbox: inout Inbox) {
    switch message["type"]?.stringValue {
    case "welcome":
      inbox.version = message["version"]?.intValue
      inbox.you = message["you"]?.stringValue
      inbox.key = message["key"]?.stringValue
      if message["resumed"] != .bool(true) { inbox.state = message["state"] }
    case "patch":
      guard let version = message["version"]?.intValue, let current = inbox.version,
        let state = inbox.state
      else {
        inbox.problems.append("patch before welcome")
        return
      }
      if version != current + 1 { inbox.problems.append("version \(version) after \(current)") }
      do {
        let operations = (message["ops"]?.arrayValue ?? []).compactMap(PatchOperation.init(json:))
        inbox.state = try JSONPatch.apply(operations, to: state)
      } catch {
        inbox.problems.append("patch \(version) does not apply: \(error)")
      }
      inbox.version = version
    default:
      break
    }
  }

  var state: JSONValue? { inbox.withLock { $0.state } }
  var version: Int? { inbox.withLock { $0.version } }
  /// This connection's participant id (its welcome's `you`).
  var you: String? { inbox.withLock { $0.you } }
  /// The secret its welcome gave it, to name it in `?replaces=`.
  var key: String? { inbox.withLock { $0.key } }
  var problems: [String] { inbox.withLock { $0.problems } }
  var closed: (code: Int?, reason: String)? { inbox.withLock { $0.closed } }
  var allMessages: [JSONValue] { inbox.withLock { $0.messages } }

  /// NB: what the tests send is not logged for the contract check: much of it is wrong on
  /// purpose. Every frame the server sends is.
  func send(_ json: JSONValue) { connection.send(text: json.encodedString) }

  func send(raw text: String) { connection.send(text: text) }

  /// Sends an action with a ref; returns the ack or error answering it.
  @discardableResult
  func act(_ type: String, _ fields: [String: JSONValue] = [:], ref: String = UUID().uuidString)
    async throws -> JSONValue
  {
    var action = fields
    action["type"] = .string(type)
    send(["type": "action", "ref": .string(ref), "action": .object(action)])
    return try await next { $0["ref"] == .string(ref) }
  }

  /// The next unread message matching `predicate` (earlier unread ones are skipped).
  func next(
    timeout: Duration = .seconds(5), sourceLocation: SourceLocation = #_sourceLocation,
    where predicate: (JSONValue) -> Bool
  ) async throws -> JSONValue {
    try await poll(timeout, "No matching message within \(timeout).", sourceLocation) {
      inbox.withLock { inbox -> JSONValue? in
        while inbox.read < inbox.messages.count {
          let message = inbox.messages[inbox.read]
          inbox.read += 1
          if predicate(message) { return message }
        }
        return nil
      }
    }
  }

  /// Waits until the rebuilt state satisfies `predicate`.
  func waitForState(
    timeout: Duration = .seconds(5), sourceLocation: SourceLocation = #_sourceLocation,
    _ predicate: (JSONValue) -> Bool
  ) async throws -> JSONValue {
    try await poll(timeout, "The state never matched within \(timeout).", sourceLocation) {
      // NB: not `state.flatMap { predicate($0) ? $0 : nil }`: that nil is JSON's null.
      guard let state, predicate(state) else { return nil }
      return state
    }
  }

  func waitUntilClosed(
    timeout: Duration = .seconds(5), sourceLocation: SourceLocation = #_sourceLocation
  ) async throws -> (code: Int?, reason: String) {
    try await poll(timeout, "Still open after \(timeout).", sourceLocation) { closed }
  }

  /// Checks every 5 ms until `check` has an answer; records `failure` and throws at the end.
  private func poll<T>(
    _ timeout: Duration, _ failure: String, _ sourceLocation: SourceLocation, _ check: () -> T?
  ) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      if let answer = check() { return answer }
      try await Task.sleep(for: .milliseconds(5))
    }
    Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation)
    throw CancellationError()
  }

  func close() { connection.close() }
}

/// Every frame the server sends the test clients, as JSON lines in the file `STANDUPS_FRAMES`
/// names (`make test` sets it): Tests/Contract validates each against docs/asyncapi.yaml.
final class FrameLog: Sendable {
  static let shared = FrameLog()
  private let file: Mutex<FileHandle?>

  private init() {
    let path = ProcessInfo.processInfo.environment["STANDUPS_FRAMES"]
    if let path, FileManager.default.createFile(atPath: path, contents: nil) {
      file = Mutex(FileHandle(forWritingAtPath: path))
    } else {
      file = Mutex(nil)
    }
  }

  func record(_ frame: [UInt8], from direction: String, connection: String) {
    file.withLock { file in
      guard let file, let json = try? JSONValue(parsing: frame) else { return }
      let line = JSONValue.object([
        "direction": .string(direction), "connection": .string(connection), "frame": json,
      ]).encoded
      file.write(Data(line + Array("\n".utf8)))
    }
  }
}

/// Sends a raw HTTP request and returns the status code (for refusals before the upgrade).
func httpStatus(port: Int, _ request: String) throws -> Int {
  let response = try exchange(port: port, request)
  return Int(response.split(separator: " ").dropFirst().first ?? "") ?? 0
}

/// A TCP socket connected to 127.0.0.1:`port` with `request` written to it; the caller
/// closes it.
func connectedSocket(port: Int, sending request: String) throws -> Int32 {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard connected == 0 else {
    close(fd)
    throw POSIXError(.ECONNREFUSED)
  }
  let bytes = Array(request.utf8)
  _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
  return fd
}

/// Writes `request` to a fresh connection and reads until the server closes or a first
/// response has arrived.
func exchange(port: Int, _ request: String) throws -> String {
  let fd = try connectedSocket(port: port, sending: request)
  defer { close(fd) }
  return readResponse(fd)
}

/// Reads from `fd` until the server closes or one whole response has arrived.
func readResponse(_ fd: Int32) -> String {
  var response: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65536)
  while true {
    let count = read(fd, &buffer, buffer.count)
    if count <= 0 { break }
    response += buffer.prefix(count)
    // NB: the server may keep the connection open: stop once one whole response is here.
    if isComplete(response) { break }
  }
  return String(decoding: response, as: UTF8.self)
}

func upgradeRequest(_ path: String) -> String {
  "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
}

/// Whether `response` holds a whole HTTP response (head, and a body of its content-length).
private func isComplete(_ response: [UInt8]) -> Bool {
  let text = String(decoding: response, as: UTF8.self)
  guard let end = text.range(of: "\r\n\r\n") else { return false }
  let head = text[..<end.lowerBound].lowercased()
  guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
    let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
  else { return true }
  return text[end.upperBound...].utf8.count >= length
}

/// One HTTP/1.1 request over a fresh socket; returns the status and the body as JSON (or nil).
func http(
  port: Int, _ method: String, _ path: String, token: String? = nil,
  headers: [String: String] = [:],
  body: String? = nil
) throws -> (status: Int, json: JSONValue?) {
  let response = try httpResponse(
    port: port, method, path, token: token, headers: headers, body: body)
  return (response.status, response.json)
}

/// An HTTP answer with its headers (lower-case names) and body.
struct HTTPAnswer {
  /// "HTTP/1.1 200 OK"
  var statusLine = ""
  var status: Int
  var headers: [String: String]
  var body: String
  var json: JSONValue? { try? JSONValue(parsing: body) }
}

/// One HTTP/1.1 request over a fresh socket, the whole answer read back.
func httpResponse(
  port: Int, _ method: String, _ path: String, token: String? = nil,
  headers: [String: String] = [:],
  body: String? = nil
) throws -> HTTPAnswer {
  var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
  if let token { request += "Authorization: Bearer \(token)\r\n" }
  for (name, value) in headers { request += "\(name): \(value)\r\n" }
  if let body {
    request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
  }
  request += "\r\n" + (body ?? "")
  return parseHTTP(try exchange(port: port, request))
}

func parseHTTP(_ text: String) -> HTTPAnswer {
  let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
  let statusLine = text.range(of: "\r\n").map { String(text[..<$0.lowerBound]) } ?? text
  guard let end = text.range(of: "\r\n\r\n") else {
    return HTTPAnswer(statusLine: statusLine, status: status, headers: [:], body: "")
  }
  var headers: [String: String] = [:]
  for line in text[..<end.lowerBound].split(separator: "\r\n").dropFirst() {
    guard let colon = line.firstIndex(of: ":") else { continue }
    let name = line[..<colon].lowercased()
    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    headers[name] = headers[name].map { $0 + ", " + value } ?? value
  }
  return HTTPAnswer(
    statusLine: statusLine, status: status, headers: headers,
    body: String(text[end.upperBound...]))
}
