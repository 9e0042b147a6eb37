import Foundation
import StandupsFeatures
import Synchronization

/// Who is in the rooms other nodes serve, as they last said, and which node session said it:
/// when that session ends (its node died), nobody is there any more.
final class RemoteRooms: Sendable {
  /// `doubted`: said before this node's latest session listened, and not said again since.
  private let rooms = Mutex<[UUID: (pid: Int32, live: Lobby.Live, doubted: Bool)]>([:])
  private let sweeping = Mutex<Task<Void, Never>?>(nil)

  /// The rooms this node holds the lock of.
  private let here = Mutex<Set<UUID>>([])

  /// What could not be read from the database when heard of: standups another node changed,
  /// and whether the catch-up after a new session failed. The sweep reads them again.
  private let unread = Mutex<(standups: Set<UUID>, all: Bool)>(([], false))
  /// How many `changed` and `deleted` notices were heard of each standup: a reading begun
  /// before the last of them is past (the sweep reads beside the listener).
  private let notices = Mutex<[UUID: Int]>([:])

  /// Keeps what node `pid` says of a room; false if it is stale: this node serves the room
  /// (its own state is the truth), or the room's last word came from another node and this one
  /// is past. `holder`, asked of the database when the speaker changes (`lastSpeaker`), tells:
  /// the node that holds the room's lock now speaks for it, and no other — a late word from
  /// the node it left (sent as it closed, or held up on its way) is past, whatever it says.
  /// Not known (`nil`: the question failed) or nobody holds it, a word that nobody is there
  /// is past (the room moved, and its people with it, before this node heard that the node it
  /// left had closed it); one with people in it is not.
  func heard(_ room: UUID, live: Lobby.Live?, from pid: Int32?, holder: Int32?? = nil) -> Bool {
    guard pid == nil || !here.withLock({ $0.contains(room) }) else { return false }
    return rooms.withLock { rooms in
      if let pid, let last = rooms[room]?.pid, last != pid {
        if case .some(.some(let holder)) = holder {
          guard holder == pid else { return false }
        } else if (live?.participants ?? 0) == 0 {
          return false
        }
      }
      if let live, let pid { rooms[room] = (pid, live, false) } else { rooms[room] = nil }
      return true
    }
  }

  /// The node session that last said who is in `room`, if one did.
  func lastSpeaker(of room: UUID) -> Int32? { rooms.withLock { $0[room]?.pid } }

  /// This node was deaf for a while (a new session): everything heard before may have ended
  /// meanwhile. Each node answers the new session's `hello` with its open rooms; what they
  /// do not say again is `stillDoubted()`'s.
  func doubtEverything() {
    rooms.withLock { rooms in
      for room in rooms.keys { rooms[room]?.doubted = true }
    }
  }

  /// The rooms no node said again since `doubtEverything`, with what they last showed;
  /// forgets them.
  func stillDoubted() -> [(UUID, Lobby.Live)] {
    rooms.withLock { rooms in
      let gone = rooms.filter(\.value.doubted)
      for room in gone.keys { rooms[room] = nil }
      return gone.map { ($0.key, $0.value.live) }
    }
  }

  /// This node serves `room` now (it took its lock): what others said of it is past, and
  /// what they still say until it gives the lock back.
  func serving(_ room: UUID) {
    here.withLock { _ = $0.insert(room) }
    rooms.withLock { $0[room] = nil }
  }

  /// This node gave `room`'s lock back: the next node to take it says who is there.
  func stoppedServing(_ room: UUID) { here.withLock { _ = $0.remove(room) } }

  /// This node's session ended, and every lock with it (its rooms are still closing).
  func stoppedServingAll() { here.withLock { $0.removeAll() } }

  /// Reading standup `id` (nil: every standup, a catch-up) failed: it is read again.
  func couldNotRead(_ id: UUID?) {
    unread.withLock { unread in
      if let id { unread.standups.insert(id) } else { unread.all = true }
    }
  }

  /// A `changed` or `deleted` notice of standup `id` came.
  func noticed(_ id: UUID) { notices.withLock { $0[id, default: 0] += 1 } }

  /// How many notices of each standup came so far.
  func noticesSoFar() -> [UUID: Int] { notices.withLock { $0 } }

  /// How many notices of standup `id` came so far.
  func notices(of id: UUID) -> Int { notices.withLock { $0[id, default: 0] } }

  /// What is to be read again; forgets it.
  func takeUnread() -> (standups: Set<UUID>, all: Bool) {
    unread.withLock { unread in
      defer { unread = ([], false) }
      return unread
    }
  }

  /// What the node serving `room` last said of who is in it, if one did.
  func live(of room: UUID) -> Lobby.Live? { rooms.withLock { $0[room]?.live } }

  /// Whether another node has said who is in `room` (it serves it now).
  func haveWord(about room: UUID) -> Bool { rooms.withLock { $0[room] != nil } }

  /// The rooms whose node session is not among `alive`, with what they last showed; forgets
  /// them.
  func orphaned(alive: Set<Int32>) -> [(UUID, Lobby.Live)] {
    rooms.withLock { rooms in
      let gone = rooms.filter { !alive.contains($0.value.pid) }
      for room in gone.keys { rooms[room] = nil }
      return gone.map { ($0.key, $0.value.live) }
    }
  }

  func keep(_ task: Task<Void, Never>) { sweeping.withLock { $0 = task } }
  func stop() { sweeping.withLock { $0 }?.cancel() }
}
