import Foundation
import HashTreeCollections
import IdentifiedCollections
import JSONPatch
import Logging
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Testing
import WebSocketTransport

@testable import RoomRuntime

/// The lobby as a room, as far as its document goes: encoded by the action that changed it.
struct LobbyRoom: RoomFeature {
  typealias R = Lobby
  var roomName: String { "lobby" }
  func joined(_ sender: Sender) -> Lobby.Action? { nil }
  func left(_ participantID: String) -> Lobby.Action? { nil }
  func decode(_ message: ClientMessage, sender: Sender) throws(WireError) -> Lobby.Action {
    throw WireError(.unknownAction, "Not in this test.")
  }
  func stateDidChange(
    from old: Lobby.State, to new: Lobby.State, after action: Lobby.Action, work: inout RoomWork
  ) {}
  func rollback(to before: Lobby.State, from after: Lobby.State) -> Lobby.Action {
    .saveFailed(added: [])
  }
  func isIdle(_ state: Lobby.State) -> Bool { false }
  func closing(_ state: Lobby.State) -> (code: CloseCode, reason: String)? { nil }
}

@Suite struct DocumentTests {
  typealias Document = RoomChannel<LobbyRoom>.Document

  func isPublished(_ publication: Document.Publication) -> Bool {
    if case .published = publication { return true }
    return false
  }

  /// A join that could not be numbered (the room was not this node's for a moment) is not
  /// lost: the next patch carries it too, although the lobby's encoder goes by the action.
  @Test func aChangeThatCouldNotBeSentIsInTheNextPatch() async throws {
    let rooms = (0..<3).map { index in
      Standup(
        id: UUID(), attendees: [Attendee(id: UUID(), name: "A")], duration: .seconds(300),
        theme: .teal, title: "Team \(index)")
    }
    var state = Lobby.State(standups: IdentifiedArray(uniqueElements: rooms))
    let versions = VersionLease(
      room: "lobby", storage: .inMemory(), sizes: .init(block: 100, lowWater: 10),
      logger: Logger(label: "test"))
    let first = await versions.start()
    let holds = Switch(true)
    versions.fence { holds.isOn }
    var document = Document(
      state: state, json: try JSONValue(encoding: state), versions: versions, outlet: Outlet(),
      resumeBytes: 1 << 20,
      encode: { try LobbyStateEncoder().encode($0, previous: $1, json: &$2, after: $3) })
    document.begin(at: first)

    func join(_ index: Int) -> Document.Publication {
      let live = Lobby.Live(participants: 1, meetingRunning: false, people: ["P\(index)"])
      state.live[rooms[index].id] = live
      return document.publish(state, after: .roomActivityChanged(rooms[index].id, live))
    }
    #expect(isPublished(join(0)))
    let sent = document.snapshot
    holds.set(false)
    let refused = join(1)
    #expect(!isPublished(refused))
    #expect(document.snapshot.version == sent.version)
    #expect(document.snapshot.state == sent.state, "The document stays the last version's")
    holds.set(true)
    #expect(isPublished(join(2)))
    #expect(document.snapshot.version == sent.version + 1)
    #expect(document.snapshot.state == (try JSONValue(encoding: state)))
  }

  /// A reconnect finds the connection whose key it names among thousands of peers, through
  /// the key or the one that connection named itself, and never one that has left.
  @Test func aReconnectFindsWhatItReplacesByKey() async throws {
    let state = Lobby.State()
    let versions = VersionLease(
      room: "lobby", storage: .inMemory(), sizes: .init(block: 100, lowWater: 10),
      logger: Logger(label: "test"))
    var document = Document(
      state: state, json: try JSONValue(encoding: state), versions: versions, outlet: Outlet(),
      resumeBytes: 1 << 20,
      encode: { try LobbyStateEncoder().encode($0, previous: $1, json: &$2, after: $3) })
    document.begin(at: await versions.start())
    func page(_ index: Int, key: String, former: String? = nil) -> Sender {
      var sender = Sender(
        participantID: "p\(index)", name: "Person \(index)", person: "person-\(index)",
        isBot: false, key: key)
      sender.formerKey = former
      return sender
    }
    for index in 0..<5000 {
      document.addPeer(
        ConnectionID(rawValue: UInt64(index)), sender: page(index, key: "k\(index)"), since: nil,
        room: "lobby")
    }
    // Person 42 reconnects naming its key: its old connection, and nobody else's.
    let again = page(42, key: "k42-again", former: "k42")
    let found = try #require(document.peer(replacedBy: again, naming: "k42"))
    #expect(found.connection == ConnectionID(rawValue: 42))
    #expect(
      document.peer(replacedBy: page(43, key: "x"), naming: "k42") == nil,
      "Another person's key replaces nothing.")
    #expect(document.peer(replacedBy: again, naming: "k-unknown") == nil)

    _ = document.removePeer(ConnectionID(rawValue: 42))
    document.addPeer(ConnectionID(rawValue: 9000), sender: again, since: nil, room: "lobby")
    // Its welcome was lost: the page still names the first key, which the new one answers to.
    let third = page(42, key: "k42-third", former: "k42")
    #expect(
      document.peer(replacedBy: third, naming: "k42")?.connection == ConnectionID(rawValue: 9000))
    #expect(
      document.peer(replacedBy: third, naming: "k42-again")?.connection
        == ConnectionID(rawValue: 9000))

    _ = document.removePeer(ConnectionID(rawValue: 9000))
    #expect(document.peer(replacedBy: third, naming: "k42") == nil, "Gone: nothing to replace.")
    #expect(document.peer(replacedBy: third, naming: "k42-again") == nil)
    _ = document.removeAllPeers()
    #expect(document.peer(replacedBy: page(7, key: "y"), naming: "k7") == nil)
  }
}
