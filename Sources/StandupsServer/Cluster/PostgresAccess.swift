import Foundation
import NIOCore
import PostgresNIO
import StandupsWire
import Storage

extension PostgresStorage {
  /// The team's secret and bots in the same database as the standups: every node (and
  /// `standups-server invite` or `bots` run anywhere) agrees on them. Each call has the
  /// storage's deadline (`said`): on a connection left half-open, a sign-out or the reading of
  /// credentials each second (which closes revoked bots' and expired sessions' connections)
  /// would otherwise wait until TCP gave up.
  public var access: AccessStorage {
    let raw = unboundedAccess
    return AccessStorage(
      teamSecret: { try await self.said { try await raw.teamSecret() } },
      rotateTeamSecret: { try await self.said { try await raw.rotateTeamSecret() } },
      bots: { try await self.said { try await raw.bots() } },
      addBot: { bot in try await self.said { try await raw.addBot(bot) } },
      revokeBot: { name in try await self.said { try await raw.revokeBot(name) } },
      signedOutSessions: { try await self.said { try await raw.signedOutSessions() } },
      signOutSession: { hash, expires in
        try await self.said { try await raw.signOutSession(hash, expires) }
      })
  }

  private var unboundedAccess: AccessStorage {
    // NB: the closures keep the storage (and so its connection pool) alive.
    let storage = self
    let logger = self.logger
    @Sendable func secret() async throws -> TeamSecret? {
      for try await bytes in try await storage.client.query(
        "SELECT secret FROM team WHERE id = 1", logger: logger
      ).decode(ByteBuffer.self) {
        return TeamSecret(bytes: Array(buffer: bytes))
      }
      return nil
    }
    return AccessStorage(
      teamSecret: {
        if let secret = try await secret() { return secret }
        // NB: insert-if-absent, then read: nodes starting at once agree on one secret.
        try await storage.client.query(
          "INSERT INTO team (id, secret, created_at) VALUES (1, \(ByteBuffer(bytes: TeamSecret.random().bytes)), now()) ON CONFLICT (id) DO NOTHING",
          logger: logger)
        guard let secret = try await secret() else {
          throw StorageError("the team's secret could not be kept")
        }
        return secret
      },
      rotateTeamSecret: {
        let secret = TeamSecret.random()
        try await storage.client.query(
          """
          INSERT INTO team (id, secret, created_at) VALUES (1, \(ByteBuffer(bytes: secret.bytes)), now())
          ON CONFLICT (id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at
          """, logger: logger)
        return secret
      },
      bots: {
        var bots: [Bot] = []
        for try await (name, hash, scope, standups, createdAt) in try await storage.client.query(
          "SELECT name, token_hash, scope, standups, created_at FROM bot ORDER BY created_at, name",
          logger: logger
        ).decode((String, String, String, String, Date).self) {
          bots.append(
            Bot(
              name: name, tokenHash: hash, scope: Bot.Scope(rawValue: scope) ?? .notes,
              standups: Bot.standups(stored: standups),
              createdAt: createdAt))
        }
        return bots
      },
      addBot: { bot in
        // NB: names that read alike are told apart here; the table's key (the name in small
        // letters) still refuses the same name added twice at once.
        var names: [String] = []
        for try await name in try await storage.client.query(
          "SELECT name FROM bot", logger: logger
        ).decode(String.self) {
          names.append(name)
        }
        if let clash = AccessStorageError.clash(bot.name, with: names) { throw clash }
        var added = false
        for try await _ in try await storage.client.query(
          """
          INSERT INTO bot (name, name_key, token_hash, scope, standups, created_at)
          VALUES (\(bot.name), \(bot.name.lowercased()), \(bot.tokenHash), \(bot.scope.rawValue),
            \(bot.standups.map(\.uuidString).joined(separator: ",")), \(bot.createdAt))
          ON CONFLICT (name_key) DO NOTHING RETURNING 1
          """, logger: logger
        ).decode(Int32.self) {
          added = true
        }
        if !added { throw AccessStorageError.nameTaken(bot.name) }
      },
      revokeBot: { name in
        var removed = false
        for try await _ in try await storage.client.query(
          "DELETE FROM bot WHERE name_key = \(name.lowercased()) RETURNING 1", logger: logger
        ).decode(Int32.self) {
          removed = true
        }
        return removed
      },
      signedOutSessions: {
        var hashes: Set<String> = []
        for try await hash in try await storage.client.query(
          "SELECT token_hash FROM signed_out_session WHERE expires > now()", logger: logger
        ).decode(String.self) {
          hashes.insert(hash)
        }
        return hashes
      },
      signOutSession: { hash, expires in
        try await storage.client.query(
          "DELETE FROM signed_out_session WHERE expires <= now()", logger: logger)
        try await storage.client.query(
          """
          INSERT INTO signed_out_session (token_hash, expires) VALUES (\(hash), \(expires))
          ON CONFLICT (token_hash) DO NOTHING
          """, logger: logger)
      })
  }
}
