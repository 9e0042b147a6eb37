import Foundation
import StandupsFeatures
import Testing

@testable import StandupsServer

/// What a node's lobby keeps of the rooms other nodes serve.
struct RemoteRoomsTests {
  let room = UUID()
  let people = Lobby.Live(
    participants: 2, meetingRunning: false, meetingPaused: false, people: ["Ana", "Ben"])

  /// A room moved from node 1 to node 2 with its people; node 1's word that it closed the
  /// room (nobody there) comes last, and is past.
  @Test func aNodeSayingARoomItClosedIsEmptyDoesNotOverrideTheNodeItMovedTo() {
    let rooms = RemoteRooms()
    #expect(rooms.heard(room, live: people, from: 2))
    #expect(!rooms.heard(room, live: nil, from: 1))
    #expect(
      !rooms.heard(
        room, live: Lobby.Live(participants: 0, meetingRunning: true, meetingPaused: true),
        from: 1))
    #expect(rooms.orphaned(alive: [1]).map(\.1) == [people])
  }

  @Test func theNodeServingARoomSaysWhenItEmptiesAndAnyNodeWhenItFillsAgain() {
    let rooms = RemoteRooms()
    #expect(rooms.heard(room, live: people, from: 1))
    #expect(rooms.heard(room, live: nil, from: 1))
    #expect(rooms.heard(room, live: nil, from: 3))
    #expect(rooms.heard(room, live: people, from: 2))
    #expect(rooms.heard(room, live: people, from: 1))
  }
}
