import CLibWebSockets
import Foundation
import Logging
import Synchronization

/// What the service thread does when lws calls back: upgrades, frames, wake-ups, closes.
extension ServerEngine {
  func handle(
    _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
  ) -> Int32 {
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
      if lws_get_protocol(wsi)?.pointee.id == 0 { serviceWakeUp() }
      return 0

    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
      let request = readRequest(wsi, path: readPath(wsi))
      // NB: lws upgrades a WebSocket whatever version it asks for: RFC 6455 answers one with
      // none 400 (4.2.1) and one with another than 13 426 (4.4), with the version it speaks.
      let upgrade = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
      let version = request.header("sec-websocket-version")
      // NB: and whatever its method: the handshake is a GET (RFC 6455 4.1); another is 405.
      if upgrade?.lowercased() == "websocket", request.method != "GET" {
        let refusal = HTTPResponse(
          status: 405, text: "A WebSocket upgrade is a GET request.",
          headers: [("allow:", "GET")])
        return write(refusal, to: wsi, ownStatusLine: true) < 0 ? -1 : 1
      }
      if upgrade?.lowercased() == "websocket", version != "13" {
        let refusal = HTTPResponse(
          status: version == nil ? 400 : 426,
          text: version == nil
            ? "A WebSocket upgrade needs Sec-WebSocket-Version: 13."
            : "This server speaks WebSocket version 13 (RFC 6455) only.",
          headers: [("sec-websocket-version:", "13")])
        return write(refusal, to: wsi, ownStatusLine: true) < 0 ? -1 : 1
      }
      switch delegate.shouldUpgrade(request) {
      case .accept(let context):
        acceptedUpgrades[wsi] = (request, context)
        return 0
      case .refuse(let response):
        return write(response, to: wsi, ownStatusLine: true) < 0 ? -1 : 1
      }

    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
      // NB: accept gives the lowest free descriptor: one this high means that few are left.
      let descriptor = Int32(truncatingIfNeeded: Int(bitPattern: input))
      guard descriptor >= acceptBelow else { return 0 }
      refusedForDescriptors += 1
      let now = ContinuousClock.now
      if refusalsLogged.map({ now - $0 >= .seconds(10) }) ?? true {
        refusalsLogged = now
        logger.warning(
          "Too many connections for this process's open-file limit: new ones are closed at once (\(refusedForDescriptors) so far). Raise the limit (ulimit -n), or allow fewer connections."
        )
      }
      return 1

    case LWS_CALLBACK_HTTP:
      return startHTTP(wsi, user: user, input: input, length: length)

    case LWS_CALLBACK_HTTP_BODY:
      guard let id = user?.load(as: UInt64.self), let state = httpRequests[id] else { return 0 }
      if ContinuousClock.now > state.bodyDeadline {
        httpRequests[id] = nil
        return refuseAndClose(
          wsi,
          HTTPResponse(
            status: 408,
            text: "The request body took longer than \(configuration.bodySeconds) s to arrive."))
      }
      if state.refusal != nil {
        return 0
      } else if state.request.body.count + length > configuration.maxMessageBytes {
        state.bodyTooLarge = true
      } else if let input {
        state.request.body.append(
          contentsOf: UnsafeRawBufferPointer(start: input, count: length))
      }
      return 0

    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
      guard let id = user?.load(as: UInt64.self), let state = httpRequests[id] else { return 0 }
      // NB: lws 4.1.6 reports a body's end again and again, never reading on, when a request
      // with a body was pipelined behind one answered later: it parses the request from what
      // it had buffered, then feeds that same buffer, the request's own head, back as its
      // body (`lws_http_action`), and loops on the rest for ever, the service thread and the
      // whole server with it. A second report for one request is that loop: the request is
      // refused and the connection closed. So that no such "body" ever reaches the delegate,
      // a request is handed on at the service thread's next wake-up, not from here.
      guard !state.bodyCompleted else {
        httpRequests[id] = nil
        return refuseAndClose(
          wsi,
          HTTPResponse(
            status: 400,
            text:
              "A request body pipelined behind another request is not read here: send it again on a connection of its own."
          ))
      }
      state.bodyCompleted = true
      guard !state.dispatched else { return 0 }
      pauseReading(wsi)
      bodiesIn.append(id)
      queues.wake()
      return 0

    case LWS_CALLBACK_HTTP_WRITEABLE:
      guard let id = user?.load(as: UInt64.self) else { return 0 }
      answer(id, wsi: wsi)
      return 0

    case LWS_CALLBACK_CLOSED_HTTP:
      acceptedUpgrades[wsi] = nil
      if let id = user?.load(as: UInt64.self), id != 0 {
        httpRequests[id] = nil
        _ = control.withLock { $0.httpResponses.removeValue(forKey: id) }
      }
      return 0

    case LWS_CALLBACK_ESTABLISHED:
      let id = nextID
      nextID += 1
      user?.storeBytes(of: id, as: UInt64.self)
      let state = WebSocketState(wsi: wsi, outbox: queues.open(id))
      webSockets[id] = state
      state.outbox.webSocket = state
      keepalive.opened(id)
      let (request, context) =
        acceptedUpgrades.removeValue(forKey: wsi) ?? (readRequest(wsi, path: readPath(wsi)), nil)
      delegate.webSocketOpened(state.connection, request: request, context: context)
      if control.withLock({ $0.stopRequested != nil }) {
        queues.close(state.connection, code: .goingAway, reason: "Server shutting down")
      }
      return 0

    case LWS_CALLBACK_RECEIVE:
      guard let id = user?.load(as: UInt64.self), let state = webSockets[id] else { return 0 }
      // NB: once our close frame is out, what the peer still sends is not read.
      if state.outbox.isClosing { return 0 }
      keepalive.heard(id)
      state.mayWriteAtOnce = false
      return receive(id: id, state: state, wsi: wsi, input: input, length: length)

    case LWS_CALLBACK_RECEIVE_PONG:
      if let id = user?.load(as: UInt64.self) { keepalive.heard(id) }
      return 0

    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
      guard let id = user?.load(as: UInt64.self), let state = webSockets[id] else { return 0 }
      // The answer to our close: nonzero has lws close the connection without echoing it.
      if state.closeSent { return 1 }
      state.peerClosed = true
      return 0  // lws answers with the same close, then closes

    case LWS_CALLBACK_SERVER_WRITEABLE:
      guard let id = user?.load(as: UInt64.self), let state = webSockets[id] else { return 0 }
      state.mayWriteAtOnce = true
      return queues.drain(state.outbox, wsi: wsi, ping: &state.pingWanted).callbackResult(
        wsi: wsi, waitSeconds: configuration.closeAnswerSeconds
      ) { state.closeSent = true }

    case LWS_CALLBACK_CLOSED:
      // NB: an upgrade confirmed whose handshake then failed closes here, as a WebSocket.
      acceptedUpgrades[wsi] = nil
      guard let id = user?.load(as: UInt64.self), let state = webSockets.removeValue(forKey: id)
      else { return 0 }
      state.outbox.webSocket = nil
      keepalive.closed(id)
      queues.remove(id)
      delegate.webSocketClosed(ConnectionID(rawValue: id))
      return 0

    default:
      return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
  }

  /// Writes the answer to request `id`, if it is ready, and completes the transaction; the
  /// next pipelined request (or the bytes past this one's body) may be read then.
  func answer(_ id: UInt64, wsi: OpaquePointer) {
    guard let response = control.withLock({ $0.httpResponses.removeValue(forKey: id) }) else {
      return
    }
    // NB: an answer to HEAD says how long the body would be, and sends none (a client reads
    // no body after it: one sent would be taken for the next answer).
    let head = httpRequests.removeValue(forKey: id)?.request.method == "HEAD"
    guard write(response, to: wsi, headOnlyLength: head ? response.body.count : nil) >= 0,
      lws_http_transaction_completed(wsi) == 0
    else {
      clws_drop(wsi)
      return
    }
    lws_rx_flow_control(wsi, 1)
  }

  /// Ten times a second: ping what has been quiet, drop what never answered.
  ///
  /// A ping first waits for a frame to go out behind (`pingWaitTurns`), then goes alone.
  func keepaliveSweep() {
    for id in waitingPings.advance() {
      guard let state = webSockets[id], state.pingWanted else { continue }
      state.pingWanted = false
      guard !state.isClosing else { continue }
      pingsAlone.add(1, ordering: .relaxed)
      if clws_write_ping(state.wsi) < 0 { clws_drop(state.wsi) }
    }
    let decisions = keepalive.tick { id in
      guard let state = webSockets[id], !state.isClosing else { return false }
      return lws_send_pipe_choked(state.wsi) == 0
    }
    for decision in decisions {
      switch decision {
      case .ping(let id):
        guard let state = webSockets[id] else { continue }
        state.pingWanted = true
        waitingPings.add(id)
      case .drop(let id):
        if let state = webSockets[id] { clws_drop(state.wsi) }
      }
    }
  }

  func serviceWakeUp() {
    if !bodiesIn.isEmpty {
      let ids = bodiesIn
      bodiesIn.removeAll()
      for id in ids {
        // NB: gone if lws looped on the body and the connection was closed meanwhile.
        guard let state = httpRequests[id], !state.dispatched else { continue }
        dispatchHTTP(id: id, state: state)
      }
    }
    if keepaliveDue {
      keepaliveDue = false
      keepaliveSweep()
    }
    let (wake, fellBehind) = queues.takeWakeList()
    for cell in wake {
      // NB: nil once the connection closed (a cell queued for just before, or after).
      guard let state = cell.webSocket else { continue }
      if state.mayWriteAtOnce && !state.peerClosed {
        queues.flush(cell, wsi: state.wsi, ping: &state.pingWanted)
      } else {
        lws_callback_on_writable(state.wsi)
      }
    }
    for id in fellBehind {
      guard let state = webSockets[id] else { continue }
      // NB: a socket nobody reads never turns writable: if the peer reads again soon it gets
      // its 1008 (and the closing handshake); otherwise lws drops it at the deadline.
      lws_set_timeout(state.wsi, PENDING_TIMEOUT_CLOSE_SEND, configuration.closeAnswerSeconds)
      lws_callback_on_writable(state.wsi)
    }
    let (stop, responses) = control.withLock { control in
      (control.stopRequested, Array(control.httpResponses.keys))
    }
    for id in responses {
      guard let state = httpRequests[id] else {
        // Its connection went before the answer came: nobody to tell.
        _ = control.withLock { $0.httpResponses.removeValue(forKey: id) }
        continue
      }
      // NB: written here, in the wake-up, not from a writeable callback: a connection whose
      // reading is paused (see `pauseReading`) gets none on this lws. Its socket is idle:
      // one request is answered at a time, so nothing else is being written to it.
      if lws_send_pipe_choked(state.wsi) != 0 {
        lws_callback_on_writable(state.wsi)
      } else {
        answer(id, wsi: state.wsi)
      }
    }
    guard let stop else { return }
    if stopDeadline == nil {
      stopDeadline = .now + stop
      queues.closeAll(code: .goingAway, reason: "Server shutting down")
      for state in webSockets.values { lws_callback_on_writable(state.wsi) }
    }
    if webSockets.isEmpty || stopDeadline.map({ ContinuousClock.now >= $0 }) == true {
      control.withLock { $0.state = .stopped }
      loop.stop()
    }
  }

  func receive(
    id: UInt64, state: WebSocketState, wsi: OpaquePointer, input: UnsafeMutableRawPointer?,
    length: Int
  ) -> Int32 {
    if state.byteCount == 0 { state.isBinary = lws_frame_is_binary(wsi) != 0 }
    state.byteCount += length
    if state.byteCount > configuration.closeAboveBytes {
      clws_close_reason(wsi, Int32(CloseCode.messageTooBig.rawValue), "Message too large")
      return -1
    }
    if state.byteCount > configuration.maxMessageBytes { state.isOversized = true }
    if state.isOversized {
      state.received = []  // dropped: only the byte count matters now
    } else if let input, length > 0 {
      state.received.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
    }
    guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else {
      return 0
    }
    let message: InboundMessage =
      state.isOversized
      ? .tooLarge(limit: configuration.maxMessageBytes)
      : state.isBinary ? .binary(state.received) : .text(state.received)
    state.received = []
    state.byteCount = 0
    state.isBinary = false
    state.isOversized = false
    delegate.webSocket(state.connection, received: message)
    return 0
  }
}

/// The C entry point for both server protocols.
/// The keepalive ticker's C entry point (the service thread, once a second).
///
/// NB: it only asks for a sweep: lws arms its own timers (the hang-ups) only from inside its
/// service, so the sweep runs in the next wake-up callback, not in this foreign timer's.
func keepaliveTick(_ engine: UnsafeMutableRawPointer?) {
  guard let engine else { return }
  let server = Unmanaged<ServerEngine>.fromOpaque(engine).takeUnretainedValue()
  server.keepaliveDue = true
  server.queues.wake()
}

func serverCallback(
  wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
  input: UnsafeMutableRawPointer?, length: Int
) -> Int32 {
  guard let wsi, let context = lws_get_context(wsi), let pointer = lws_context_user(context)
  else { return 0 }
  let engine = Unmanaged<ServerEngine>.fromOpaque(pointer).takeUnretainedValue()
  return engine.handle(wsi, reason, user, input, length)
}
