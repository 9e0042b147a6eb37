import Fixtures
import Foundation
import Synchronization
import Testing
import WebSocketTransport

@Suite("WebSocket server over loopback")
struct WebSocketServerTests {
  @Test func echoesTextAndPassesQueryToTheApplication() async throws {
    let (server, delegate) = try startEchoServer()
    defer { server.shutdown() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let connection = try await client.connect(port: server.port, path: "/ws/rooms/abc?name=Ana%20B")
    connection.send(text: #"{"hello":"world"}"#)
    #expect(await connection.events.nextText() == #"{"hello":"world"}"#)
    #expect(delegate.events.withLock { $0 } == ["open /ws/rooms/abc Ana B"])
  }
}

@Suite("WebSocket server behaviour", .serialized)
struct WebSocketServerBehaviourTests {
  @Test func servesStaticFilesWithTypesAndNeverOutsideTheFolder() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("public-\(UUID())")
    try FileManager.default.createDirectory(
      at: folder.appendingPathComponent("js"), withIntermediateDirectories: true)
    try "<h1>hi</h1>".write(
      to: folder.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
    try "export {}".write(
      to: folder.appendingPathComponent("js/app.mjs"), atomically: true, encoding: .utf8)
    try "TOP-SECRET-CONTENT".write(
      to: folder.appendingPathComponent("../secret-\(folder.lastPathComponent).txt"),
      atomically: true, encoding: .utf8)
    let (server, _) = try startEchoServer { $0.publicDirectory = folder.path }
    defer { server.shutdown() }
    func get(_ path: String) throws -> String {
      try RawSocket(port: server.port).request(
        "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    }
    let index = try get("/")
    #expect(index.hasPrefix("HTTP/1.1 200"))
    #expect(index.lowercased().contains("content-type: text/html"))
    #expect(index.hasSuffix("<h1>hi</h1>"))
    #expect(try get("/js/app.mjs").lowercased().contains("content-type: text/javascript"))
    #expect(try get("/missing.css").hasPrefix("HTTP/1.1 404"))
    for escape in ["/../secret-", "/%2e%2e/secret-", "/js/../../secret-", "/..%2fsecret-"] {
      let response = try get(escape + folder.lastPathComponent + ".txt")
      #expect(!response.contains("TOP-SECRET-CONTENT"), "\(escape)")
      #expect(!response.hasPrefix("HTTP/1.1 200"), "\(escape)")
    }
    let health = try get("/healthz")
    #expect(health.hasPrefix("HTTP/1.1 200"))
    #expect(health.hasSuffix("ok GET 0"))
  }

  /// An answer the application takes longer than lws's idle time for a connection (5 s) to
  /// find still reaches the client: the connection is not taken for idle while it waits.
  @Test(.timeLimit(.minutes(1)))
  func anAnswerTheApplicationIsSlowToFindStillArrives() throws {
    let (server, _) = try startEchoServer()
    defer { server.shutdown() }
    for request in [
      "GET /api/slow?ms=7000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      "DELETE /api/slow?ms=7000 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    ] {
      let answer = try RawSocket(port: server.port).request(request)
      #expect(answer.hasPrefix("HTTP/1.1 200"), "\(request): \(answer)")
      #expect(answer.hasSuffix("slow 7000"))
    }
    // Kept alive, the connection serves the next request after a slow answer, and is not
    // closed under it by the time the first one had.
    let socket = try RawSocket(port: server.port)
    let first = socket.request("GET /api/slow?ms=6000 HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(first.hasSuffix("slow 6000"))
    let second = socket.request(
      "GET /api/slow?ms=1000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    #expect(second.hasPrefix("HTTP/1.1 200") && second.hasSuffix("slow 1000"), "\(second)")
  }

  @Test func refusesAnUpgradeWithTheApplicationsStatus() async throws {
    let (server, _) = try startEchoServer()
    defer { server.shutdown() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    await #expect {
      _ = try await client.connect(port: server.port, path: "/refuse")
    } throws: { error in
      (error as? WebSocketConnectError)?.status == 401
    }
  }

  /// A server that takes the connection and never answers its upgrade (frozen, or half-up):
  /// `connect` throws once the handshake's time is up, rather than waiting for ever (a bot
  /// reconnecting to a frozen server hung so).
  @Test(.timeLimit(.minutes(1)))
  func aHandshakeTheServerNeverAnswersFailsAfterItsTime() async throws {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #expect(listener >= 0)
    defer { close(listener) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    #expect(bound == 0)
    #expect(listen(listener, 4) == 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getsockname(listener, $0, &length)
      }
    }
    let port = Int(UInt16(bigEndian: address.sin_port))
    let client = try WebSocketClient(handshakeSeconds: 1)
    defer { client.shutdown() }
    await #expect {
      _ = try await client.connect(port: port, path: "/ws/lobby")
    } throws: { error in
      (error as? WebSocketConnectError)?.status == nil
    }
  }

  @Test func reportsBinaryAndOversizedMessagesAndKeepsTheConnection() async throws {
    let (server, _) = try startEchoServer { $0.maxMessageBytes = 1024 }
    defer { server.shutdown() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let connection = try await client.connect(port: server.port, path: "/ws")
    var events = connection.events.makeAsyncIterator()
    connection.send(OutboundMessage([1, 2, 3], binary: true))
    #expect(await events.next() == .text(Array("binary".utf8)))
    connection.send(text: String(repeating: "y", count: 5000))
    #expect(await events.next() == .text(Array("too large 1024".utf8)))
    connection.send(text: "still here")
    #expect(await events.next() == .text(Array("still here".utf8)))
  }

  /// A request its head refuses gets that refusal once its body is read past (closing on
  /// unread bytes would reset the connection, and the client could lose the answer), never
  /// reaching the application; a body that takes longer than `bodySeconds` is cut off with
  /// 408, however steadily it trickles (lws's own timeout starts again at each byte).
  @Test func aBodyIsReadPastWhenItsHeadRefusesAndCutOffWhenItTakesTooLong() throws {
    let (server, _) = try startEchoServer { $0.bodySeconds = 1 }
    defer { server.shutdown() }
    let body = String(repeating: "b", count: 60_000)
    let refused = try RawSocket(port: server.port).request(
      "POST /api/refused HTTP/1.1\r\nHost: a\r\nContent-Length: 60000\r\n\r\n" + body)
    #expect(refused.hasPrefix("HTTP/1.1 403"))
    #expect(refused.hasSuffix("refused by its head"))
    let read = try RawSocket(port: server.port).request(
      "POST /api/read HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
    #expect(read.hasSuffix("ok POST 5"))
    let slow = try RawSocket(port: server.port)
    slow.write("POST /api/read HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n")
    var sent = 0
    while sent < 30, !slow.becomesReadable(within: 300) {
      slow.write("b")
      sent += 1
    }
    #expect(slow.readHead().hasPrefix("HTTP/1.1 408"))
    #expect(sent >= 3 && sent < 30, "\(sent) bytes")
  }

  /// A connection's id carries its outbox; an id made from the raw value alone finds it, and
  /// an id kept after its connection closed reaches nobody.
  @Test func idsReachTheirConnectionAndAGoneOnesIDReachesNobody() async throws {
    let (server, delegate) = try startEchoServer()
    defer { server.shutdown() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let staying = try await client.connect(port: server.port, path: "/ws")
    try await eventually("the first connection is open") {
      delegate.open.withLock { $0.count } == 1
    }
    let stayingID = try #require(delegate.open.withLock { $0.first })
    let leaving = try await client.connect(port: server.port, path: "/ws")
    try await eventually("both are open") { delegate.open.withLock { $0.count } == 2 }
    let leavingID = try #require(delegate.open.withLock { $0.first { $0 != stayingID } })
    leaving.close()
    try await eventually("the server saw it go") { server.webSocketCount == 1 }
    server.send(OutboundMessage(text: "to the gone one"), to: leavingID)
    server.send(
      OutboundMessage(text: "by raw value"), to: ConnectionID(rawValue: stayingID.rawValue))
    server.send(OutboundMessage(text: "by its id"), to: stayingID)
    var events = staying.events.makeAsyncIterator()
    #expect(await events.next() == .text(Array("by raw value".utf8)))
    #expect(await events.next() == .text(Array("by its id".utf8)))
    #expect(server.webSocketCount == 1)
  }

  @Test func closesWithTheCodeAndReasonAfterWhatWasQueued() async throws {
    let (server, _) = try startEchoServer()
    defer { server.shutdown() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let connection = try await client.connect(port: server.port, path: "/ws")
    var events = connection.events.makeAsyncIterator()
    connection.send(text: "one")
    connection.send(text: "close-me")
    #expect(await events.next() == .text(Array("one".utf8)))
    let closed = await events.next()
    #expect(closed == .closed(code: 4410, reason: "Deleted"), "\(String(describing: closed))")
  }

  /// RFC 6455: an upgrade asking for another version than 13 is answered 426 (4.4), one that
  /// names none 400 (4.2.1), each with the version the server speaks, and no connection
  /// opens; lws alone would upgrade them.
  @Test func anUpgradeForAnotherVersionIsAnswered426WithTheVersionSpoken() async throws {
    let (server, delegate) = try startEchoServer()
    defer { server.shutdown() }
    let thirteen = "Sec-WebSocket-Version: 13\r\n"
    for (version, status) in [
      ("Sec-WebSocket-Version: 99\r\n", 426), ("Sec-WebSocket-Version: 8\r\n", 426), ("", 400),
    ] {
      let socket = try RawSocket(port: server.port)
      socket.write(RawSocket.upgrade("/ws").replacingOccurrences(of: thirteen, with: version))
      let head = socket.readHead()
      #expect(head.hasPrefix("HTTP/1.1 \(status)"), "\(version): \(head)")
      #expect(head.lowercased().contains("sec-websocket-version: 13\r\n"), "\(head)")
    }
    let socket = try RawSocket(port: server.port)
    socket.write(RawSocket.upgrade("/ws"))
    #expect(socket.readHead().hasPrefix("HTTP/1.1 101"))
    func opened() -> Int { delegate.events.withLock { $0.filter { $0.hasPrefix("open ") }.count } }
    while opened() == 0 { await Task.yield() }
    #expect(opened() == 1, "only the version 13 upgrade opens a connection")
  }

  /// RFC 6455 §7.1.1: after its close frame the server reads (and drops) what the peer still
  /// sends until the peer's answering close, and only then closes the TCP connection —
  /// cleanly, with nothing more sent. Hanging up at once would reset the connection over the
  /// unread input, and the peer could lose the close frame.
  @Test func closingWaitsForThePeersAnswerThenEndsCleanly() async throws {
    let (server, delegate) = try startEchoServer()
    defer { server.shutdown() }
    let socket = try RawSocket(port: server.port)
    socket.write(RawSocket.upgrade("/ws"))
    #expect(socket.readHead().hasPrefix("HTTP/1.1 101"))
    socket.writeFrame(text: "close-me")
    for index in 0..<50 { socket.writeFrame(text: "still talking \(index)") }

    let close = try #require(socket.readFrame())
    #expect(close.opcode == 8)
    #expect(Array(close.payload.prefix(2)) == [0x11, 0x3a])  // 4410
    #expect(String(decoding: close.payload.dropFirst(2), as: UTF8.self) == "Deleted")
    // NB: a server that hung up would have its end of the stream here within microseconds.
    #expect(!socket.becomesReadable(within: 300), "the server must wait for the answer")
    #expect(delegate.events.withLock { !$0.contains("closed") })

    socket.writeFrame(opcode: 8, payload: [0x11, 0x3a])
    #expect(socket.readToEnd() == .end, "no second close frame, and no reset")
  }

  @Test func aPeerThatNeverAnswersTheCloseIsDroppedAfterTheWait() async throws {
    let (server, delegate) = try startEchoServer { $0.closeAnswerSeconds = 1 }
    defer { server.shutdown() }
    let socket = try RawSocket(port: server.port)
    socket.write(RawSocket.upgrade("/ws"))
    #expect(socket.readHead().hasPrefix("HTTP/1.1 101"))
    socket.writeFrame(text: "close-me")
    #expect(socket.readFrame()?.opcode == 8)
    // Blocks until the server gives up on the answer (lws checks its timeouts each second).
    #expect(socket.readToEnd() == .end)
    while delegate.events.withLock({ !$0.contains("closed") }) { await Task.yield() }
  }

  @Test func aStalledReaderNeverHoldsUpOthersAndIsDroppedIfItNeverReadsAgain() async throws {
    let (server, delegate) = try startEchoServer { $0.closeAnswerSeconds = 1 }
    defer { server.shutdown() }
    let stalled = try RawSocket(port: server.port)
    stalled.write(RawSocket.upgrade("/ws/stalled"))
    #expect(stalled.readHead().hasPrefix("HTTP/1.1 101"))  // and never reads again
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let reader = try await client.connect(port: server.port, path: "/ws/reader")
    var received = 0
    var rounds = 0
    reader.send(text: "flood")
    for await event in reader.events {
      guard case .text(let bytes) = event else { break }
      guard bytes == Array("round done".utf8) else {
        received += 1
        continue
      }
      rounds += 1
      if rounds == 10 { break }
      reader.send(text: "flood")
    }
    // The reader that keeps up got every frame of every round.
    #expect(received == 200)
    // The stalled connection was cut off (1 s after its close was queued), not waited for.
    let deadline = ContinuousClock.now + .seconds(5)
    while delegate.open.withLock({ $0.count }) > 1 && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(delegate.open.withLock { $0.count } == 1)
  }

  /// A peer that fell behind by more than its outbox cap loses what was queued for it, and
  /// if it reads again in time it finds a 1008 after what the kernel already held.
  @Test func aReaderThatFellBehindFindsA1008WhenItReadsAgain() async throws {
    let (server, _) = try startEchoServer()
    defer { server.shutdown() }
    let stalled = try RawSocket(port: server.port)
    stalled.write(RawSocket.upgrade("/ws/stalled"))
    #expect(stalled.readHead().hasPrefix("HTTP/1.1 101"))
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let flooder = try await client.connect(port: server.port, path: "/ws/flooder")
    var rounds = 0
    flooder.send(text: "flood")
    for await event in flooder.events {
      guard case .text(let bytes) = event else { break }
      guard bytes == Array("round done".utf8) else { continue }
      rounds += 1
      if rounds == 10 { break }  // 6.4 MB: past the 1 MiB cap and every kernel buffer
      flooder.send(text: "flood")
    }
    var frames = 0
    var close: (opcode: UInt8, payload: [UInt8])?
    while let frame = stalled.readFrame() {
      if frame.opcode == 8 {
        close = frame
        break
      }
      frames += 1
    }
    #expect(frames > 0 && frames < 200, "only what was already on its way: \(frames) frames")
    #expect(close.map { Array($0.payload.prefix(2)) } == [0x03, 0xf0])  // 1008
    stalled.writeFrame(opcode: 8, payload: [0x03, 0xf0])
    #expect(stalled.readToEnd() == .end)
  }

  /// The cap is for a backlog: one message bigger than it (a large welcome) is delivered.
  @Test func aSingleMessageOverTheCapIsDelivered() async throws {
    let (server, _) = try startEchoServer()
    defer { server.shutdown() }
    let peer = try RawSocket(port: server.port)
    peer.write(RawSocket.upgrade("/ws/big"))
    #expect(peer.readHead().hasPrefix("HTTP/1.1 101"))
    peer.writeFrame(opcode: 1, payload: Array("big".utf8))
    var received = 0
    while received < 3 * 1024 * 1024, let frame = peer.readFrame() {
      #expect(frame.opcode == 1 || frame.opcode == 0, "opcode \(frame.opcode)")
      received += frame.payload.count
    }
    #expect(received == 3 * 1024 * 1024)
  }

  @Test func shutdownClosesEverySocketWith1001() async throws {
    let (server, _) = try startEchoServer()
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let connection = try await client.connect(port: server.port, path: "/ws")
    server.shutdown()
    var events = connection.events.makeAsyncIterator()
    let closed = await events.next()
    #expect(
      closed == .closed(code: 1001, reason: "Server shutting down"), "\(String(describing: closed))"
    )
  }

  /// An address that is not this machine's (or no address at all) would leave libwebsockets
  /// listening on nothing, waiting for such an interface to appear: it is refused at start.
  @Test(arguments: ["10.99.99.99", "not-a-host.invalid"])
  func anAddressThisMachineDoesNotHaveIsAClearError(_ host: String) throws {
    #expect {
      _ = try startEchoServer { $0.host = host }
    } throws: { error in
      "\(error)".contains("Cannot listen on \(host)")
    }
  }

  /// libwebsockets reads numbers and interfaces' names only: a host name is resolved first.
  @Test func aHostNameListensOnTheAddressItNames() async throws {
    let (server, _) = try startEchoServer { $0.host = "localhost" }
    defer { server.shutdown() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let connection = try await client.connect(port: server.port, path: "/ws")
    connection.send(text: "here")
    #expect(await connection.events.nextText() == "here")
  }

  @Test func anAddressInUseIsAClearError() throws {
    let (server, _) = try startEchoServer()
    defer { server.shutdown() }
    #expect {
      _ = try startEchoServer { $0.port = server.port }
    } throws: { error in
      "\(error)".contains("in use")
    }
  }
}
