import Foundation
import PostgresNIO
import StandupsFeatures
import Synchronization

extension PostgresStorage {
  /// In a cluster: what a save or a deletion of a standup tells the other nodes (`pg_notify`
  /// on `channel`, with the payload `notice` makes: the standup's id, and whether it went).
  /// It is sent in the write's own transaction, so the others hear of exactly the writes that
  /// committed, even when this node dies the moment after the commit.
  public func announceWrites(
    on channel: String, _ notice: @escaping @Sendable (Standup.ID, _ deleted: Bool) -> String
  ) {
    announcer.withLock { $0 = Announcer(channel: channel, notice: notice) }
  }
  // NB: in a class, as `ClockFence` is, for the same reason.
  final class Announcer: Sendable {
    let channel: String
    let notice: @Sendable (Standup.ID, Bool) -> String
    init(channel: String, notice: @escaping @Sendable (Standup.ID, Bool) -> String) {
      (self.channel, self.notice) = (channel, notice)
    }
  }

  func announce(
    _ id: Standup.ID, deleted: Bool = false, on connection: PostgresConnection
  ) async throws {
    guard let announcer = announcer.withLock({ $0 }) else { return }
    try await connection.query(
      "SELECT pg_notify(\(announcer.channel), \(announcer.notice(id, deleted)))", logger: logger)
  }
}
