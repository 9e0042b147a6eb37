import Dependencies
import DequeModule
import Foundation
import JSONPatch
import Logging
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Synchronization
import WebSocketTransport

/// One room: a store, its versioned JSON, the peers who see it, and recent patches.
///
/// Everything a room does happens in order: peers' joins, messages and leaves go through one
/// mailbox; state changes (from actions or effects) are diffed, numbered and sent inside the
/// store's actor, so every peer gets every version exactly once, in order.
final class RoomChannel<Feature: RoomFeature>: Sendable {
  typealias State = Feature.R.State

  enum Event: Sendable {
    case join(ConnectionID, Sender, since: Int?)
    case message(ConnectionID, InboundMessage)
    case leave(ConnectionID)
    /// An action from outside a WebSocket (the HTTP API): answered through `reply`.
    case request(ClientMessage, Sender, reply: @Sendable (Result<Int, WireError>) -> Void)
    /// The current version and state.
    case snapshot(reply: @Sendable (Result<(version: Int, state: JSONValue), WireError>) -> Void)
    /// A change could not be numbered (storage kept failing) or encoded, or the room is no
    /// longer this node's to run: the room restarts, everyone reconnects.
    case restart(why: String, code: CloseCode = .internalError, tell: String? = nil)
    /// The state says the room must close (an effect deleted its standup): once `saves` (the
    /// pieces of work that change queued) are done — or, if they failed, back to `before`.
    case closing(saves: Range<Int>, before: State)

    /// Someone arriving (a join, an HTTP request or snapshot), counted until handled.
    var isArrival: Bool {
      switch self {
      case .join, .request, .snapshot: true
      case .message, .leave, .restart, .closing: false
      }
    }
  }

  /// How a room of a cluster opens: it takes the room's lock, and reads the room as saved.
  struct Opening: Sendable {
    enum Outcome: Sendable {
      /// The room is this node's: open it with `state` (nil: as given), and call `release`
      /// once it has closed.
      case owned(State?, release: @Sendable () async -> Void)
      /// Not this node's (or gone): every event is refused, joins closed with `code`.
      case refused(code: CloseCode, reason: String, error: WireError)
    }
    var acquire: @Sendable () async -> Outcome
  }

  let feature: Feature
  let store: Store<Feature.R>
  /// When the room was made (a cluster hands a room on only after it had it a while).
  let openedAt = ContinuousClock.now
  let work = SerialQueue()
  private let broadcaster: Broadcaster
  private let versions: VersionLease
  private let mailbox: AsyncStream<Event>.Continuation
  /// The task that handles the mailbox; it ends once the mailbox is closed and emptied.
  private let handler = Mutex<Task<Void, Never>?>(nil)
  private let outlet: Outlet
  private let logger: Logger
  private let onClosed: @Sendable (RoomChannel) async -> Void
  private let onBounced: @Sendable (Event) -> Void

  init(
    feature: Feature, initialState: State, reducer: Feature.R, dependencies: DependencyValues,
    resumeBytes: Int = 256 * 1024, versions: VersionLease, outlet: Outlet, logger: Logger,
    opening: Opening? = nil,
    onJoined: @escaping @Sendable (RoomChannel) -> Void = { _ in },
    onClosed: @escaping @Sendable (RoomChannel) async -> Void = { _ in },
    onBounced: @escaping @Sendable (Event) -> Void = { _ in },
    onIdle: @escaping @Sendable (RoomChannel) async -> Void
  ) {
    let initialJSON = (try? JSONValue(encoding: initialState)) ?? .null
    let broadcaster = Broadcaster(
      state: initialState, json: initialJSON, versions: versions, outlet: outlet,
      resumeBytes: resumeBytes,
      encode: { try feature.encode($0, previous: $1, json: &$2, after: $3) })
    let work = work
    let (events, mailbox) = AsyncStream<Event>.makeStream()
    self.feature = feature
    self.broadcaster = broadcaster
    self.versions = versions
    self.mailbox = mailbox
    self.outlet = outlet
    self.logger = logger
    self.onClosed = onClosed
    self.onBounced = onBounced
    self.store = Store(
      initialState: initialState, reducer: reducer, dependencies: dependencies,
      observer: { action, state, _ in
        switch broadcaster.publish(state, after: action) {
        case .published(let old):
          let first = work.count
          feature.stateDidChange(from: old, to: state, work: work)
          if feature.closing(old) == nil && feature.closing(state) != nil {
            mailbox.yield(.closing(saves: first..<work.count, before: old))
          }
        case .unchanged: break
        case .outOfVersions where !versions.fenceHolds:
          mailbox.yield(
            .restart(why: "it is no longer this node's to run", code: .serviceRestart))
        case .outOfVersions: mailbox.yield(.restart(why: "it ran out of versions"))
        case .encodingFailed(let error):
          mailbox.yield(.restart(why: "its state could not be encoded (\(error))"))
        }
      })
    let reserved = versions.first != nil
    // NB: the room's events are handled on its store's shard, so handing one to the store
    // (`store.perform`) does not change threads.
    let handler = Task(executorPreference: store.shard) { [self] in
      var release: (@Sendable () async -> Void)?
      switch await opening?.acquire() {
      case .owned(let saved, let releasing)?:
        release = releasing
        if let saved { await restore(saved) }
      case .refused(let code, let reason, let error)?:
        _ = broadcaster.closeVersions()
        await onClosed(self)
        close()
        for await event in events {
          refuse(event, code: code, reason: reason, error: error, onJoined: onJoined)
        }
        return
      case nil:
        break
      }
      // NB: a room's store changes only through its mailbox, so nothing is numbered before
      // its first block of versions is reserved here. (The lobby's store also takes the
      // rooms' notices directly; its block is reserved before it opens.)
      if !reserved { broadcaster.begin(at: await versions.start()) }
      for await event in events {
        await handle(event, onJoined: onJoined, onIdle: onIdle)
      }
      await finishVersions()
      await release?()
    }
    self.handler.withLock { $0 = handler }
  }

  /// Waits until every event queued before `close` is handled and the versions are given back.
  func closed() async {
    await handler.withLock { $0 }?.value
  }

  /// No version is issued after this; what was reserved past the last one is given back.
  private func finishVersions() async {
    await versions.finish(next: broadcaster.closeVersions())
  }

  /// Opens with what was saved rather than what this node knew (before anything is sent).
  private func restore(_ state: State) async {
    await store.restore(state)
    broadcaster.restore(state, json: (try? JSONValue(encoding: state)) ?? .null)
  }

  /// A room that is not this node's: joins are closed so that clients go elsewhere, requests
  /// answered with `error`.
  private func refuse(
    _ event: Event, code: CloseCode, reason: String, error: WireError,
    onJoined: @Sendable (RoomChannel) -> Void
  ) {
    switch event {
    case .join(let connection, _, _):
      outlet.close(connection, code: code, reason: reason)
      onJoined(self)
    case .request(_, _, let reply):
      reply(.failure(error))
      onJoined(self)
    case .snapshot(let reply):
      reply(.failure(error))
      onJoined(self)
    case .message, .leave, .restart, .closing:
      break
    }
  }

  /// Queues an event; safe from any thread (the transport's service thread included).
  ///
  /// - Returns: false if the room has closed and takes no more events: the caller opens the
  ///   room anew (or refuses) rather than leave someone waiting for an answer.
  @discardableResult
  func enqueue(_ event: Event) -> Bool {
    if case .terminated = mailbox.yield(event) { return false }
    return true
  }

  /// Stops taking events (the room was released).
  func close() { mailbox.finish() }

  var peerCount: Int { broadcaster.peerCount }
  var version: Int { broadcaster.version }

  private func handle(
    _ event: Event, onJoined: @Sendable (RoomChannel) -> Void,
    onIdle: @Sendable (RoomChannel) async -> Void
  ) async {
    // NB: an arrival queued behind a restart or a deletion goes back to the hub, which opens
    // the room anew (or refuses): nobody waits in a room that closed. (Frames are not
    // checked: their connection was closed with the room.)
    if event.isArrival, broadcaster.isClosed {
      onJoined(self)
      onBounced(event)
      return
    }
    switch event {
    case .join(let connection, let sender, let since):
      let participant = Participant(
        id: sender.participantID, name: sender.name, isBot: sender.isBot)
      await store.perform { [feature, broadcaster] store in
        if let action = feature.joined(participant) { store.send(action) }
        broadcaster.addPeer(connection, sender: sender, since: since, room: feature.roomName)
      }
      onJoined(self)

    case .message(let connection, let inbound):
      await receive(inbound, from: connection)

    case .request(let message, let sender, let reply):
      let result = await perform(message, from: sender)
      ServerMetrics.shared.action(result)
      reply(result)
      await closeIfDeleted()
      await releaseIfUnused(onIdle: onIdle)
      onJoined(self)

    case .snapshot(let reply):
      reply(.success(broadcaster.snapshot))
      await releaseIfUnused(onIdle: onIdle)
      onJoined(self)

    case .closing(let saves, let before):
      // NB: nobody is told the standup is gone before storage says so.
      await work.drain()
      guard work.takeFailures(in: saves).isEmpty else {
        await store.perform { [feature] store in _ = store.send(feature.rollback(to: before)) }
        return
      }
      await closeIfDeleted()

    case .restart(let why, let code, let tell):
      guard !broadcaster.isClosed else { return }
      _ = broadcaster.closeVersions()
      if code == .serviceRestart {
        logger.notice("Room \(feature.roomName) closes: \(why). Everyone in it reconnects.")
      } else {
        logger.error("Room \(feature.roomName) restarts: \(why). Everyone in it reconnects.")
      }
      await store.cancelAllEffects()
      for peer in broadcaster.removeAllPeers() {
        outlet.close(
          peer, code: code,
          reason: tell
            ?? (code == .serviceRestart
              ? "This standup moves to another server: reconnecting."
              : "The room restarts: reconnect."))
      }
      await onClosed(self)
      close()

    case .leave(let connection):
      let idle = await store.perform { [feature, broadcaster] store in
        guard let sender = broadcaster.removePeer(connection) else { return false }
        if let action = feature.left(sender.participantID) { store.send(action) }
        guard broadcaster.peerCount == 0 else { return false }
        // NB: the reducer was told first (a running meeting pauses); now nothing may tick.
        store.cancelAllEffects()
        return feature.isIdle(store.state)
      }
      if idle {
        await work.drain()
        await onIdle(self)
      }
    }
  }

  private func receive(_ inbound: InboundMessage, from connection: ConnectionID) async {
    let message: ClientMessage
    do {
      message = try ClientMessage.parse(inbound)
    } catch {
      ServerMetrics.shared.action(error.error.code.rawValue)
      outlet.send(ServerMessage.error(ref: error.ref, error.error), to: connection)
      return
    }
    guard let sender = broadcaster.sender(of: connection) else { return }
    if let page = message.history {
      // NB: off the mailbox and off the shard: a read from storage must not hold up rooms.
      Task(executorPreference: globalConcurrentExecutor) { [feature, outlet, logger] in
        do {
          guard let found = try await feature.history(page) else {
            throw WireError(.badMessage, "Only a standup's room has a history to page through.")
          }
          outlet.send(
            try ServerMessage.history(ref: message.ref, offset: page.offset, page: found),
            to: connection)
        } catch let error as WireError {
          outlet.send(ServerMessage.error(ref: message.ref, error), to: connection)
        } catch {
          logger.error("Reading the history of \(feature.roomName) failed: \(error)")
          outlet.send(
            ServerMessage.error(
              ref: message.ref,
              WireError(
                .storageUnavailable, "The history could not be read. Try again in a moment.")),
            to: connection)
        }
      }
      return
    }
    let result = await perform(message, from: sender)
    ServerMetrics.shared.action(result)
    switch result {
    case .success(let version):
      if let ref = message.ref {
        outlet.send(ServerMessage.ack(ref: ref, version: version), to: connection)
      }
    case .failure(let error):
      outlet.send(ServerMessage.error(ref: message.ref, error), to: connection)
    }
    await closeIfDeleted()
  }

  /// Decodes and reduces one action; once accepted, waits until what it changed is saved.
  /// Returns the version right after the action, or the error to answer with.
  private func perform(_ message: ClientMessage, from sender: Sender) async -> Result<
    Int, WireError
  > {
    let action: Feature.R.Action
    do {
      action = try feature.decode(message, sender: sender)
    } catch {
      return .failure(error)
    }
    let (rejection, version, before, saves, unpublished) = await store.perform {
      [broadcaster, work] store in
      let before = store.state
      let first = work.count
      let failures = broadcaster.publishFailures
      let rejection = store.send(action)
      return (
        rejection, broadcaster.version, before, first..<work.count,
        broadcaster.publishFailures != failures
      )
    }
    if let rejection { return .failure(WireError(rejection)) }
    guard !unpublished else {
      // The change could not be numbered or encoded: the room restarts without it.
      return .failure(
        WireError(
          .storageUnavailable, "The room could not record this change and restarts: reconnect."))
    }
    // NB: what the action changed is saved before it is acknowledged.
    await work.drain()
    guard work.takeFailures(in: saves).isEmpty else {
      // Not saved: undo it for everyone, and say so instead of acknowledging it.
      await store.perform { [feature] store in _ = store.send(feature.rollback(to: before)) }
      return .failure(
        WireError(
          .storageUnavailable,
          "The server could not save this change, so it was undone. Try again in a moment."))
    }
    return .success(version)
  }

  /// After an action that deleted the standup: everyone is closed, the room goes away.
  private func closeIfDeleted() async {
    guard let closing = await store.perform({ [feature] store in feature.closing(store.state) })
    else { return }
    // NB: closes queue behind what each peer already has queued: the ack comes first.
    await store.cancelAllEffects()
    for peer in broadcaster.removeAllPeers() {
      outlet.close(peer, code: closing.code, reason: closing.reason)
    }
    _ = broadcaster.closeVersions()
    await onClosed(self)
    close()
  }

  /// After a request from outside (HTTP): release the room if nobody is in it.
  private func releaseIfUnused(onIdle: @Sendable (RoomChannel) async -> Void) async {
    guard broadcaster.peerCount == 0 else { return }
    let idle = await store.perform { [feature] store in feature.isIdle(store.state) }
    if idle {
      await work.drain()
      await onIdle(self)
    }
  }
}
