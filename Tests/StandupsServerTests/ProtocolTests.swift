import Fixtures
import Foundation
import JSONPatch
import StandupsFeatures
import StandupsServer
import Testing

@Suite(.serialized)
struct RoomProtocolTests {
  @Test func welcomeCarriesTheWholeStateAndPresence() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let state = try #require(ana.state)
    #expect(state["standup"]?["title"] == "Design")
    #expect(state["standup"]?["duration"] == 300)
    #expect(state["destination"] == .null)
    #expect(state["meeting"] == .null)
    #expect(state["participants"]?.arrayValue?.map { $0["name"] } == ["Ana"])
    #expect(state["participants"]?[0]?["isBot"] == false)
    let ben = try await server.room(name: "Ben")
    _ = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 2 }
    #expect(ben.state?["participants"]?.arrayValue?.count == 2)
    #expect(ana.problems.isEmpty)
    await server.stop()
  }

  @Test func twoClientsSeeTheSameMeetingTickAndRebuildTheSameState() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(name: "Ben")
    let start = ContinuousClock.now
    let ack = try await ana.act("startMeetingButtonTapped")
    #expect(ack["type"] == "ack")
    _ = try await ben.waitForState { $0["meeting"]?["secondsElapsed"] == 3 }
    let elapsed = ContinuousClock.now - start
    #expect(elapsed > .milliseconds(2500) && elapsed < .seconds(5), "3 ticks took \(elapsed)")
    _ = try await ana.waitForState { $0["meeting"]?["secondsElapsed"] == 3 }
    #expect(ana.state?["meeting"]?["secondsPerSpeaker"] == 100)

    // A fresh welcome is byte-identical to the state both rebuilt from patches.
    try await ana.act("meeting.endMeetingButtonTapped")  // stops the ticking
    _ = try await ben.waitForState { $0["meeting"]?["alert"] == "endMeeting" }
    let carl = try await server.room(name: "Carl")
    _ = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 3 }
    _ = try await ben.waitForState { $0["participants"]?.arrayValue?.count == 3 }
    #expect(ana.state?.encoded == carl.state?.encoded)
    #expect(ben.state?.encoded == carl.state?.encoded)
    #expect(ana.version == carl.version)
    #expect(ana.problems.isEmpty && ben.problems.isEmpty)
    await server.stop()
  }

  @Test func twoSimultaneousNextTapsWithTheSameFromAdvanceOnce() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(name: "Ben")
    try await ana.act("startMeetingButtonTapped")
    _ = try await ben.waitForState { $0["meeting"] != .null }
    ana.send([
      "type": "action", "ref": "a", "action": ["type": "meeting.nextButtonTapped", "from": 0],
    ])
    ben.send([
      "type": "action", "ref": "b", "action": ["type": "meeting.nextButtonTapped", "from": 0],
    ])
    let answers = [
      try await ana.next { $0["ref"] == "a" }, try await ben.next { $0["ref"] == "b" },
    ]
    #expect(answers.filter { $0["type"] == "ack" }.count == 1)
    let error = try #require(answers.first { $0["type"] == "error" })
    #expect(error["code"] == "stale")
    _ = try await ana.waitForState { $0["meeting"]?["speakerIndex"] == 1 }
    #expect(ana.state?["meeting"]?["secondsElapsed"] == 100)
    try await ana.act("meeting.alert.discard").expectError("invalid_action")
    await server.stop()
  }

  @Test func theAckComesAfterItsPatchAndNamesItsVersion() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let ack = try await ana.act("startMeetingButtonTapped", ref: "c-1")
    let messages = ana.allMessages
    let patchIndex = try #require(
      messages.firstIndex { $0["type"] == "patch" && $0["version"] == ack["version"] })
    let ackIndex = try #require(messages.firstIndex { $0["ref"] == "c-1" })
    #expect(patchIndex < ackIndex)
    // Accepted but changing nothing: acked with the current version, no patch.
    try await ana.act("meeting.endMeetingButtonTapped")
    let version = try #require(ana.version)
    let again = try await ana.act("meeting.endMeetingButtonTapped")
    #expect(again["type"] == "ack")
    #expect(again["version"]?.intValue == version)
    await server.stop()
  }

  /// A page that heard nothing for a while asks whether its connection still reaches the
  /// room: a `ping` is answered with `pong` (its `ref`), in a room and in the lobby, and
  /// changes nothing.
  @Test func aPingIsAnsweredWithAPongAndChangesNothing() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let lobby = try await server.connect("/ws/lobby?name=Ben")
    _ = try await lobby.next { $0["type"] == "welcome" }
    let before = ana.version
    ana.send(raw: #"{"type":"ping","ref":"p-1"}"#)
    #expect(try await ana.next { $0["type"] == "pong" } == ["type": "pong", "ref": "p-1"])
    ana.send(raw: #"{"type":"ping"}"#)
    #expect(try await ana.next { $0["type"] == "pong" } == ["type": "pong", "ref": nil])
    lobby.send(raw: #"{"type":"ping","ref":"p-2"}"#)
    #expect(try await lobby.next { $0["type"] == "pong" }["ref"] == "p-2")
    #expect(ana.version == before)
    #expect(ana.problems.isEmpty)
    await server.stop()
  }

  /// A room busy with a slow save still answers a ping at once: the page must not take a
  /// busy room for a lost connection (and reconnect, dropping the answer it waits for).
  @Test func aPingIsAnsweredWhileAnActionWaitsForItsSave() async throws {
    var storage = StorageClient.inMemory([.design])
    let save = storage.save
    let (released, release) = AsyncStream<Void>.makeStream()
    let (entered, enter) = AsyncStream<String>.makeStream()
    storage.save = { standup in
      enter.yield(standup.title)
      for await _ in released { break }
      try await save(standup)
    }
    let server = try await TestServer.start(storage: storage)
    let ana = try await server.room(name: "Ana")
    try await ana.act("editButtonTapped")
    // NB: a changed title, so that the save writes the standup (a form saved unchanged writes
    // only that its draft is gone, which this test does not hold back).
    try await ana.act("edit.binding", ["path": "/title", "value": "Design review"])
    ana.send(raw: #"{"type":"action","ref":"save-1","action":{"type":"saveEditButtonTapped"}}"#)
    var saves = entered.makeAsyncIterator()
    #expect(await saves.next() == "Design review")
    ana.send(raw: #"{"type":"ping","ref":"p-9"}"#)
    let first = try await ana.next { $0["type"] == "pong" || $0["ref"] == "save-1" }
    #expect(first == ["type": "pong", "ref": "p-9"], "Answered before the save it came behind.")
    release.yield()
    #expect(try await ana.next { $0["ref"] == "save-1" }["type"] == "ack")
    await server.stop()
  }

  /// Others see a reconnecting page's person change connection in one patch: never on two
  /// connections at once (the old one not gone yet), never gone for a moment.
  @Test func othersSeeAReconnectAsOneChange() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(name: "Ben")
    let ids = { (state: JSONValue) in
      state["participants"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }
    _ = try await ben.waitForState { ids($0) == [ana.you, ben.you].compactMap { $0 } }
    let before = ben.allMessages.count
    let again = try await server.room(name: "Ana", replaces: try #require(ana.key))
    #expect(try await ana.waitUntilClosed().code == 4409)
    _ = try await ben.waitForState { ids($0) == [ben.you, again.you].compactMap { $0 } }
    let patches = ben.allMessages[before...].filter { $0["type"] == "patch" }
    #expect(patches.count == 1, "\(patches)")
    await server.stop()
  }

  /// A page that reconnects after a drop the server has not noticed (a network that went
  /// silent) names its previous connection by the key only that connection was told: that
  /// one goes at once, so its person is shown once, and the meeting never sees the room empty.
  @Test func aReconnectingPageTakesItsOldConnectionsPlace() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")
    let key = try #require(ana.key)
    #expect(key.count == 32 && key != ana.you)

    // Nobody else can push Ana out: not with her id (everyone in the room sees it), not with
    // her key under another name; nor can she take over Ben's place with hers.
    let ben = try await server.room(name: "Ben")
    let attempts = [
      try await server.room(name: "Ana", replaces: try #require(ana.you)),
      try await server.room(name: "Cy", replaces: key),
      try await server.room(name: "Ana", replaces: try #require(ben.key)),
    ]
    // NB: acknowledged after the joins before it were handled: Ana is still in.
    #expect(try await ana.act("meeting.nextButtonTapped")["type"] == "ack")
    #expect(ana.closed == nil && ben.closed == nil)
    let everyone = [ana, ben] + attempts
    _ = try await ben.waitForState {
      $0["participants"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        == everyone.map(\.you)
    }
    for attempt in attempts { attempt.close() }
    ben.close()
    _ = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 1 }

    // Ana alone, her meeting running: her new connection takes the old one's place.
    let again = try await server.room(name: "Ana", replaces: key)
    #expect(try await ana.waitUntilClosed().code == 4409)
    let welcome = try #require(again.allMessages.first)
    #expect(
      welcome["state"]?["participants"]?.arrayValue?.map { $0["id"]?.stringValue } == [again.you],
      "Its welcome shows Ana once.")
    #expect(welcome["state"]?["meeting"]?["pausedBecause"] == .null, "Never empty: no pause.")
    #expect(again.key != key)
    // A key of no connection here takes nothing.
    let stray = try await server.room(name: "Ana", replaces: String(repeating: "f", count: 32))
    #expect(try await again.act("meeting.nextButtonTapped")["type"] == "ack")
    #expect(again.closed == nil && again.problems.isEmpty)
    stray.close()
    // A reconnect whose welcome was lost still names the older key: the connection that
    // took that key's place answers to it, and goes in turn.
    let reload = try await server.room(name: "Ana", replaces: key)
    #expect(try await again.waitUntilClosed().code == 4409)
    _ = try await reload.waitForState {
      $0["participants"]?.arrayValue?.map { $0["id"]?.stringValue } == [reload.you]
    }
    let room = "/ws/rooms/\(Standup.design.id.uuidString)"
    #expect(try httpStatus(port: server.port, upgradeRequest(room + "?name=Ana&replaces=")) == 400)
    // No client holds a version below 0, a fraction of one, or one past any number's end.
    for since in ["-5", "1.5", "99999999999999999999", "x"] {
      let refused = parseHTTP(
        try exchange(port: server.port, upgradeRequest(room + "?name=Ana&since=\(since)")))
      #expect(refused.status == 400, "since=\(since)")
      #expect(refused.body.contains("since= must be"), "\(refused.body)")
    }
    reload.close()
    await server.stop()
  }

  @Test func badInputGetsTheProtocolsErrorsAndTheConnectionStaysOpen() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let before = ana.version

    ana.send(raw: "{not json")
    #expect(try await ana.next { $0["type"] == "error" }["code"] == "bad_json")
    ana.send(raw: "[1,2]")
    #expect(try await ana.next { $0["type"] == "error" }["code"] == "bad_message")
    ana.send(raw: #"{"type":"hello","ref":"r1"}"#)
    let hello = try await ana.next { $0["type"] == "error" }
    #expect(hello["code"] == "bad_message")
    #expect(hello["ref"] == "r1")
    ana.send(raw: #"{"type":"action","ref":"r2"}"#)
    #expect(try await ana.next { $0["ref"] == "r2" }["code"] == "bad_message")
    ana.send(raw: #"{"type":"action","ref":5,"action":{"type":"startMeetingButtonTapped"}}"#)
    #expect(try await ana.next { $0["type"] == "error" }["code"] == "bad_message")
    try await ana.act("danceButtonTapped").expectError("unknown_action")
    try await ana.act("meeting.noteSubmitted", ["text": 5]).expectError("invalid_value")
    try await ana.act("meeting.nextButtonTapped").expectError("invalid_action")
    ana.send(
      raw: #"{"type":"action","ref":"big","action":{"type":"x","pad":""#
        + String(repeating: "x", count: 70_000) + #""}}"#)
    #expect(try await ana.next { $0["type"] == "error" }["code"] == "too_large")

    // Nothing changed, and the connection still works.
    #expect(ana.version == before)
    let ack = try await ana.act("startMeetingButtonTapped")
    #expect(ack["type"] == "ack")
    #expect(ana.closed == nil)
    await server.stop()
  }

  @Test func upgradesAreRefusedWithHTTPStatuses() async throws {
    let server = try await TestServer.start()
    let room = "/ws/rooms/\(Standup.design.id.uuidString)"
    #expect(try httpStatus(port: server.port, upgradeRequest(room)) == 400)
    #expect(try httpStatus(port: server.port, upgradeRequest(room + "?name=%20%20")) == 400)
    #expect(
      try httpStatus(port: server.port, upgradeRequest("/ws/rooms/\(UUID())?name=Ana")) == 404)
    #expect(try httpStatus(port: server.port, upgradeRequest("/ws/rooms/nope?name=Ana")) == 404)
    #expect(try httpStatus(port: server.port, upgradeRequest("/ws/lobby?name=Ana&token=x")) == 401)
    #expect(try httpStatus(port: server.port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n") == 200)
    await server.stop()
  }

  @Test func resumingWithSinceSendsOnlyWhatWasMissed() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(name: "Ben")
    _ = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 2 }
    let held = try #require(ben.version)
    let heldState = try #require(ben.state)
    ben.close()
    _ = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 1 }
    try await ana.act("startMeetingButtonTapped")

    let again = try await server.connect(
      "/ws/rooms/\(Standup.design.id.uuidString)?name=Ben&since=\(held)")
    let welcome = try await again.next { $0["type"] == "welcome" }
    #expect(welcome["resumed"] == true)
    #expect(welcome["state"] == .null)
    #expect(welcome["version"]?.intValue == held)
    // Patches from held + 1 on rebuild the current state from the state Ben held.
    var state = heldState
    let target = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 2 }
    let targetVersion = try #require(ana.version)
    // It says where the patches it is followed by end: at Ben's own arrival.
    let latest = try #require(welcome["latest"]?.intValue)
    #expect(latest > held && latest <= targetVersion)
    var version = held
    while version < targetVersion {
      let patch = try await again.next { $0["type"] == "patch" }
      #expect(patch["version"]?.intValue == version + 1)
      let operations = (patch["ops"]?.arrayValue ?? []).compactMap(PatchOperation.init(json:))
      state = try JSONPatch.apply(operations, to: state)
      version += 1
      #expect((state["participants"]?.arrayValue?.count == 2) == (version >= latest))
    }
    #expect(state["participants"] == target["participants"])
    #expect(state["meeting"]?["secondsPerSpeaker"] == 100)

    // A version this server never issued gets an ordinary welcome.
    let stranger = try await server.connect(
      "/ws/rooms/\(Standup.design.id.uuidString)?name=Cy&since=12")
    let fresh = try await stranger.next { $0["type"] == "welcome" }
    #expect(fresh["resumed"] == nil)
    #expect(fresh["state"]?["standup"]?["title"] == "Design")
    // Nor does a version from the future: a whole state, never "resumed" with nothing.
    let future = try await server.connect(
      "/ws/rooms/\(Standup.design.id.uuidString)?name=Di&since=\(targetVersion + 1_000)")
    let whole = try await future.next { $0["type"] == "welcome" }
    #expect(whole["resumed"] == nil)
    #expect(whole["state"]?["standup"]?["title"] == "Design")
    await server.stop()
  }

  /// The patches kept for resumes are bounded in bytes: a resume from before them gets the
  /// whole state, one from within them only what was missed.
  @Test func theResumeRingIsBoundedInBytes() async throws {
    let server = try await TestServer.start { $0.limits.resumeBytes = 2048 }
    let ana = try await server.room(name: "Ana")
    let early = try #require(ana.version)
    try await ana.act("editButtonTapped")
    for index in 0..<30 {
      let title = "Title \(index) " + String(repeating: "x", count: 60)
      try await ana.act("edit.binding", ["path": "/title", "value": .string(title)])
    }
    let latest = try #require(ana.version)
    let room = "/ws/rooms/\(Standup.design.id.uuidString)"
    let fromEarly = try await server.connect("\(room)?name=Ben&since=\(early)")
    let whole = try await fromEarly.next { $0["type"] == "welcome" }
    #expect(whole["resumed"] == nil)
    #expect(
      whole["state"]?["destination"]?["edit"]?["draft"]?["title"]?.stringValue?.hasPrefix(
        "Title 29") == true)
    let fromRecent = try await server.connect("\(room)?name=Cy&since=\(latest - 2)")
    let resumed = try await fromRecent.next { $0["type"] == "welcome" }
    #expect(resumed["resumed"] == true)
    #expect(resumed["version"]?.intValue == latest - 2)
    await server.stop()
  }

  /// The last person leaving pauses the meeting; someone back within moments (a reload) finds
  /// it going on from where it stopped, not from where it would be had it ticked meanwhile.
  /// (Longer away, it waits for a Resume: `RecordMeetingTests`, on a test clock.)
  @Test func whenTheLastPersonLeavesTheMeetingStopsUntilSomeoneIsBack() async throws {
    let server = try await TestServer.start()
    let lobby = try await server.connect("/ws/lobby?name=Watcher")
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")
    _ = try await ana.waitForState { $0["meeting"]?["secondsElapsed"] == 1 }
    ana.close()
    _ = try await ana.waitUntilClosed()
    // Real time passes in the empty room; the lobby shows its meeting paused all along.
    let live = { lobby.state?["standups"]?[0]?["live"] }
    _ = try await lobby.waitForState { _ in live()?["meetingPaused"] == true }
    try await holds("The meeting went on in the empty room.", for: .milliseconds(2500)) {
      live()?["meetingPaused"] == true
    }
    let ben = try await server.room(name: "Ben")
    let back = try await ben.waitForState { $0["meeting"]?["isPaused"] == false }
    let meeting = try #require(back["meeting"])
    #expect(meeting["pausedBecause"] == .null)
    let elapsed = try #require(meeting["secondsElapsed"]?.intValue)
    #expect(elapsed <= 2, "the meeting ticked in the empty room")
    _ = try await ben.waitForState { $0["meeting"]?["secondsElapsed"]?.intValue == elapsed + 1 }
    await server.stop()
  }
}

@Suite(.serialized)
struct LobbyProtocolTests {
  /// The question whether to end a meeting stops its clock: the lobby says the meeting is
  /// paused while it is open (it said "meeting on", for good when a bot asked in an empty
  /// room), and on again once it is answered with Resume.
  @Test func aMeetingWhoseEndIsAskedShowsPausedInTheLobby() async throws {
    let server = try await TestServer.start()
    let lobby = try await server.connect("/ws/lobby?name=Watcher")
    let live = { lobby.state?["standups"]?[0]?["live"] }
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")
    _ = try await lobby.waitForState { _ in live()?["meetingRunning"] == true }
    #expect(live()?["meetingPaused"] == false)
    try await ana.act("meeting.endMeetingButtonTapped")
    _ = try await lobby.waitForState { _ in live()?["meetingPaused"] == true }
    try await ana.act("meeting.alert.resume")
    _ = try await lobby.waitForState { _ in live()?["meetingPaused"] == false }
    #expect(live()?["meetingRunning"] == true)
    await server.stop()
  }

  @Test func addingAStandupShowsInEveryLobbyAndOpensItsRoom() async throws {
    let server = try await TestServer.start(standups: [])
    let ana = try await server.connect("/ws/lobby?name=Ana")
    let welcome = try await ana.next { $0["type"] == "welcome" }
    #expect(welcome["room"] == "lobby")
    #expect(welcome["state"] == ["standups": []])
    let ben = try await server.connect("/ws/lobby?name=Ben")
    _ = try await ben.next { $0["type"] == "welcome" }

    let ack = try await ana.act(
      "addStandupSubmitted",
      [
        "standup": [
          "title": "Design", "duration": 600, "theme": "teal",
          "attendees": [["name": "Blob"], ["name": "Jr"]],
        ]
      ])
    #expect(ack["type"] == "ack")
    let listed = try await ben.waitForState { $0["standups"]?.arrayValue?.count == 1 }
    let standup = try #require(listed["standups"]?[0])
    // The ack names the standup made, as the lobby lists it (its id is its room's).
    #expect(ack["standup"] == standup)
    #expect(standup["title"] == "Design")
    #expect(standup["attendeeCount"] == 2)
    #expect(standup["duration"] == 600)
    #expect(standup["live"] == .null)

    let id = try #require(standup["id"]?.stringValue)
    let carl = try await server.room(UUID(uuidString: id)!, name: "Carl")
    #expect(carl.state?["standup"]?["theme"] == "teal")
    _ = try await ben.waitForState {
      $0["standups"]?[0]?["live"] == [
        "participants": 1, "meetingRunning": false, "meetingPaused": false, "people": ["Carl"],
      ]
    }
    try await carl.act("startMeetingButtonTapped")
    _ = try await ben.waitForState { $0["standups"]?[0]?["live"]?["meetingRunning"] == true }

    try await ana.act(
      "addStandupSubmitted",
      ["standup": ["title": "", "duration": 600, "theme": "teal", "attendees": [["name": "Blob"]]]]
    ).expectError("invalid_value")
    try await ana.act(
      "addStandupSubmitted",
      [
        "standup": [
          "title": "X", "duration": 600, "theme": "beige", "attendees": [["name": "Blob"]],
        ]
      ]
    ).expectError("invalid_value")
    #expect(ana.state?["standups"]?.arrayValue?.count == 1)
    await server.stop()
  }

  /// New standups are limited per address, across all its connections (each under its own
  /// message rate): 10 a minute.
  @Test func newStandupsAreLimitedPerAddress() async throws {
    let server = try await TestServer.start()
    let first = try await server.connect("/ws/lobby?name=Ana")
    let second = try await server.connect("/ws/lobby?name=Ben")
    for client in [first, second] { _ = try await client.next { $0["type"] == "welcome" } }
    func create(_ client: TestClient, _ index: Int) async throws -> JSONValue {
      try await client.act(
        "addStandupSubmitted",
        [
          "standup": [
            "title": .string("S\(index)"), "duration": 300, "theme": "teal",
            "attendees": [["name": "Ana"]],
          ]
        ], ref: "new-\(index)")
    }
    for index in 0..<10 {
      #expect(try await create(index.isMultiple(of: 2) ? first : second, index)["type"] == "ack")
    }
    let refused = try await create(second, 10)
    refused.expectError("rate_limited")
    #expect(refused["ref"] == "new-10")
    let message = refused["message"]?.stringValue ?? ""
    #expect(
      message.hasPrefix(
        "Too many new standups at once: at most 10 a minute from one network, everyone on it together (refused tries count too). Try again in "
      ) && message.hasSuffix(" s."), "\(message)")
    #expect(second.state?["standups"]?.arrayValue?.count == 11)  // Design, and ten new
    // Over HTTP too, with the wait in `Retry-After`, as every 429 has it.
    let overHTTP = try httpResponse(
      port: server.port, "POST", "/api/standups",
      headers: ["Authorization": "Bearer bot-secret-0002"],
      body:
        #"{"type":"addStandupSubmitted","standup":{"title":"S11","duration":300,"theme":"teal","attendees":[{"name":"Ana"}]}}"#
    )
    #expect(overHTTP.status == 429)
    #expect(overHTTP.json?["code"] == "rate_limited")
    let wait = try #require(overHTTP.headers["retry-after"].flatMap { Int($0) })
    #expect((1...60).contains(wait))
    #expect(overHTTP.json?["message"]?.stringValue?.hasSuffix("Try again in \(wait) s.") == true)
    await server.stop()
  }
}

extension JSONValue {
  func expectError(_ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(self["type"] == "error", "\(encodedString)", sourceLocation: sourceLocation)
    #expect(self["code"] == .string(code), "\(encodedString)", sourceLocation: sourceLocation)
    #expect(self["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
  }
}
