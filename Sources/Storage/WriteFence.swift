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

  /// The room's write barrier: an advisory lock of two `int4` keys (not the room's `bigint`
  /// one: PostgreSQL keeps the two kinds apart). Each fenced write holds it shared until it
  /// commits; a node taking the room takes it once, exclusively, before loading the room,
  /// and so waits for a commit the last owner had under way.
  public static func barrier(_ key: Int64) -> (Int32, Int32) {
    let (high, low) = halves(key)
    return (Int32(truncatingIfNeeded: high), Int32(truncatingIfNeeded: low))
  }

  /// Checks, in the write's transaction, that this node may still write for the room; holds
  /// the room's barrier (`barrier`) shared until the transaction ends.
  ///
  /// NB: the barrier first: a write that takes it after the next owner passed it finds the
  /// lock gone from this node's session, and one that took it before is waited for.
  public func check(on connection: PostgresConnection, logger: Logger) async throws {
    let (first, second) = Self.barrier(key)
    try await connection.query(
      "SELECT pg_advisory_xact_lock_shared(\(first), \(second))", logger: logger)
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
  /// Waits, for a node taking the room whose lock is `key`, for the writes its last owner had
  /// under way (a `COMMIT` on a stalled disk, or sent just before it froze) to end: they hold
  /// the room's barrier shared (`WriteFence.check`). What they commit is then in the state
  /// the node loads, and none of them lands after it. At most `lock_timeout`: a transaction a
  /// frozen node left open ends within `idle_in_transaction_session_timeout`.
  ///
  /// NB: on a pooled connection, not the node session's, whose heartbeat must not wait behind
  /// this; one statement is one transaction, which lets the barrier go as it ends.
  public func waitForWritesUnderWay(_ key: Int64) async throws {
    let (first, second) = WriteFence.barrier(key)
    // NB: within the deadline, as every call: a pooled connection gone half-open would hold
    // the room's lock, and the room, until TCP gave up.
    try await said {
      _ = try await self.client.query(
        "SELECT pg_advisory_xact_lock(\(first), \(second))", logger: self.logger)
    }
  }

  /// The storage a room of this node uses: its writes fenced by `fence` (nil: the room is not
  /// this node's any more, and nothing is written).
  public func roomClient(fence: @escaping @Sendable () -> WriteFence?) -> StorageClient {
    var client = storageClient
    // NB: the fence is read as the write starts; one given up ends the session it was for, if
    // it is still the node's, and no later one.
    @Sendable func fenced(_ write: @escaping @Sendable (WriteFence) async throws -> Void)
      async throws
    {
      let now = fence()
      try await self.said(write: true, session: now?.pid) {
        guard let now else { throw WriteFence.notServed }
        try await write(now)
      }
    }
    client.save = { standup in try await fenced { try await self.save(standup, fence: $0) } }
    client.saveKeepingDraft = { standup, draft in
      try await fenced { try await self.save(standup, keeping: draft, fence: $0) }
    }
    client.saveMeetingNotes = { id, meeting in
      try await fenced { try await self.saveMeetingNotes(id, meeting, fence: $0) }
    }
    client.delete = { id in try await fenced { try await self.delete(id, fence: $0) } }
    client.saveCheckpoint = { id, checkpoint in
      try await fenced { try await self.saveCheckpoint(id, checkpoint, fence: $0) }
    }
    client.saveDraft = { id, draft in
      try await fenced { try await self.saveDraft(id, draft, fence: $0) }
    }
    return client
  }
}
