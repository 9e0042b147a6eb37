import Foundation
import Logging
import RoomRuntime
import StandupsFeatures
import StandupsWire
import Storage
import StoreRuntime
import Synchronization
import WebSocketTransport

extension RoomHub {
  /// Joins the cluster: this node's rooms tell the others what changes, the others' notices
  /// reach this node's lobby, and a lost session closes every room.
  func joinCluster(_ session: NodeSession) {
    let node = session.nodeID
    // NB: a standup saved or deleted is told by its write, in the write's transaction: the
    // others hear of exactly what committed, even from a node that dies right after a commit
    // (a notice sent after it would die with the node, and leave their lobbies as they were).
    session.storage.announceWrites(on: NodeSession.channel) { id, deleted in
      NodeSession.Notice(node: node, kind: deleted ? .deleted : .changed, standup: id).text
    }
    notifier.relay { action in
      switch action {
      case .roomActivityChanged(let id, let live):
        session.publish(.init(node: node, kind: .live, standup: id, live: live))
      case .standupChanged, .standupDeleted, .addStandupSubmitted, .saveFailed:
        break
      }
    }
    session.attach(
      lost: { [weak self] in self?.sessionLost() },
      heard: { [weak self] notice in await self?.heard(notice) },
      listening: { [weak self] in await self?.listening() },
      readAgain: { [weak self] in _ = await self?.catchUp() })
    // NB: the rooms of a node that died show nobody in them within two seconds; a notice of
    // this node's that could not be sent is sent again.
    remoteRooms.keep(
      Task { [weak self] in
        while !Task.isCancelled {
          try? await Task.sleep(for: .seconds(2))
          guard let self else { return }
          await self.forgetDeadNodes(session)
          await session.sayLostAgain { await self.presenceOfTheRooms() }
          await self.readAgainWhatFailed()
        }
      })
  }

  /// Who is in `id`'s room, as this node serves it or another said; nil if nobody said.
  private func live(of id: UUID) async -> Lobby.Live?? {
    if let room = shared.withLock({ $0.rooms[id] }) {
      return .some(await room.read { StandupRoomFeature.live($0) })
    }
    return remoteRooms.live(of: id).map { .some($0) }
  }

  /// Who is in each room open here.
  private func presenceOfTheRooms() async -> [UUID: Lobby.Live?] {
    var presence: [UUID: Lobby.Live?] = [:]
    for room in shared.withLock({ Array($0.rooms.values) }) {
      presence[room.feature.standupID] = .some(await room.read { StandupRoomFeature.live($0) })
    }
    return presence
  }

  /// Tells the other nodes who is in each room this node serves (they heard nothing, or may
  /// have missed something).
  private func sayWhoIsInTheRooms() async {
    for (id, live) in await presenceOfTheRooms() {
      notifier.tellOthers(.roomActivityChanged(id, live))
    }
  }

  /// How a room opens on this node: only with its lock, from what the database holds.
  ///
  /// - Parameters:
  ///   - viaProxy: the proxy chose this node for the room: if another node has it, it is
  ///     asked to hand it on (`wanted`), and the people it closes with 1012 come here.
  ///   - previous: the room's last copy on this node, still finishing: the lock is taken
  ///     after that copy gave it back.
  func opening(
    _ roomID: UUID, session: NodeSession, versions: VersionLease,
    hold held: NodeSession.HoldBox, viaProxy: Bool, after previous: RoomChannel<StandupRoomFeature>?
  ) -> RoomChannel<StandupRoomFeature>.Opening {
    let elsewhere = WireError(
      .roomMoving, "This standup is served by another server right now. Try again in a moment.")
    return RoomChannel.Opening { [storage, draining, logger, remoteRooms] in
      await previous?.closed()
      guard !draining.value else {
        return .refused(
          code: .serviceRestart, reason: "This server is restarting: reconnecting to another.",
          error: elsewhere)
      }
      let taken = await session.take(roomID)
      guard case .held(let hold) = taken else {
        // NB: only another node's hold is worth asking for: a node that cannot take the room
        // now (its session gone a moment) would have the one serving it close it for nothing.
        if viaProxy && taken == .heldElsewhere {
          session.publish(.init(node: session.nodeID, kind: .wanted, standup: roomID))
        }
        // NB: a node that cannot take it says so, not that another has it: with the database
        // away, none may.
        let why =
          switch taken {
          case .noDatabase: "This server cannot reach its database right now"
          case .unavailable: "This server cannot take this standup right now"
          default: "This standup is served by another server"
          }
        return .refused(
          code: .serviceRestart, reason: "\(why): reconnecting.",
          error: taken == .heldElsewhere
            ? elsewhere : WireError(.roomMoving, "\(why). Try again in a moment."))
      }
      // NB: from the lock on, this node's own state is the truth about who is in the room:
      // what another node still says of it (its goodbye, sent after it gave the lock back)
      // is past.
      remoteRooms.serving(roomID)
      let giveBack: @Sendable () async -> Void = {
        remoteRooms.stoppedServing(roomID)
        await session.release(hold)
      }
      do {
        guard let standup = try await storage.loadStandup(roomID) else {
          await giveBack()
          return .refused(
            code: .gone, reason: "No standup has this id.",
            error: WireError(.notFound, "No standup has the id \"\(roomID.uuidString)\"."))
        }
        let state = try await StandupRoomFeature.savedState(of: standup, storage: storage)
        versions.fence { session.holds(hold) }
        held.value = hold
        // NB: the one place that says which node serves a room (metrics carry no ids).
        logger.info(
          "Room \(roomID) opens on this node\(state.meeting == nil ? "" : ", with its meeting as it was saved")."
        )
        return .owned(state, release: giveBack)
      } catch {
        logger.error("Opening room \(roomID) failed: \(error)")
        await giveBack()
        return StandupRoomFeature.unreadable
      }
    }
  }

  /// The session is gone, and with it every lock: every room closes (1012) at once.
  func sessionLost() {
    // NB: another node may take these rooms before they finished closing here: it speaks for
    // them from then on.
    remoteRooms.stoppedServingAll()
    let rooms = shared.withLock { Array($0.rooms.values) }
    let tell = "This server lost its database connection: reconnecting."
    for room in rooms {
      room.enqueue(
        .restart(why: "the database session was lost", code: .serviceRestart, tell: tell))
      // NB: a room whose event still waits on a write to the lost database half a second on
      // would close only once the write is given up (15 s): its people would see a clock that
      // stopped, as if nothing was wrong. (Not at once: a write whose connection went, which
      // ended the session, is answered within that time, and its sender is told.)
      Task {
        try? await Task.sleep(for: .milliseconds(500))
        await room.closeEveryoneNow(code: .serviceRestart, reason: tell)
      }
    }
  }

  /// A new session listens, and has said `hello`: what this node heard of others' rooms is in
  /// doubt until they say it again, in answer; what they do not is shown as left after 2 s.
  /// The catalog is brought up to the database.
  func listening() async {
    remoteRooms.doubtEverything()
    await catchUp()
    Task { [weak self] in
      try? await Task.sleep(for: .seconds(2))
      guard let self else { return }
      for (room, live) in self.remoteRooms.stillDoubted() {
        await self.showLeft(room, live)
      }
    }
  }

  /// Brings the catalog and the lobby up to the database once this node listens for notices
  /// (at start, and with each new session): a standup another node made or changed while no
  /// notice could reach this one is shown, and found by the HTTP API; one deleted meanwhile
  /// goes. (Rooms open here are their own truth; a standup this node is making may not be
  /// saved yet, and stays.)
  @discardableResult
  func catchUp(retrying: Bool = false) async -> Bool {
    do {
      // NB: read before the load: a standup in the database then that the load lacks was
      // deleted (ids are never used again).
      let known = catalog.savedIDs
      let heard = remoteRooms.noticesSoFar()
      let stored = try await storage.load()
      let storedIDs = Set(stored.map(\.id))
      for id in known.subtracting(storedIDs)
      where shared.withLock({ $0.rooms[id] == nil }) {
        catalog.remove(id)
        await notifier.receive(.standupDeleted(id))
      }
      for standup in stored {
        let known = catalog[standup.id]
        // NB: a room open here is its own truth, but for a lobby that does not list it yet
        // (the notice of its making was missed): listed now, with who is in it.
        if shared.withLock({ $0.rooms[standup.id] != nil }) {
          guard known == nil else { continue }
          guard await show(standup, heard: heard[standup.id, default: 0]) else { continue }
          if let live = await live(of: standup.id) {
            await notifier.receive(.roomActivityChanged(standup.id, live))
          }
          continue
        }
        guard known?.withoutHistory != standup.withoutHistory else { continue }
        guard await show(standup, heard: heard[standup.id, default: 0]) else { continue }
        // NB: who is in its room may have been said before the lobby listed it (a catch-up
        // retried by the sweep, after the others answered `hello`), and was dropped then.
        if known == nil, let live = await live(of: standup.id) {
          await notifier.receive(.roomActivityChanged(standup.id, live))
        }
      }
      return true
    } catch {
      if !retrying {
        logger.warning("Reading the standups again, after listening, failed: \(error)")
      }
      remoteRooms.couldNotRead(nil)
      return false
    }
  }

  /// Shows `standup` as the database had it, unless that is past: another notice of it came
  /// while it was read (`heard`: the count before; that notice's reading shows it), or it was
  /// deleted (then said gone again, after it: the deletion may have reached the lobby first).
  @discardableResult
  private func show(_ standup: Standup, heard: Int) async -> Bool {
    guard remoteRooms.notices(of: standup.id) == heard, catalog.update(standup)
    else { return false }
    await notifier.receive(.standupChanged(standup))
    guard !catalog.wasDeleted(standup.id) else {
      await notifier.receive(.standupDeleted(standup.id))
      return false
    }
    return true
  }

  /// Reads again what could not be read when heard of (the database was unreachable a
  /// moment): without it, this node's lobby would show those standups as they were until
  /// they changed again.
  func readAgainWhatFailed() async {
    let (standups, all) = remoteRooms.takeUnread()
    // NB: what a failed catch-up would have read waits for the next sweep, unread.
    if all, !(await catchUp(retrying: true)) {
      for id in standups { remoteRooms.couldNotRead(id) }
      return
    }
    for id in standups.sorted(by: { $0.uuidString < $1.uuidString }) {
      await read(changed: id, retrying: true)
    }
  }

  /// Shows standup `id` as the database has it now (another node changed it). A failure is
  /// logged once, not at each retry.
  private func read(changed id: UUID, retrying: Bool = false) async {
    let heard = remoteRooms.notices(of: id)
    do {
      guard let standup = try await storage.loadStandup(id) else { return }
      let listed = catalog[id] != nil
      guard await show(standup, heard: heard) else { return }
      // NB: who is in its room may have been said before the lobby listed it (a room opened
      // at once, here or on another node), and was dropped then.
      if !listed, let live = await live(of: id) {
        await notifier.receive(.roomActivityChanged(id, live))
      }
    } catch {
      if !retrying {
        logger.warning("Reading standup \(id), which another node changed, failed: \(error)")
      }
      remoteRooms.couldNotRead(id)
    }
  }

  /// What another node said.
  func heard(_ notice: NodeSession.Notice) async {
    switch notice.kind {
    case .changed:
      guard let id = notice.standup else { return }
      remoteRooms.noticed(id)
      await read(changed: id)
    case .deleted:
      guard let id = notice.standup else { return }
      remoteRooms.noticed(id)
      catalog.remove(id)
      _ = remoteRooms.heard(id, live: nil, from: nil)
      await notifier.receive(.standupDeleted(id))
    case .live:
      guard let id = notice.standup else { return }
      // NB: another node speaks for the room than the last: the database says which is its
      // node now (a failed question leaves it unknown: `heard` judges by the word alone).
      var holder: Int32?? = nil
      if let cluster, let pid = notice.pid, let last = remoteRooms.lastSpeaker(of: id), last != pid
      {
        holder = try? await cluster.lockHolder(of: id)
      }
      guard await !isPast(notice.live, in: id),
        remoteRooms.heard(id, live: notice.live, from: notice.pid, holder: holder)
      else { return }
      await notifier.receive(.roomActivityChanged(id, notice.live))
    case .wanted:
      guard let id = notice.standup else { return }
      await handOn(id)
    case .hello:
      // A node (re)joined: it hears who is in this node's rooms.
      await sayWhoIsInTheRooms()
    }
  }

  /// Whether what another node says of a room is past: a meeting going on with nobody in it
  /// that the database no longer has (its checkpoint goes as it ends). That is a goodbye sent
  /// late — by a node that lost the database and found it again after the meeting ended
  /// elsewhere — and would show the meeting paused for good. (A failed read takes the word.)
  private func isPast(_ live: Lobby.Live?, in id: UUID) async -> Bool {
    guard let live, live.participants == 0, live.meetingRunning,
      case .some(.none) = try? await storage.loadCheckpoint(id)
    else { return false }
    return true
  }

  /// The proxy sends this room's people to another node now (this one was down, or came
  /// back): the room closes here (1012) once its clocks are written, and its people follow
  /// the proxy. Not within 2 s of opening, so that two nodes never toss a room back and forth.
  private func handOn(_ id: UUID) async {
    guard let room = shared.withLock({ $0.rooms[id] }),
      ContinuousClock.now - room.openedAt >= .seconds(2)
    else { return }
    // NB: not while a deletion waits for its undo window (10 s at most): handed on, it would
    // be cut short. The other node asks again as people arrive there.
    guard !(await room.read({ $0.deletionIsPending })) else { return }
    await room.cancelAllEffects()
    await heartbeat.flush()
    room.enqueue(
      .restart(
        why: "the proxy now sends its people to another node", code: .serviceRestart,
        handingOn: true))
  }

  /// Rooms served by a node whose session ended show nobody in them (a meeting they ran
  /// stays shown: it comes back where it was on the next node).
  private func forgetDeadNodes(_ session: NodeSession) async {
    guard let alive = try? await session.liveNodeSessions() else { return }
    for (room, live) in remoteRooms.orphaned(alive: alive) {
      await showLeft(room, live)
    }
  }

  /// The lobby shows nobody in a room another node served (a meeting it ran stays, paused —
  /// unless the database has no checkpoint for it: it ended since, while this node was deaf).
  private func showLeft(_ room: UUID, _ live: Lobby.Live) async {
    let gone = Lobby.Live(participants: 0, meetingRunning: true, meetingPaused: true)
    var left: Lobby.Live?
    if live.meetingRunning, await !isPast(gone, in: room) { left = gone }
    // NB: unless this node took the room meanwhile (its own state is the truth then).
    guard shared.withLock({ $0.rooms[room] == nil }) else { return }
    await notifier.receive(.roomActivityChanged(room, left))
  }
}
