import ArgumentParser
import Foundation
import JSONPatch
import Synchronization
import WebSocketTransport

/// Joins a standup's room as a bot and posts a note each time a new speaker starts:
/// "Now speaking: Blob Jr". It keeps the room's state from the welcome and the patches, as
/// every client does, and reconnects by itself — resuming from the last version it holds —
/// when the connection drops or the server closes it with 1012 (a restart, or the standup
/// moving to another server of a cluster).
///
///     STANDUPS_TOKEN=<secret> swift run speaker-bot --room <standup-id>
@main
struct SpeakerBot: AsyncParsableCommand {
  @Option(help: "The server's address, http(s)://HOST[:PORT] (STANDUPS_URL).") var url: String?
  @Option(help: "Server host, instead of --url (default 127.0.0.1).") var host: String?
  @Option(help: "Server port, instead of --url (default 8080).") var port: Int?
  @Option(help: "The standup's id.") var room: String
  @Option(
    help:
      "A bot's token (`standups-server bots add NAME --can notes`); better in STANDUPS_TOKEN, where `ps` does not show it."
  )
  var token: String?
  @Option(
    help: ArgumentHelp(
      "Seconds without a word from the server before the bot asks (ping); as long again without an answer, it reconnects.",
      visibility: .hidden))
  var quietSeconds = 15

  /// Where to connect: `--url`, else `--host` and `--port`, else `STANDUPS_URL` (what is
  /// given on the command line wins over the environment).
  var server: (host: String, port: Int, tls: Bool)? {
    let given = host != nil || port != nil
    guard let text = url ?? (given ? nil : ProcessInfo.processInfo.environment["STANDUPS_URL"])
    else { return (host ?? "127.0.0.1", port ?? 8080, false) }
    guard let parts = URLComponents(string: text), let host = parts.host, !host.isEmpty,
      let scheme = parts.scheme?.lowercased(), ["http", "https"].contains(scheme)
    else { return nil }
    return (host, parts.port ?? (scheme == "https" ? 443 : 80), scheme == "https")
  }

  var secret: String? { token ?? ProcessInfo.processInfo.environment["STANDUPS_TOKEN"] }

  func validate() throws {
    guard url == nil || (host == nil && port == nil) else {
      throw ValidationError("Give --url, or --host and --port: not both.")
    }
    guard server != nil else {
      throw ValidationError("--url (STANDUPS_URL) must be http(s)://HOST[:PORT].")
    }
    guard secret?.isEmpty == false else {
      throw ValidationError("Give the bot's token in STANDUPS_TOKEN (or --token).")
    }
  }

  /// Refused joins that trying again cannot change, and what to do about each.
  static let refusals: [Int: String] = [
    401: "its token is not one the server knows (revoked, or mistyped): check STANDUPS_TOKEN.",
    403:
      "its token may not join this standup: give it the standup (bots add --standup) or a token that may.",
    404: "there is no such standup: check --room.",
  ]

  /// Closes after which reconnecting cannot help: the standup was deleted (4410: its work is
  /// over, the bot ends with 0 — but for a standup it was never in: its --room is wrong), the
  /// token revoked (4401) or the bot broke a rule (1008): a person must act, as on a refused
  /// join, so the bot ends with 1 (a supervisor sees a failure).
  static let final: Set<Int> = [4410, 4401, 1008]

  /// `?since=…&replaces=…` for a reconnect, nothing for a first connection.
  func query(since version: Int?, replaces key: String?) -> String {
    let items = [version.map { "since=\($0)" }, key.map { "replaces=\($0)" }].compactMap { $0 }
    return items.isEmpty ? "" : "?" + items.joined(separator: "&")
  }

  func run() async throws {
    guard let server, let secret else { return }
    let client = try WebSocketClient()
    defer { client.shutdown() }
    var state = JSONValue.null
    var version: Int?
    // NB: the last welcome's secret: a reconnect names it (`replaces=`), so that a connection
    // the server still holds after a network went silent goes, and the bot is here once.
    var key: String?
    var announced: Int?
    var catchingUpTo: Int?
    var sent = 0
    var attempt = 0
    while true {
      let connection: WebSocketClientConnection
      do {
        connection = try await client.connect(
          host: server.host, port: server.port,
          path: "/ws/rooms/\(room)" + query(since: version, replaces: key),
          headers: ["Authorization": "Bearer \(secret)"], tls: server.tls)
      } catch {
        let place = "\(server.tls ? "https" : "http")://\(server.host):\(server.port)"
        // NB: a refusal that trying again cannot change ends the bot (a wrong token tried
        // again and again would count as failed sign-ins against every bot at this address).
        if let status = (error as? WebSocketConnectError)?.status, let why = Self.refusals[status] {
          // NB: a standup the bot was in, gone while it was away (a restart, a drop): deleted,
          // its work is over — as a 4410 says to a bot that is in the room.
          if status == 404, version != nil {
            say("The standup was deleted while the bot was away.")
            return
          }
          say("\(place) refused the bot (HTTP \(status)): \(why)")
          throw ExitCode.failure
        }
        // NB: a server that is not up (yet, or any more) is tried nine times, over about 45 s.
        guard attempt < 8 else {
          say("Could not reach \(place) (\(error)): giving up.")
          throw error
        }
        let wait = Self.backoff(attempt)
        say("Could not reach \(place) (\(error)): trying again in \(wait).")
        try await Task.sleep(for: wait)
        attempt += 1
        continue
      }
      var closedWith: Int?
      // A network that goes silent closes nothing: after a quiet spell the bot asks (`ping`),
      // and a connection that says nothing for as long again is closed and tried again.
      let heard = Mutex(ContinuousClock.now)
      let watchdog = Task { [quietSeconds] in
        let quiet = Duration.seconds(quietSeconds)
        while !Task.isCancelled {
          try? await Task.sleep(for: quiet / 3)
          let silent = ContinuousClock.now - heard.withLock { $0 }
          if silent >= quiet * 2 {
            connection.close(code: .goingAway, reason: "The server stopped answering.")
            return
          }
          if silent >= quiet { connection.send(text: #"{"type":"ping","ref":"alive"}"#) }
        }
      }
      defer { watchdog.cancel() }
      for await event in connection.events {
        heard.withLock { $0 = .now }
        guard case .text(let bytes) = event, let message = try? JSONValue(parsing: bytes) else {
          if case .closed(let code, let reason) = event {
            // NB: no code: the connection dropped without a close frame (1006 in browsers).
            say("Closed (\(code.map(String.init) ?? "1006, no close frame")): \(reason)")
            closedWith = code
          }
          continue
        }
        switch message["type"]?.stringValue {
        case "welcome":
          // NB: said here, not as the connection opens: a server that stops before its welcome
          // (or a cluster's 4410 for an id it has no standup for) was never joined.
          say(version == nil ? "Joined room \(room)." : "Joined room \(room) again.")
          attempt = 0
          if message["resumed"] != .bool(true) { state = message["state"] ?? .null }
          version = message["version"]?.intValue
          key = message["key"]?.stringValue
          // Resumed: the patches up to `latest` replay what happened while this bot was away.
          catchingUpTo = message["latest"]?.intValue
        case "patch":
          let operations = (message["ops"]?.arrayValue ?? []).compactMap(PatchOperation.init(json:))
          state = (try? JSONPatch.apply(operations, to: state)) ?? state
          version = message["version"]?.intValue ?? version
        case "error":
          say("Error: \(message["message"]?.stringValue ?? "")")
        default:
          continue
        }
        // A new speaker: a meeting started, or the speaker changed.
        guard let index = state["meeting"]?["speakerIndex"]?.intValue else {
          announced = nil
          continue
        }
        // Only the speaker it finds once caught up, not each one it missed.
        if let until = catchingUpTo, let version, version < until { continue }
        catchingUpTo = nil
        guard announced != index else { continue }
        announced = index
        let name =
          state["standup"]?["attendees"]?[index]?["name"]?.stringValue ?? "speaker \(index + 1)"
        // Started again (a restart, a redeploy) on a speaker already announced: not twice.
        let transcript = state["meeting"]?["transcript"]?.stringValue ?? ""
        let lastAnnounced = transcript.split(separator: "\n").last {
          $0.contains(": Now speaking: ")
        }
        if lastAnnounced?.hasSuffix(": Now speaking: \(name)") == true { continue }
        sent += 1
        let note: JSONValue = [
          "type": "action", "ref": .string("speaker-\(sent)"),
          "action": ["type": "meeting.noteSubmitted", "text": .string("Now speaking: \(name)")],
        ]
        connection.send(text: note.encodedString)
        say("Now speaking: \(name)")
      }
      if let code = closedWith, Self.final.contains(code) {
        if code == 4410 {
          // The standup it was in was deleted: its work is over.
          guard version == nil else { return }
          // NB: before any welcome, a cluster's answer to an id it has no standup for (a node
          // lets such a room be asked for, in case another node just made it).
          say("There is no such standup: check --room.")
        }
        throw ExitCode.failure
      }
      try await Task.sleep(for: Self.backoff(attempt))
      attempt += 1
    }
  }

  /// Prints a line at once, also into a file or a pipe: what the bot did shows as it does it.
  func say(_ line: String) {
    print(line)
    fflush(nil)
  }

  /// 0.5 s, 1 s, 2 s… up to 10 s, with a little jitter so that a room's bots do not all come
  /// back at once.
  static func backoff(_ attempt: Int) -> Duration {
    .milliseconds(Int(Double(min(10_000, 500 << min(attempt, 5))) * Double.random(in: 0.75...1.25)))
  }
}
