import Foundation
import Testing
import WebSocketTransport

@Suite("TLS", .serialized)
struct TLSTests {
  /// A self-signed certificate made with the openssl command line, for 127.0.0.1.
  static func makeCertificate() throws -> (certificate: String, key: String) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let certificate = folder.appendingPathComponent("cert.pem").path
    let key = folder.appendingPathComponent("key.pem").path
    let openssl = Process()
    openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    openssl.arguments = [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
      "-keyout", key, "-out", certificate,
    ]
    openssl.standardError = FileHandle.nullDevice
    openssl.standardOutput = FileHandle.nullDevice
    try openssl.run()
    openssl.waitUntilExit()
    return (certificate, key)
  }

  @Test func servesWebSocketsOverTLSOnTheSamePort() async throws {
    let (certificate, key) = try Self.makeCertificate()
    let (server, _) = try startEchoServer { $0.tls = (certificate, key) }
    defer { server.shutdown() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let connection = try await client.connect(
      port: server.port, path: "/ws?name=tls", tls: true, verifyCertificate: false)
    connection.send(text: "over tls")
    #expect(await connection.events.nextText() == "over tls")
  }

  /// Browsers offer HTTP/2 over TLS; the server takes HTTP/1.1, whose WebSockets it writes to
  /// directly (an HTTP/2 stream's would need its flow control).
  @Test func tlsAgreesOnHTTP1EvenWhenTheClientOffersHTTP2() async throws {
    let (certificate, key) = try Self.makeCertificate()
    let (server, _) = try startEchoServer { $0.tls = (certificate, key) }
    defer { server.shutdown() }
    let openssl = Process()
    openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    openssl.arguments = [
      "s_client", "-connect", "127.0.0.1:\(server.port)", "-alpn", "h2,http/1.1",
    ]
    let output = Pipe()
    openssl.standardOutput = output
    openssl.standardError = output
    openssl.standardInput = FileHandle.nullDevice
    try openssl.run()
    let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    openssl.waitUntilExit()
    #expect(said.contains("ALPN protocol: http/1.1"), "\(said)")
  }

  @Test func theClientVerifiesCertificatesUnlessToldNotTo() async throws {
    let (certificate, key) = try Self.makeCertificate()
    let (server, _) = try startEchoServer { $0.tls = (certificate, key) }
    defer { server.shutdown() }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    await #expect(throws: WebSocketConnectError.self) {
      _ = try await client.connect(port: server.port, path: "/ws?name=tls", tls: true)
    }
  }

  @Test func anUnreadableCertificateIsAClearError() throws {
    #expect {
      _ = try startEchoServer { $0.tls = ("/nonexistent/cert.pem", "/nonexistent/key.pem") }
    } throws: { error in
      "\(error)".contains("/nonexistent/cert.pem")
    }
  }
}
