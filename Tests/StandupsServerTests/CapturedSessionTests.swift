import Fixtures
import Foundation
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import StandupsServer
import Testing

/// Records what a real server sends during a session with edits, a meeting and notes, and
/// writes it to build/fixtures/captured-session.json: the web app's JSON Patch module is
/// tested on it (Tests/Web/jsonpatch.test.mjs).
@Suite(.serialized)
struct CapturedSessionTests {
  @Test func captureASessionForTheWebAppsTests() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let welcome = try #require(ana.allMessages.first { $0["type"] == "welcome" })
    try await ana.act("editButtonTapped")
    try await ana.act("focusChanged", ["field": "title"])
    try await ana.act("edit.binding", ["path": "/title", "value": "Design ~/ review"])
    try await ana.act("edit.addAttendeeButtonTapped")
    let added = try #require(
      ana.state?["destination"]?["edit"]?["draft"]?["attendees"]?[3]?["id"]?.stringValue)
    try await ana.act(
      "edit.binding", ["path": .string("/attendees/\(added)/name"), "value": "Dee \"D\""])
    try await ana.act(
      "edit.deleteAttendeesTapped", ["ids": [.string(Standup.design.attendees[0].id.uuidString)]])
    try await ana.act("saveEditButtonTapped")
    try await ana.act("startMeetingButtonTapped")
    _ = try await ana.waitForState { $0["meeting"]?["secondsElapsed"] == 1 }
    try await ana.act("meeting.nextButtonTapped", ["from": 0])
    try await ana.act("meeting.noteSubmitted", ["text": "Shipped the API ✅"])
    try await ana.act("meeting.noteSubmitted", ["text": "Line\twith a tab"])
    try await ana.act("meeting.endMeetingButtonTapped")
    try await ana.act("meeting.alert.saveAndEnd")
    let ben = try await server.room(name: "Ben")
    let final = try #require(ben.allMessages.first { $0["type"] == "welcome" })
    let finalVersion = try #require(final["version"]?.intValue)
    _ = try await ana.waitForState { _ in ana.version == finalVersion }
    let patches = ana.allMessages.filter { $0["type"] == "patch" }
    #expect(ana.problems.isEmpty)
    #expect(ana.state == final["state"])

    let session: JSONValue = ["welcome": welcome, "patches": .array(patches), "final": final]
    let folder = ExampleTests.root.appendingPathComponent("build/fixtures")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data(session.encoded).write(to: folder.appendingPathComponent("captured-session.json"))
    await server.stop()
  }
}
