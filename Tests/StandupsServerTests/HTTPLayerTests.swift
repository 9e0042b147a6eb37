import Fixtures
import Foundation
import StandupsFeatures
import StandupsServer
import Testing

/// The HTTP layer with raw sockets: pipelining, bodies, refusals. Each case once hung the
/// whole HTTP side of the server (or answered what strict clients cannot read).
@Suite(.serialized)
struct HTTPLayerTests {
  /// Writes `request` and reads everything until the server closes or `timeout` passes.
  func raw(_ port: Int, _ request: String, timeout: Duration = .seconds(3)) throws -> String {
    let fd = try connectedSocket(port: port, sending: request)
    defer { close(fd) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 50) > 0 else { continue }
      let count = read(fd, &buffer, buffer.count)
      if count <= 0 { break }
      response += buffer.prefix(count)
    }
    return String(decoding: response, as: UTF8.self)
  }

  func statuses(_ response: String) -> [Int] {
    response.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
  }

  /// The server still answers a fresh request at once (within `raw`'s deadline: a server
  /// that stopped fails the test instead of hanging it).
  func stillServes(_ port: Int) throws -> Bool {
    let request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    return statuses(try raw(port, request)) == [200]
  }

  /// Sends `requests` in one write, then checks that they were answered `expected`, in order,
  /// that an answer says `text`, and that the server still answers a new connection.
  func expectAnswers(
    _ server: TestServer, to requests: String, _ expected: [Int], saying text: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let response = try raw(server.port, requests)
    #expect(statuses(response) == expected, sourceLocation: sourceLocation)
    if let text { #expect(response.contains(text), sourceLocation: sourceLocation) }
    #expect(try stillServes(server.port), sourceLocation: sourceLocation)
  }

  /// A body declared larger than any request may be is refused at once, before a byte of it
  /// is read (the server would otherwise read it all, to drop it), and the connection closed.
  @Test func aBodyDeclaredTooLargeIsRefusedBeforeItIsRead() async throws {
    let server = try await TestServer.start()
    try expectAnswers(
      server,
      to: "POST /api/rooms/\(Standup.design.id.uuidString)/actions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Length: 10000000000\r\n\r\n{\"type\":",
      [413], saying: "The request body is larger than")
    await server.stop()
  }

  @Test func aRequestPipelinedAfterABodyIsAnswered() async throws {
    let server = try await TestServer.start()
    // The POST is refused (no token), the GET answered: both, in order.
    try expectAnswers(
      server,
      to: "POST /api/standups HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"
        + "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      [401, 200])
    await server.stop()
  }

  /// Found by the HTTP fuzzer: lws 4.1.6 fed a request pipelined behind another its own head
  /// as its body, then looped on it for ever, and one client stopped the whole server. Such
  /// a request is refused, and the connection closed.
  @Test func aBodyPipelinedBehindAnotherRequestIsRefusedAndTheServerGoesOn() async throws {
    let server = try await TestServer.start()
    let head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    try expectAnswers(
      server,
      to: head + "POST /api/standups HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}",
      [200, 400], saying: "pipelined")
    // A GET that declares a body it never sends, behind another: the fuzzer's case.
    try expectAnswers(
      server, to: head + "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n",
      [200, 400])
    await server.stop()
  }

  /// A body on a request for a file, pipelined behind another (a 404 here): lws answers at
  /// once and loops on the body without calling back, so the body is refused before lws
  /// reads it.
  @Test func aBodyOnAFileRequestIsRefusedAndTheServerGoesOn() async throws {
    let server = try await TestServer.start()
    let missing = "GET /missing.css HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    try expectAnswers(
      server, to: missing + "\r\n" + missing + "Content-Length: 2\r\n\r\n", [404, 400],
      saying: "without a body")
    await server.stop()
  }

  /// A POST to a path that is neither the application's nor a file's, pipelined with its body
  /// (found by the fuzzer): refused with 405 before the body is read, and the node goes on.
  @Test func aPostWithABodyToAFilePathIsRefusedAndTheServerGoesOn() async throws {
    let server = try await TestServer.start()
    try expectAnswers(
      server,
      to: "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
        + "POST /ati/x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}",
      [200, 405], saying: "Only GET and HEAD are served at /ati/x.")
    await server.stop()
  }

  /// Requests for files pipelined on one connection are each answered, in order: a file, the
  /// head of another (its length, no body), a missing one, then an application path.
  @Test func filesPipelinedOnOneConnectionAreEachAnswered() async throws {
    let server = try await TestServer.start {
      $0.publicDirectory = FileManager.default.currentDirectoryPath + "/public"
    }
    let css = try String(contentsOfFile: "public/app.css", encoding: .utf8)
    let response = try raw(
      server.port,
      ["GET /", "HEAD /app.css", "GET /missing.css"]
        .map { "\($0) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }.joined()
        + "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    #expect(statuses(response) == [200, 200, 404, 200])
    #expect(response.contains("<!doctype html>"))
    #expect(response.contains("content-length: \(css.utf8.count)\r\n"))
    #expect(!response.contains(String(css.prefix(40))))
    #expect(response.hasSuffix("ok"))
    await server.stop()
  }

  /// A file comes with a tag of its version; asked again with that tag, the answer is a 304
  /// without a body; asked with another, the file again.
  @Test func aFileTheBrowserHasIsNotSentAgain() async throws {
    let server = try await TestServer.start {
      $0.publicDirectory = FileManager.default.currentDirectoryPath + "/public"
    }
    func get(_ headers: String = "") throws -> String {
      try raw(
        server.port,
        "GET /app.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)Connection: close\r\n\r\n")
    }
    let first = try get()
    #expect(parseHTTP(first).headers["cache-control"] == "no-cache")
    let tag = try #require(
      first.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("etag: ") }?
        .dropFirst("etag: ".count))
    let again = try get("If-None-Match: \(tag)\r\n")
    #expect(statuses(again) == [304])
    #expect(again.hasSuffix("\r\n\r\n"))
    // It announces the length the file has, as the 200 did.
    #expect(
      parseHTTP(again).headers["content-length"] == parseHTTP(first).headers["content-length"])
    for list in ["W/\"0-0\", \(tag)", "W/\(tag)", "*"] {
      #expect(statuses(try get("If-None-Match: \(list)\r\n")) == [304], "\(list)")
    }
    let changed = try get("If-None-Match: \"0-0\"\r\n")
    #expect(statuses(changed) == [200])
    #expect(changed.hasSuffix(try String(contentsOfFile: "public/app.css", encoding: .utf8)))
    await server.stop()
  }

  /// HEAD of an application path says the body's length and sends none (one sent would be
  /// read as the next answer); the probes answer GET and HEAD only.
  @Test func headOfAnApplicationPathSendsNoBodyAndProbesRefuseOtherMethods() async throws {
    let server = try await TestServer.start()
    let response = try raw(
      server.port,
      "HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
        + "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    #expect(statuses(response) == [200, 200])
    #expect(response.components(separatedBy: "content-length: 2\r\n").count == 3)
    #expect(response.components(separatedBy: "\r\n\r\nok").count == 2)
    #expect(response.hasSuffix("\r\n\r\nok"))
    for path in ["/healthz", "/metrics"] {
      let answer = try httpResponse(port: server.port, "DELETE", path)
      #expect(answer.status == 405)
      #expect(answer.headers["allow"] == "GET, HEAD")
      #expect(answer.body.contains("DELETE is not allowed on \(path)."))
    }
    #expect(try httpResponse(port: server.port, "HEAD", "/metrics").status == 200)
    await server.stop()
  }

  /// A request no credential lets in keeps nothing of its body: it is read past, and the
  /// refusal then arrives whole, however large the body (no reset on unread bytes).
  @Test func aRequestNoCredentialLetsInIsRefusedWholeWithItsBodyReadPast() async throws {
    let server = try await TestServer.start()
    let body = #"{"title":""# + String(repeating: "x", count: 60_000) + #""}"#
    for authorization in ["", "Authorization: Bearer not-a-bot-token-at-all\r\n"] {
      let response = try raw(
        server.port,
        "POST /api/standups HTTP/1.1\r\nHost: a\r\n\(authorization)Content-Type: application/json\r\n"
          + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
      #expect(statuses(response) == [401], "\(authorization)")
      #expect(response.hasSuffix(#""type":"error"}"#), "\(authorization)")
    }
    await server.stop()
  }

  /// Every metric says what it counts (a `# HELP` line right before its `# TYPE`), and
  /// nothing else of swift-prometheus' text changes.
  @Test func everyMetricSaysWhatItCounts() async throws {
    let server = try await TestServer.start()
    let lines = try httpResponse(port: server.port, "GET", "/metrics").body
      .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let types = lines.indices.filter { lines[$0].hasPrefix("# TYPE ") }
    #expect(types.count >= 8)
    for index in types {
      let name = lines[index].split(separator: " ")[2]
      #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) "), "\(name)")
      #expect(lines[index - 1].count > "# HELP \(name) ".count + 10, "\(name)")
    }
    #expect(lines.filter { $0.hasPrefix("# HELP ") }.count == types.count)
    #expect(lines.contains("# HELP standups_connections WebSockets open now."))
    #expect(lines.last == "")
    #expect(lines.dropLast().allSatisfy { !$0.isEmpty })
    await server.stop()
  }

  /// A length that is no number of bytes ("-1" would be 2^64 - 1 to lws, read for ever) is
  /// refused, on any path; so is a HEAD's body, and the 404 of a HEAD has none.
  @Test func aLengthThatIsNoNumberIsRefusedAndAHeadGetsNoBody() async throws {
    let server = try await TestServer.start()
    let head = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
    for (path, length) in [("/healthz", "-1"), ("/missing.css", "-1"), ("/api/standups", "2x")] {
      try expectAnswers(
        server, to: head + "GET \(path) HTTP/1.1\r\nHost: a\r\nContent-Length: \(length)\r\n\r\n",
        [200, 400], saying: "Content-Length must be a whole number of bytes.")
    }
    let response = try raw(
      server.port,
      "HEAD /missing.css HTTP/1.1\r\nHost: a\r\n\r\n"
        + "GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    #expect(statuses(response) == [404, 200])
    #expect(!response.contains("Not found"))
    #expect(response.hasSuffix("\r\n\r\nok"))
    // CONNECT is no GET: no file for it (lws 4.1.6 leaves it unanswered: it never reaches us).
    let connect = try raw(
      server.port, "CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n", timeout: .milliseconds(500))
    #expect(!connect.contains("200 OK"))
    #expect(try stillServes(server.port))
    await server.stop()
  }

  /// A file too large to hand out from memory is said to be, not read.
  @Test func aFileTooLargeToHandOutIsSaidSo() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("large-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let large = folder.appendingPathComponent("movie.webm").path
    #expect(FileManager.default.createFile(atPath: large, contents: nil))
    #expect(truncate(large, 9 << 20) == 0)
    let server = try await TestServer.start { $0.publicDirectory = folder.path }
    let answer = try httpResponse(port: server.port, "GET", "/movie.webm")
    #expect(answer.status == 500)
    #expect(
      answer.body
        == "/movie.webm is larger than the 8 MiB this server hands out: serve it from elsewhere.")
    await server.stop()
  }

  /// A body pipelined behind a file that was served.
  @Test func aBodyPipelinedBehindAServedFileIsRefusedAndTheServerGoesOn() async throws {
    let server = try await TestServer.start {
      $0.publicDirectory = FileManager.default.currentDirectoryPath + "/public"
    }
    try expectAnswers(
      server,
      to: "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        + "POST /api/standups HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}",
      [200, 400], saying: "pipelined")
    await server.stop()
  }

  /// The same requests one after the other on one connection (keep-alive, as a bot's HTTP
  /// session does) are answered as ever.
  @Test func aBodySentAfterTheLastAnswerOnTheSameConnectionIsRead() async throws {
    let server = try await TestServer.start()
    let fd = try connectedSocket(
      port: server.port, sending: "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    defer { close(fd) }
    func read(until ending: String) -> String {
      var text = ""
      var buffer = [UInt8](repeating: 0, count: 65536)
      let deadline = ContinuousClock.now + .seconds(3)
      while !text.contains(ending), ContinuousClock.now < deadline {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 50) > 0 else { continue }
        let count = Glibc.read(fd, &buffer, buffer.count)
        if count <= 0 { break }
        text += String(decoding: buffer.prefix(count), as: UTF8.self)
      }
      return text
    }
    #expect(statuses(read(until: "\r\n\r\nok")) == [200])
    let post = Array(
      "POST /api/standups HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}".utf8)
    _ = post.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    // Refused for want of a token: read, answered, not taken for a pipelined body.
    #expect(statuses(read(until: "\r\n\r\n")) == [401])
    #expect(try stillServes(server.port))
    await server.stop()
  }

  @Test func bytesPastTheContentLengthAreTheNextRequest() async throws {
    let server = try await TestServer.start()
    let response = try raw(
      server.port,
      "POST /api/standups HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}garbage that is no request\r\n\r\n"
    )
    #expect(statuses(response).first == 401)
    #expect(try stillServes(server.port))
    await server.stop()
  }

  @Test func aChunkedBodyIsRefusedAtOnce() async throws {
    let server = try await TestServer.start()
    try expectAnswers(
      server,
      to: "POST /api/rooms/\(Standup.design.id.uuidString)/actions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Authorization: Bearer ci-secret-0001\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      [411], saying: "Chunked bodies are not read here: send the body with a Content-Length.")
    await server.stop()
  }

  /// A POST with no length (`curl -X POST` with no `--data`) is told it needs a body, not that
  /// chunked bodies are not read.
  @Test func aBodyWithoutALengthIsRefusedAtOnce() async throws {
    let server = try await TestServer.start()
    try expectAnswers(
      server, to: "POST /api/standups HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n{}", [411],
      saying: "A POST needs a body, sent with a Content-Length (none was given).")
    await server.stop()
  }

  @Test func aGETWithABodyIsAnsweredOnce() async throws {
    let server = try await TestServer.start()
    try expectAnswers(
      server,
      to: "GET /api/rooms/\(Standup.design.id.uuidString) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Authorization: Bearer ci-secret-0001\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
      [200])
    await server.stop()
  }

  @Test func aPlainGETOfAWebSocketPathAsksForTheUpgrade() async throws {
    let server = try await TestServer.start()
    let answer = try httpResponse(port: server.port, "GET", "/ws/lobby")
    // NB: lws leaves this status's reason phrase empty; the shim writes it.
    #expect(answer.statusLine == "HTTP/1.1 426 Upgrade Required")
    #expect(answer.headers["upgrade"]?.lowercased() == "websocket")
    #expect(answer.body.contains("WebSocket"))
    await server.stop()
  }

  /// A WebSocket handshake is a GET (RFC 6455 4.1): one sent with another method is refused
  /// with 405, not upgraded, whatever credential it carries.
  @Test func anUpgradeThatIsNotAGETIsRefused() async throws {
    let server = try await TestServer.start()
    let post = upgradeRequest("/ws/lobby?name=Ana").replacingOccurrences(
      of: "GET /", with: "POST /")
    let refused = parseHTTP(try exchange(port: server.port, post))
    #expect(refused.status == 405)
    #expect(refused.headers["allow"] == "GET")
    #expect(refused.body.contains("A WebSocket upgrade is a GET request."))
    #expect(try stillServes(server.port))
    await server.stop()
  }

  @Test func aFullServerSaysWhenToComeBack() async throws {
    let server = try await TestServer.start { $0.limits.maxConnections = 1 }
    let ana = try await server.room(name: "Ana")
    let refused = parseHTTP(try exchange(port: server.port, upgradeRequest("/ws/lobby?name=Ben")))
    #expect(refused.status == 503)
    #expect(refused.headers["retry-after"].flatMap(Int.init) != nil)
    ana.close()
    await server.stop()
  }

  @Test func aLargeCookieHeaderStillFits() async throws {
    let server = try await TestServer.start()
    let cookies = (0..<60).map { "c\($0)=\(String(repeating: "x", count: 100))" }.joined(
      separator: "; ")
    let answer = try httpResponse(
      port: server.port, "GET", "/healthz", headers: ["Cookie": cookies])
    #expect(answer.status == 200)
    await server.stop()
  }
}
