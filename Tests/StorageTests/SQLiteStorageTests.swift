import Fixtures
import Foundation
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
