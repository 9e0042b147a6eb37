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

  /// The notices that could not be sent, each standup's last, and how many of each standup's
  /// were queued: one is sent again only while no newer one of its standup was queued since
  /// (a newer one says more, and an older one sent after it would undo it).
  struct LostNotices {
    private var count: [UUID: Int] = [:]
    private var notices: [UUID: (notice: Notice, number: Int)] = [:]

    mutating func queued(_ notice: Notice) {
      guard let id = notice.standup else { return }
      count[id, default: 0] += 1
    }

    /// `notice` could not be sent (its standup's, as `queued` counted it).
    mutating func lost(_ notice: Notice) {
      guard let id = notice.standup else { return }
      notices[id] = (notice, count[id, default: 0])
    }

    /// The lost notices that are still their standup's last; forgets them all.
    mutating func takeStillLast() -> [Notice] {
      defer { notices = [:] }
      return notices.filter { count[$0.key] == $0.value.number }.map(\.value.notice)
    }
  }

  /// `'5000ms'`: a duration as a setting's literal (SET takes no bound parameters).
  static func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return "'\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms'"
  }
}
