import Fixtures
import Foundation
import JSONPatch
import RoomRuntime
import StandupsFeatures
import StandupsWire
import Synchronization
import Testing
import WebSocketTransport

@testable import StandupsServer

/// A download's file name comes from the standup's title: ASCII letters and digits, safe in
/// a header, with accents folded rather than dropped.
@Test(arguments: [
  ("Design", "design-history"), ("Équipe daily", "equipe-daily-history"),
  ("Ça va? Oui!", "ca-va-oui-history"), ("日本語", "standup-history"),
  ("Design 2.0 review", "design-2-0-review-history"),
])
func aDownloadIsNamedAfterItsStandup(_ title: String, _ name: String) {
  #expect(BotAPI.HistoryFormat.fileName(title) == name)
}

@Suite(.serialized)
struct BotTests {
  let room = "/ws/rooms/\(Standup.design.id.uuidString)"

  @Test func botsJoinWithATokenAndActLikePeople() async throws {
    let server = try await TestServer.start()
    let lobby = try await server.connect("/ws/lobby?name=Cy")
    let ana = try await server.room(name: "Ana")
    // By query token, named after the token.
    let ci = try await server.connect("\(room)?token=ci-secret-0001")
    _ = try await ci.next { $0["type"] == "welcome" }
    // By Authorization header (asking for another name).
    let bot = TestClient()
    bot.connection = try await server.client.connect(
      port: server.port, path: "\(room)?name=Timekeeper",
      headers: ["Authorization": "Bearer bot-secret-0002"]
    ) { bot.receive($0) }
    _ = try await bot.next { $0["type"] == "welcome" }
    let state = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 3 }
    #expect(
      state["participants"]?[1] == [
        "id": state["participants"]?[1]?["id"] ?? nil, "name": "CI", "person": nil, "isBot": true,
        "focus": nil,
      ])
    // A bot shows under its own name, whatever ?name= asks for.
    #expect(state["participants"]?[2]?["name"] == "Standup Bot")
    #expect(state["participants"]?[2]?["isBot"] == true)
    #expect(state["participants"]?[0]?["isBot"] == false)
    // The lobby's card says which of them are bots, as their notes do.
    _ = try await lobby.waitForState {
      $0["standups"]?[0]?["live"]?["people"] == ["Ana", "CI (bot)", "Standup Bot (bot)"]
    }

    try await ana.act("startMeetingButtonTapped")
    try await ci.act("meeting.noteSubmitted", ["text": "build 1234 green"])
    _ = try await ana.waitForState { $0["meeting"]?["transcript"] == "CI (bot): build 1234 green" }

    #expect(try httpStatus(port: server.port, upgradeRequest("\(room)?token=wrong")) == 401)
    #expect(
      try httpStatus(port: server.port, upgradeRequest("/ws/lobby?token=wrong&name=X")) == 401)
    await server.stop()
  }

  @Test func theHTTPAPIReadsStateAndPostsActions() async throws {
    let server = try await TestServer.start()
    let id = Standup.design.id.uuidString
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")

    let posted = try http(
      port: server.port, "POST", "/api/rooms/\(id)/actions", token: "ci-secret-0001",
      body:
        #"{"type":"action","ref":"b-1","action":{"type":"meeting.noteSubmitted","text":"deploy done"}}"#
    )
    #expect(posted.status == 200)
    let version = try #require(posted.json?["version"]?.intValue)
    _ = try await ana.waitForState { $0["meeting"]?["transcript"] == "CI (bot): deploy done" }
    #expect(try #require(ana.version) >= version)

    // A bare action works too.
    let bare = try http(
      port: server.port, "POST", "/api/rooms/\(id)/actions", token: "ci-secret-0001",
      body: #"{"type":"meeting.noteSubmitted","text":"second"}"#)
    #expect(bare.status == 200)

    let read = try http(port: server.port, "GET", "/api/rooms/\(id)", token: "bot-secret-0002")
    #expect(read.status == 200)
    #expect(
      read.json?["state"]?["meeting"]?["transcript"] == "CI (bot): deploy done\nCI (bot): second")
    #expect(read.json?["version"]?.intValue != nil)
    let lobby = try http(port: server.port, "GET", "/api/standups", token: "bot-secret-0002")
    #expect(lobby.json?["state"]?["standups"]?[0]?["title"] == "Design")
    #expect(lobby.json?["state"]?["standups"]?[0]?["live"]?["meetingRunning"] == true)

    // Errors: the protocol's error object with a 4xx status; nothing changes.
    let noToken = try http(port: server.port, "GET", "/api/standups")
    #expect(noToken.status == 401)
    #expect(noToken.json?["code"] == "unauthorized")
    #expect(try http(port: server.port, "GET", "/api/standups", token: "nope").status == 401)
    let unknown = try http(
      port: server.port, "GET", "/api/rooms/\(UUID())", token: "ci-secret-0001")
    #expect(unknown.status == 404)
    #expect(unknown.json?["code"] == "not_found")
    let impossible = try http(
      port: server.port, "POST", "/api/rooms/\(id)/actions", token: "ci-secret-0001",
      body: #"{"type":"action","ref":"b-2","action":{"type":"meeting.resumeButtonTapped"}}"#)
    #expect(impossible.status == 409)
    #expect(impossible.json?["code"] == "invalid_action")
    #expect(impossible.json?["ref"] == "b-2")
    let garbage = try http(
      port: server.port, "POST", "/api/rooms/\(id)/actions", token: "ci-secret-0001", body: "{nope")
    #expect(garbage.status == 400)
    #expect(garbage.json?["code"] == "bad_json")
    // A history request is a message of its own, not a bare action: where to read it instead.
    let history = try http(
      port: server.port, "POST", "/api/rooms/\(id)/actions", token: "ci-secret-0001",
      body: #"{"type":"history","ref":"h-1","offset":10,"limit":20}"#)
    #expect(history.status == 400)
    #expect(history.json?["code"] == "bad_message")
    #expect(history.json?["ref"] == "h-1")
    #expect(
      history.json?["message"] == "Over HTTP, read history with GET /api/rooms/{id}/meetings.")
    let ping = try http(
      port: server.port, "POST", "/api/rooms/\(id)/actions", token: "ci-secret-0001",
      body: #"{"type":"ping","ref":"p-1"}"#)
    #expect(ping.status == 400)
    #expect(ping.json?["code"] == "bad_message")
    #expect(ping.json?["ref"] == "p-1")
    #expect(ping.json?["message"]?.stringValue?.contains("GET /healthz") == true)
    #expect(
      try http(port: server.port, "DELETE", "/api/standups", token: "ci-secret-0001").status == 405)
    await server.stop()
  }

  /// A room opened only to answer the HTTP API goes again once it has answered, like one
  /// that its last person left — also with a form the bot opened: its draft is saved, and
  /// the room opens with it for the next request. A meeting it started keeps the room.
  @Test func aRoomOpenedOnlyForARequestIsReleasedAfterIt() async throws {
    let server = try await TestServer.start()
    let id = Standup.design.id.uuidString
    let read = try http(port: server.port, "GET", "/api/rooms/\(id)", token: "bot-secret-0002")
    #expect(read.status == 200)
    try await eventually("The room stayed open after a read.") { server.server.openRoomCount == 0 }

    func post(_ action: String) throws -> Int {
      try http(
        port: server.port, "POST", "/api/rooms/\(id)/actions", token: "ci-secret-0001",
        body: action
      ).status
    }
    #expect(try post(#"{"type":"editButtonTapped"}"#) == 200)
    try await eventually("The room stayed open with a saved draft.") {
      server.server.openRoomCount == 0
    }
    #expect(try post(#"{"type":"edit.binding","path":"/title","value":"Design review"}"#) == 200)
    try await eventually("The room stayed open after an edit.") { server.server.openRoomCount == 0 }
    let drafted = try http(port: server.port, "GET", "/api/rooms/\(id)", token: "bot-secret-0002")
    #expect(drafted.json?["state"]?["destination"]?["edit"]?["draft"]?["title"] == "Design review")
    #expect(try post(#"{"type":"saveEditButtonTapped"}"#) == 200)
    try await eventually("The room stayed open after its form was saved.") {
      server.server.openRoomCount == 0
    }
    let saved = try http(port: server.port, "GET", "/api/rooms/\(id)", token: "bot-secret-0002")
    #expect(saved.json?["state"]?["standup"]?["title"] == "Design review")

    let started = try http(
      port: server.port, "POST", "/api/rooms/\(id)/actions", token: "ci-secret-0001",
      body: #"{"type":"startMeetingButtonTapped"}"#)
    #expect(started.status == 200)
    #expect(server.server.openRoomCount == 1, "A running meeting keeps its room")
    let ana = try await server.room(name: "Ana")
    #expect(ana.state?["meeting"] != nil)
    await server.stop()
  }

  /// A secret a person typed, of fewer than 20 characters, is taken but warned of, by where it
  /// was given.
  @Test func aShortSecretIsTakenAndWarnedOf() throws {
    let tokens = try BotTokens(
      flags: ["CI=long-enough", "CD=a-random-secret-of-28-chars"],
      environment: "Ops:0123456789abcdefghij")
    #expect(tokens.bots.count == 3)
    #expect(tokens.shortSecrets == ["--bot-token number 1"])
    #expect(
      tokens.shortSecretsWarning?.hasPrefix(
        "The secret in --bot-token number 1 is under 20 characters") == true)
    #expect(
      try BotTokens(flags: ["CD=a-random-secret-of-28-chars"], environment: nil).shortSecretsWarning
        == nil)
  }

  /// An entry that cannot be read is named by its place, never shown: it may be all secret,
  /// and a start's error ends up in logs.
  @Test func badTokenConfigurationIsRefusedWithTheEntryNamed() throws {
    #expect {
      try BotTokens(flags: ["CI=long-enough", "s3cr3t-no-separator"], environment: nil)
    } throws: {
      "\($0)".contains("--bot-token number 2 must be NAME=SECRET")
        && !"\($0)".contains("s3cr3t")
    }
    #expect {
      try BotTokens(flags: [], environment: "Bot:another-secret, CI=3f9c0e7a61d2")
    } throws: {
      "\($0)".contains(
        "entry 2 of STANDUPS_BOT_TOKENS must be NAME:SECRET: it has \"=\" where \":\" goes")
        && !"\($0)".contains("3f9c0e7a61d2")
    }
    #expect { try BotTokens(flags: ["CI=short"], environment: nil) } throws: {
      "\($0)"
        == "The secret in --bot-token number 1 must be at least 8 characters (is it NAME=SECRET, in that order?)."
    }
    #expect { try BotTokens(flags: ["CI=long-enough"], environment: "ci:another-secret") } throws: {
      "\($0)"
        == "The bot in entry 1 of STANDUPS_BOT_TOKENS has the name of the one in --bot-token number 1: each bot needs a name of its own."
    }
    // Names that only read alike are said to, not to be one name given twice.
    #expect {
      try BotTokens(flags: ["C1=3f9c0e7a61d2", "Cl=3f9c0e7a61d3"], environment: nil)
    } throws: {
      "\($0)"
        == "The name in --bot-token number 2 reads like the one in --bot-token number 1: each bot needs a name of its own."
    }
    // An entry the wrong way round has its secret where the name goes: no error shows it.
    for (flags, variable) in [(["3f9c0e7a61d2b4c8=CI"], nil), ([], "3f9c0e7a61d2b4c8:CI")] {
      #expect { try BotTokens(flags: flags, environment: variable) } throws: {
        "\($0)".contains("at least 8 characters") && !"\($0)".contains("3f9c0e7a")
      }
    }
    // A token the server made (`bots add`), given the wrong way round, is no bot's name.
    let token = Bot.makeToken()
    #expect { try BotTokens(flags: ["\(token)=ci-nightly"], environment: nil) } throws: {
      "\($0)"
        == "The name in --bot-token number 1 starts with \"stb_\" as a token does: is it NAME=SECRET, in that order?"
    }
    #expect { try BotTokens(flags: [], environment: "stb_abc:ci-nightly") } throws: {
      "\($0)".hasSuffix("is it NAME:SECRET, in that order?") && !"\($0)".contains("stb_abc")
    }
    // An entry is named by its place as written, empty ones counted.
    #expect { try BotTokens(flags: [], environment: "A:aaaaaaaa,,B:x") } throws: {
      "\($0)"
        == "The secret in entry 3 of STANDUPS_BOT_TOKENS must be at least 8 characters (is it NAME:SECRET, in that order?)."
    }
    #expect(try BotTokens(flags: [], environment: "A:aaaaaaaa,, ,").bots.map(\.name) == ["A"])
    let long = String(repeating: "3f9c0e7a", count: 6)
    #expect { try BotTokens(flags: ["\(long)=CI-secret"], environment: nil) } throws: {
      "\($0)"
        == "The name in --bot-token number 1: a bot's name has 48 characters; it holds 40 at most."
    }
    let bots = try BotTokens(flags: ["CI=long-enough"], environment: "Bot:another-secret").bots
    #expect(bots.map(\.name) == ["CI", "Bot"])
    #expect(bots.map(\.scope) == [.admin, .admin])
    #expect(bots.last?.tokenHash == Bot.hash(token: "another-secret"))
  }

  /// Two requests reach an empty room, the first confirming its deletion: the second, queued
  /// behind it, comes back from the room that closed and finds the standup gone. It is told
  /// so (it was left unanswered, its HTTP connection open for good).
  @Test func aRequestQueuedBehindADeletionIsAnsweredNotLeftWaiting() async throws {
    let (opened, open) = AsyncStream<Void>.makeStream()
    let deleting = Mutex(false)
    var storage = StorageClient.inMemory([.design])
    let delete = storage.delete
    storage.delete = { id in
      deleting.withLock { $0 = true }
      for await _ in opened { break }
      try await delete(id)
    }
    let server = try await TestServer.start(storage: storage)
    let room = "/api/rooms/\(Standup.design.id.uuidString)/actions"
    let asked = try httpResponse(
      port: server.port, "POST", room, token: "ci-secret-0001",
      body: #"{"type":"deleteButtonTapped"}"#)
    #expect(asked.status == 200)
    let bot = Sender(participantID: "bot:CI", name: "CI", isBot: true, scope: .admin)
    let answers = Mutex<[String]>([])
    func request(_ type: String) throws -> RoomChannel<StandupRoomFeature>.Event {
      let message = try ClientMessage.parse(
        .text(Array(#"{"type":"action","action":{"type":"\#(type)"}}"#.utf8)))
      return .request(message, bot) { result in
        answers.withLock {
          switch result {
          case .success: $0.append("\(type): ok")
          case .failure(let error): $0.append("\(type): \(error.code.rawValue)")
          }
        }
      }
    }
    #expect(
      server.server.hub.enqueue(try request("alert.confirmDeletion"), inRoom: Standup.design.id))
    try await eventually("the deletion never reached storage") { deleting.withLock { $0 } }
    // Queued behind the deletion, which waits on storage.
    #expect(server.server.hub.enqueue(try request("editButtonTapped"), inRoom: Standup.design.id))
    server.server.hub.enqueue(
      .snapshot { result in
        answers.withLock {
          switch result {
          case .success: $0.append("snapshot: ok")
          case .failure(let error): $0.append("snapshot: \(error.code.rawValue)")
          }
        }
      }, inRoom: Standup.design.id)
    open.finish()
    try await eventually("a request behind the deletion was never answered") {
      answers.withLock { $0.count } == 3
    }
    #expect(
      answers.withLock { $0 }
        == ["alert.confirmDeletion: ok", "editButtonTapped: not_found", "snapshot: not_found"])
    await server.stop()
  }

  /// A bot over HTTP makes a standup as the lobby does, and is told its id.
  @Test func aBotMakesAStandupOverHTTPAndIsToldItsID() async throws {
    let server = try await TestServer.start()
    let made = try httpResponse(
      port: server.port, "POST", "/api/standups", token: "ci-secret-0001",
      body:
        #"{"type":"addStandupSubmitted","standup":{"title":" Retro ","duration":600,"theme":"navy","attendees":[{"name":"Ana"}]}}"#
    )
    #expect(made.status == 200, "\(made.body)")
    #expect(made.json?["version"]?.intValue != nil)
    let id = try #require(made.json?["standup"]?["id"]?.stringValue)
    #expect(made.json?["standup"]?["title"] == "Retro")
    let room = try httpResponse(
      port: server.port, "GET", "/api/rooms/\(id)", token: "ci-secret-0001")
    #expect(room.status == 200)
    #expect(room.json?["state"]?["standup"]?["title"] == "Retro")
    // Bad input changes nothing, and says what is wrong.
    let untitled = try httpResponse(
      port: server.port, "POST", "/api/standups", token: "ci-secret-0001",
      body:
        #"{"type":"addStandupSubmitted","standup":{"title":"","duration":600,"theme":"navy","attendees":[{"name":"Ana"}]}}"#
    )
    #expect(untitled.status == 400)
    #expect(untitled.json?["code"] == "invalid_value")
    let other = try httpResponse(
      port: server.port, "POST", "/api/standups", token: "ci-secret-0001",
      body: #"{"type":"startMeetingButtonTapped"}"#)
    #expect(other.status == 400)
    #expect(other.json?["message"]?.stringValue?.contains("/api/rooms/{id}/actions") == true)
    let listed = try httpResponse(
      port: server.port, "GET", "/api/standups", token: "ci-secret-0001")
    #expect(listed.json?["state"]?["standups"]?.arrayValue?.count == 2)
    await server.stop()
  }

  /// Two bots make a standup of one title at once, the second while the first is saved: each
  /// is told its own (both were told the second's: the first's answer looked for the title).
  @Test func standupsOfOneTitleMadeAtOnceAreEachAnsweredWithTheirOwn() async throws {
    let (saved, letSave) = AsyncStream<Void>.makeStream()
    let saving = Mutex(0)
    var storage = StorageClient.inMemory([.design])
    let save = storage.save
    storage.save = { standup in
      if saving.withLock({
        $0 += 1
        return $0 == 1
      }) {
        for await _ in saved { break }
      }
      try await save(standup)
    }
    let server = try await TestServer.start(storage: storage)
    func making(_ attendee: String) throws -> Int32 {
      let body =
        #"{"type":"addStandupSubmitted","standup":{"title":"Daily","duration":600,"theme":"navy","attendees":[{"name":"\#(attendee)"}]}}"#
      return try connectedSocket(
        port: server.port,
        sending: "POST /api/standups HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
          + "Authorization: Bearer ci-secret-0001\r\nContent-Type: application/json\r\n"
          + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }
    let first = try making("Ana")
    defer { close(first) }
    try await eventually("the first standup was never saved") { saving.withLock { $0 } == 1 }
    let second = try making("Ben")
    defer { close(second) }
    try await eventually("the second request never reached the lobby") {
      await server.server.hub.lobby.queuedRequests == 1
    }
    letSave.yield()
    for (socket, attendee) in [(first, "Ana"), (second, "Ben")] {
      let answer = parseHTTP(readResponse(socket))
      #expect(answer.status == 200, "\(answer.body)")
      let id = try #require(answer.json?["standup"]?["id"]?.stringValue)
      let room = try httpResponse(
        port: server.port, "GET", "/api/rooms/\(id)", token: "ci-secret-0001")
      #expect(
        room.json?["state"]?["standup"]?["attendees"]?[0]?["name"]?.stringValue == attendee,
        "the answer to \(attendee)'s request named another standup")
    }
    await server.stop()
  }

  @Test func aStandupsHistoryDownloadsAsMarkdownAndCSV() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")
    try await ana.act("meeting.noteSubmitted", ["text": "Shipped, finally"])
    try await ana.act("meeting.endMeetingButtonTapped")
    try await ana.act("meeting.alert.saveAndEnd")
    let id = Standup.design.id.uuidString
    let markdown = try httpResponse(
      port: server.port, "GET", "/api/rooms/\(id)/history.md", token: "bot-secret-0002")
    #expect(markdown.status == 200)
    #expect(markdown.headers["content-type"] == "text/markdown; charset=utf-8")
    #expect(
      markdown.headers["content-disposition"] == "attachment; filename=\"design-history.md\"")
    // Once: a header sent twice is joined with a comma by the reader.
    #expect(markdown.headers["cache-control"] == "no-store")
    #expect(markdown.body.hasPrefix("# Design: meeting history\n"))
    #expect(markdown.body.contains("Present: Ana\n"))
    #expect(markdown.body.contains("- **Ana**: Shipped, finally\n"))
    let csv = try httpResponse(
      port: server.port, "GET", "/api/rooms/\(id)/history.csv", token: "bot-secret-0002")
    #expect(csv.status == 200)
    #expect(csv.headers["content-type"] == "text/csv; charset=utf-8; header=present")
    let rows = csv.body.components(separatedBy: "\r\n")
    #expect(rows.first == "\u{FEFF}meeting_id,date,length_seconds,present,speaker,author,note")
    #expect(rows[1].hasSuffix(",Ana,\"Shipped, finally\""))
    // Unknown standups and other methods get the protocol's errors.
    #expect(
      try http(
        port: server.port, "GET", "/api/rooms/\(UUID())/history.md", token: "bot-secret-0002"
      )
      .status == 404)
    #expect(
      try http(
        port: server.port, "POST", "/api/rooms/\(id)/history.csv", token: "bot-secret-0002",
        body: "{}"
      ).status == 405)
    // (On this open server anyone may download it, as anyone may join: see AccessTests.)
    #expect(try http(port: server.port, "GET", "/api/rooms/\(id)/history.md").status == 200)
    await server.stop()
  }
}
