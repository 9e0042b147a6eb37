import Dependencies
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

extension RoomVersionTests {
  /// A meeting a bot started over HTTP runs with nobody in the room; the room restarting stops
  /// it (it opens again paused), and the lobby, which showed it running, says so.
  @Test func theLobbyShowsABotsMeetingPausedWhenItsRoomRestarts() async throws {
    let server = try await TestServer.startWithFourVersionsPerRoom()
    let lobby = try await server.connect("/ws/lobby?name=Cy")
    _ = try await lobby.next { $0["type"] == "welcome" }
    let actions = "/api/rooms/\(Standup.design.id.uuidString)/actions"
    let started = try httpResponse(
      port: server.port, "POST", actions, token: "ci-secret-0001",
      body: #"{"type":"startMeetingButtonTapped"}"#)
    #expect(started.status == 200)
    _ = try await lobby.waitForState { $0["standups"]?[0]?["live"]?["meetingRunning"] == true }
    // Its ticks use up the room's versions: it restarts (1011) with nobody in it.
    _ = try await lobby.waitForState(timeout: .seconds(10)) {
      $0["standups"]?[0]?["live"]
        == ["participants": 0, "meetingRunning": true, "meetingPaused": true, "people": []]
    }
    await server.stop()
  }
}

/// Someone who joins a room while it restarts waits behind the restart; if their connection
/// closes before the room could take them, the room that opens next must not take them in:
/// their leave went to the room that closed, and nothing would ever take them out.
@Suite struct RestartArrivalTests {
  @Test func aJoinWhoseConnectionClosedDuringARestartIsNoGhostInTheNextRoom() async throws {
    let reservations = Mutex(0)
    var storage = StorageClient.inMemory([.design])
    let inMemory = storage
    storage.reserveVersions = { room, count in
      // NB: the lobby's first block and the room's first; the room's next fails (its fifth
      // change restarts it), and the room opens again numbered from the clock.
      let held = reservations.withLock {
        $0 += 1
        return $0
      }
      guard held <= 2 else { throw StorageError("disk full") }
      return try await inMemory.reserveVersions(room, count)
    }
    // Checkpoint saves wait, once `holding`, until released: a save the restart waits for.
    let holding = Mutex((hold: false, entered: false))
    let (released, release) = AsyncStream<Void>.makeStream()
    storage.saveCheckpoint = { id, checkpoint in
      if holding.withLock({ $0.hold }) {
        holding.withLock { $0.entered = true }
        for await _ in released { break }
      }
      try await inMemory.saveCheckpoint(id, checkpoint)
    }
    let server = try await TestServer.start(
      storage: storage, configure: { $0.versionSizes = .init(block: 4, lowWater: 2) },
      dependencies: { $0.continuousClock = StoppedClock() })
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")  // version 3
    holding.withLock { $0.hold = true }
    // Version 4, the block's last: Ben is at the meeting, and its checkpoint's save waits.
    let ben = try await server.room(name: "Ben")
    try await eventually("the checkpoint was never saved") { holding.withLock { $0.entered } }
    // No version for this one: the room restarts, and waits for that save.
    ana.send(raw: #"{"type":"action","ref":"n","action":{"type":"meeting.nextButtonTapped"}}"#)
    #expect(try await ana.waitUntilClosed().code == 1011)
    #expect(try await ben.waitUntilClosed().code == 1011)
    // Cy arrives behind the restart, and goes before the room could take her.
    let cy = try await server.connect("/ws/rooms/\(Standup.design.id.uuidString)?name=Cy")
    cy.close()
    try await eventually("the server never saw Cy go") {
      try httpResponse(port: server.port, "GET", "/metrics").body
        .split(separator: "\n").contains { $0.hasPrefix("standups_connections 0") }
    }
    holding.withLock { $0.hold = false }
    release.yield()
    // The room opens again: Dan is alone in it.
    let dan = try await server.room(name: "Dan")
    let names = dan.state?["participants"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
    #expect(names == ["Dan"])
    #expect(cy.allMessages.isEmpty)
    await server.stop()
  }
}

/// A clock whose next second never comes: a meeting started under it does not tick.
struct StoppedClock: Clock {
  struct Instant: InstantProtocol {
    var offset: Duration
    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }
  var now: Instant { Instant(offset: .zero) }
  var minimumResolution: Duration { .zero }
  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    // NB: not a wait of the test's: the time this clock never reaches (a year; the meeting's
    // effect is cancelled long before).
    try await Task.sleep(for: .seconds(365 * 86_400))
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
