import Foundation
import JSONPatch
import RoomRuntime
import StandupsFeatures
import StandupsWire
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
    // NB: the lobby names the standup this action made in its answer (`LobbyFeature.answer`).
    let asked = hub.lobby.enqueue(
      .request(message, sender) { result in
        switch result {
        case .failure(let error):
          respond(response(for: error, ref: message.ref))
        case .success(let answer):
          var body = answer.details
          body["version"] = .int(answer.version)
          respond(.json(JSONValue.object(body).encoded))
        }
      })
    if !asked {
      respond(
        response(
          for: WireError(.roomMoving, "The server is stopping: try again in a moment."),
          ref: message.ref))
    }
  }
}
