import CLibWebSockets
import Synchronization

/// An lws context pointer that may cross threads: only `lws_cancel_service` is ever called on
/// it off the service thread, and only while `OutboundQueues` says the context is alive.
struct ContextHandle: @unchecked Sendable {
  let pointer: OpaquePointer
}

/// The outboxes of every WebSocket of one lws context, writable from any thread.
///
/// Producers append under one lock and wake the service thread once per call with
/// `lws_cancel_service`; the service thread takes the wake list and writes what it can at
/// once, asking lws for a writable callback for the rest.
final class OutboundQueues: Sendable {
  private struct State {
    var outboxes: [UInt64: Outbox] = [:]
    var wake: [UInt64] = []
    /// Connections that fell too far behind since the service thread last looked.
    var fellBehind: [UInt64] = []
    /// Every connection ever closed for falling behind.
    var fellBehindCount = 0
    var context: ContextHandle?
    /// A send deferred its wake-up to the next `wakeIfDeferred()`.
    var wakeDeferred = false
  }

  private let state = Mutex(State())
  /// Bytes a connection may have queued before it is closed with 1008.
  let limit: Int

  init(limit: Int) { self.limit = limit }

  /// Makes `lws_cancel_service` callable; `nil` when the context is being destroyed.
  func setContext(_ context: ContextHandle?) {
    state.withLock { $0.context = context }
  }

  /// Connections closed so far because they fell too far behind.
  var fellBehindCount: Int { state.withLock { $0.fellBehindCount } }

  func open(_ id: UInt64) {
    state.withLock { $0.outboxes[id] = Outbox() }
  }

  func remove(_ id: UInt64) {
    _ = state.withLock { $0.outboxes.removeValue(forKey: id) }
  }

  /// Queues the same message for every connection in `ids`; unknown ids are skipped. With
  /// `deferWake`, the service thread is woken by the next `wakeIfDeferred()` instead.
  func send(_ message: OutboundMessage, to ids: some Sequence<UInt64>, deferWake: Bool = false) {
    state.withLock { state in
      var wakes = false
      for id in ids {
        // NB: in place (`?.`), so that the outbox's storage is not copied for each message;
        // nil when the connection is not open (any more).
        switch state.outboxes[id]?.append(message, limit: limit) {
        case .wake?:
          state.wake.append(id)
          wakes = true
        case .queued?, nil:
          break
        case .overLimit?:
          // NB: a reader this far behind never catches up; closing it keeps its room fast.
          state.outboxes[id]?.overflow(
            .policyViolation, reason: "This connection fell too far behind: reconnect.")
          state.fellBehind.append(id)
          state.fellBehindCount += 1
          wakes = true
        }
      }
      guard wakes else { return }
      if deferWake {
        state.wakeDeferred = true
      } else if let context = state.context {
        lws_cancel_service(context.pointer)
      }
    }
  }

  /// Wakes the service thread if a deferred send asked for it since the last wake-up.
  func wakeIfDeferred() {
    state.withLock { state in
      guard state.wakeDeferred else { return }
      state.wakeDeferred = false
      if let context = state.context { lws_cancel_service(context.pointer) }
    }
  }

  /// Queues a close after what is already queued.
  func close(_ id: UInt64, code: CloseCode, reason: String) {
    state.withLock { state in
      guard var outbox = state.outboxes[id] else { return }
      if outbox.close(code, reason: reason) { state.wake.append(id) }
      state.outboxes[id] = outbox
      if let context = state.context { lws_cancel_service(context.pointer) }
    }
  }

  /// Queues a close for every open connection (shutdown).
  func closeAll(code: CloseCode, reason: String) {
    state.withLock { state in
      for id in Array(state.outboxes.keys) {
        if state.outboxes[id]?.close(code, reason: reason) == true { state.wake.append(id) }
      }
    }
  }

  /// Wakes the service thread without queueing anything.
  func wake() {
    state.withLock { state in
      if let context = state.context { lws_cancel_service(context.pointer) }
    }
  }

  /// Service thread: the connections that got something to write since the last call, and
  /// those that fell too far behind (their close now waits in place of what piled up).
  func takeWakeList() -> (wake: [UInt64], fellBehind: [UInt64]) {
    state.withLock { state in
      defer {
        state.wake.removeAll(keepingCapacity: true)
        state.fellBehind.removeAll()
      }
      return (state.wake, state.fellBehind)
    }
  }

  var count: Int { state.withLock { $0.outboxes.count } }

  /// Whether a close has been queued (or sent) for this connection.
  func isClosing(_ id: UInt64) -> Bool { state.withLock { $0.outboxes[id]?.isClosing ?? false } }

  /// Service thread, outside lws' writable callback: writes the queued messages at once while
  /// the socket takes them. This saves the round trip through a writable callback, which on
  /// the libuv loop costs four `epoll_ctl` calls (libuv re-registers the socket each time lws
  /// turns POLLOUT on or off). A socket that takes only part of a frame (or none) has lws
  /// buffer the rest and send it when it can; writing stops there, without a `poll` per
  /// frame to ask first. What is left — more than the socket takes, or a close, which only
  /// the writable callback may send — waits for a writable callback.
  func flush(_ id: UInt64, wsi: OpaquePointer) {
    while lws_partial_buffered(wsi) == 0 {
      let (message, isEmpty) = state.withLock { $0.outboxes[id]?.popMessage() ?? (nil, true) }
      guard let message else {
        if !isEmpty { lws_callback_on_writable(wsi) }
        return
      }
      guard write(message, wsi: wsi) else {
        // A socket that fails a write is done for; let lws close it on its next turn.
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
        return
      }
      if isEmpty { return }
    }
    lws_callback_on_writable(wsi)
  }

  private func write(_ message: OutboundMessage, wsi: OpaquePointer) -> Bool {
    let written =
      message.isBinary
      ? clws_write_binary(wsi, message.payload, message.count)
      : clws_write_text(wsi, message.payload, message.count)
    return written >= Int32(message.count)
  }

  /// What a writable callback leaves the connection in.
  enum DrainResult {
    /// Open; anything left waits for the next writable callback.
    case open
    /// Our close frame is out: the connection waits for the peer's answering close.
    case closeSent
    /// A write failed: the connection must go now.
    case failed

    /// What the writable callback returns. After our close frame the connection stays open
    /// for the peer's answering close (closing a socket with unread input resets it, and the
    /// peer might never read our close), for at most `waitSeconds`.
    func callbackResult(wsi: OpaquePointer, waitSeconds: Int32, closeSent: () -> Void) -> Int32 {
      switch self {
      case .open:
        return 0
      case .closeSent:
        closeSent()
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, waitSeconds)
        return 0
      case .failed:
        return -1
      }
    }
  }

  /// Service thread, in lws' writable callback: writes queued frames until one is left
  /// partly buffered by lws (the socket is full), or a close frame is out.
  func drain(_ id: UInt64, wsi: OpaquePointer) -> DrainResult {
    while lws_partial_buffered(wsi) == 0 {
      let item = state.withLock { $0.outboxes[id]?.popFirst() }
      switch item {
      case nil:
        return .open
      case .message(let message)?:
        if !write(message, wsi: wsi) { return .failed }
      case .close(let code, let reason)?:
        return clws_write_close(wsi, Int32(code.rawValue), reason) < 0 ? .failed : .closeSent
      }
    }
    lws_callback_on_writable(wsi)
    return .open
  }
}
