import Foundation
import Storage
import Synchronization

// MARK: Ownership: what a room's lock is, once taken

extension NodeSession {
  /// The session a room's lock was taken in; it is held while that session is trusted.
  struct Hold: Sendable, Equatable {
    var room: UUID
    var generation: Int
  }

  /// A room's hold, once it is taken.
  final class HoldBox: Sendable {
    private let hold = Mutex<Hold?>(nil)
    var value: Hold? {
      get { hold.withLock { $0 } }
      set { hold.withLock { $0 = newValue } }
    }
  }

  /// Takes a room's lock if no other node holds it.
  func acquire(_ room: UUID) async -> Hold? {
    guard case .held(let hold) = await take(room) else { return nil }
    return hold
  }

  /// A room's advisory lock key (`WriteFence.lockKey`).
  static func lockKey(_ room: UUID) -> Int64 { WriteFence.lockKey(room) }

  /// What asking for a room's lock came to.
  enum Acquisition: Sendable, Equatable {
    case held(Hold)
    /// Another node holds it: only then is it worth asking that node to hand it on.
    case heldElsewhere
    /// This node cannot reach the database now (no session, or the lock query failed).
    case noDatabase
    /// This node cannot take it now though it reaches the database (the last owner's writes
    /// did not end in time).
    case unavailable
  }
}
