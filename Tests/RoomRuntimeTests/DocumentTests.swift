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
}
