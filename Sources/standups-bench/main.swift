import WebSocketTransport
import Foundation

final class D: WebSocketServerDelegate {
  func shouldUpgrade(_ request: HTTPRequest) -> UpgradeDecision { print("upgrade?", request.path); return .accept(context: nil) }
  func webSocketOpened(_ connection: ConnectionID, request: HTTPRequest, context: (any Sendable)?) { print("opened") }
  func webSocket(_ connection: ConnectionID, received message: InboundMessage) { print("recv", message) }
  func webSocketClosed(_ connection: ConnectionID) { print("closed") }
  func handleHTTP(_ request: HTTPRequest, respond: HTTPResponder) { respond(HTTPResponse(status: 200, text: "ok")) }
}
var c = WebSocketServerConfiguration(); c.port = 0
let server = try WebSocketServer(configuration: c, delegate: D())
print("port", server.port); fflush(nil)
let client = try WebSocketClient()
print("client made"); fflush(nil)
let conn = try await client.connect(port: server.port, path: "/ws/x?name=a")
print("connected"); fflush(nil)
conn.send(text: "hi")
for await e in conn.events { print(e); break }
server.shutdown(); print("server down"); client.shutdown(); print("client down")
