import Foundation
import JSONPatch
import Logging
import StandupsFeatures
import StandupsWire
import StoreRuntime
import WebSocketTransport

extension RoomChannel {
  func handle(_ job: Job) async {
    switch job {
    case .event(let event):
      await handle(event)
    case .closing(let saves, let before, let after):
      closingsQueued -= 1
      guard isRefusing == nil, !hasStopped else { return }
      // NB: nobody is told the standup is gone before storage says so.
      await savesDone()
      guard takeFailures(in: saves).isEmpty else {
        send(feature.rollback(to: before, from: after))
        return
      }
      await closeIfDeleted()
    case .finish:
      await finish()
    case .idle:
      guard isRefusing == nil, !hasStopped else { return }
      await releaseIfUnused()
    }
  }

  private func handle(_ event: Event) async {
    if let refusal = isRefusing {
      refuse(event, code: refusal.code, reason: refusal.reason, error: refusal.error)
      return
    }
    // NB: an arrival queued behind a restart or a deletion goes back to the hub, which opens
    // the room anew (or refuses): nobody waits in a room that closed. (Frames are not
    // checked: their connection was closed with the room.)
    if event.isArrival, document.isClosed || hasStopped {
      hooks.onJoined(self)
      hooks.onBounced(event)
      return
    }
    guard !hasStopped else { return }
    // NB: a change that could not be published (numbered, encoded) restarts the room, posted
    // behind what was queued; the store still holds it. What comes before the restart must
    // not publish it, nor save it, with a change of its own: its sender was told it failed.
    if document.publishFailures > 0, !event.isRestart {
      refuseWhileRestarting(event)
      return
    }
    switch event {
    case .join(let connection, var sender, let since, let replacing):
      sender.formerKey = replacing
      // NB: the connection it replaces leaves with the new one's joining, in one change where
      // the feature has one (others never see the person twice), else after it, never before
      // (a room it left empty for a moment would pause its meeting); and before the new one
      // is welcomed: its welcome shows its person once.
      let old = replacing.flatMap { document.peer(replacedBy: sender, naming: $0) }
      if let old, let action = feature.replaced(old.sender.participantID, by: sender) {
        _ = document.removePeer(old.connection)
        send(action)
      } else {
        if let action = feature.joined(sender) { send(action) }
        if let old {
          _ = document.removePeer(old.connection)
          if let action = feature.left(old.sender.participantID) { send(action) }
        }
      }
      if let old {
        outlet.close(
          old.connection, code: .replaced,
          reason: "Connected again: this connection is no longer used.")
      }
      document.addPeer(connection, sender: sender, since: since, room: feature.roomName)
      hooks.onJoined(self)

    case .message(let connection, let inbound):
      await receive(inbound, from: connection)

    case .request(let message, let sender, let reply):
      let result = await perform(message, from: sender)
      answered(result)
      reply(result)
      // NB: the request is no longer on its way to the room before the room asks to go.
      hooks.onJoined(self)
      if closingsQueued == 0 { await closeIfDeleted() }
      // NB: after every save (a deletion's too): a deletion refused leaves an idle room.
      await releaseIfUnused()

    case .snapshot(let reply):
      reply(.success(document.snapshot))
      hooks.onJoined(self)
      await releaseIfUnused()

    case .restart(let why, let code, let tell, let handingOn):
      guard !document.isClosed else { return }
      // NB: the state says why a meeting stops here, for its people now and for the server
      // that takes the room on (the change is saved before the room gives up its lock).
      // NB: not after a change that could not be published: the store still holds it, and it
      // would be published and saved with this one.
      // NB: so is what it must finish first (a deletion its people were told of).
      if document.publishFailures == 0, let action = feature.stopping(core.state) { send(action) }
      if handingOn, document.publishFailures == 0, let action = feature.moving() { send(action) }
      _ = document.closeVersions()
      if code == .serviceRestart || code == .goingAway {
        logger.notice("Room \(feature.roomName) closes: \(why). Everyone in it reconnects.")
      } else {
        logger.error("Room \(feature.roomName) restarts: \(why). Everyone in it reconnects.")
      }
      cancelAllEffects()
      closingEveryone()
      for peer in document.removeAllPeers() {
        outlet.close(
          peer, code: code,
          reason: tell
            ?? (code == .serviceRestart
              ? "This standup moves to another server: reconnecting."
              : "The room restarts: reconnect."))
      }
      // NB: what it saved is on disk before the room can open again and read it.
      await savesDone()
      await hooks.onClosed(self)
      close()

    case .leave(let connection):
      guard let sender = document.removePeer(connection) else { return }
      if let action = feature.left(sender.participantID) { send(action) }
      guard document.peers.isEmpty else { return }
      // NB: the reducer was told first (a running meeting pauses); now nothing may tick.
      cancelAllEffects()
      if feature.isIdle(core.state) {
        await savesDone()
        await hooks.onIdle(self)
      }
    }
  }

  /// A room that is not this node's: joins are closed so that clients go elsewhere, requests
  /// answered with `error`.
  private func refuse(_ event: Event, code: CloseCode, reason: String, error: WireError) {
    switch event {
    case .join(let connection, _, _, _):
      outlet.close(connection, code: code, reason: reason)
      hooks.onJoined(self)
    case .request(_, _, let reply):
      reply(.failure(error))
      hooks.onJoined(self)
    case .snapshot(let reply):
      reply(.failure(error))
      hooks.onJoined(self)
    case .message, .leave, .restart:
      break
    }
  }

  /// An event that reached a room about to restart: nothing it asks is done.
  private func refuseWhileRestarting(_ event: Event) {
    let restarting = WireError(
      .roomMoving, "This standup's room is restarting. Try again in a moment.")
    switch event {
    case .message(let connection, let inbound):
      // NB: said, so that the client does not wait for an answer the restart would not give;
      // a ping is answered as ever (it asks nothing of the room).
      let message = try? ClientMessage.parse(inbound)
      if let message, message.isPing {
        outlet.send(ServerMessage.pong(ref: message.ref), to: connection)
      } else {
        outlet.send(ServerMessage.error(ref: message?.ref, restarting), to: connection)
      }
    case .leave(let connection):
      _ = document.removePeer(connection)
    default:
      refuse(
        event, code: .serviceRestart, reason: "The room restarts: reconnect.", error: restarting)
    }
  }

  private func receive(_ inbound: InboundMessage, from connection: ConnectionID) async {
    let message: ClientMessage
    do {
      message = try ClientMessage.parse(inbound)
    } catch {
      metrics.actionAnswered(error.error.code.rawValue)
      outlet.send(ServerMessage.error(ref: error.ref, error.error), to: connection)
      return
    }
    guard let sender = document.peers[connection] else { return }
    if message.isPing {
      outlet.send(ServerMessage.pong(ref: message.ref), to: connection)
      return
    }
    if let page = message.history {
      readHistory(page, ref: message.ref, for: connection)
      return
    }
    let result = await perform(message, from: sender)
    answered(result)
    switch result {
    case .success(let answer):
      if let ref = message.ref {
        outlet.send(
          ServerMessage.ack(ref: ref, version: answer.version, details: answer.details),
          to: connection)
      }
    case .failure(let error):
      outlet.send(ServerMessage.error(ref: message.ref, error), to: connection)
    }
    if closingsQueued == 0 { await closeIfDeleted() }
  }

  /// Sends a page of history, read off the shard: a read from storage must not hold up rooms,
  /// nor this room's next events.
  private nonisolated func readHistory(
    _ page: ClientMessage.HistoryPage, ref: String?, for connection: ConnectionID
  ) {
    Task(executorPreference: globalConcurrentExecutor) { [feature, outlet, logger] in
      do {
        guard let found = try await feature.history(page) else {
          throw WireError(.badMessage, "Only a standup's room has a history to page through.")
        }
        outlet.send(
          try ServerMessage.history(ref: ref, offset: page.offset, page: found), to: connection)
      } catch let error as WireError {
        outlet.send(ServerMessage.error(ref: ref, error), to: connection)
      } catch {
        logger.error("Reading the history of \(feature.roomName) failed: \(error)")
        outlet.send(
          ServerMessage.error(
            ref: ref,
            WireError(
              .storageUnavailable, "The history could not be read. Try again in a moment.")),
          to: connection)
      }
    }
  }

  /// Decodes and reduces one action; once accepted, waits until what it changed is saved.
  /// Returns the version right after the action, or the error to answer with.
  private func perform(_ message: ClientMessage, from sender: Sender) async -> Result<
    Answer, WireError
  > {
    let action: Feature.R.Action
    do {
      action = try feature.decode(message, sender: sender)
    } catch {
      return .failure(error)
    }
    let before = core.state
    let first = saves.count
    let failures = document.publishFailures
    if let rejection = send(action) { return .failure(WireError(rejection)) }
    let after = core.state
    let version = document.version
    let details = feature.answer(
      to: action, before: before, after: after, json: document.snapshot.state)
    let pieces = first..<saves.count
    guard document.publishFailures == failures else {
      // The change could not be numbered or encoded (or the room is no longer this node's):
      // the room restarts without it, so nothing happened and it may be sent again.
      return .failure(
        WireError(
          .roomMoving,
          "The room could not record this change and restarts: send it again once back."))
    }
    // NB: what the action changed is saved before it is acknowledged.
    await savesDone()
    let failed = takeFailures(in: pieces)
    guard failed.isEmpty else {
      // Not saved: undo it for everyone, and say so instead of acknowledging it.
      send(feature.rollback(to: before, from: after))
      // NB: unless it may have been saved after all: the node's session ended (so the room
      // restarts and opens again from what the database settled), and the client, told it was
      // undone, could make it twice.
      guard !failed.contains(where: { $0 is WriteOutcomeUnknown }) else {
        return .failure(
          WireError(
            .outcomeUnknown,
            "The connection to the database was lost while this change was saved: it may have been saved or not. Look before doing it again: it shows within seconds if it was."
          ))
      }
      return .failure(
        WireError(
          .storageUnavailable,
          "The server could not save this change, so it was undone. Try again in a moment."))
    }
    return .success(Answer(version: version, details: details))
  }

  /// After an action that deleted the standup: everyone is closed, the room goes away.
  private func closeIfDeleted() async {
    guard let closing = feature.closing(core.state) else { return }
    // NB: closes queue behind what each peer already has queued: the ack comes first.
    cancelAllEffects()
    for peer in document.removeAllPeers() {
      outlet.close(peer, code: closing.code, reason: closing.reason)
    }
    _ = document.closeVersions()
    await hooks.onClosed(self)
    close()
  }

  /// After a request from outside (HTTP): release the room if nobody is in it.
  private func releaseIfUnused() async {
    guard document.peers.isEmpty, feature.isIdle(core.state) else { return }
    await savesDone()
    await hooks.onIdle(self)
  }

  private func answered(_ result: Result<Answer, WireError>) {
    switch result {
    case .success: metrics.actionAnswered("ok")
    case .failure(let error): metrics.actionAnswered(error.code.rawValue)
    }
  }

  /// Effects running now (tests).
  var runningEffectCount: Int { core.runningEffectCount }
}
