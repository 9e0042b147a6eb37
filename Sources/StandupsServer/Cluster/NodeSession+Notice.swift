import Foundation
import PostgresNIO
import StandupsFeatures
import Storage
import Synchronization

extension NodeSession {
  /// A notice between nodes: a standup changed or went, or who is in a room now.
  struct Notice: Codable, Sendable, Equatable {
    enum Kind: String, Codable, Sendable {
      case changed, deleted, live, hello
      /// The proxy now sends this standup's people to the sender: whoever has it hands it on.
      case wanted
    }
    var node: String
    var kind: Kind
    var standup: UUID?
    var live: Lobby.Live?
    /// The PostgreSQL backend of the sending node's session (its rooms die with it).
    var pid: Int32?

    /// Whether this notice is past by the time it is sent: a word with people in it from a room
    /// whose lock this node does not hold (`holding`) any more. (A room's last word, "nobody
    /// here", comes after its lock went back: that is how a room says goodbye.)
    func isPast(holding: (UUID) -> Bool) -> Bool {
      guard kind == .live, (live?.participants ?? 0) > 0, let standup else { return false }
      return !holding(standup)
    }

    /// A notice as `pg_notify` sends it: JSON.
    var text: String {
      String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self)
    }
  }

  /// What the notices that could not be sent were about, to be said again (`sayAgain`) as
  /// it is then, not as it was: a `hello` (the others' answers say who is in their rooms),
  /// and rooms whose presence was lost (the room's presence now if it is open here; else the
  /// "nobody here" that was lost, which a node that took the room since overrides — a word
  /// with people in it, from a room closed since, is past). A standup changed or deleted is
  /// told by its write, in its transaction (`PostgresStorage.announceWrites`), never here.
  struct LostNotices {
    private(set) var hello = false
    private(set) var rooms: [UUID: Lobby.Live?] = [:]

    var isEmpty: Bool { !hello && rooms.isEmpty }

    mutating func lost(_ notice: Notice) {
      switch notice.kind {
      case .hello: hello = true
      case .live:
        guard let id = notice.standup else { return }
        rooms[id] = .some(notice.live)
      case .changed, .deleted, .wanted: break
      }
    }

    /// The notices to send again, given the presence of the rooms open here (`open`); forgets
    /// them all.
    mutating func sayAgain(open: [UUID: Lobby.Live?]) -> [Notice] {
      defer { self = LostNotices() }
      var notices = hello ? [Notice(node: "", kind: .hello)] : []
      for (id, live) in rooms.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
        if let now = open[id] {
          notices.append(Notice(node: "", kind: .live, standup: id, live: now))
        } else if (live?.participants ?? 0) == 0 {
          notices.append(Notice(node: "", kind: .live, standup: id, live: live))
        }
      }
      return notices
    }
  }

  // MARK: Notices

  /// Tells the other nodes, in order, without waiting.
  func publish(_ notice: Notice) { outbox.yield(notice) }

  /// Says again what the notices that could not be sent were about, as it is now (`open`:
  /// the presence of the rooms open here): a room's last word, lost, would leave the other
  /// lobbies showing it as it was (a person who left, a standup deleted).
  func sayLostAgain(open: () async -> [UUID: Lobby.Live?]) async {
    guard unsent.withLock({ !$0.isEmpty }) else { return }
    let rooms = await open()
    for var notice in unsent.withLock({ $0.sayAgain(open: rooms) }) {
      notice.node = nodeID
      publish(notice)
    }
  }

  func sendNotices() async {
    for await var notice in outgoing {
      // NB: waiting here (the database away a while), the room may have closed, or gone with a
      // lost session, and another node may speak for it now: what this one said of who is in it
      // is past.
      guard !notice.isPast(holding: holdsLock(of:)) else { continue }
      notice.pid = notice.pid ?? pid
      // NB: PostgreSQL takes payloads under 8000 bytes: a crowded room is sent without names.
      if notice.text.utf8.count > 7_000, notice.live != nil { notice.live?.people = [] }
      let text = notice.text
      // NB: tried a few times, in order (the notices after it wait); then `sayLostAgain`. Each
      // try within the storage's deadline: a pooled connection gone half-open must not hold
      // every notice after it.
      for attempt in 1...4 {
        do {
          try await storage.said { [storage, logger] in
            _ = try await storage.client.query(
              "SELECT pg_notify(\(Self.channel), \(text))", logger: logger)
          }
          break
        } catch {
          guard attempt < 4 else {
            logger.warning("Telling the other nodes (\(notice.kind.rawValue)) failed: \(error)")
            unsent.withLock { $0.lost(notice) }
            break
          }
          try? await Task.sleep(for: .milliseconds(100 << attempt))
        }
      }
    }
  }

  /// The backends of the nodes alive now (their sessions).
  func liveNodeSessions() async throws -> Set<Int32> {
    try await storage.said { [storage, logger] in
      var pids: Set<Int32> = []
      for try await pid in try await storage.client.query(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'standups-node'",
        logger: logger
      ).decode(Int32.self) {
        pids.insert(pid)
      }
      return pids
    }
  }

  /// The node session holding `room`'s lock now, if one does (a room moving holds none for a
  /// moment).
  func lockHolder(of room: UUID) async throws -> Int32? {
    let (high, low) = WriteFence.halves(Self.lockKey(room))
    return try await storage.said { [storage, logger] in
      var holder: Int32?
      for try await pid in try await storage.client.query(
        """
        SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
          AND objsubid = 1 AND classid = \(high)::oid AND objid = \(low)::oid
        """, logger: logger
      ).decode(Int32.self) {
        holder = pid
      }
      return holder
    }
  }

  /// `'5000ms'`: a duration as a setting's literal (SET takes no bound parameters).
  static func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return "'\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms'"
  }
}
