import Fixtures
import Foundation
import IdentifiedCollections
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

  /// The room moved here: the node it left says goodbye late (its notices go out after it
  /// gave the lock back), and is past until this node gives the lock back in turn.
  @Test func whatOthersSayOfARoomThisNodeServesIsPast() {
    let rooms = RemoteRooms()
    #expect(rooms.heard(room, live: people, from: 1))
    rooms.serving(room)
    #expect(!rooms.haveWord(about: room))
    #expect(!rooms.heard(room, live: people, from: 1))
    #expect(
      !rooms.heard(
        room, live: Lobby.Live(participants: 0, meetingRunning: true, meetingPaused: true),
        from: 1))
    #expect(!rooms.heard(room, live: nil, from: 1))
    #expect(!rooms.haveWord(about: room))
    // A deletion (no node) is heard all the same.
    #expect(rooms.heard(room, live: nil, from: nil))
    rooms.stoppedServing(room)
    #expect(rooms.heard(room, live: people, from: 2))
    #expect(rooms.haveWord(about: room))
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

/// A node back on a new session doubts what it heard; what is said again stands.
struct RemoteRoomsDoubtTests {
  let said = UUID()
  let unsaid = UUID()
  let opened = UUID()
  let people = Lobby.Live(
    participants: 1, meetingRunning: true, meetingPaused: false, people: ["Ana"])

  @Test func whatIsNotSaidAgainAfterADeafSpellIsTakenForGone() {
    let rooms = RemoteRooms()
    for room in [said, unsaid, opened] { #expect(rooms.heard(room, live: people, from: 1)) }
    rooms.doubtEverything()
    #expect(rooms.heard(said, live: people, from: 1))
    rooms.serving(opened)
    #expect(rooms.stillDoubted().map(\.0) == [unsaid])
    #expect(rooms.stillDoubted().isEmpty)
    #expect(rooms.haveWord(about: said) && !rooms.haveWord(about: unsaid))
    #expect(!rooms.haveWord(about: opened))
  }
}

/// What the catalog says is in the database, for a node catching up on deletions it missed.
struct StandupCatalogTests {
  @Test func aStandupThisNodeIsMakingIsNotTakenForSavedUntilItsSaveLanded() {
    let saved = Standup.design
    var making = Standup.design
    making.id = UUID()
    var another = Standup.design
    another.id = UUID()
    let catalog = StandupCatalog([saved])
    catalog.made(making)
    #expect(catalog[making.id] != nil)
    #expect(catalog.savedIDs == [saved.id])
    catalog.saved(making.id)
    #expect(catalog.savedIDs == [saved.id, making.id])
    catalog.made(another)
    catalog.remove(saved.id)
    #expect(catalog.savedIDs == [making.id])
  }
}

/// A notice that could not be sent is sent again, unless a newer one of its standup was
/// queued since (sent after it, the older one would undo what the newer one says).
struct LostNoticesTests {
  let room = UUID()
  let other = UUID()

  func notice(_ standup: UUID?, _ people: Int) -> NodeSession.Notice {
    NodeSession.Notice(
      node: "a", kind: standup == nil ? .hello : .live, standup: standup,
      live: Lobby.Live(participants: people, meetingRunning: false, meetingPaused: false))
  }

  @Test func aRoomsLastWordLostIsSentAgainOnceAndANewerOneWins() {
    var lost = NodeSession.LostNotices()
    let left = notice(room, 0)
    lost.queued(left)
    lost.lost(left)
    #expect(lost.takeStillLast() == [left])
    #expect(lost.takeStillLast().isEmpty)

    // Lost, then a newer word of the same room queued: that one is what holds.
    lost.queued(notice(room, 1))
    lost.lost(notice(room, 1))
    lost.queued(notice(room, 2))
    let otherLeft = notice(other, 0)
    lost.queued(otherLeft)
    lost.lost(otherLeft)
    #expect(lost.takeStillLast() == [otherLeft])

    // A notice of no standup (hello) is not kept.
    lost.queued(notice(nil, 0))
    lost.lost(notice(nil, 0))
    #expect(lost.takeStillLast().isEmpty)
  }
}
