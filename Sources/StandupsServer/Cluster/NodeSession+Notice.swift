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

  /// `'5000ms'`: a duration as a setting's literal (SET takes no bound parameters).
  static func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return "'\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms'"
  }
}
