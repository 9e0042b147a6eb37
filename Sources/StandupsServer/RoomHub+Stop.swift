import RoomRuntime
import StandupsFeatures
import Synchronization
import WebSocketTransport

/// How a hub stops: draining (a rolling restart), closing its rooms as a restart does, and
/// the shutdown after the transport closed.
extension RoomHub {
  /// Stops taking rooms (on a cluster node; a single server takes them until it closes them)
  /// and hands the open ones on (`closeRooms`, 1012) after `grace`: how long the rooms keep
  /// going after `/healthz` turned to 404 "draining", so that the proxy stops sending people
  /// here before they are asked to move (none on a single server: there is nowhere else).
  func drain(grace: Duration) async {
    draining.set(true)
    try? await Task.sleep(for: grace)
    await letPendingDeletionsEnd()
    await closeRooms(
      why: cluster == nil ? "the server is stopping" : "this node is draining",
      code: .serviceRestart,
      tell: cluster == nil
        ? "The server is restarting: reconnecting."
        : "This server is restarting: reconnecting to another.",
      handingOn: cluster != nil)
  }

  /// Waits (for the undo window at most) until no room has a deletion waiting for its undo
  /// window: closed under it, the room carries it out at once (`RoomFeature.stopping`), which
  /// would take Undo from whoever was about to press it.
  /// Meanwhile its people may still undo it; on a cluster node no one new comes (it drains).
  func letPendingDeletionsEnd() async {
    let deadline = ContinuousClock.now + undoWindow + .seconds(1)
    let rooms = shared.withLock { Array($0.rooms.values) }
    for room in rooms {
      while ContinuousClock.now < deadline, await room.read({ $0.deletionIsPending }) {
        try? await Task.sleep(for: .milliseconds(50))
      }
    }
  }

  /// Every room stops its timers, records where its meeting is — running, so that it comes
  /// back paused because the server restarted —, closes its people with `code` and closes.
  /// (Not through the transport's closes: those would be leaves, and the last one would pause
  /// the meeting as if everyone had left, for whoever comes back to go on with by itself.)
  func closeRooms(why: String, code: CloseCode, tell: String, handingOn: Bool = false) async {
    stopping.set(true)
    let rooms = shared.withLock { Array($0.rooms.values) }
    for room in rooms { await room.cancelAllEffects() }
    await heartbeat.flush()
    for room in rooms {
      room.enqueue(.restart(why: why, code: code, tell: tell, handingOn: handingOn))
      await room.closed()
      await room.savesDone()
    }
  }

  /// Shutdown, once the transport is closed: every room stops its effects, handles the
  /// events still queued for it (the leaves), saves, and gives back the versions it did not use;
  /// then the lobby does the same.
  func stopAll() async {
    let rooms = shared.withLock { Array($0.rooms.values) }
    for room in rooms {
      await room.cancelAllEffects()
      room.close()
      await room.closed()
      await room.savesDone()
    }
    await heartbeat.stop()
    lobby.close()
    await lobby.closed()
    await lobby.savesDone()
  }
}
