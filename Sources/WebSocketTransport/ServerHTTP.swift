import CLibWebSockets
import Foundation
import Synchronization

/// Plain HTTP on the service thread: application paths, static files, responses.
extension ServerEngine {
  func startHTTP(
    _ wsi: OpaquePointer, user: UnsafeMutableRawPointer?, input: UnsafeMutableRawPointer?,
    length: Int
  ) -> Int32 {
    let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
    let request = readRequest(wsi, path: path)
    // NB: lws reads the length with `atoll` into an unsigned count: "-1" would be a body of
    // 2^64 - 1 bytes, read (and pipelined requests with it) for ever.
    if request.header("content-length") != nil && declaredLength(request) == nil {
      return refuseAndClose(
        wsi,
        HTTPResponse(status: 400, text: "Content-Length must be a whole number of bytes."))
    }
    if configuration.applicationPaths.contains(where: { path.hasPrefix($0) }) {
      let id = nextID
      nextID += 1
      user?.storeBytes(of: id, as: UInt64.self)
      let state = HTTPRequestState(
        wsi: wsi, request: request, bodySeconds: configuration.bodySeconds)
      httpRequests[id] = state
      if request.method == "POST" || request.method == "PUT" || request.method == "PATCH" {
        // NB: this lws reads no chunked request body, and takes a body without a length for
        // 100 MiB: either would wait for ever. An empty PUT or PATCH gets no body callback.
        if request.header("transfer-encoding") != nil || request.header("content-length") == nil {
          httpRequests[id] = nil
          return refuseAndClose(
            wsi,
            HTTPResponse(
              status: 411,
              text: request.header("transfer-encoding") != nil
                ? "Chunked bodies are not read here: send the body with a Content-Length."
                : "A \(request.method) needs a body, sent with a Content-Length (none was given)."))
        }
        // NB: refused before lws reads any of it: a body over the limit would otherwise be
        // read (and dropped) to its declared end, gigabytes of it, before the answer.
        if let length = declaredLength(request), length > UInt64(configuration.maxMessageBytes) {
          httpRequests[id] = nil
          return refuseAndClose(
            wsi,
            HTTPResponse(
              status: 413,
              text: "The request body is larger than \(configuration.maxMessageBytes) bytes."))
        }
        if declaredLength(request) != 0 || request.method == "POST" {
          // NB: a request its head already refuses keeps nothing of its body: it is read
          // past (a connection closed on unread bytes is reset, and the client may lose the
          // answer), then answered.
          state.refusal = delegate.refusalBeforeTheBody(request)
          return 0  // wait for the body
        }
      }
      pauseReading(wsi)
      dispatchHTTP(id: id, state: state)
      return 0
    }
    return serveFile(wsi, request: request)
  }

  /// Stops reading a connection until its request is answered.
  ///
  /// NB: the answer comes later (from a room, on another thread). Meanwhile lws would try to
  /// parse what follows the request on the same connection — a pipelined request, bytes past
  /// the body — over and over without progress, spinning the service thread and starving
  /// every other connection. Reading resumes once the answer is written.
  func pauseReading(_ wsi: OpaquePointer) {
    lws_rx_flow_control(wsi, 0)
  }

  func dispatchHTTP(id: UInt64, state: HTTPRequestState) {
    state.dispatched = true
    // NB: lws's own timeout for the request (its keepalive's idle time, 5 s, for one with no
    // body) would close the connection under an answer still on its way.
    lws_set_timeout(state.wsi, PENDING_TIMEOUT_USER_OK, configuration.answerSeconds)
    if let refusal = state.refusal {
      respond(id, refusal)
      return
    }
    if state.bodyTooLarge {
      respond(
        id,
        HTTPResponse(
          status: 413,
          text: "The request body is larger than \(configuration.maxMessageBytes) bytes."))
      return
    }
    let responder = HTTPResponder { [weak self] response in self?.respond(id, response) }
    delegate.handleHTTP(state.request, respond: responder)
  }

  func respond(_ id: UInt64, _ response: HTTPResponse) {
    control.withLock { $0.httpResponses[id] = response }
    queues.wake()
  }

  /// Answers a request for a file of the web app, a whole file read at once (they are small).
  ///
  /// NB: not with `lws_serve_http_file`: lws 4.1.6 answered any request pipelined behind a
  /// file it had issued with 403 and hung up (it loses the next request's path), and looped
  /// for ever on the body of one. Written as the application's answers are, a pipelined
  /// request is answered in turn.
  func serveFile(_ wsi: OpaquePointer, request: HTTPRequest) -> Int32 {
    // NB: lws 4.1.6 loops for ever on the body of a pipelined request answered at once (see
    // `LWS_CALLBACK_HTTP_BODY_COMPLETION`), and no callback comes to see it by: a request that
    // may carry a body is refused here and the connection closed, before lws reads any.
    guard request.method == "GET" || request.method == "HEAD" else {
      return refuseAndClose(
        wsi,
        HTTPResponse(
          status: 405, text: "Only GET and HEAD are served at \(request.path).",
          headers: [("allow:", "GET, HEAD")]))
    }
    if request.header("transfer-encoding") != nil || (declaredLength(request) ?? 0) > 0 {
      return refuseAndClose(
        wsi,
        HTTPResponse(
          status: 400, text: "Nothing is sent to \(request.path): files are fetched without a body."
        ))
    }
    let head = request.method == "HEAD"
    var info = stat()
    guard let root = publicRoot, let file = resolveFile(root: root, path: request.path),
      stat(file, &info) == 0
    else {
      return finish(wsi, HTTPResponse(status: 404, text: "Not found: \(request.path)"), head: head)
    }
    guard info.st_size <= Self.largestFile else {
      return finish(
        wsi,
        HTTPResponse(
          status: 500,
          text:
            "\(request.path) is larger than the \(Self.largestFile >> 20) MiB this server hands out: serve it from elsewhere."
        ), head: head)
    }
    // The browser keeps a file and asks again each time ("no-cache"); the file's size and
    // modification time name its version, so an unchanged file costs a 304 with no body.
    let tag =
      "\""
      + [info.st_size, info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
      .map { String($0, radix: 16) }.joined(separator: "-") + "\""
    let unchanged = request.header("if-none-match").map { Self.matches($0, tag: tag) } ?? false
    var response = HTTPResponse(
      status: unchanged ? 304 : 200, contentType: MIMEType.forPath(file), body: [],
      headers: [("etag:", tag)])
    response.cacheControl = "no-cache"
    if unchanged || head {
      // NB: a 304 announces the length the 200 would have, and sends no body, as HEAD does.
      return finish(wsi, response, head: true, length: Int(info.st_size))
    }
    guard let contents = FileManager.default.contents(atPath: file) else {
      return finish(wsi, HTTPResponse(status: 404, text: "Not found: \(request.path)"))
    }
    response.body = Array(contents)
    return finish(wsi, response)
  }

  /// The largest file served, whole, from memory (the web app's are tens of KiB).
  static let largestFile = 8 << 20

  /// Whether an `If-None-Match` list names the tag (compared weakly, as RFC 9110 asks).
  static func matches(_ header: String, tag: String) -> Bool {
    header.split(separator: ",").contains { candidate in
      let candidate = candidate.trimmingCharacters(in: .whitespaces)
      return candidate == "*" || candidate == tag || candidate == "W/" + tag
    }
  }

  /// Answers and hangs up without reading what follows: the callback returns this.
  func refuseAndClose(_ wsi: OpaquePointer, _ response: HTTPResponse) -> Int32 {
    var response = response
    response.headers.append(("connection:", "close"))
    _ = write(response, to: wsi)
    return -1
  }

  /// The body's length as the request declares it, or nil: none declared, or one that is no
  /// whole number (refused in `startHTTP`).
  func declaredLength(_ request: HTTPRequest) -> UInt64? {
    request.header("content-length").flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
  }

  /// Writes a whole answer and completes the transaction. For a `head` request only the
  /// headers go, announcing `length` (the body's, unless given).
  func finish(
    _ wsi: OpaquePointer, _ response: HTTPResponse, head: Bool = false, length: Int? = nil
  ) -> Int32 {
    let headOnlyLength = head ? length ?? response.body.count : nil
    if write(response, to: wsi, headOnlyLength: headOnlyLength) < 0 { return -1 }
    return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
  }

  /// Maps a URL path to a regular file inside `root`, or nil (missing, or outside it).
  func resolveFile(root: String, path: String) -> String? {
    let decoded = path.removingPercentEncoding ?? path
    let components = decoded.split(separator: "/", omittingEmptySubsequences: true)
    guard !components.contains(where: { $0 == ".." || $0.hasPrefix(".") || $0.contains("\0") })
    else { return nil }
    var candidate = root + "/" + components.joined(separator: "/")
    var info = stat()
    if stat(candidate, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
      candidate += "/index.html"
    }
    guard let resolved = realpath(candidate, nil) else { return nil }
    defer { free(resolved) }
    let real = String(cString: resolved)
    guard real.hasPrefix(root + "/"), stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG
    else { return nil }
    return real
  }

  /// Writes an answer; with `headOnlyLength`, its headers only, announcing that length (an
  /// answer to HEAD, a 304).
  func write(
    _ response: HTTPResponse, to wsi: OpaquePointer, ownStatusLine: Bool = false,
    headOnlyLength: Int? = nil
  ) -> Int32 {
    var response = response
    response.headers += configuration.responseHeaders
    let headers = response.packedHeaders
    return response.body.withUnsafeBufferPointer { body in
      headers.withUnsafeBufferPointer { headers in
        clws_respond(
          wsi, UInt32(response.status), response.contentType, response.cacheControl,
          headers.baseAddress, headers.count, ownStatusLine ? 1 : 0, headOnlyLength == nil ? 0 : 1,
          body.baseAddress, headOnlyLength ?? body.count)
      }
    }
  }

  func readPath(_ wsi: OpaquePointer) -> String {
    HTTPHeaders.copy(wsi, WSI_TOKEN_GET_URI) ?? HTTPHeaders.copy(wsi, WSI_TOKEN_POST_URI) ?? "/"
  }

  func readRequest(_ wsi: OpaquePointer, path: String) -> HTTPRequest {
    HTTPHeaders.request(wsi, path: path, extraHeaders: configuration.extraRequestHeaders)
  }
}
