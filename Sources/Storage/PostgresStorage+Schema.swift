import Foundation
import IdentifiedCollections
import Logging
import PostgresNIO
import StandupsFeatures
import Synchronization

extension PostgresStorage {
  // MARK: Schema

  /// The schema, one step per version; a step never changes once released.
  static let migrations: [(name: String, sql: [String])] = [
    (
      "v1: standups, access, versions",
      [
        """
        CREATE TABLE standup (
          id uuid PRIMARY KEY,
          position bigint GENERATED ALWAYS AS IDENTITY,
          title text NOT NULL,
          duration_seconds integer NOT NULL,
          theme text NOT NULL)
        """,
        """
        CREATE TABLE attendee (
          standup_id uuid NOT NULL REFERENCES standup ON DELETE CASCADE,
          id uuid NOT NULL,
          position integer NOT NULL,
          name text NOT NULL,
          PRIMARY KEY (standup_id, id))
        """,
        """
        CREATE TABLE meeting (
          standup_id uuid NOT NULL REFERENCES standup ON DELETE CASCADE,
          id uuid NOT NULL,
          date timestamptz NOT NULL,
          transcript text NOT NULL,
          seconds integer NOT NULL DEFAULT 0,
          present text NOT NULL DEFAULT '[]',
          notes text NOT NULL DEFAULT '[]',
          PRIMARY KEY (standup_id, id))
        """,
        "CREATE INDEX meeting_by_date ON meeting (standup_id, date DESC)",
        """
        CREATE TABLE checkpoint (
          standup_id uuid PRIMARY KEY REFERENCES standup ON DELETE CASCADE,
          meeting_id uuid NOT NULL,
          seconds_elapsed integer NOT NULL,
          speaker_index integer NOT NULL,
          transcript text NOT NULL,
          notes text NOT NULL DEFAULT '[]',
          present text NOT NULL DEFAULT '[]',
          seconds_run integer NOT NULL DEFAULT 0)
        """,
        "CREATE TABLE room_version (room text PRIMARY KEY, next bigint NOT NULL)",
        """
        CREATE TABLE team (
          id integer PRIMARY KEY CHECK (id = 1),
          secret bytea NOT NULL,
          created_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE bot (
          name text NOT NULL,
          name_key text PRIMARY KEY,
          token_hash text NOT NULL UNIQUE,
          scope text NOT NULL,
          standups text NOT NULL,
          created_at timestamptz NOT NULL)
        """,
        "CREATE TABLE health (id integer PRIMARY KEY CHECK (id = 1), checked_at timestamptz NOT NULL)",
      ]
    ),
    (
      "v2: why a meeting was paused",
      // `everyoneLeft` when its room emptied (and was released); null: it was running.
      ["ALTER TABLE checkpoint ADD COLUMN paused_because text"]
    ),
    (
      "v3: drafts",
      // An open edit form's draft (`StandupDraft`'s body as JSON), until it is saved or
      // cancelled.
      [
        """
        CREATE TABLE draft (
          standup_id uuid PRIMARY KEY REFERENCES standup ON DELETE CASCADE,
          body text NOT NULL,
          saved_at timestamptz NOT NULL)
        """
      ]
    ),
    (
      "v4: when a room emptied",
      // With `paused_because` `everyoneLeft` (or `moved`: when it was handed on): someone
      // back soon after finds it going on.
      ["ALTER TABLE checkpoint ADD COLUMN emptied_at timestamptz"]
    ),
    (
      "v5: signed-out sessions",
      // Sessions are signed cookies, not rows: one signed out is kept here until it expires.
      [
        "CREATE TABLE signed_out_session (token_hash text PRIMARY KEY, expires timestamptz NOT NULL)"
      ]
    ),
    (
      "v6: who was present, by sign-in",
      // A running meeting's `presentBy` as JSON (name: sign-ins): someone who renames after
      // the meeting came back is present once in its history.
      ["ALTER TABLE checkpoint ADD COLUMN present_by text NOT NULL DEFAULT '{}'"]
    ),
  ]

  /// Applies the migrations this database has not had, all in one transaction; nodes
  /// starting together take turns (a transaction-scoped advisory lock).
  func migrate() async throws {
    do {
      try await migrateInTransaction()
    } catch let error as PostgresTransactionError {
      // NB: what failed comes wrapped, its rollback's outcome beside it: the cause is what is
      // said (a migration PostgreSQL refused, in its own words; a newer schema).
      throw error.closureError ?? error.beginError ?? error.commitError ?? error
    }
  }

  private func migrateInTransaction() async throws {
    try await client.withTransaction(logger: logger) { connection in
      // NB: a migration may take its time (an index on a large table).
      try await connection.query("SET LOCAL statement_timeout = 0", logger: logger)
      try await connection.query(
        "SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
      try await connection.query(
        """
        CREATE TABLE IF NOT EXISTS schema_migration (
          version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)
        """, logger: logger)
      var applied = 0
      for try await version in try await connection.query(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migration", logger: logger
      ).decode(Int.self) {
        applied = version
      }
      guard applied <= Self.migrations.count else {
        throw NewerSchema(version: applied)
      }
      for (index, migration) in Self.migrations.enumerated().dropFirst(applied) {
        for statement in migration.sql {
          try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        try await connection.query(
          "INSERT INTO schema_migration VALUES (\(index + 1), \(migration.name), now())",
          logger: logger)
      }
    }
  }

  /// A schema migrated further than this server knows (an upgrade rolled back): it would not
  /// keep what it does not know of.
  struct NewerSchema: Error, CustomStringConvertible {
    let version: Int
    var description: String {
      "was migrated by a newer Standups server (schema version \(version); this one knows "
        + "\(PostgresStorage.migrations.count)). Nothing was changed: run the newer server."
    }
  }

  /// The advisory lock key migrations take (`standups` in ASCII).
  static let migrationLock: Int64 = 0x7374_616e_6475_7073
}
