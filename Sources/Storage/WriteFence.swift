import Foundation
import IdentifiedCollections
import Logging
import PostgresNIO
import StandupsFeatures
import Synchronization

/// What lets a node write for a room: its session still holds the room's advisory lock.
public struct WriteFence: Sendable {
  /// The node session's backend.
  public var pid: Int32
  public var key: Int64
  /// The session is still trusted (the last heartbeat was recent enough).
  public var holds: @Sendable () -> Bool

  public init(pid: Int32, key: Int64, holds: @escaping @Sendable () -> Bool) {
    self.pid = pid
    self.key = key
    self.holds = holds
  }

  /// A room's advisory lock key: its id's first 64 bits.
  public static func lockKey(_ room: UUID) -> Int64 {
    let bytes = room.uuid
    return [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5, bytes.6, bytes.7].reduce(0) {
      ($0 << 8) | Int64($1)
    }
  }

  public static let notServed = StorageError(
    "this node no longer serves the standup (another node took it): nothing was written")

  /// An advisory lock's bigint key as `pg_locks` shows it: `classid` and `objid`.
  public static func halves(_ key: Int64) -> (high: Int64, low: Int64) {
    let bits = UInt64(bitPattern: key)
    return (Int64(bits >> 32), Int64(bits & 0xffff_ffff))
  }

  public func check(on connection: PostgresConnection, logger: Logger) async throws {
    let (high, low) = Self.halves(key)
    var held = 0
    for try await count in try await connection.query(
      """
      SELECT count(*)::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted
        AND pid = \(pid) AND objsubid = 1 AND classid = \(high)::oid AND objid = \(low)::oid
      """, logger: logger
    ).decode(Int.self) {
      held = count
    }
    guard held == 1, holds() else { throw Self.notServed }
  }
}

extension PostgresStorage {
  /// The storage a room of this node uses: its writes fenced by `fence` (nil: the room is not
  /// this node's any more, and nothing is written).
  public func roomClient(fence: @escaping @Sendable () -> WriteFence?) -> StorageClient {
    var client = storageClient
    @Sendable func required() throws -> WriteFence {
      guard let fence = fence() else { throw WriteFence.notServed }
      return fence
    }
    client.save = { standup in
      try await Self.said { try await self.save(standup, fence: try required()) }
    }
    client.delete = { id in try await Self.said { try await self.delete(id, fence: try required()) }
    }
    client.saveCheckpoint = { id, checkpoint in
      try await Self.said {
        try await self.saveCheckpoint(id, checkpoint, fence: try required())
      }
    }
    client.saveDraft = { id, draft in
      try await Self.said { try await self.saveDraft(id, draft, fence: try required()) }
    }
    return client
  }
}
