import Foundation
import GRDB
import StandupsWire
import Storage
import Synchronization

/// Where the team's secret and its bots are kept: beside the standups, so that every process
/// using the same data (the server, `standups-server invite`, `standups-server bots …`) and
/// every node of a cluster agrees on them.
public struct AccessStorage: Sendable {
  /// The team's secret; made (and kept) on first use.
  public var teamSecret: @Sendable () async throws -> TeamSecret
  /// Replaces the secret with a new one: every invite and session made before ends.
  public var rotateTeamSecret: @Sendable () async throws -> TeamSecret
  public var bots: @Sendable () async throws -> [Bot]
  /// Adds a bot; throws `AccessStorageError.nameTaken` if a bot has that name already.
  public var addBot: @Sendable (Bot) async throws -> Void
  /// Removes the bot of that name (any case); false if there was none.
  public var revokeBot: @Sendable (String) async throws -> Bool
  /// The hashes (`Bot.hash(token:)`) of the sessions signed out that have not expired yet.
  public var signedOutSessions: @Sendable () async throws -> Set<String>
  /// Keeps a session's hash as signed out until it expires (and forgets those expired).
  public var signOutSession: @Sendable (_ hash: String, _ expires: Date) async throws -> Void

  public init(
    teamSecret: @escaping @Sendable () async throws -> TeamSecret,
    rotateTeamSecret: @escaping @Sendable () async throws -> TeamSecret,
    bots: @escaping @Sendable () async throws -> [Bot],
    addBot: @escaping @Sendable (Bot) async throws -> Void,
    revokeBot: @escaping @Sendable (String) async throws -> Bool,
    signedOutSessions: @escaping @Sendable () async throws -> Set<String>,
    signOutSession: @escaping @Sendable (_ hash: String, _ expires: Date) async throws -> Void
  ) {
    self.teamSecret = teamSecret
    self.rotateTeamSecret = rotateTeamSecret
    self.bots = bots
    self.addBot = addBot
    self.revokeBot = revokeBot
    self.signedOutSessions = signedOutSessions
    self.signOutSession = signOutSession
  }
}

public enum AccessStorageError: Error, CustomStringConvertible {
  case nameTaken(String)
  /// A bot's name reads like another's (`TextRules.readable`): "Cl" beside "CI".
  case readsLike(String, taken: String)

  public var description: String {
    switch self {
    case .nameTaken(let name):
      "A bot named \"\(name)\" exists already: revoke it first or choose another name."
    case .readsLike(let name, let taken):
      "\"\(name)\" reads like the name of the bot \"\(taken)\": choose another, or revoke that one first."
    }
  }

  /// Why a bot may not be called `name` beside the bots called `existing`, or nil: their names
  /// are compared as people read them, so that no bot passes for another in a room.
  static func clash(_ name: String, with existing: [String]) -> AccessStorageError? {
    let readable = TextRules.readable(name)
    guard let taken = existing.first(where: { TextRules.readable($0) == readable }) else {
      return nil
    }
    return taken.lowercased() == name.lowercased()
      ? .nameTaken(taken) : .readsLike(name, taken: taken)
  }
}

extension AccessStorage {
  /// Kept in memory (tests, and servers given their standups in memory).
  public static func inMemory(secret: TeamSecret = .random(), bots: [Bot] = []) -> AccessStorage {
    let state = Mutex((secret: secret, bots: bots, signedOut: [String: Date]()))
    return AccessStorage(
      teamSecret: { state.withLock { $0.secret } },
      rotateTeamSecret: {
        state.withLock { state in
          state.secret = .random()
          return state.secret
        }
      },
      bots: { state.withLock { $0.bots } },
      addBot: { bot in
        try state.withLock { state in
          if let clash = AccessStorageError.clash(bot.name, with: state.bots.map(\.name)) {
            throw clash
          }
          state.bots.append(bot)
        }
      },
      revokeBot: { name in
        state.withLock { state in
          let count = state.bots.count
          state.bots.removeAll { $0.name.lowercased() == name.lowercased() }
          return state.bots.count < count
        }
      },
      signedOutSessions: {
        let now = Date()
        return state.withLock { Set($0.signedOut.filter { $0.value > now }.keys) }
      },
      signOutSession: { hash, expires in
        let now = Date()
        state.withLock { state in
          state.signedOut = state.signedOut.filter { $0.value > now }
          state.signedOut[hash] = expires
        }
      })
  }
}

extension SQLiteStorage {
  /// The team's secret and bots in the same database file as the standups.
  public var access: AccessStorage {
    let database = self.database
    return AccessStorage(
      teamSecret: {
        // NB: read first: the server asks every second, and a write would take the lock.
        if let secret = try await database.read({ db in
          try Data.fetchOne(db, sql: "SELECT secret FROM team WHERE id = 1")
        }) {
          return TeamSecret(bytes: Array(secret))
        }
        return try await database.write { db in
          // NB: insert-if-absent, then read: two processes starting at once agree on one secret.
          try db.execute(
            sql: "INSERT OR IGNORE INTO team (id, secret, createdAt) VALUES (1, ?, ?)",
            arguments: [Data(TeamSecret.random().bytes), Date()])
          let secret = try Data.fetchOne(db, sql: "SELECT secret FROM team WHERE id = 1") ?? Data()
          return TeamSecret(bytes: Array(secret))
        }
      },
      rotateTeamSecret: {
        let secret = TeamSecret.random()
        try await database.write { db in
          try db.execute(
            sql: "INSERT OR REPLACE INTO team (id, secret, createdAt) VALUES (1, ?, ?)",
            arguments: [Data(secret.bytes), Date()])
        }
        return secret
      },
      bots: {
        try await database.read { db in
          try Row.fetchAll(db, sql: "SELECT * FROM bot ORDER BY createdAt, name").map { row in
            let standups = Bot.standups(stored: row["standups"])
            return Bot(
              name: row["name"], tokenHash: row["tokenHash"],
              scope: Bot.Scope(rawValue: row["scope"]) ?? .notes, standups: standups,
              createdAt: row["createdAt"])
          }
        }
      },
      addBot: { bot in
        try await database.write { db in
          let names = try String.fetchAll(db, sql: "SELECT name FROM bot")
          if let clash = AccessStorageError.clash(bot.name, with: names) { throw clash }
          try db.execute(
            sql:
              "INSERT INTO bot (name, tokenHash, scope, standups, createdAt) VALUES (?, ?, ?, ?, ?)",
            arguments: [
              bot.name, bot.tokenHash, bot.scope.rawValue,
              bot.standups.map(\.uuidString).joined(separator: ","), bot.createdAt,
            ])
        }
      },
      revokeBot: { name in
        try await database.write { db in
          // NB: the column's NOCASE folds ASCII letters only: "маша" revokes "Маша" too.
          let names = try String.fetchAll(db, sql: "SELECT name FROM bot")
          guard let stored = names.first(where: { $0.lowercased() == name.lowercased() }) else {
            return false
          }
          try db.execute(sql: "DELETE FROM bot WHERE name = ?", arguments: [stored])
          return db.changesCount > 0
        }
      },
      signedOutSessions: {
        try await database.read { db in
          Set(
            try String.fetchAll(
              db, sql: "SELECT tokenHash FROM signedOutSession WHERE expires > ?",
              arguments: [Date()]))
        }
      },
      signOutSession: { hash, expires in
        try await database.write { db in
          try db.execute(
            sql: "DELETE FROM signedOutSession WHERE expires <= ?", arguments: [Date()])
          try db.execute(
            sql: "INSERT OR REPLACE INTO signedOutSession (tokenHash, expires) VALUES (?, ?)",
            arguments: [hash, expires])
        }
      })
  }
}
