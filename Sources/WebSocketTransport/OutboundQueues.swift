import CLibWebSockets
import Synchronization

/// An lws context pointer that may cross threads: only `lws_cancel_service` is ever called on
/// it off the service thread, and only while `OutboundQueues` says the context is alive.
struct ContextHandle: @unchecked Sendable {
  let pointer: OpaquePointer
}

/// One connection's outbox, shared by the threads that queue for it and the service thread.
/// A `ConnectionID` made by the transport carries its cell, so queueing a broadcast takes each
/// recipient's own lock and no lookup: nothing is shared by every connection but the wake list.
final class OutboxCell: Sendable {
  let id: UInt64
  let outbox = Mutex(Outbox())
  /// The server's own record of the connection while it is open, so that a wake-up goes from
  /// the cells it woke to their sockets with no lookup. Service thread only: set when the
  /// connection opens, cleared when it closes (the two then no longer hold each other).
  nonisolated(unsafe) var webSocket: ServerEngine.WebSocketState?
  init(id: UInt64) { self.id = id }
  /// Whether a close has been queued (or sent), or the connection is gone.
  var isClosing: Bool { outbox.withLock { $0.isClosing } }
}

/// The outboxes of every WebSocket of one lws context, writable from any thread.
///
/// Producers append under each outbox's own lock, then put the outboxes they woke on the wake
/// list under one lock per call, and wake the service thread once per call with
/// `lws_cancel_service`; the service thread takes the wake list and writes what it can at
/// once, asking lws for a writable callback for the rest.
final class OutboundQueues: Sendable {
  private struct State {
    var cells: [UInt64: OutboxCell] = [:]
    var wake: [OutboxCell] = []
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
  /// Keepalive pings written behind a frame so far.
  let pingsBehindFrames = Atomic<Int>(0)

  init(limit: Int) { self.limit = limit }

  /// Makes `lws_cancel_service` callable; `nil` when the context is being destroyed.
  func setContext(_ context: ContextHandle?) {
    state.withLock { $0.context = context }
  }

  /// Connections closed so far because they fell too far behind.
  var fellBehindCount: Int { state.withLock { $0.fellBehindCount } }

  /// A new connection's outbox: keep it in its `ConnectionID`s.
  @discardableResult
  func open(_ id: UInt64) -> OutboxCell {
    let cell = OutboxCell(id: id)
    state.withLock { $0.cells[id] = cell }
    return cell
  }

  /// The connection is gone: what waits for it is dropped, and so is anything queued later
  /// through an id still held somewhere.
  func remove(_ id: UInt64) {
    let cell = state.withLock { $0.cells.removeValue(forKey: id) }
    cell?.outbox.withLock { $0.retire() }
  }

  private func cell(_ connection: ConnectionID) -> OutboxCell? {
    connection.outbox ?? state.withLock { $0.cells[connection.rawValue] }
  }

  /// Queues the same message for every connection in `connections`; those that are gone are
  /// skipped. With `deferWake`, the service thread is woken by the next `wakeIfDeferred()`
  /// instead.
  func send(
    _ message: OutboundMessage, to connections: some Sequence<ConnectionID>,
    deferWake: Bool = false
  ) {
    var woken: [OutboxCell] = []
    var fellBehind: [UInt64] = []
    for connection in connections {
      guard let cell = cell(connection) else { continue }
      let appended = cell.outbox.withLock { outbox in
        let appended = outbox.append(message, limit: limit)
        if appended == .overLimit {
          // NB: a reader this far behind never catches up; closing it keeps its room fast.
          outbox.overflow(
            .policyViolation, reason: "This connection fell too far behind: reconnect.")
        }
        return appended
      }
      switch appended {
      case .wake: woken.append(cell)
      case .queued: break
      case .overLimit: fellBehind.append(cell.id)
      }
    }
    guard !woken.isEmpty || !fellBehind.isEmpty else { return }
    state.withLock { state in
      state.wake.append(contentsOf: woken)
      state.fellBehind.append(contentsOf: fellBehind)
      state.fellBehindCount += fellBehind.count
      if deferWake {
        state.wakeDeferred = true
      } else if let context = state.context {
        lws_cancel_service(context.pointer)
      }
    }
  }

  /// Queues `message` for the connections with these raw ids (the client's own connections).
  func send(_ message: OutboundMessage, toIDs ids: some Sequence<UInt64>) {
    send(message, to: ids.lazy.map { ConnectionID(rawValue: $0) })
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
  func close(_ connection: ConnectionID, code: CloseCode, reason: String) {
    guard let cell = cell(connection) else { return }
    let wakes = cell.outbox.withLock { $0.close(code, reason: reason) }
    state.withLock { state in
      if wakes { state.wake.append(cell) }
      if let context = state.context { lws_cancel_service(context.pointer) }
    }
  }

  /// Queues a close for every open connection (shutdown).
  func closeAll(code: CloseCode, reason: String) {
    let cells = state.withLock { Array($0.cells.values) }
    let woken = cells.filter { cell in cell.outbox.withLock { $0.close(code, reason: reason) } }
    state.withLock { $0.wake.append(contentsOf: woken) }
  }

  /// Wakes the service thread without queueing anything.
  func wake() {
    state.withLock { state in
      if let context = state.context { lws_cancel_service(context.pointer) }
    }
  }

  /// Service thread: the outboxes that got something to write since the last call, and the
  /// connections that fell too far behind (their close now waits in place of what piled up).
  func takeWakeList() -> (wake: [OutboxCell], fellBehind: [UInt64]) {
    state.withLock { state in
      defer {
        state.wake.removeAll(keepingCapacity: true)
        state.fellBehind.removeAll()
      }
      return (state.wake, state.fellBehind)
    }
  }

  var count: Int { state.withLock { $0.cells.count } }

  /// Whether a close has been queued (or sent) for this connection.
  func isClosing(_ connection: ConnectionID) -> Bool {
    cell(connection)?.outbox.withLock { $0.isClosing } ?? false
  }

  /// Service thread, outside lws' writable callback: writes the queued messages at once while
  /// the socket takes them. This saves the round trip through a writable callback, which on
  /// the libuv loop costs four `epoll_ctl` calls (libuv re-registers the socket each time lws
  /// turns POLLOUT on or off). A socket that takes only part of a frame (or none) has lws
  /// buffer the rest and send it when it can; writing stops there, without a `poll` per
  /// frame to ask first. What is left — more than the socket takes, or a close, which only
  /// the writable callback may send — waits for a writable callback.
  ///
  /// With `ping` set, the first frame written carries a ping behind it (and `ping` is then
  /// cleared): see `write(_:wsi:ping:)`.
  func flush(_ cell: OutboxCell, wsi: OpaquePointer, ping: inout Bool) {
    while lws_partial_buffered(wsi) == 0 {
      let (message, isEmpty) = cell.outbox.withLock { $0.popMessage() }
      guard let message else {
        if !isEmpty { lws_callback_on_writable(wsi) }
        return
      }
      guard write(message, wsi: wsi, ping: &ping) else {
        // A socket that fails a write is done for; let lws close it on its next turn.
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
        return
      }
      if isEmpty { return }
    }
    lws_callback_on_writable(wsi)
  }

  /// Writes one message; with `ping` set, a ping goes out in the same write behind it if it
  /// can (`ping` is then cleared), so that keepalive costs a connection that is sent to
  /// anyway no send and no segment of its own. False if the write failed.
  private func write(_ message: OutboundMessage, wsi: OpaquePointer, ping: inout Bool) -> Bool {
    if ping {
      let written = clws_write_with_ping(
        wsi, message.payload, message.count, message.isBinary ? 1 : 0)
      if written < 0 { return false }
      if written > 0 {
        ping = false
        pingsBehindFrames.add(1, ordering: .relaxed)
        return true
      }
    }
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
  func drain(_ cell: OutboxCell, wsi: OpaquePointer, ping: inout Bool) -> DrainResult {
    while lws_partial_buffered(wsi) == 0 {
      let item = cell.outbox.withLock { $0.popFirst() }
      switch item {
      case nil:
        return .open
      case .message(let message)?:
        if !write(message, wsi: wsi, ping: &ping) { return .failed }
      case .close(let code, let reason)?:
        return clws_write_close(wsi, Int32(code.rawValue), reason) < 0 ? .failed : .closeSent
      }
    }
    lws_callback_on_writable(wsi)
    return .open
  }
}
