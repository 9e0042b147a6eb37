import Foundation

/// A TCP client that speaks just enough HTTP to upgrade, then does what a test needs
/// (stop reading, for one).
final class RawSocket {
  let fd: Int32

  init(port: Int) throws {
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    // A small receive buffer so a stalled reader backs up quickly.
    var size: Int32 = 4096
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
  }

  deinit { close(fd) }

  func write(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
  }

  /// Reads until the end of the HTTP response head; returns it.
  func readHead() -> String {
    var head: [UInt8] = []
    var byte: UInt8 = 0
    while read(fd, &byte, 1) == 1 {
      head.append(byte)
      if head.suffix(4) == Array("\r\n\r\n".utf8) { break }
    }
    return String(decoding: head, as: UTF8.self)
  }

  /// Sends an HTTP request and returns the whole response (the server closes or completes).
  func request(_ text: String) -> String {
    write(text)
    let head = readHead()
    guard let lengthLine = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
      let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
    else { return head }
    var body = [UInt8](repeating: 0, count: length)
    var got = 0
    while got < length {
      let count = body.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, length - got) }
      if count <= 0 { break }
      got += count
    }
    return head + String(decoding: body.prefix(got), as: UTF8.self)
  }

  static func upgrade(_ path: String) -> String {
    "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
  }
}
