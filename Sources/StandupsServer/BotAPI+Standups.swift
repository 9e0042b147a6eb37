import Foundation
import JSONPatch
import RoomRuntime
import StandupsFeatures
import StandupsWire
import Synchronization
import WebSocketTransport

extension BotAPI {
  /// `POST /api/standups`: makes a standup, as the lobby's `addStandupSubmitted` does (an
  /// `admin` bot, or a signed-in person), and answers once it is saved with the lobby's
  /// version and the standup as the lobby lists it — its `id` names its room.
  static func makeStandup(
    _ request: HTTPRequest, sender: Sender, hub: RoomHub, respond: HTTPResponder
  ) {
    let message: ClientMessage
    do {
      message = try ClientMessage.parse(.text(wrapped(request.body)))
    } catch {
      return respond(response(for: error.error, ref: error.ref))
    }
    guard message.actionType == "addStandupSubmitted" else {
      return respond(
        response(
          for: WireError(
            .badMessage,
            "POST /api/standups takes {\"type\": \"addStandupSubmitted\", \"standup\": {title, duration, theme, attendees: [{name}]}}; a standup's own actions go to /api/rooms/{id}/actions."
          ), ref: message.ref))
    }
    let title = message.action["standup"]?["title"]?.stringValue?
      .trimmingCharacters(in: .whitespacesAndNewlines)
    // NB: the lobby answers with its version only: the standup made is the one with that
    // title that the lobby lists after the action and did not before (read in the same
    // order as the action, on the lobby's own queue).
    let before = Mutex<Set<String>>([])
    hub.lobby.enqueue(.snapshot { result in before.withLock { $0 = ids(in: result) } })
    let lobby = hub.lobby
    hub.lobby.enqueue(
      .request(message, sender) { result in
        switch result {
        case .failure(let error):
          respond(response(for: error, ref: message.ref))
        case .success(let version):
          lobby.enqueue(
            .snapshot { after in
              let known = before.withLock { $0 }
              let made = standups(in: after).last {
                guard let id = $0["id"]?.stringValue else { return false }
                return !known.contains(id) && $0["title"]?.stringValue == title
              }
              var answer: [String: JSONValue] = ["version": .int(version)]
              answer["standup"] = made
              respond(.json(JSONValue.object(answer).encoded))
            })
        }
      })
  }

  private static func standups(
    in result: Result<(version: Int, state: JSONValue), WireError>
  ) -> [JSONValue] {
    guard case .success(let snapshot) = result else { return [] }
    return snapshot.state["standups"]?.arrayValue ?? []
  }

  private static func ids(in result: Result<(version: Int, state: JSONValue), WireError>)
    -> Set<String>
  {
    Set(standups(in: result).compactMap { $0["id"]?.stringValue })
  }
}
