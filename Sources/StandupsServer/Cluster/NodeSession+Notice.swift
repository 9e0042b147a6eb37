import Foundation
import StandupsFeatures

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
  }

  /// What the notices that could not be sent were about, to be said again (`sayAgain`) as
  /// it is then, not as it was: a standup changed or deleted (the others read it again from
  /// the database), and rooms whose presence was lost (the room's presence now if it is
  /// open here; else the "nobody here" that was lost, which a node that took the room since
  /// overrides — a word with people in it, from a room closed since, is past).
  struct LostNotices {
    private(set) var changed: Set<UUID> = []
    private(set) var deleted: Set<UUID> = []
    private(set) var rooms: [UUID: Lobby.Live?] = [:]

    var isEmpty: Bool { changed.isEmpty && deleted.isEmpty && rooms.isEmpty }

    mutating func lost(_ notice: Notice) {
      guard let id = notice.standup else { return }
      switch notice.kind {
      case .changed: changed.insert(id)
      case .deleted: deleted.insert(id)
      case .live: rooms[id] = .some(notice.live)
      case .hello, .wanted: break
      }
    }

    /// The notices to send again, given the presence of the rooms open here (`open`); forgets
    /// them all.
    mutating func sayAgain(open: [UUID: Lobby.Live?]) -> [Notice] {
      defer { self = LostNotices() }
      var notices = changed.sorted { $0.uuidString < $1.uuidString }.map {
        Notice(node: "", kind: .changed, standup: $0)
      }
      notices += deleted.sorted { $0.uuidString < $1.uuidString }.map {
        Notice(node: "", kind: .deleted, standup: $0)
      }
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

  /// `'5000ms'`: a duration as a setting's literal (SET takes no bound parameters).
  static func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return "'\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms'"
  }
}
