import GRDB

extension SQLiteStorage {
  // MARK: Schema

  /// The schema, one step per version; a step never changes once released.
  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1: standups, attendees, meetings") { db in
      try db.create(table: "standup") { table in
        table.primaryKey("id", .text)
        table.column("position", .integer).notNull()
        table.column("title", .text).notNull()
        table.column("durationSeconds", .integer).notNull()
        table.column("theme", .text).notNull()
      }
      try db.create(table: "attendee") { table in
        table.column("id", .text).notNull()
        table.belongsTo("standup", onDelete: .cascade).notNull()
        table.column("position", .integer).notNull()
        table.column("name", .text).notNull()
        table.primaryKey(["standupId", "id"])
      }
      try db.create(table: "meeting") { table in
        table.column("id", .text).notNull()
        table.belongsTo("standup", onDelete: .cascade).notNull()
        table.column("date", .datetime).notNull()
        table.column("transcript", .text).notNull()
        table.primaryKey(["standupId", "id"])
      }
      try db.create(table: "checkpoint") { table in
        table.belongsTo("standup", onDelete: .cascade).notNull().unique()
        table.column("meetingId", .text).notNull()
        table.column("secondsElapsed", .integer).notNull()
        table.column("speakerIndex", .integer).notNull()
        table.column("transcript", .text).notNull()
      }
    }
    migrator.registerMigration("v2: room versions") { db in
      // The next version each room may reserve (see `StorageClient.reserveVersions`).
      try db.create(table: "roomVersion") { table in
        table.primaryKey("room", .text)
        table.column("next", .integer).notNull()
      }
    }
    migrator.registerMigration("v3: access") { db in
      // One row: the team's secret (invites and sessions derive from it).
      try db.create(table: "team") { table in
        table.primaryKey("id", .integer).check { $0 == 1 }
        table.column("secret", .blob).notNull()
        table.column("createdAt", .datetime).notNull()
      }
      // Bots added with `standups-server bots add`; only their token's SHA-256 is kept.
      try db.create(table: "bot") { table in
        table.primaryKey("name", .text).collate(.nocase)
        table.column("tokenHash", .text).notNull().unique()
        table.column("scope", .text).notNull()
        table.column("standups", .text).notNull()
        table.column("createdAt", .datetime).notNull()
      }
    }
    migrator.registerMigration("v4: meeting details") { db in
      // How long each meeting ran, who was there, and its notes with their speakers (JSON).
      try db.alter(table: "meeting") { table in
        table.add(column: "seconds", .integer).notNull().defaults(to: 0)
        table.add(column: "present", .text).notNull().defaults(to: "[]")
        table.add(column: "notes", .text).notNull().defaults(to: "[]")
      }
      try db.alter(table: "checkpoint") { table in
        table.add(column: "present", .text).notNull().defaults(to: "[]")
        table.add(column: "notes", .text).notNull().defaults(to: "[]")
      }
    }
    migrator.registerMigration("v5: health") { db in
      // One row the health check writes, to see whether saving works again.
      try db.create(table: "health") { table in
        table.primaryKey("id", .integer).check { $0 == 1 }
        table.column("checkedAt", .datetime).notNull()
      }
    }
    migrator.registerMigration("v6: seconds run") { db in
      // How long a running meeting really ran (Next moves its clock on, not this).
      try db.alter(table: "checkpoint") { table in
        table.add(column: "secondsRun", .integer).notNull().defaults(to: 0)
      }
    }
    migrator.registerMigration("v7: why a meeting was paused") { db in
      // `everyoneLeft` when the room emptied (a cluster releases such a room); null: running.
      try db.alter(table: "checkpoint") { table in
        table.add(column: "pausedBecause", .text)
      }
    }
    migrator.registerMigration("v8: drafts") { db in
      // An open edit form's draft (`StandupDraft`'s body as JSON), until it is saved or
      // cancelled.
      try db.create(table: "draft") { table in
        table.belongsTo("standup", onDelete: .cascade).notNull().unique()
        table.column("body", .text).notNull()
        table.column("savedAt", .datetime).notNull()
      }
    }
    migrator.registerMigration("v9: when a room emptied") { db in
      // With `pausedBecause` `everyoneLeft` (or `moved`: when it was handed on): someone
      // back soon after finds it going on.
      try db.alter(table: "checkpoint") { table in
        table.add(column: "emptiedAt", .datetime)
      }
    }
    migrator.registerMigration("v10: signed-out sessions") { db in
      // Sessions are signed cookies, not rows: one signed out is kept here until it expires.
      try db.create(table: "signedOutSession") { table in
        table.primaryKey("tokenHash", .text)
        table.column("expires", .datetime).notNull()
      }
    }
    migrator.registerMigration("v11: who was present, by sign-in") { db in
      // A running meeting's `presentBy` as JSON (name: sign-ins): someone who renames after the
      // meeting came back is present once in its history.
      try db.alter(table: "checkpoint") { table in
        table.add(column: "presentBy", .text).notNull().defaults(to: "{}")
      }
    }
    return migrator
  }
}
