import ArgumentParser
import Foundation
import Storage

struct Backup: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Copy everything the server keeps to a file, while it runs.",
    discussion:
      "The standups, their meetings, running meetings' progress, open forms' drafts, the team's secret and the bots: one SQLite file, readable by its owner only (it lets anyone in). To restore it, stop the server, put the file in its --data-dir as standups.sqlite (removing standups.sqlite-wal and standups.sqlite-shm there), and start it. A cluster's data is PostgreSQL's: back it up with pg_dump."
  )

  @OptionGroup var data: DataOptions
  @Argument(
    help:
      "The file to write (a backup already there is replaced once the new one is whole; any other file is left alone)."
  )
  var file: String

  func run() async throws {
    guard try data.databaseURL() == nil else {
      throw CommandFailure(
        "A cluster's data is in PostgreSQL: back it up with pg_dump (docs/DEPLOY.md, \"Backups\").")
    }
    guard let storage = try await data.storage() as? SQLiteStorage else {
      throw CommandFailure("No SQLite database in \(data.dataDir).")
    }
    do {
      try storage.backUp(to: file)
    } catch {
      throw CommandFailure("\(error)")
    }
    print("Backed up \(storage.path) to \(file).")
  }
}
