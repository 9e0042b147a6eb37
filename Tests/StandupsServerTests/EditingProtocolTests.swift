import Fixtures
import Foundation
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import StandupsServer
import Testing
import WebSocketTransport

@Suite(.serialized)
struct EditingProtocolTests {
  @Test func twoClientsEditOneDraftLiveAndSaveIt() async throws {
    let server = try await TestServer.start()
    let lobby = try await server.connect("/ws/lobby?name=Watcher")
    _ = try await lobby.next { $0["type"] == "welcome" }
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(name: "Ben")
    try await ana.act("editButtonTapped")
    _ = try await ben.waitForState { $0["destination"]?["edit"]?["draft"]?["title"] == "Design" }
    try await ben.act("focusChanged", ["field": "title"])
    try await ben.act("edit.binding", ["path": "/title", "value": "Design sync"])
    let blobJr = Standup.design.attendees[1].id.uuidString
    try await ana.act(
      "edit.binding", ["path": .string("/attendees/\(blobJr)/name"), "value": "Robin"])
    try await ana.act("edit.binding", ["path": "/theme", "value": "navy"])
    let seen = try await ana.waitForState {
      $0["destination"]?["edit"]?["draft"]?["title"] == "Design sync"
    }
    #expect(seen["participants"]?[1]?["focus"] == "title")
    #expect(seen["destination"]?["edit"]?["draft"]?["attendees"]?[1]?["name"] == "Robin")

    try await ana.act("edit.binding", ["path": "/duration", "value": 330]).expectError(
      "invalid_value")
    try await ana.act("edit.binding", ["path": "/meetings", "value": []]).expectError(
      "invalid_value")
    try await ana.act("edit.binding", ["path": "/theme", "value": "beige"]).expectError(
      "invalid_value")
    try await ana.act(
      "edit.deleteAttendeesTapped",
      ["ids": .array(Standup.design.attendees.map { .string($0.id.uuidString) })]
    )
    .expectError("invalid_action")
    // A save refused for one field names it, as `focusChanged` does.
    try await ana.act("edit.binding", ["path": "/title", "value": " "])
    let refused = try await ana.act("saveEditButtonTapped")
    refused.expectError("invalid_value")
    #expect(refused["field"] == "title")
    try await ana.act("edit.binding", ["path": "/title", "value": "Design sync"])

    try await ben.act("saveEditButtonTapped")
    let saved = try await ana.waitForState { $0["destination"] == .null }
    #expect(saved["standup"]?["title"] == "Design sync")
    #expect(saved["standup"]?["theme"] == "navy")
    #expect(saved["participants"]?[1]?["focus"] == .null)
    _ = try await lobby.waitForState { $0["standups"]?[0]?["title"] == "Design sync" }
    #expect(ana.state?.encoded == ben.state?.encoded)
    await server.stop()
  }

  /// Ana and Ben each send a change to the title from the same text, as two people typing
  /// at once do: neither has seen the other's yet. The room keeps both, and tells both.
  @Test func twoChangesToOneFieldFromTheSameTextAreBothKept() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(name: "Ben")
    try await ana.act("editButtonTapped")
    _ = try await ben.waitForState { $0["destination"]?["edit"]?["draft"]?["title"] == "Design" }
    try await ana.act(
      "edit.binding", ["path": "/title", "value": "Design review", "base": "Design"])
    try await ben.act(
      "edit.binding", ["path": "/title", "value": "Weekly Design", "base": "Design"])
    for person in [ana, ben] {
      _ = try await person.waitForState {
        $0["destination"]?["edit"]?["draft"]?["title"] == "Weekly Design review"
      }
    }
    // Without a base, a change sets the field as sent (a bot's, an older client's).
    try await ben.act("edit.binding", ["path": "/title", "value": "Retro"])
    _ = try await ana.waitForState { $0["destination"]?["edit"]?["draft"]?["title"] == "Retro" }
    await server.stop()
  }

  /// A server draining (SIGTERM) lets a deletion waiting for its undo window end first: closed
  /// under it, the room forgot the deletion it had acknowledged (the standup came back); done
  /// at once, nobody could have undone it. Meanwhile the people in the room may still undo.
  @Test func aServerThatDrainsLetsADeletionsUndoWindowEnd() async throws {
    let engineering = Standup(
      id: UUID(), attendees: [Attendee(id: UUID(), name: "Cy")], title: "Engineering")
    let storage = StorageClient.inMemory([.design, engineering])
    let server = try await TestServer.start(storage: storage) {
      $0.undoWindow = .milliseconds(1500)
    }
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(engineering.id, name: "Ben")
    for person in [ana, ben] {
      try await person.act("deleteButtonTapped")
      #expect(try await person.act("alert.confirmDeletion")["type"] == "ack")
      _ = try await person.waitForState { $0["undo"]?["kind"] == "deletedStandup" }
    }
    let draining = Task { await server.server.drain() }
    // Ben takes his back while the server drains; Ana's window ends.
    let seq = try #require(ben.state?["undo"]?["seq"]?.intValue)
    #expect(try await ben.act("undoButtonTapped", ["seq": .int(seq)])["type"] == "ack")
    #expect(try await ana.waitUntilClosed().code == 4410)
    await draining.value
    // NB: by its reason: libwebsockets' client reports 1012 as 1002.
    #expect(try await ben.waitUntilClosed().reason == "The server is restarting: reconnecting.")
    #expect(try await storage.loadStandup(Standup.design.id) == nil)
    #expect(try await storage.loadStandup(engineering.id) != nil)
    server.client.shutdown()
  }

  /// A single server (no database) has no other node for a proxy to send people to: its drain
  /// does not wait the grace a cluster node gives HAProxy, and asks its people to reconnect at
  /// once (with an hour's grace, a drain that waited would never end here).
  @Test func aSingleServerThatDrainsAsksItsPeopleToReconnectWithoutAGrace() async throws {
    let server = try await TestServer.start { $0.drainGrace = .seconds(3600) }
    let ana = try await server.room(name: "Ana")
    let draining = Task { await server.server.drain() }
    // NB: a drain that waited would fail here, not hold the suite for an hour.
    defer { draining.cancel() }
    #expect(try await ana.waitUntilClosed().reason == "The server is restarting: reconnecting.")
    await draining.value
    server.client.shutdown()
  }

  /// A room closed under a deletion waiting for its undo window (the server stopped at once, a
  /// deletion confirmed while it drained after it looked for such, the room moved to another
  /// node) carries the deletion out: the room forgot a deletion it had acknowledged, and the
  /// standup came back.
  @Test func aServerStoppedAtOnceCarriesOutADeletionWaitingForItsWindow() async throws {
    let storage = StorageClient.inMemory([.design])
    let server = try await TestServer.start(storage: storage) { $0.undoWindow = .seconds(60) }
    let ana = try await server.room(name: "Ana")
    try await ana.act("deleteButtonTapped")
    #expect(try await ana.act("alert.confirmDeletion")["type"] == "ack")
    _ = try await ana.waitForState { $0["undo"]?["kind"] == "deletedStandup" }
    await server.server.shutdown()
    #expect(try await ana.waitUntilClosed().reason == "The server is stopping.")
    #expect(try await storage.loadStandup(Standup.design.id) == nil)
    server.client.shutdown()
  }

  @Test func aDeletionIsSaidToEveryoneCanBeUndoneAndOtherwiseClosesEveryoneWith4410() async throws {
    let server = try await TestServer.start { $0.undoWindow = .seconds(2) }
    let lobby = try await server.connect("/ws/lobby?name=Watcher")
    _ = try await lobby.next { $0["type"] == "welcome" }
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(name: "Ben")
    try await ana.act("deleteButtonTapped")
    _ = try await ben.waitForState { $0["destination"] == ["alert": "confirmDeletion"] }
    #expect(ben.state?["activity"]?["kind"] == "askedToDelete")
    #expect(ben.state?["activity"]?["by"]?["name"] == "Ana")
    let ack = try await ana.act("alert.confirmDeletion", ref: "del")
    #expect(ack["type"] == "ack")
    // Ben hears who deleted it, and undoes it within the window.
    let deleted = try await ben.waitForState { $0["undo"]?["kind"] == "deletedStandup" }
    #expect(deleted["activity"]?["by"]?["name"] == "Ana")
    let seq = try #require(deleted["undo"]?["seq"]?.intValue)
    let undone = try await ben.act("undoButtonTapped", ["seq": .int(seq)], ref: "undo")
    #expect(undone["type"] == "ack")
    _ = try await ana.waitForState {
      $0["activity"]?["kind"] == "restoredStandup" && $0["undo"] == .null
    }
    // The window that would have ended the standup passes: it stays.
    try await holds("The standup went though its deletion was undone.", for: .milliseconds(2500)) {
      ana.closed == nil && ben.closed == nil
    }
    // Deleted again and left alone: when the window ends, everyone is closed with 4410.
    try await ana.act("deleteButtonTapped")
    try await ana.act("alert.confirmDeletion")
    #expect(try await ana.waitUntilClosed().code == 4410)
    #expect(try await ben.waitUntilClosed().code == 4410)
    _ = try await lobby.waitForState { $0["standups"]?.arrayValue?.isEmpty == true }
    let room = "/ws/rooms/\(Standup.design.id.uuidString)?name=Cy"
    #expect(try httpStatus(port: server.port, upgradeRequest(room)) == 404)
    await server.stop()
  }
}
