import Fixtures
import Foundation
import GRDB
import IdentifiedCollections
import StandupsFeatures
import Storage
import Testing

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
