import Fixtures
import Foundation
import JSONPatch
import Logging
import RoomRuntime
import StandupsFeatures
import Storage
import Synchronization
import Testing

@testable import StandupsServer

@Suite struct RoomVersionTests {
  @Test func aRoomsVersionsStartSmallAndGoOnWhenItOpensAgain() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    #expect(ana.version == 2)  // 1: the room as it opened, 2: with Ana in it
    try await ana.act("editButtonTapped")
    let last = try #require(ana.version)
    #expect(last == 3)
    ana.close()
    try await eventually("The emptied room was not released.") { server.server.openRoomCount == 0 }
    let ben = try await server.room(name: "Ben")
    #expect(try #require(ben.version) > last)
    await server.stop()
  }

  /// Storage fails while a room needs more versions: the room closes everyone with 1011
  /// rather than risk a version twice, and opens again when they come back.
  @Test func aRoomThatCannotReserveMoreVersionsRestarts() async throws {
    let server = try await TestServer.startWithFourVersionsPerRoom()
    let ana = try await server.room(name: "Ana")
    #expect(ana.version == 2)  // 1: the welcome of the opening, 2: Ana's join
    try await ana.act("editButtonTapped")
    try await ana.act("cancelEditButtonTapped")  // version 4, the last of the block
    #expect(ana.version == 4)
    _ = try? await ana.act("editButtonTapped")
    let closed = try await ana.waitUntilClosed()
    #expect(closed.code == 1011)
    #expect(ana.problems.isEmpty)

    let ben = try await server.room(name: "Ben")
    #expect(try #require(ben.version) > 4)
    #expect(ben.state?["standup"]?["title"] == "Design")
    await server.stop()
  }

  /// A room that restarts closes everyone at once, without reducing their leaving: the lobby
  /// shows nobody there (its meeting paused, as it opens again) until they are back.
  @Test func theLobbyShowsNobodyInARoomThatRestarted() async throws {
    let server = try await TestServer.startWithFourVersionsPerRoom()
    let lobby = try await server.connect("/ws/lobby?name=Cy")
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")  // version 3; its second tick is the 5th
    _ = try await lobby.waitForState { $0["standups"]?[0]?["live"]?["people"] == ["Ana"] }
    #expect(try await ana.waitUntilClosed().code == 1011)
    _ = try await lobby.waitForState {
      $0["standups"]?[0]?["live"]
        == ["participants": 0, "meetingRunning": true, "meetingPaused": true, "people": []]
    }
    await server.stop()
  }
}

extension TestServer {
  /// A server whose storage reserves the lobby's and the first room's first blocks of
  /// versions — 4 each — and then fails: the room's fifth change cannot be numbered.
  static func startWithFourVersionsPerRoom() async throws -> TestServer {
    let reservations = Mutex(0)
    var storage = StorageClient.inMemory([.design])
    let inMemory = storage
    storage.reserveVersions = { room, count in
      guard
        reservations.withLock({
          $0 += 1
          return $0
        }) <= 2
      else {
        throw StorageError("disk full")
      }
      return try await inMemory.reserveVersions(room, count)
    }
    return try await start(storage: storage) {
      $0.versionSizes = .init(block: 4, lowWater: 2)
    }
  }
}
