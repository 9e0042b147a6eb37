import Foundation
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import StandupsServer
import Testing
import WebSocketTransport

func temporaryDirectory() -> String {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("standups-\(UUID())")
  try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url.path
}

@Suite(.serialized)
struct SQLiteStorageTests {
  @Test func savesAndLoadsStandupsInCreationOrderWithTheirHistory() async throws {
    let directory = temporaryDirectory()
    let storage = try SQLiteStorage(directory: directory)
    var design = Standup.design
    design.meetings = [
      Meeting(id: UUID(), date: Date(timeIntervalSince1970: 1_795_338_000), transcript: "Ana: later"),
      Meeting(id: UUID(), date: Date(timeIntervalSince1970: 1_795_251_600), transcript: "Ben: earlier"),
    ]
    let ops = Standup(
      id: UUID(), attendees: [Attendee(id: UUID(), name: "Cy")], duration: .seconds(900), theme: .navy,
      title: "Ops")
    try await storage.save(design)
    try await storage.save(ops)
    #expect(try await storage.load() == [design, ops])

    // Edits replace attendees and keep the position; the file survives reopening.
    design.title = "Design sync"
    design.attendees.remove(at: 1)
    design.attendees.append(Attendee(id: UUID(), name: "Dee"))
    design.meetings.insert(Meeting(id: UUID(), date: Date(timeIntervalSince1970: 1_795_400_000), transcript: ""), at: 0)
    try await storage.save(design)
    let reopened = try SQLiteStorage(directory: directory)
    #expect(try await reopened.load() == [design, ops])

    try await reopened.delete(design.id)
    #expect(try await reopened.load() == [ops])
  }

  @Test func keepsTheCheckpointOfARunningMeetingUntilItEnds() async throws {
    let storage = try SQLiteStorage(directory: temporaryDirectory())
    try await storage.save(.design)
    let checkpoint = MeetingCheckpoint(
      standupID: Standup.design.id, meetingID: UUID(), secondsElapsed: 120, speakerIndex: 1,
      transcript: "Ana: hi")
    try await storage.saveCheckpoint(Standup.design.id, checkpoint)
    #expect(try await storage.loadCheckpoints() == [checkpoint])
    try await storage.saveCheckpoint(Standup.design.id, nil)
    #expect(try await storage.loadCheckpoints() == [])
    // A checkpoint for a deleted standup is not kept.
    try await storage.saveCheckpoint(Standup.design.id, checkpoint)
    try await storage.delete(Standup.design.id)
    #expect(try await storage.loadCheckpoints() == [])
  }

  @Test func aDamagedDatabaseStopsTheServerAndIsLeftAlone() async throws {
    let directory = temporaryDirectory()
    let file = directory + "/standups.sqlite"
    let garbage = Data(repeating: 0x42, count: 8192)
    try garbage.write(to: URL(fileURLWithPath: file))
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.dataDirectory = directory
    configuration.publicDirectory = nil
    await #expect {
      _ = try await StandupsServer.start(configuration: configuration)
    } throws: { error in
      "\(error)".contains("damaged") && "\(error)".contains(file)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == garbage)
  }

  @Test func aDataDirectoryThatCannotBeUsedStopsTheServer() async throws {
    let blocker = temporaryDirectory() + "/a-file"
    FileManager.default.createFile(atPath: blocker, contents: Data("x".utf8))
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.dataDirectory = blocker + "/data"
    configuration.publicDirectory = nil
    await #expect {
      _ = try await StandupsServer.start(configuration: configuration)
    } throws: { error in
      "\(error)".contains(blocker)
    }
  }
}

/// `standups-server` from this build, in a child process (killed with SIGKILL by the test).
final class ChildServer {
  let process = Process()
  let port: Int

  static var binary: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(".build/debug/standups-server").path
  }

  init(dataDirectory: String) throws {
    process.executableURL = URL(fileURLWithPath: Self.binary)
    process.arguments = ["--port", "0", "--data-dir", dataDirectory, "--public-dir", "."]
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    var text = ""
    while !text.contains("\n") {
      let chunk = errors.fileHandleForReading.availableData
      guard !chunk.isEmpty else { break }
      text += String(decoding: chunk, as: UTF8.self)
    }
    guard let range = text.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression),
      let port = Int(text[range].split(separator: ":")[1])
    else { throw POSIXError(.ECHILD) }
    self.port = port
  }

  func kill() {
    Glibc.kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}

@Suite(.serialized)
struct CrashTests {
  func connect(_ client: WebSocketClient, _ port: Int, _ path: String) async throws -> TestClient {
    let test = TestClient()
    test.connection = try await client.connect(port: port, path: path) { test.receive($0) }
    _ = try await test.next { $0["type"] == "welcome" }
    return test
  }

  @Test func nothingAcknowledgedIsLostWhenTheServerIsKilled() async throws {
    let directory = temporaryDirectory()
    let client = try WebSocketClient()
    defer { client.shutdown() }

    var server = try ChildServer(dataDirectory: directory)
    let lobby = try await connect(client, server.port, "/ws/lobby?name=Ana")
    let added = try await lobby.act(
      "addStandupSubmitted",
      ["standup": ["title": "Design", "duration": 300, "theme": "teal", "attendees": [["name": "A"], ["name": "B"]]]])
    #expect(added["type"] == "ack")
    let id = try #require(lobby.state?["standups"]?[0]?["id"]?.stringValue)
    let room = try await connect(client, server.port, "/ws/rooms/\(id)?name=Ana")
    try await room.act("startMeetingButtonTapped")
    try await room.act("meeting.noteSubmitted", ["text": "first meeting"])
    try await room.act("meeting.endMeetingButtonTapped")
    #expect(try await room.act("meeting.alert.saveAndEnd")["type"] == "ack")
    try await room.act("startMeetingButtonTapped")
    try await room.act("meeting.nextButtonTapped", ["from": 0])
    #expect(try await room.act("meeting.noteSubmitted", ["text": "before the crash"])["type"] == "ack")
    server.kill()

    server = try ChildServer(dataDirectory: directory)
    defer { server.kill() }
    let lobbyAgain = try await connect(client, server.port, "/ws/lobby?name=Ana")
    let listed = try #require(lobbyAgain.state?["standups"]?[0])
    #expect(listed["title"] == "Design")
    #expect(listed["live"] == ["participants": 0, "meetingRunning": true])
    let roomAgain = try await connect(client, server.port, "/ws/rooms/\(id)?name=Ben")
    let state = try #require(roomAgain.state)
    #expect(state["standup"]?["meetings"]?.arrayValue?.count == 1)
    #expect(state["standup"]?["meetings"]?[0]?["transcript"] == "Ana: first meeting")
    // The running meeting is back, paused at its last checkpoint, with its notes.
    #expect(state["meeting"]?["isPaused"] == true)
    #expect(state["meeting"]?["speakerIndex"] == 1)
    #expect(state["meeting"]?["secondsElapsed"] == 150)
    #expect(state["meeting"]?["transcript"] == "Ana: before the crash")
    try await roomAgain.act("meeting.resumeButtonTapped")
    _ = try await roomAgain.waitForState { $0["meeting"]?["secondsElapsed"] == 151 }
  }
}
