import Fixtures
import Foundation
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import StandupsServer
import Testing

/// A room's state carries the 10 most recent meetings; the rest are read a page at a time,
/// over the socket or HTTP, and the downloads hold every one.
@Suite(.serialized)
struct HistoryTests {
  static var standup: Standup {
    var standup = Standup.design
    standup.meetings = IdentifiedArray(
      uniqueElements: (0..<13).reversed().map { index in
        Meeting(
          id: UUID(), date: Date(timeIntervalSince1970: 1_795_000_000 + Double(index) * 86_400),
          transcript: "Ana: day \(index)", seconds: 60, present: ["Ana"],
          notes: [Note(author: "Ana", text: "day \(index)", speaker: "Blob")])
      })
    return standup
  }

  @Test func olderMeetingsArePagedOverTheSocketAndHTTPAndDownloadedInFull() async throws {
    let server = try await TestServer.start(standups: [Self.standup])
    let ana = try await server.room(name: "Ana")
    let state = try #require(ana.state)
    #expect(state["standup"]?["meetings"]?.arrayValue?.count == 10)
    #expect(state["standup"]?["meetings"]?[0]?["transcript"] == "Ana: day 12")
    #expect(state["standup"]?["olderMeetingCount"] == 3)

    ana.send(["type": "history", "ref": "h1", "offset": 10, "limit": 20])
    let page = try await ana.next { $0["ref"] == "h1" }
    #expect(page["type"] == "history")
    #expect(page["offset"] == 10)
    #expect(page["total"] == 13)
    #expect(
      page["meetings"]?.arrayValue?.map { $0["transcript"] } == [
        "Ana: day 2", "Ana: day 1", "Ana: day 0",
      ])
    ana.send(["type": "history", "ref": "h2", "limit": 500])
    let refused = try await ana.next { $0["ref"] == "h2" }
    #expect(refused["code"] == "invalid_value")
    #expect(refused["message"] == "\"limit\" must be a whole number from 1 to 50.")
    let lobby = try await server.connect("/ws/lobby?name=Ana")
    _ = try await lobby.next { $0["type"] == "welcome" }
    lobby.send(["type": "history", "ref": "h3"])
    #expect(try await lobby.next { $0["ref"] == "h3" }["code"] == "bad_message")

    let id = Standup.design.id.uuidString
    let http = try http(
      port: server.port, "GET", "/api/rooms/\(id)/meetings?offset=11&limit=5",
      token: "bot-secret-0002")
    #expect(http.status == 200)
    #expect(http.json?["total"] == 13)
    #expect(
      http.json?["meetings"]?.arrayValue?.map { $0["transcript"] } == ["Ana: day 1", "Ana: day 0"])
    #expect(
      try httpResponse(
        port: server.port, "GET", "/api/rooms/\(id)/meetings?limit=x", token: "bot-secret-0002"
      ).status == 400)
    // A parameter given twice is refused, whichever of its values would have passed.
    for query in ["limit=1&limit=99", "limit=99&limit=1", "offset=0&limit=1&offset=2"] {
      let twice = try httpResponse(
        port: server.port, "GET", "/api/rooms/\(id)/meetings?\(query)", token: "bot-secret-0002")
      #expect(twice.status == 400 && twice.json?["code"] == "invalid_value", "\(query)")
      #expect(twice.json?["message"]?.stringValue?.contains("more than once") == true)
    }
    let upgrade = parseHTTP(
      try exchange(port: server.port, upgradeRequest("/ws/rooms/\(id)?name=Ana&name=Ben")))
    #expect(upgrade.status == 400 && upgrade.body.contains("name= more than once"))
    let markdown = try httpResponse(
      port: server.port, "GET", "/api/rooms/\(id)/history.md", token: "bot-secret-0002")
    #expect(markdown.body.contains("- **Ana**: day 0\n"))
    #expect(markdown.body.contains("- **Ana**: day 12\n"))
    #expect(markdown.body.contains(" UTC"))
    // In the reader's time zone when asked (the web app asks for its own); a name that is
    // none is refused, saying what it takes.
    let paris = try httpResponse(
      port: server.port, "GET", "/api/rooms/\(id)/history.md?tz=Europe%2FParis",
      token: "bot-secret-0002")
    #expect(paris.status == 200 && paris.body.contains(" (Europe/Paris)"))
    #expect(!paris.body.contains(" UTC"))
    let nowhere = try httpResponse(
      port: server.port, "GET", "/api/rooms/\(id)/history.md?tz=Mars%2FOlympus",
      token: "bot-secret-0002")
    #expect(nowhere.status == 400 && nowhere.json?["code"] == "invalid_value")

    // A new meeting: the room keeps 10, one more is older, nothing is lost.
    try await ana.act("startMeetingButtonTapped")
    try await ana.act("meeting.endMeetingButtonTapped")
    try await ana.act("meeting.alert.saveAndEnd")
    let after = try await ana.waitForState { $0["standup"]?["olderMeetingCount"] == 4 }
    #expect(after["standup"]?["meetings"]?.arrayValue?.count == 10)
    ana.send(["type": "history", "ref": "h4", "offset": 0, "limit": 50])
    #expect(try await ana.next { $0["ref"] == "h4" }["total"] == 14)
    await server.stop()
  }
}
