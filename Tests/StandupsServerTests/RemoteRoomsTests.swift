import Fixtures
import Foundation
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import Storage
import Synchronization
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

  /// When another node speaks for a room than the last, the database says which holds the
  /// room now (`holder`): its word counts whatever it says — "nobody is here" from the room's
  /// new node (a bot's request in an empty room) is not taken for the old node's goodbye — and
  /// a late word from any other node does not, even one with people in it.
  @Test func theNodeHoldingARoomSpeaksForItAndNoOther() {
    let rooms = RemoteRooms()
    let paused = Lobby.Live(participants: 0, meetingRunning: true, meetingPaused: true)
    let ended = Lobby.Live(participants: 0, meetingRunning: false, meetingPaused: false)
    #expect(rooms.heard(room, live: paused, from: 1))
    // Node 2 holds the room now; its word that the meeting ended, with nobody in the room.
    #expect(rooms.heard(room, live: ended, from: 2, holder: .some(2)))
    #expect(rooms.live(of: room) == ended)
    // Node 1's word with people in it, held up on its way, comes after: past.
    #expect(!rooms.heard(room, live: people, from: 1, holder: .some(2)))
    #expect(rooms.live(of: room) == ended && rooms.lastSpeaker(of: room) == 2)
    // The question failed (nil) or nobody holds it: judged by the word alone, as before.
    #expect(!rooms.heard(room, live: paused, from: 1, holder: nil))
    #expect(!rooms.heard(room, live: paused, from: 1, holder: .some(nil)))
    #expect(rooms.heard(room, live: people, from: 3, holder: .some(nil)))
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

  /// A standup this node made whose save failed goes, but is not taken for deleted: a save
  /// given up that landed after all (the database answered too late) is shown once read. One
  /// deleted stays gone.
  @Test func aStandupWhoseSaveFailedIsNotTakenForDeleted() {
    var making = Standup.design
    making.id = UUID()
    let catalog = StandupCatalog([.design])
    catalog.made(making)
    catalog.unmade(making.id)
    #expect(catalog[making.id] == nil && !catalog.wasDeleted(making.id))
    #expect(catalog.update(making))
    catalog.remove(making.id)
    #expect(!catalog.update(making))
  }
}

/// What a notice that could not be sent was about is said again as it is then: a `hello`; a
/// room's presence now if it is open here, else the "nobody here" that was lost (never a word
/// with people in it from a room closed since). A standup changed or deleted is told by its
/// write's transaction, never by a notice sent after it.
struct LostNoticesTests {
  let open = UUID()
  let closed = UUID()
  let closedWithPeople = UUID()
  let edited = UUID()
  let gone = UUID()

  func live(_ standup: UUID, _ people: Int) -> NodeSession.Notice {
    NodeSession.Notice(
      node: "a", kind: .live, standup: standup,
      live: people == 0
        ? nil : Lobby.Live(participants: people, meetingRunning: false, meetingPaused: false),
      pid: 7)
  }

  @Test func whatWasLostIsSaidAgainAsItIsNow() {
    var lost = NodeSession.LostNotices()
    lost.lost(live(open, 1))
    lost.lost(live(closed, 2))
    lost.lost(live(closed, 0))
    lost.lost(live(closedWithPeople, 3))
    lost.lost(NodeSession.Notice(node: "a", kind: .changed, standup: edited))
    lost.lost(NodeSession.Notice(node: "a", kind: .changed, standup: edited))
    lost.lost(NodeSession.Notice(node: "a", kind: .deleted, standup: gone))
    lost.lost(NodeSession.Notice(node: "a", kind: .hello))
    lost.lost(NodeSession.Notice(node: "a", kind: .wanted, standup: open))
    let now = Lobby.Live(participants: 2, meetingRunning: true, meetingPaused: false)
    let again = lost.sayAgain(open: [open: now])
    // NB: sent with this node's current session, not the one that first tried (no `pid`).
    #expect(again.allSatisfy { $0.pid == nil })
    #expect(
      again.filter { $0.kind == .changed || $0.kind == .deleted || $0.kind == .wanted }.isEmpty)
    // NB: a lost hello would leave every room the other nodes serve shown as empty: their
    // answers say who is in them.
    #expect(again.first?.kind == .hello)
    #expect(again.filter { $0.kind == .hello }.count == 1)
    let rooms = again.filter { $0.kind == .live }
    #expect(Set(rooms.map(\.standup)) == [open, closed])
    #expect(rooms.first { $0.standup == open }?.live == now)
    #expect(rooms.first { $0.standup == closed }?.live == nil)
    #expect(lost.isEmpty && lost.sayAgain(open: [:]).isEmpty)
  }
}

/// What other nodes say reaches this node's lobby: what could not be read from the database
/// when heard of is read again by the sweep (the lobby does not keep showing it as it was),
/// and who is in a room said before its standup was listed shows once it is.
@Suite(.serialized)
struct NoticesHeardTests {
  final class Storage: Sendable {
    let base = StorageClient.inMemory([.design])
    let failReads = Mutex(false)

    var client: StorageClient {
      var client = base
      client.loadStandup = { [self] id in
        if failReads.withLock({ $0 }) { throw StorageError("connection reset") }
        return try await base.loadStandup(id)
      }
      client.load = { [self] in
        if failReads.withLock({ $0 }) { throw StorageError("connection reset") }
        return try await base.load()
      }
      return client
    }
  }

  func titles(_ state: JSONValue?) -> [String] {
    state?["standups"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
  }

  /// A standup another node made, as the database has it.
  func made(_ title: String, in storage: Storage) async throws -> Standup {
    var standup = Standup.design
    standup.id = UUID()
    standup.title = title
    try await storage.base.save(standup)
    return standup
  }

  @Test func aChangeOrACatchUpThatCouldNotBeReadIsReadAgain() async throws {
    let storage = Storage()
    let server = try await TestServer.start(storage: storage.client)
    let hub = server.server.hub
    let lobby = try await server.connect("/ws/lobby?name=Ana")
    _ = try await lobby.waitForState { titles($0) == ["Design"] }

    // The notice comes while reading fails: the sweep reads it again once reading works.
    let retro = try await made("Retro", in: storage)
    storage.failReads.withLock { $0 = true }
    await hub.heard(.init(node: "b", kind: .changed, standup: retro.id))
    await hub.readAgainWhatFailed()
    storage.failReads.withLock { $0 = false }
    await hub.readAgainWhatFailed()
    _ = try await lobby.waitForState { titles($0) == ["Design", "Retro"] }

    // The catch-up after a new session fails: the sweep catches up once reading works.
    let planning = try await made("Planning", in: storage)
    storage.failReads.withLock { $0 = true }
    await hub.catchUp()
    storage.failReads.withLock { $0 = false }
    await hub.readAgainWhatFailed()
    _ = try await lobby.waitForState { titles($0) == ["Design", "Retro", "Planning"] }
    #expect(server.server.hub.catalog[planning.id]?.title == "Planning")

    // Read once: nothing is left to read again.
    #expect(hub.remoteRooms.takeUnread() == ([], false))
    await server.stop()
  }

  /// A reading that ends after the standup's deletion was heard does not bring it back, in
  /// the catalog or the lobby (ids are never used again).
  @Test func aStandupDeletedWhileItsReadingWaitedStaysGone() async throws {
    let storage = Storage()
    let server = try await TestServer.start(storage: storage.client)
    let hub = server.server.hub
    let lobby = try await server.connect("/ws/lobby?name=Ana")
    _ = try await lobby.waitForState { titles($0) == ["Design"] }

    let retro = try await made("Retro", in: storage)
    storage.failReads.withLock { $0 = true }
    await hub.heard(.init(node: "b", kind: .changed, standup: retro.id))
    // A failing catch-up keeps what it would have read for the next sweep.
    await hub.catchUp()
    await hub.readAgainWhatFailed()
    #expect(hub.remoteRooms.takeUnread() == ([retro.id], true))
    hub.remoteRooms.couldNotRead(retro.id)
    hub.remoteRooms.couldNotRead(nil)

    // Deleted on the other node; this node's reading (of a database that still has it, as
    // one begun before the deletion) ends after the notice of it.
    await hub.heard(.init(node: "b", kind: .deleted, standup: retro.id))
    storage.failReads.withLock { $0 = false }
    await hub.readAgainWhatFailed()
    #expect(hub.catalog[retro.id] == nil)
    // NB: the lobby's next change shows it has no "Retro" (a patch would have come first).
    let planning = try await made("Planning", in: storage)
    await hub.heard(.init(node: "b", kind: .changed, standup: planning.id))
    _ = try await lobby.waitForState { titles($0).contains("Planning") }
    #expect(titles(lobby.state) == ["Design", "Planning"])
    await server.stop()
  }

  /// Another node made a standup and opened its room at once: who is in the room was said
  /// before this lobby listed the standup. The `changed` notice lists it with them.
  @Test func aRoomThatSpokeBeforeItsStandupWasListedShowsItsPeopleOnceListed() async throws {
    let storage = Storage()
    let server = try await TestServer.start(storage: storage.client)
    let hub = server.server.hub
    let lobby = try await server.connect("/ws/lobby?name=Ana")
    _ = try await lobby.waitForState { titles($0) == ["Design"] }

    let retro = try await made("Retro", in: storage)
    let there = Lobby.Live(participants: 1, meetingRunning: false, people: ["Ben"])
    await hub.heard(.init(node: "b", kind: .live, standup: retro.id, live: there, pid: 42))
    await hub.heard(.init(node: "b", kind: .changed, standup: retro.id, pid: 42))
    let state = try await lobby.waitForState {
      titles($0) == ["Design", "Retro"] && $0["standups"]?[1]?["live"]?["participants"] != nil
    }
    let listed = state["standups"]?[1]
    #expect(listed?["live"]?["participants"] == 1)
    #expect(listed?["live"]?["people"] == ["Ben"])
    await server.stop()
  }
}

/// Who the lobby says is in a room.
struct PresentPeopleTests {
  /// A bot and a person who chose its name are two, as the room shows them (one was left out).
  @Test func aBotAndAPersonOfOneNameAreBothListed() {
    let people = StandupRoomFeature.presentPeople([
      Participant(id: "p1", name: "Ana"), Participant(id: "p2", name: "Ana", isBot: true),
      Participant(id: "p3", name: "Ana"), Participant(id: "p4", name: "Ben", person: "k1"),
      Participant(id: "p5", name: "Ben", person: "k1"),
    ])
    #expect(people == ["Ana", "Ben", "Ana (bot)"])
  }

  /// People by name, then bots, whoever came first: a lobby card names the same three when
  /// someone's connection drops and comes back.
  @Test func peopleAreListedByNameThenBotsWhoeverCameFirst() {
    let arrivals: [Participant] = [
      Participant(id: "p1", name: "CI", isBot: true), Participant(id: "p2", name: "zoe"),
      Participant(id: "p3", name: "Émile"), Participant(id: "p4", name: "Ben", person: "k1"),
      Participant(id: "p5", name: "ana"), Participant(id: "p6", name: "Ana", person: "k2"),
    ]
    let expected = ["Ana", "ana", "Ben", "Émile", "zoe", "CI (bot)"]
    #expect(StandupRoomFeature.presentPeople(IdentifiedArray(uniqueElements: arrivals)) == expected)
    #expect(
      StandupRoomFeature.presentPeople(IdentifiedArray(uniqueElements: arrivals.reversed()))
        == expected)
  }
}
