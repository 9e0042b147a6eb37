import Foundation

/// Names and addresses as a browser sends them, to compare with what the server was given.
extension Gatekeeper {
  /// Whether `host` is `localhost` or a loopback address (127.0.0.0/8, ::1).
  public static func isLoopback(_ host: String) -> Bool {
    if host == "localhost" { return true }
    var v4 = in_addr()
    if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
    var v6 = [UInt8](repeating: 0, count: 16)
    return inet_pton(AF_INET6, host, &v6) == 1 && v6 == [UInt8](repeating: 0, count: 15) + [1]
  }

  /// The origin (`scheme://host[:port]`) of a URL, as `normalizedOrigin` writes it.
  static func origin(of url: String) -> String? {
    guard let components = URLComponents(string: url), let scheme = components.scheme,
      let host = components.encodedHost
    else { return nil }
    return normalizedOrigin("\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? ""))
  }

  /// An origin as a browser sends it, to compare: in lower case, an international host name
  /// in its ASCII form (`xn--…`), without a scheme's default port (`:443` for https) or a
  /// trailing slash. So `https://Intranet.example:443/` is `https://intranet.example`.
  static func normalizedOrigin(_ origin: String) -> String {
    var origin = origin.trimmingCharacters(in: .whitespaces)
    while origin.hasSuffix("/") { origin.removeLast() }
    guard let parts = URLComponents(string: origin), let scheme = parts.scheme?.lowercased(),
      let host = parts.encodedHost?.lowercased(), !host.isEmpty
    else { return origin.lowercased() }
    let defaultPort = ["http": 80, "ws": 80, "https": 443, "wss": 443][scheme]
    let port = parts.port.flatMap { $0 == defaultPort ? nil : ":\($0)" } ?? ""
    return "\(scheme)://\(host)\(port)"
  }
}
