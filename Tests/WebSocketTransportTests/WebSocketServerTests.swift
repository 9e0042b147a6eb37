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
