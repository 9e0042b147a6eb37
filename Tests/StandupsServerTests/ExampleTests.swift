import Fixtures
import Foundation
import JSONPatch
import StandupsFeatures
import StandupsServer
import StandupsWire
import Synchronization
import Testing

/// The programs in examples/ against a real server.
@Suite(.serialized)
struct ExampleTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  /// The speaker bot in the design standup's room on `port`, its token from the environment
  /// (where `ps` does not show it).
  func speakerBot(port: Int) throws -> Process {
    let bot = Process()
    bot.executableURL = Self.root.appendingPathComponent(".build/debug/speaker-bot")
    bot.arguments = ["--url", "http://127.0.0.1:\(port)", "--room", Standup.design.id.uuidString]
    bot.environment = ["STANDUPS_TOKEN": "bot-secret-0002"]
    bot.standardOutput = FileHandle.nullDevice
    try bot.run()
    return bot
  }

  /// A standup of one attendee made over HTTP by the speaker's admin token on `port`: its id.
  func standupMade(port: Int, title: String) throws -> String {
    let made = try httpResponse(
      port: port, "POST", "/api/standups", token: "speaker-secret-1",
      body:
        #"{"type":"addStandupSubmitted","standup":{"title":"\#(title)","duration":300,"theme":"teal","attendees":[{"name":"A"}]}}"#
    )
    return try #require(made.json?["standup"]?["id"]?.stringValue, "\(made.status)")
  }

  @Test func theSpeakerBotAnnouncesEachNewSpeaker() async throws {
    let server = try await TestServer.start()
    let bot = try speakerBot(port: server.port)
    defer { bot.terminate() }
    let ana = try await server.room(name: "Ana")
    _ = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 2 }
    try await ana.act("startMeetingButtonTapped")
    _ = try await ana.waitForState {
      $0["meeting"]?["transcript"] == "Standup Bot (bot): Now speaking: Blob"
    }
    try await ana.act("meeting.nextButtonTapped", ["from": 0])
    let announced =
      "Standup Bot (bot): Now speaking: Blob\nStandup Bot (bot): Now speaking: Blob Jr"
    _ = try await ana.waitForState { $0["meeting"]?["transcript"] == .string(announced) }
    try await ana.act("meeting.noteSubmitted", ["text": "shipped it"])

    // Started again (a redeploy): the speaker it announced before is not announced twice,
    // though notes came after it; the next one is.
    bot.terminate()
    bot.waitUntilExit()
    _ = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 1 }
    let again = try speakerBot(port: server.port)
    defer { again.terminate() }
    _ = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 2 }
    try await ana.act("meeting.nextButtonTapped", ["from": 1])
    let next = try await ana.waitForState {
      $0["meeting"]?["transcript"]?.stringValue?.hasSuffix("Now speaking: Blob Sr") == true
    }
    #expect(
      next["meeting"]?["transcript"]
        == .string(announced + "\nAna: shipped it\nStandup Bot (bot): Now speaking: Blob Sr"))
    await server.stop()
  }

  /// A network that goes silent closes nothing (here: the server frozen with SIGSTOP). The bot,
  /// hearing nothing for a quiet spell and no answer to its ping, closes and tries again, and
  /// is back in the room once the server answers — not stuck on a dead connection.
  @Test func theSpeakerBotReconnectsWhenTheServerGoesSilent() async throws {
    let server = try ChildServer(
      dataDirectory: temporaryDirectory(), arguments: ["--bot-token", "Speaker=speaker-secret-1"])
    defer { server.kill() }
    let id = try standupMade(port: server.port, title: "Quiet")
    let bot = try SpeakerBotRun(
      ["--url", "http://127.0.0.1:\(server.port)", "--room", id, "--quiet-seconds", "1"],
      environment: ["STANDUPS_TOKEN": "speaker-secret-1"])
    defer { bot.stop() }
    let printed = bot.printed
    try await eventually("the bot never joined") { printed.contains("Joined room") }
    Glibc.kill(server.process.processIdentifier, SIGSTOP)
    try await eventually("the bot stayed on a connection that said nothing", timeout: .seconds(20))
    {
      printed.contains("Closed (")
    }
    Glibc.kill(server.process.processIdentifier, SIGCONT)
    try await eventually("the bot did not join again", timeout: .seconds(20)) {
      printed.contains("Joined room \(id) again.")
    }
  }

  /// With no server where it is pointed, the bot says so as it tries again, not in silence.
  @Test func theSpeakerBotSaysWhenItCannotReachTheServer() async throws {
    // NB: the flag wins over the environment's address.
    let bot = try SpeakerBotRun(
      ["--port", "1", "--room", Standup.design.id.uuidString],
      environment: ["STANDUPS_TOKEN": "bot-secret-0002", "STANDUPS_URL": "http://127.0.0.1:2"])
    defer { bot.stop() }
    let printed = bot.printed
    try await eventually("the bot never said it could not reach the server") {
      printed.contains("Could not reach http://127.0.0.1:1 (")
    }
    #expect(printed.contains("trying again in"))
  }

  /// The bot stops for good when reconnecting cannot help, and its exit status says whether a
  /// person must act: a revoked token is a failure (1), as a refused join is; a deleted
  /// standup ends the bot's work (0).
  @Test func theSpeakerBotFailsWhenRevokedAndEndsCleanlyWhenItsStandupIsDeleted() async throws {
    let access = AccessStorage.inMemory(bots: [
      Bot(
        name: "Speaker", tokenHash: Bot.hash(token: "stb_speaker"), scope: .notes, createdAt: Date()
      ),
      Bot(
        name: "Second", tokenHash: Bot.hash(token: "stb_second"), scope: .notes, createdAt: Date()),
      Bot(name: "Admin", tokenHash: Bot.hash(token: "stb_admin"), scope: .admin, createdAt: Date()),
    ])
    let server = try await TestServer.start(access: access) {
      $0.access = .team
      $0.undoWindow = .milliseconds(200)
    }
    let room = ["--url", "http://127.0.0.1:\(server.port)", "--room", Standup.design.id.uuidString]
    let revoked = try SpeakerBotRun(room, environment: ["STANDUPS_TOKEN": "stb_speaker"])
    defer { revoked.stop() }
    try await eventually("the bot never joined") { revoked.printed.contains("Joined room") }
    #expect(try await access.revokeBot("Speaker"))
    // NB: what it printed is read on another queue: looked for first, then its exit.
    try await eventually("the bot did not say it was closed") {
      revoked.printed.contains("Closed (4401)")
    }
    try await eventually("the revoked bot went on") { !revoked.process.isRunning }
    #expect(revoked.process.terminationStatus == 1)

    let deleted = try SpeakerBotRun(room, environment: ["STANDUPS_TOKEN": "stb_second"])
    defer { deleted.stop() }
    try await eventually("the bot never joined") { deleted.printed.contains("Joined room") }
    for action in ["deleteButtonTapped", "alert.confirmDeletion"] {
      let answer = try httpResponse(
        port: server.port, "POST", "/api/rooms/\(Standup.design.id)/actions", token: "stb_admin",
        body: #"{"type":"\#(action)"}"#)
      #expect(answer.status == 200, "\(action): \(answer.status)")
    }
    try await eventually("the bot did not say it was closed") {
      deleted.printed.contains("Closed (4410)")
    }
    try await eventually("the bot of a deleted standup went on") { !deleted.process.isRunning }
    #expect(deleted.process.terminationStatus == 0)
    await server.stop()
  }

  /// A standup gone while the bot was away (here: the server it was in replaced, on the same
  /// port, by one whose data never had it) ends the bot's work as a deletion seen in the room
  /// does (0), where the same 404 before it ever joined is a wrong `--room` (1).
  @Test func theSpeakerBotEndsCleanlyWhenItsStandupIsGoneAsItComesBack() async throws {
    let token = ["--bot-token", "Speaker=speaker-secret-1"]
    let first = try ChildServer(dataDirectory: temporaryDirectory(), arguments: token)
    defer { first.kill() }
    let id = try standupMade(port: first.port, title: "Gone")
    let bot = try SpeakerBotRun(
      ["--url", "http://127.0.0.1:\(first.port)", "--room", id],
      environment: ["STANDUPS_TOKEN": "speaker-secret-1"])
    defer { bot.stop() }
    try await eventually("the bot never joined") { bot.printed.contains("Joined room") }
    first.kill()
    let second = try ChildServer(
      dataDirectory: temporaryDirectory(), arguments: token + ["--port", "\(first.port)"])
    defer { second.kill() }
    // NB: what it printed is read on another queue: looked for first, then its exit.
    try await eventually("the bot did not notice its standup was gone", timeout: .seconds(30)) {
      bot.printed.contains("The standup was deleted while the bot was away.")
    }
    try await eventually("the bot of a standup gone went on") { !bot.process.isRunning }
    #expect(bot.process.terminationStatus == 0)

    // The same answer to a bot that was never in: the room it was given is not there.
    let lost = try SpeakerBotRun(
      ["--url", "http://127.0.0.1:\(second.port)", "--room", id],
      environment: ["STANDUPS_TOKEN": "speaker-secret-1"])
    defer { lost.stop() }
    try await eventually("the bot given no room did not say so") {
      lost.printed.contains("refused the bot (HTTP 404)")
    }
    try await eventually("the bot given no room went on") { !lost.process.isRunning }
    #expect(lost.process.terminationStatus == 1)
  }

  /// A token the server refuses ends the bot at once, saying so: tried again and again, it
  /// counted as failed sign-ins until every bot at the address was refused (429).
  @Test func theSpeakerBotStopsWhenItsTokenIsRefused() async throws {
    let server = try await TestServer.start()
    let bot = Process()
    bot.executableURL = Self.root.appendingPathComponent(".build/debug/speaker-bot")
    bot.arguments = [
      "--url", "http://127.0.0.1:\(server.port)", "--room", Standup.design.id.uuidString,
    ]
    bot.environment = ["STANDUPS_TOKEN": "not-a-token-at-all"]
    let output = Pipe()
    bot.standardOutput = output
    try bot.run()
    defer { if bot.isRunning { bot.terminate() } }
    try await eventually("the bot went on trying a refused token") { !bot.isRunning }
    let printed = String(
      decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(bot.terminationStatus != 0)
    #expect(printed.contains("refused the bot (HTTP 401)"), "\(printed)")
    #expect(!printed.contains("trying again"), "\(printed)")
    // The team's bots are still let in: one failed attempt, not a run of them.
    let api = try httpResponse(port: server.port, "GET", "/api/standups", token: "ci-secret-0001")
    #expect(api.status == 200)
    await server.stop()
  }

  /// Runs `examples/post-note.sh` with a note; its exit status and what it printed.
  func postNote(_ text: String, port: Int) throws -> (status: Int32, output: String, said: String) {
    let script = Process()
    script.executableURL = URL(fileURLWithPath: "/bin/bash")
    script.arguments = [
      Self.root.appendingPathComponent("examples/post-note.sh").path,
      Standup.design.id.uuidString, text,
    ]
    script.environment = [
      "STANDUPS_URL": "http://127.0.0.1:\(port)", "STANDUPS_TOKEN": "ci-secret-0001",
      "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
    ]
    let (output, errors) = (Pipe(), Pipe())
    script.standardOutput = output
    script.standardError = errors
    try script.run()
    let printed = output.fileHandleForReading.readDataToEndOfFile()
    let said = errors.fileHandleForReading.readDataToEndOfFile()
    script.waitUntilExit()
    return (
      script.terminationStatus, String(decoding: printed, as: UTF8.self),
      String(decoding: said, as: UTF8.self)
    )
  }

  @Test func theCurlScriptPostsANote() async throws {
    let server = try await TestServer.start()
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")
    #expect(try postNote("build \"1234\" is green", port: server.port).status == 0)
    _ = try await ana.waitForState {
      $0["meeting"]?["transcript"] == "CI (bot): build \"1234\" is green"
    }
    // A pasted tab reaches the server as one (escaped), which says what is wrong with it; the
    // script fails, its answer printed on a line of its own.
    let tabbed = try postNote("build\t1234", port: server.port)
    #expect(tabbed.status != 0)
    #expect(tabbed.output.contains("\"code\":\"invalid_value\""))
    #expect(tabbed.output.hasSuffix("}\n"))
    // So does any other control character (an ANSI colour from a CI log, a bell): not bad JSON.
    for text in ["esc\u{1B}[31mred", "bell\u{07}"] {
      let pasted = try postNote(text, port: server.port)
      #expect(pasted.status != 0)
      #expect(pasted.output.contains("\"code\":\"invalid_value\""), "\(pasted.output)")
    }
    // Its note carried an id of its own (sending it again is safe), kept with the note.
    try await ana.act("meeting.endMeetingButtonTapped")
    try await ana.act("meeting.alert.saveAndEnd")
    let saved = try httpResponse(
      port: server.port, "GET", "/api/rooms/\(Standup.design.id.uuidString)/meetings?limit=1",
      token: "ci-secret-0001")
    let note = saved.json?["meetings"]?[0]?["notes"]?[0]
    #expect(note?["text"] == "build \"1234\" is green", "\(saved.body)")
    #expect(note?["id"]?.stringValue?.count == 32, "\(saved.body)")
    // A note after the meeting ended is refused, and the script says how a late one goes.
    let late = try postNote("deploy done", port: server.port)
    #expect(late.status != 0)
    #expect(late.output.contains("no meeting is running"), "\(late.output)")
    #expect(
      late.said.contains("goes as history.noteSubmitted with that meeting's id"), "\(late.said)")
    await server.stop()
  }
}

extension ExampleTests {
  /// A room that is moving answers 503 room_moving (here: its standup was made a moment ago
  /// and its save has not landed): nothing happened, and the script sends the note again
  /// after the wait the server asks for, saying so, until the room answers otherwise.
  @Test func theCurlScriptTriesAgainWhileTheRoomIsMoving() async throws {
    let (server, lobby, id, save) = try await HonestStorageTests.aStandupWhoseSaveHasNotLanded()

    let script = Process()
    script.executableURL = URL(fileURLWithPath: "/bin/bash")
    script.arguments = [Self.root.appendingPathComponent("examples/post-note.sh").path, id, "hi"]
    script.environment = [
      "STANDUPS_URL": "http://127.0.0.1:\(server.port)", "STANDUPS_TOKEN": "ci-secret-0001",
      "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
    ]
    let output = Pipe()
    let errors = Pipe()
    script.standardOutput = output
    script.standardError = errors
    let said = Mutex("")
    errors.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      said.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }
    try script.run()
    defer { if script.isRunning { script.terminate() } }
    try await eventually("the script did not say it tries again", timeout: .seconds(10)) {
      said.withLock { $0.contains("The room is moving between servers: trying again in 1 s (1 of") }
    }
    save.finish()
    try await eventually("the script did not end", timeout: .seconds(10)) { !script.isRunning }
    errors.fileHandleForReading.readabilityHandler = nil
    let answer = String(
      decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    // The room answered at last: no meeting runs in the new standup (a note needs one).
    #expect(script.terminationStatus != 0)
    #expect(answer.contains(#""code":"invalid_action""#), "\(answer)")
    #expect(!answer.contains("room_moving"))
    withExtendedLifetime(lobby) {}
    await server.stop()
  }
}

/// `speaker-bot` from this build, running, with what it has printed so far.
final class SpeakerBotRun {
  final class Printed: Sendable {
    let text = Mutex("")
    func contains(_ part: String) -> Bool { text.withLock { $0.contains(part) } }
  }

  let process = Process()
  let output = Pipe()
  let printed = Printed()

  init(_ arguments: [String], environment: [String: String]) throws {
    process.executableURL = ExampleTests.root.appendingPathComponent(".build/debug/speaker-bot")
    process.arguments = arguments
    process.environment = environment
    process.standardOutput = output
    output.fileHandleForReading.readabilityHandler = { [printed] handle in
      let data = handle.availableData
      printed.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }
    try process.run()
  }

  func stop() {
    process.terminate()
    output.fileHandleForReading.readabilityHandler = nil
  }
}
