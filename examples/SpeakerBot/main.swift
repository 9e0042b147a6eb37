import ArgumentParser
import Foundation
import JSONPatch
import Synchronization
import WebSocketTransport

/// Joins a standup's room as a bot and posts a note each time a new speaker starts:
/// "Now speaking: Blob Jr". It keeps the room's state from the welcome and the patches, as
/// every client does.
///
///     swift run speaker-bot --room <standup-id> --token <secret>
@main
struct SpeakerBot: AsyncParsableCommand {
  @Option(help: "Server address.") var host = "127.0.0.1"
  @Option(help: "Server port.") var port = 8080
  @Option(help: "The standup's id.") var room: String
  @Option(help: "A bot token the server was started with.") var token: String

  func run() async throws {
    let client = try WebSocketClient()
    defer { client.shutdown() }
    let connection = try await client.connect(
      host: host, port: port, path: "/ws/rooms/\(room)",
      headers: ["Authorization": "Bearer \(token)"])
    print("Joined room \(room).")
    var state = JSONValue.null
    var announced: (meeting: Bool, speaker: Int)?
    var sent = 0
    for await event in connection.events {
      guard case .text(let bytes) = event, let message = try? JSONValue(parsing: bytes) else {
        if case .closed(let code, let reason) = event { print("Closed (\(code ?? 0)): \(reason)") }
        continue
      }
      switch message["type"]?.stringValue {
      case "welcome":
        state = message["state"] ?? .null
      case "patch":
        let operations = (message["ops"]?.arrayValue ?? []).compactMap(PatchOperation.init(json:))
        state = (try? JSONPatch.apply(operations, to: state)) ?? state
      case "error":
        print("Error: \(message["message"]?.stringValue ?? "")")
      default:
        continue
      }
      // A new speaker: a meeting started, or the speaker changed.
      guard let index = state["meeting"]?["speakerIndex"]?.intValue else {
        announced = nil
        continue
      }
      guard announced?.speaker != index else { continue }
      announced = (true, index)
      let name =
        state["standup"]?["attendees"]?[index]?["name"]?.stringValue ?? "speaker \(index + 1)"
      sent += 1
      let note: JSONValue = [
        "type": "action", "ref": .string("speaker-\(sent)"),
        "action": ["type": "meeting.noteSubmitted", "text": .string("Now speaking: \(name)")],
      ]
      connection.send(text: note.encodedString)
      print("Now speaking: \(name)")
    }
  }
}
