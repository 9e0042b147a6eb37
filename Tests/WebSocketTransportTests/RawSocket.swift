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
    guard
      let lengthLine = head.split(separator: "\r\n").first(where: {
        $0.lowercased().hasPrefix("content-length:")
      }),
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

  /// Sends one final frame, masked as a client must.
  func writeFrame(opcode: UInt8, payload: [UInt8]) {
    precondition(payload.count < 126, "short frames only")
    let mask: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]
    var frame: [UInt8] = [0x80 | opcode, 0x80 | UInt8(payload.count)] + mask
    frame += payload.enumerated().map { $1 ^ mask[$0 % 4] }
    _ = frame.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
  }

  func writeFrame(text: String) { writeFrame(opcode: 1, payload: Array(text.utf8)) }

  /// Reads one whole unmasked frame from the server (nil at the end of the stream).
  func readFrame() -> (opcode: UInt8, payload: [UInt8])? {
    guard let head = readExactly(2) else { return nil }
    var length = Int(head[1] & 0x7f)
    if length == 126 {
      guard let extended = readExactly(2) else { return nil }
      length = Int(extended[0]) << 8 | Int(extended[1])
    } else if length == 127 {
      guard let extended = readExactly(8) else { return nil }
      length = extended.reduce(0) { $0 << 8 | Int($1) }
    }
    guard let payload = readExactly(length) else { return nil }
    return (head[0] & 0x0f, payload)
  }

  private func readExactly(_ count: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    var got = 0
    while got < count {
      let result = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, count - got) }
      if result <= 0 { return nil }
      got += result
    }
    return bytes
  }

  /// How the stream ended: `.end` for an orderly close (FIN), `.reset` for a reset, or
  /// `.bytes` if the server sent something more first.
  enum Ending: Equatable {
    case end, reset
    case bytes(Int)
  }

  func readToEnd() -> Ending {
    var buffer = [UInt8](repeating: 0, count: 4096)
    var total = 0
    while true {
      let result = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if result > 0 {
        total += result
      } else if result == 0 {
        return total > 0 ? .bytes(total) : .end
      } else {
        return errno == ECONNRESET ? .reset : .bytes(total)
      }
    }
  }

  /// Whether anything (data, or the end of the stream) arrives within `milliseconds`.
  func becomesReadable(within milliseconds: Int32) -> Bool {
    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&descriptor, 1, milliseconds) > 0
  }

  static func upgrade(_ path: String) -> String {
    "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
  }
}
