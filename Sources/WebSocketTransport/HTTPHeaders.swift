import CLibWebSockets

/// Reads a request's method, query and headers while lws still holds them.
enum HTTPHeaders {
  static func copy(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
    let length = lws_hdr_total_length(wsi, token)
    guard length > 0 else { return nil }
    var buffer = [CChar](repeating: 0, count: Int(length) + 1)
    guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
    return String(nulTerminated: buffer)
  }

  /// A header lws does not parse into a token of its own, by its lower-case name.
  static func custom(_ wsi: OpaquePointer, _ name: String) -> String? {
    let key = Array("\(name):".utf8CString.dropLast())
    let length = lws_hdr_custom_length(wsi, key, Int32(key.count))
    guard length >= 0 else { return nil }
    var buffer = [CChar](repeating: 0, count: Int(length) + 1)
    guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.count)) >= 0
    else { return nil }
    return String(nulTerminated: buffer)
  }

  static func request(_ wsi: OpaquePointer, path: String, extraHeaders: [String] = [])
    -> HTTPRequest
  {
    let methods: [(lws_token_indexes, String)] = [
      (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_HEAD_URI, "HEAD"),
      (WSI_TOKEN_PUT_URI, "PUT"), (WSI_TOKEN_DELETE_URI, "DELETE"),
      (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
      (WSI_TOKEN_CONNECT, "CONNECT"),
    ]
    // NB: these are all the methods this lws parses; anything else never reaches a callback.
    let method =
      methods.first(where: { lws_hdr_total_length(wsi, $0.0) > 0 }).map(\.1) ?? "UNKNOWN"
    var query: [(name: String, value: String)] = []
    var buffer = [CChar](repeating: 0, count: 2048)
    var index: Int32 = 0
    while lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
      >= 0
    {
      let argument = String(nulTerminated: buffer)
      if let equals = argument.firstIndex(of: "=") {
        query.append(
          (String(argument[..<equals]), String(argument[argument.index(after: equals)...])))
      } else {
        query.append((argument, ""))
      }
      index += 1
    }
    var headers: [String: String] = [:]
    let wanted: [(lws_token_indexes, String)] = [
      (WSI_TOKEN_HTTP_AUTHORIZATION, "authorization"), (WSI_TOKEN_ORIGIN, "origin"),
      (WSI_TOKEN_HTTP_CONTENT_TYPE, "content-type"), (WSI_TOKEN_HOST, "host"),
      (WSI_TOKEN_HTTP_USER_AGENT, "user-agent"), (WSI_TOKEN_HTTP_COOKIE, "cookie"),
      (WSI_TOKEN_X_FORWARDED_FOR, "x-forwarded-for"),
      (WSI_TOKEN_HTTP_TRANSFER_ENCODING, "transfer-encoding"),
      (WSI_TOKEN_HTTP_CONTENT_LENGTH, "content-length"),
      (WSI_TOKEN_HTTP_IF_NONE_MATCH, "if-none-match"),
      (WSI_TOKEN_VERSION, "sec-websocket-version"),
    ]
    for (token, name) in wanted {
      if let value = copy(wsi, token) { headers[name] = value }
    }
    for name in extraHeaders {
      if let value = custom(wsi, name) { headers[name] = value }
    }
    var peer = [CChar](repeating: 0, count: 64)
    let remote =
      lws_get_peer_simple(wsi, &peer, peer.count) == nil ? "" : String(nulTerminated: peer)
    return HTTPRequest(
      method: method, path: path, query: query, headers: headers, remoteAddress: remote)
  }
}

extension String {
  /// Decodes a NUL-terminated C buffer as UTF-8 (invalid bytes become U+FFFD).
  init(nulTerminated buffer: [CChar]) {
    self.init(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
