import Fixtures
import Foundation
import GRDB
import IdentifiedCollections
import StandupsFeatures
import Testing

@testable import Storage

/// What a SQLite file keeps across openings (what any storage keeps is in
/// `StorageContractTests`).
@Suite(.serialized)
struct SQLiteStorageTests {
  @Test func whatWasSavedIsThereWhenTheFileIsOpenedAgain() async throws {
    let directory = temporaryDirectory()
    var design = Standup.design
    design.meetings = [
      Meeting(
        id: UUID(), date: Date(timeIntervalSince1970: 1_795_338_000), transcript: "Ana: hi",
        seconds: 60, present: ["Ana"], notes: [Note(author: "Ana", text: "hi", speaker: "Blob")])
    ]
    let ops = Standup(
      id: UUID(), attendees: [Attendee(id: UUID(), name: "Cy")], duration: .seconds(900),
      theme: .navy, title: "Ops")
    try await SQLiteStorage(directory: directory).save(design)
    try await SQLiteStorage(directory: directory).save(ops)
    #expect(try await SQLiteStorage(directory: directory).load() == [design, ops])
  }

  /// The server and a command run beside it (`bots add`, `invite`) write the same file: a
  /// write that finds the other's under way waits for it, rather than fail at once ("database
  /// is locked") and undo a person's change.
  @Test func aWriteWaitsForAnotherOnesWriteToTheSameFile() async throws {
    let directory = temporaryDirectory()
    let server = try SQLiteStorage(directory: directory)
    let command = try SQLiteStorage(directory: directory)
    for storage in [server, command] {
      let waits = try await storage.database.write { db in
        try Int.fetchOne(db, sql: "PRAGMA busy_timeout")
      }
      #expect(waits == Int(SQLiteStorage.busyTimeout * 1000))
    }
    // Both write at once, again and again: none is refused.
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (writer, storage) in [server, command].enumerated() {
        group.addTask {
          for count in 0..<100 {
            try await storage.save(
              Standup(
                id: UUID(), attendees: [Attendee(id: UUID(), name: "Cy")],
                duration: .seconds(300), theme: .navy, title: "\(writer)-\(count)"))
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(try await server.load().count == 200)
  }

  /// A file the first version wrote opens with everything in it: the standup, its
  /// attendees, its meeting and the running meeting's checkpoint, with what later versions
  /// added to each at its default.
  @Test func aFileTheFirstVersionWroteOpensWithEverythingInIt() async throws {
    let directory = temporaryDirectory()
    let path = URL(fileURLWithPath: directory).appendingPathComponent("standups.sqlite").path
    let standupID = UUID()
    let attendee = UUID()
    let meetingID = UUID()
    let running = UUID()
    let date = Date(timeIntervalSince1970: 1_795_338_000)
    do {
      let old = try DatabaseQueue(path: path)
      try SQLiteStorage.migrator.migrate(old, upTo: "v1: standups, attendees, meetings")
      try await old.write { db in
        try db.execute(
          sql: "INSERT INTO standup VALUES (?, 0, 'Design', 300, 'teal')",
          arguments: [standupID.uuidString])
        try db.execute(
          sql: "INSERT INTO attendee VALUES (?, ?, 0, 'Blob')",
          arguments: [attendee.uuidString, standupID.uuidString])
        try db.execute(
          sql: "INSERT INTO meeting VALUES (?, ?, ?, 'Blob: shipped it')",
          arguments: [meetingID.uuidString, standupID.uuidString, date])
        try db.execute(
          sql: "INSERT INTO checkpoint VALUES (?, ?, 42, 0, 'half way')",
          arguments: [standupID.uuidString, running.uuidString])
      }
    }
    let storage = try SQLiteStorage(directory: directory)
    let standups = try await storage.load()
    #expect(standups.map(\.title) == ["Design"])
    #expect(standups.first?.attendees.map(\.name) == ["Blob"])
    #expect(standups.first?.meetings.map(\.id) == [meetingID])
    #expect(standups.first?.meetings.first?.transcript == "Blob: shipped it")
    #expect(standups.first?.meetings.first?.date == date)
    let checkpoint = try await storage.loadCheckpoint(standupID)
    #expect(checkpoint?.meetingID == running)
    #expect(checkpoint?.secondsElapsed == 42)
    // And it goes on from there: saved again, it is as saved.
    var design = try #require(standups.first)
    design.title = "Design review"
    try await storage.save(design)
    #expect(try await SQLiteStorage(directory: directory).load() == [design])
  }

  /// A file a newer server wrote (an upgrade rolled back) is refused as it is, saying why:
  /// this server would not keep what it does not know of.
  @Test func aFileANewerServerWroteIsRefusedUntouched() async throws {
    let directory = temporaryDirectory()
    let path = URL(fileURLWithPath: directory).appendingPathComponent("standups.sqlite").path
    let file = try DatabaseQueue(path: path)
    try SQLiteStorage.migrator.migrate(file, upTo: "v1: standups, attendees, meetings")
    try await file.write { db in
      try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99: from the future')")
    }
    #expect {
      _ = try SQLiteStorage(directory: directory)
    } throws: { error in
      "\(error)".contains("written by a newer Standups server")
        && "\(error)".contains("\"v99: from the future\"")
        && "\(error)".contains("Nothing was changed")
    }
    // Not brought up to date either: what this server knows of is not written over it.
    #expect(
      try await file.read { try SQLiteStorage.migrator.appliedIdentifiers($0) }
        == ["v1: standups, attendees, meetings", "v99: from the future"])
    #expect(try await file.read { try $0.tableExists("roomVersion") } == false)
  }

  /// Closed, the file alone holds everything (its log is emptied into it); a file damaged past
  /// its first pages says so when the standups are read, and what may have caused it.
  @Test func closedTheFileHoldsEverythingAndDamageIsSaid() async throws {
    let directory = temporaryDirectory()
    let path = URL(fileURLWithPath: directory).appendingPathComponent("standups.sqlite").path
    let storage = try SQLiteStorage(directory: directory)
    try await storage.save(.design)
    try storage.close()
    let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int
    #expect(wal ?? 0 == 0)
    #expect(try await SQLiteStorage(directory: directory).load() == [.design])

    // The pages after the schema's and the migrations' (the standups') zeroed.
    let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    let size = try file.seekToEnd()
    try file.seek(toOffset: 2 * 4096)
    try file.write(contentsOf: Data(count: Int(size) - 2 * 4096))
    try file.close()
    await #expect {
      _ = try await SQLiteStorage(directory: directory).load()
    } throws: { error in
      "\(error)".contains("is damaged") && "\(error)".contains("standups.sqlite-wal")
    }
  }

  @Test func reservesEachRoomsVersionsOnceAcrossReopeningAndTakesBackOnlyTheLastBlock() async throws
  {
    let directory = temporaryDirectory()
    let storage = try SQLiteStorage(directory: directory)
    #expect(try await storage.reserveVersions("lobby", 10) == 1)
    #expect(try await storage.reserveVersions("lobby", 10) == 11)
    #expect(try await storage.reserveVersions("room", 5) == 1)
    let reopened = try SQLiteStorage(directory: directory)
    #expect(try await reopened.reserveVersions("lobby", 10) == 21)
    // Giving back the unused end of the last reservation: the next one starts there.
    try await reopened.returnVersions("lobby", next: 24, end: 31)
    #expect(try await reopened.reserveVersions("lobby", 10) == 24)
    // Not when something was reserved since (the end moved on): nothing changes.
    try await reopened.returnVersions("lobby", next: 25, end: 31)
    #expect(try await reopened.reserveVersions("lobby", 10) == 34)
    #expect(try await reopened.reserveVersions("room", 5) == 6)
  }
}
