import Fixtures
import Foundation
import JSONPatch
import StandupsFeatures
import StandupsWire
import Testing
import WebSocketTransport

@testable import StandupsServer

/// Only the team gets in: invites, sessions, origins, scoped bots, throttled guessing.
@Suite(.serialized)
struct AccessTests {
  let room = "/ws/rooms/\(Standup.design.id.uuidString)"

  /// A server in team mode, with three bots of each scope besides the command line's.
  static func teamServer(
    _ access: AccessStorage = .inMemory(bots: AccessTests.bots)
  ) async throws -> (TestServer, AccessStorage) {
    let server = try await TestServer.start(access: access) { $0.access = .team }
    return (server, access)
  }

  static let bots = [
    Bot(name: "Notes", tokenHash: Bot.hash(token: "stb_notes"), scope: .notes, createdAt: Date()),
    Bot(name: "Driver", tokenHash: Bot.hash(token: "stb_drive"), scope: .drive, createdAt: Date()),
    Bot(
      name: "Elsewhere", tokenHash: Bot.hash(token: "stb_elsewhere"), scope: .admin,
      standups: [UUID()], createdAt: Date()),
  ]

  /// Signs in with the invite; returns the `Cookie` header value.
  func signIn(_ server: TestServer, name: String) throws -> String {
    let invite = try #require(server.server.inviteLink?.split(separator: "#").last)
    let answer = try httpResponse(
      port: server.port, "POST", "/api/session",
      headers: ["Origin": "http://127.0.0.1:\(server.port)"],
      body: #"{"invite":"\#(invite)","name":"\#(name)"}"#)
    #expect(answer.status == 200, "\(answer.body)")
    let setCookie = try #require(answer.headers["set-cookie"])
    #expect(setCookie.contains("HttpOnly"))
    #expect(setCookie.contains("SameSite=Lax"))
    #expect(!setCookie.contains("Secure"))  // plain http here
    #expect(answer.headers["strict-transport-security"] == nil)
    return String(try #require(setCookie.split(separator: ";").first))
  }

  func join(_ server: TestServer, _ path: String, headers: [String: String]) async throws
    -> TestClient
  {
    let client = TestClient()
    client.connection = try await server.client.connect(
      port: server.port, path: path, headers: headers
    ) {
      client.receive($0)
    }
    _ = try await client.next { $0["type"] == "welcome" }
    return client
  }

  func refusal(_ server: TestServer, _ path: String, headers: [String: String] = [:]) async -> Int?
  {
    do {
      let connection = try await server.client.connect(
        port: server.port, path: path, headers: headers)
      connection.close()
      return 101
    } catch let error as WebSocketConnectError {
      return error.status
    } catch {
      return nil
    }
  }

  @Test func withoutCredentialsEveryDoorAnswers401() async throws {
    let (server, _) = try await Self.teamServer()
    #expect(await refusal(server, "/ws/lobby?name=Eve") == 401)
    #expect(await refusal(server, "\(room)?name=Eve") == 401)
    let raw = parseHTTP(try exchange(port: server.port, upgradeRequest("/ws/lobby?name=Eve")))
    #expect(raw.status == 401)
    #expect(raw.body.contains("invite link"))
    let api = try httpResponse(port: server.port, "GET", "/api/standups")
    #expect(api.status == 401)
    #expect(api.json?["code"] == "unauthorized")
    let download = try httpResponse(
      port: server.port, "GET", "/api/rooms/\(Standup.design.id.uuidString)/history.md")
    #expect(download.status == 401)
    let session = try httpResponse(port: server.port, "GET", "/api/session")
    #expect(session.status == 200)
    #expect(session.json?["signedIn"] == false)
    // The name a person gives is no key: a bot's name without its token is refused too.
    #expect(await refusal(server, "/ws/lobby?name=Notes") == 401)
    // Whether a standup exists is no one's business but the team's: an unknown id answers as
    // a known one does, until the caller may enter it.
    let unknown = "/ws/rooms/\(UUID().uuidString)"
    #expect(await refusal(server, "\(unknown)?name=Eve") == 401)
    #expect(await refusal(server, room, headers: ["Authorization": "Bearer stb_elsewhere"]) == 403)
    #expect(
      await refusal(server, unknown, headers: ["Authorization": "Bearer stb_elsewhere"]) == 403)
    #expect(await refusal(server, unknown, headers: ["Authorization": "Bearer stb_notes"]) == 404)
    #expect(
      await refusal(server, unknown, headers: ["Cookie": try signIn(server, name: "Ana")]) == 404)
    await server.stop()
  }

  /// Behind https (the server's own TLS, or a public URL that says https), a plain-http page at
  /// the server's name was not served by it: a network that injects one must not borrow the
  /// person's cookie (some browsers send a `Secure` cookie to the http page's requests).
  @Test func aServerOnHttpsTakesNoPlainHttpPageForItsOwn() async throws {
    let server = try await TestServer.start(access: .inMemory(bots: Self.bots)) {
      $0.access = .team
      $0.publicURL = "https://standups.example"
    }
    let invite = try #require(server.server.inviteLink?.split(separator: "#").last)
    let signIn = try httpResponse(
      port: server.port, "POST", "/api/session",
      headers: ["Origin": "https://standups.example"],
      body: #"{"invite":"\#(invite)","name":"Ana"}"#)
    let setCookie = try #require(signIn.headers["set-cookie"])
    #expect(setCookie.contains("; Secure"))
    // …and a browser that came over https once never tries plain http again.
    #expect(signIn.headers["strict-transport-security"] == "max-age=31536000")
    let cookie = String(try #require(setCookie.split(separator: ";").first))
    func upgrade(from origin: String) throws -> Int {
      try httpStatus(
        port: server.port,
        upgradeRequest("/ws/lobby").replacingOccurrences(
          of: "Host: 127.0.0.1\r\n",
          with: "Host: standups.example\r\nOrigin: \(origin)\r\nCookie: \(cookie)\r\n"))
    }
    #expect(try upgrade(from: "http://standups.example") == 403)
    #expect(try upgrade(from: "https://standups.example") == 101)
    // Nor a change over the API from the plain-http page of the name it was asked by.
    func rename(from scheme: String) throws -> Int {
      try httpResponse(
        port: server.port, "POST", "/api/session",
        headers: ["Cookie": cookie, "Origin": "\(scheme)://127.0.0.1:\(server.port)"],
        body: #"{"name":"Eve"}"#
      ).status
    }
    #expect(try rename(from: "http") == 403)
    #expect(try rename(from: "https") == 200)
    await server.stop()
  }

  /// Presence tells sign-ins apart: one person's tabs share a key, two people who chose one
  /// name have two, and the key is not the session's cookie.
  @Test func participantsCarryAKeyOfTheirSignInNotOfTheirName() async throws {
    let (server, _) = try await Self.teamServer()
    let ben = try signIn(server, name: "Ben")
    let other = try signIn(server, name: "Ben")
    let lobby = try await join(server, "/ws/lobby", headers: ["Cookie": ben])
    let tabs = [
      try await join(server, room, headers: ["Cookie": ben]),
      try await join(server, room, headers: ["Cookie": other]),
      try await join(server, room, headers: ["Cookie": ben]),
    ]
    let state = try await tabs[0].waitForState { $0["participants"]?.arrayValue?.count == 3 }
    let participants = try #require(state["participants"]?.arrayValue)
    #expect(participants.map { $0["name"] } == ["Ben", "Ben", "Ben"])
    let keys = participants.map { $0["person"]?.stringValue }
    #expect(keys[0] != nil && keys[0] == keys[2], "One sign-in's tabs are one person.")
    #expect(keys[1] != nil && keys[1] != keys[0], "Two sign-ins of one name are two people.")
    for key in keys.compactMap({ $0 }) {
      #expect(!ben.contains(key) && !other.contains(key), "The key is no part of a cookie.")
    }
    // The lobby names each person once by the same rule: two Bens, not three nor one.
    _ = try await lobby.waitForState { $0["standups"]?[0]?["live"]?["people"] == ["Ben", "Ben"] }
    for client in tabs + [lobby] { client.close() }
    await server.stop()
  }

  /// `?replaces=` takes the place of one's own sign-in's connection only: another person of
  /// the same name cannot push someone out, even with the connection's key.
  @Test func onlyTheSameSignInReplacesAConnection() async throws {
    let (server, _) = try await Self.teamServer()
    let ben = try signIn(server, name: "Ben")
    let other = try signIn(server, name: "Ben")
    let first = try await join(server, room, headers: ["Cookie": ben])
    let key = try #require(first.key)
    let impostor = try await join(server, room + "?replaces=\(key)", headers: ["Cookie": other])
    // NB: acknowledged after the impostor's join was handled: Ben is still in.
    #expect(try await first.act("editButtonTapped")["type"] == "ack")
    #expect(first.closed == nil)
    let again = try await join(server, room + "?replaces=\(key)", headers: ["Cookie": ben])
    #expect(try await first.waitUntilClosed().code == 4409)
    _ = try await impostor.waitForState {
      $0["participants"]?.arrayValue?.map { $0["id"]?.stringValue } == [impostor.you, again.you]
    }
    for client in [impostor, again] { client.close() }
    await server.stop()
  }

  @Test func theInviteGivesASessionThatJoinsUnderItsName() async throws {
    let (server, _) = try await Self.teamServer()
    let link = try #require(server.server.inviteLink)
    #expect(link.hasPrefix("http://127.0.0.1:\(server.port)/join#"))
    let cookie = try signIn(server, name: "Ana")
    let session = try httpResponse(
      port: server.port, "GET", "/api/session", headers: ["Cookie": cookie])
    #expect(session.json?["name"] == "Ana")
    // ?name= cannot change who the session says you are.
    let ana = try await join(server, "\(room)?name=Mallory", headers: ["Cookie": cookie])
    let state = try await ana.waitForState { $0["participants"]?.arrayValue?.count == 1 }
    #expect(state["participants"]?[0]?["name"] == "Ana")
    // The API answers a session too.
    #expect(
      try httpResponse(port: server.port, "GET", "/api/standups", headers: ["Cookie": cookie])
        .status == 200)
    // A wrong invite, a forged cookie, an unknown name are refused with a reason.
    let wrong = try httpResponse(
      port: server.port, "POST", "/api/session", body: #"{"invite":"AAAA","name":"Eve"}"#)
    #expect(wrong.status == 401)
    #expect(wrong.json?["message"]?.stringValue?.contains("invite link is not valid") == true)
    let forged = cookie.dropLast(4) + "AAAA"
    #expect(await refusal(server, room, headers: ["Cookie": String(forged)]) == 401)
    // A cookie of the same name that another site on this host set does not hide the good
    // one, whichever comes first.
    let name = cookie.split(separator: "=")[0]
    for header in ["\(name)=x; \(cookie)", "\(cookie); \(name)=x", "\(forged); \(cookie)"] {
      let answer = try httpResponse(
        port: server.port, "GET", "/api/standups", headers: ["Cookie": header])
      #expect(answer.status == 200, "\(header)")
    }
    await server.stop()
  }

  @Test func namesAreCheckedAndBotNamesAreReserved() async throws {
    let (server, _) = try await Self.teamServer()
    let invite = try #require(server.server.inviteLink?.split(separator: "#").last)
    // A name that reads like a bot's is told which bot, under the name the bot was given.
    let lookAlike = try httpResponse(
      port: server.port, "POST", "/api/session",
      body: JSONValue.object(["invite": .string(String(invite)), "name": "Cl"]).encodedString)
    #expect(
      lookAlike.json?["message"]?.stringValue
        == "\"Cl\" reads like the name of the bot \"CI\": choose another.")
    for name in [
      "Notes", "ci", "Ana (bot)", "Ana\u{202E}", "line\nbreak", String(repeating: "x", count: 41),
      // Names that read as a bot's: a joiner, a soft hyphen, full-width brackets or letters.
      "CI\u{200D}", "C\u{00AD}I", "Ana (bot\u{00AD})", "Ana （bot）", "ＣＩ",
      // …or letters drawn alike: a small L, a one, Cyrillic and Greek capitals and small letters.
      "Cl", "C1", "\u{0421}\u{0406}", "\u{0421}I", "N\u{03BF}tes", "N\u{043E}t\u{0435}s",
      "Ana (b\u{043E}t)", "Ana (b0t)",
      // …or invisible marks that are no format characters: a grapheme joiner, variation
      // selectors, Khmer's inherent vowels, a Hangul filler, a braille blank at the end.
      "CI\u{034F}", "C\u{034F}I", "CI\u{FE0F}", "Ana (b\u{034F}ot)", "CI\u{17B4}", "C\u{3164}I",
      "CI\u{E0100}", "CI\u{2800}",
    ] {
      let body = JSONValue.object(["invite": .string(String(invite)), "name": .string(name)])
        .encodedString
      let answer = try httpResponse(port: server.port, "POST", "/api/session", body: body)
      #expect(answer.status == 400, "\(name) was accepted")
      #expect(answer.json?["code"] == "invalid_value")
    }
    // Renaming needs the session, not the invite, and — a cookie goes along with any request
    // — a page that says where it is, as other changes do.
    let cookie = try signIn(server, name: "Ana")
    let unsigned = try httpResponse(
      port: server.port, "POST", "/api/session", headers: ["Cookie": cookie],
      body: #"{"name":"Ana B"}"#)
    #expect(unsigned.status == 403)
    #expect(unsigned.json?["code"] == "forbidden")
    let renamed = try httpResponse(
      port: server.port, "POST", "/api/session",
      headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"],
      body: #"{"name":"Ana B"}"#)
    #expect(renamed.status == 200)
    #expect(renamed.json?["name"] == "Ana B")
    // A rename keeps the session: signing out still ends it. An invite that is not text is
    // refused, not taken for a rename that would mint a new session a sign-out misses.
    for notText in [#""invite":null"#, #""invite":1"#, #""invite":{}"#] {
      let forked = try httpResponse(
        port: server.port, "POST", "/api/session",
        headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"],
        body: "{\(notText),\"name\":\"Ana C\"}")
      #expect(forked.status == 400, "\(notText)")
      #expect(forked.json?["code"] == "bad_message")
      #expect(forked.headers["set-cookie"] == nil)
    }
    // A name that is not text is said to be so.
    let numbered = try httpResponse(
      port: server.port, "POST", "/api/session",
      headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"],
      body: #"{"name":42}"#)
    #expect(numbered.status == 400)
    #expect(numbered.json?["message"]?.stringValue?.hasPrefix("\"name\" must be text.") == true)
    let renamedCookie = String(
      try #require(renamed.headers["set-cookie"]?.split(separator: ";").first))
    let signOut = try httpResponse(
      port: server.port, "DELETE", "/api/session",
      headers: ["Cookie": renamedCookie, "Origin": "http://127.0.0.1:\(server.port)"])
    #expect(signOut.status == 200)
    #expect(await refusal(server, room, headers: ["Cookie": cookie]) == 401)
    #expect(
      try httpResponse(
        port: server.port, "POST", "/api/session",
        headers: ["Origin": "http://127.0.0.1:\(server.port)"], body: #"{"name":"Eve"}"#
      ).status == 401)
    await server.stop()
  }

  @Test func pagesFromOtherOriginsAreRefused() async throws {
    let (server, _) = try await Self.teamServer()
    let cookie = try signIn(server, name: "Ana")
    #expect(
      await refusal(server, room, headers: ["Cookie": cookie, "Origin": "https://evil.example"])
        == 403)
    #expect(
      await refusal(server, room, headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:1"])
        == 403)
    let own = try await join(
      server, room, headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"])
    own.close()
    // Signing in and changing things over the API need the server's own page too.
    let signIn = try httpResponse(
      port: server.port, "POST", "/api/session", headers: ["Origin": "https://evil.example"],
      body: #"{"invite":"x","name":"Eve"}"#)
    #expect(signIn.status == 403)
    let post = try httpResponse(
      port: server.port, "POST", "/api/rooms/\(Standup.design.id.uuidString)/actions",
      headers: ["Cookie": cookie, "Origin": "https://evil.example"],
      body: #"{"type":"startMeetingButtonTapped"}"#)
    #expect(post.status == 403)
    // Nor may another site's page sign anyone out; the server's own page (or a tool) may.
    let signOut = try httpResponse(
      port: server.port, "DELETE", "/api/session",
      headers: ["Cookie": cookie, "Origin": "https://evil.example"])
    #expect(signOut.status == 403)
    #expect(signOut.headers["set-cookie"] == nil)
    let ownSignOut = try httpResponse(
      port: server.port, "DELETE", "/api/session",
      headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"])
    #expect(ownSignOut.status == 200)
    #expect(ownSignOut.headers["set-cookie"] != nil)
    await server.stop()

    let listed = try await TestServer.start(access: .inMemory()) {
      $0.access = .open
      $0.allowedOrigins = ["https://intranet.example"]
    }
    let ana = try await join(
      listed, "\(room)?name=Ana", headers: ["Origin": "https://intranet.example"])
    ana.close()
    #expect(
      await refusal(listed, "\(room)?name=Eve", headers: ["Origin": "https://evil.example"]) == 403)
    await listed.stop()

    // Given with its scheme's default port, or an international name as written, an origin is
    // the one a browser sends: without the port, the name in its ASCII form.
    let written = try await TestServer.start(access: .inMemory()) {
      $0.access = .open
      $0.allowedOrigins = ["https://Intranet.example:443/", "http://bücher.example:80"]
      $0.publicURL = "https://standups.example:443"
    }
    for (name, origin) in [
      ("Ana", "https://intranet.example"), ("Ben", "http://xn--bcher-kva.example"),
      ("Cy", "https://standups.example"), ("Dan", "https://INTRANET.example:443"),
    ] {
      let person = try await join(written, "\(room)?name=\(name)", headers: ["Origin": origin])
      person.close()
    }
    for other in [
      "https://intranet.example:8443", "http://intranet.example", "https://xn--bcher-kva.example",
    ] {
      #expect(
        await refusal(written, "\(room)?name=Eve", headers: ["Origin": other]) == 403, "\(other)")
    }
    await written.stop()
  }

  @Test func rotatingTheSecretEndsEverySession() async throws {
    let (server, access) = try await Self.teamServer()
    let cookie = try signIn(server, name: "Ana")
    let ana = try await join(server, room, headers: ["Cookie": cookie])
    let bot = try await join(server, room, headers: ["Authorization": "Bearer stb_notes"])
    let oldLink = try #require(server.server.inviteLink)
    _ = try await access.rotateTeamSecret()
    let closed = try await ana.waitUntilClosed()
    #expect(closed.code == 4401)
    #expect(closed.reason.contains("session ended"))
    #expect(await refusal(server, room, headers: ["Cookie": cookie]) == 401)
    // The page is told why: the sign-in is from before the renewal.
    let session = try httpResponse(
      port: server.port, "GET", "/api/session", headers: ["Cookie": cookie])
    #expect(session.json?["signedIn"] == false)
    #expect(session.json?["reason"]?.stringValue?.contains("from an older invite link") == true)
    #expect(try #require(server.server.inviteLink) != oldLink)
    // Bots are not people: their tokens stay good.
    #expect(bot.closed == nil)
    _ = try signIn(server, name: "Ana")
    await server.stop()
  }

  @Test func eachBotScopeIsAllowedItsActionsOnly() async throws {
    let (server, _) = try await Self.teamServer()
    let notes = try await join(server, room, headers: ["Authorization": "Bearer stb_notes"])
    let driver = try await join(server, room, headers: ["Authorization": "Bearer stb_drive"])
    let admin = try await join(server, room, headers: ["Authorization": "Bearer ci-secret-0001"])

    let refused = try await notes.act("startMeetingButtonTapped")
    #expect(refused["code"] == "forbidden")
    #expect(refused["message"]?.stringValue?.contains("needs drive") == true)
    // A misspelt action is unknown, whoever sends it.
    #expect(try await notes.act("meeting.noteSubmited", ["text": "x"])["code"] == "unknown_action")
    #expect(try await driver.act("startMeetingButtonTapped")["type"] == "ack")
    #expect(try await notes.act("meeting.noteSubmitted", ["text": "build green"])["type"] == "ack")
    _ = try await admin.waitForState { $0["meeting"]?["transcript"] == "Notes (bot): build green" }
    #expect(try await driver.act("meeting.nextButtonTapped", ["from": 0])["type"] == "ack")
    #expect(try await driver.act("meeting.alert.discard")["code"] == "forbidden")
    #expect(try await driver.act("meeting.endMeetingButtonTapped")["type"] == "ack")
    #expect(try await driver.act("meeting.alert.saveAndEnd")["type"] == "ack")
    #expect(try await driver.act("deleteButtonTapped")["code"] == "forbidden")
    #expect(try await driver.act("editButtonTapped")["code"] == "forbidden")
    #expect(try await admin.act("editButtonTapped")["type"] == "ack")
    #expect(try await admin.act("cancelEditButtonTapped")["type"] == "ack")
    // Refused actions changed nothing.
    let state = try #require(admin.state)
    #expect(state["standup"]?["meetings"]?.arrayValue?.count == 1)

    // The lobby: admins may create, others may not; a bot kept to one standup sees no other.
    let lobbyNotes = try await join(
      server, "/ws/lobby", headers: ["Authorization": "Bearer stb_notes"])
    let created = try await lobbyNotes.act(
      "addStandupSubmitted",
      ["standup": ["title": "X", "duration": 300, "theme": "orange", "attendees": [["name": "A"]]]])
    #expect(created["code"] == "forbidden")
    #expect(await refusal(server, room, headers: ["Authorization": "Bearer stb_elsewhere"]) == 403)
    #expect(
      await refusal(server, "/ws/lobby", headers: ["Authorization": "Bearer stb_elsewhere"]) == 403)
    let api = try httpResponse(
      port: server.port, "POST", "/api/rooms/\(Standup.design.id.uuidString)/actions",
      token: "stb_notes",
      body: #"{"type":"startMeetingButtonTapped"}"#)
    #expect(api.status == 403)
    #expect(api.json?["code"] == "forbidden")
    await server.stop()
  }

  /// A bot added with `bots add` under the name of a `--bot-token` bot (CI, Standup Bot) is not
  /// let in, at start or when added later: two bots of one name would be one participant.
  @Test func aStoredBotNamedLikeAFlagsBotIsNotLetIn() async throws {
    let clash = Bot(
      name: "ci", tokenHash: Bot.hash(token: "stb_stored_ci"), scope: .admin, createdAt: Date())
    let (server, access) = try await Self.teamServer(.inMemory(bots: Self.bots + [clash]))
    let api = "/api/standups"
    let shadowed = try httpResponse(port: server.port, "GET", api, token: "stb_stored_ci")
    #expect(shadowed.status == 401)
    // The refusal says why (not "unknown token"), and counts no guess: the token is the team's.
    #expect(
      shadowed.json?["message"]?.stringValue?.contains(
        "--bot-token or STANDUPS_BOT_TOKENS has that name") == true)
    #expect(try httpResponse(port: server.port, "GET", api, token: "ci-secret-0001").status == 200)
    let cookie = try signIn(server, name: "Later")

    try await access.addBot(
      Bot(
        name: "STANDUP BOT", tokenHash: Bot.hash(token: "stb_stored_sb"), scope: .admin,
        createdAt: Date()))
    try await access.addBot(
      Bot(name: "Later", tokenHash: Bot.hash(token: "stb_later"), scope: .admin, createdAt: Date()))
    // NB: polled with a session, not the token: failed tokens count towards the throttle.
    try await eventually("the server never learnt of the new bots") {
      await refusal(server, room, headers: ["Cookie": cookie]) == 409
    }
    #expect(try httpResponse(port: server.port, "GET", api, token: "stb_later").status == 200)
    let later = try httpResponse(port: server.port, "GET", api, token: "stb_stored_sb")
    #expect(later.status == 401)
    #expect(later.json?["message"]?.stringValue?.contains("\"STANDUP BOT\" is not let in") == true)
    #expect(try httpResponse(port: server.port, "GET", api, token: "bot-secret-0002").status == 200)
    await server.stop()
  }

  /// A name a bot is given later is the bot's: a session under it acts no more, over HTTP as
  /// on a socket, and the socket it had open is closed.
  @Test func aNameABotTakesLaterCannotActOverHTTP() async throws {
    let (server, access) = try await Self.teamServer()
    let cookie = try signIn(server, name: "Maxi")
    let page = ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"]
    let actions = "/api/rooms/\(Standup.design.id.uuidString)/actions"
    let start = try httpResponse(
      port: server.port, "POST", actions, headers: page,
      body: #"{"type":"startMeetingButtonTapped"}"#)
    #expect(start.status == 200)
    let socket = try await join(server, room, headers: page)
    try await access.addBot(
      Bot(name: "maxi", tokenHash: Bot.hash(token: "stb_maxi"), scope: .notes, createdAt: Date()))
    // The socket Maxi had open is closed, saying why.
    let closed = try await socket.waitUntilClosed()
    #expect(closed.code == 4401)
    #expect(closed.reason.contains("A bot now has your name"))
    // The page, asking who it is, is told to sign in under another name.
    let session = try httpResponse(
      port: server.port, "GET", "/api/session", headers: ["Cookie": cookie])
    #expect(session.json?["signedIn"] == false)
    #expect(session.json?["reason"]?.stringValue?.contains("A bot now has your name") == true)
    #expect(session.json?["mayRename"] == true)
    #expect(session.json?["name"] == "Maxi")
    try await eventually("the server never learnt of the new bot") {
      await refusal(server, room, headers: ["Cookie": cookie]) == 409
    }
    let note = try httpResponse(
      port: server.port, "POST", actions, headers: page,
      body: #"{"type":"meeting.noteSubmitted","text":"still me"}"#)
    #expect(note.status == 409)
    #expect(note.json?["code"] == "invalid_value")
    #expect(
      try httpResponse(port: server.port, "GET", "/api/standups", headers: ["Cookie": cookie])
        .status == 409)
    // Another name, and the same session is back in, without the invite.
    let renamed = try httpResponse(
      port: server.port, "POST", "/api/session", headers: page, body: #"{"name":"Maximilian"}"#)
    #expect(renamed.status == 200, "\(renamed.body)")
    let setCookie = try #require(renamed.headers["set-cookie"])
    let newCookie = String(try #require(setCookie.split(separator: ";").first))
    let again = try httpResponse(
      port: server.port, "POST", actions,
      headers: ["Cookie": newCookie, "Origin": "http://127.0.0.1:\(server.port)"],
      body: #"{"type":"meeting.noteSubmitted","text":"still me"}"#)
    #expect(again.status == 200)
    await server.stop()
  }

  /// Names in letters whose capitals read like Latin ones (Cyrillic, Greek) too: the socket of
  /// a person under the new bot's name, or one that reads like it, is closed.
  @Test func aBotNamedInAnotherScriptClosesTheSocketOfThePersonUnderIt() async throws {
    let (server, access) = try await Self.teamServer()
    let origin = ["Origin": "http://127.0.0.1:\(server.port)"]
    var sockets: [TestClient] = []
    for name in ["Маша", "KB"] {
      let cookie = try signIn(server, name: name)
      sockets.append(
        try await join(server, room, headers: origin.merging(["Cookie": cookie]) { $1 }))
    }
    for (name, token) in [("Маша", "stb_masha"), ("ΚΒ", "stb_kappa_beta")] {  // Greek capitals
      try await access.addBot(
        Bot(name: name, tokenHash: Bot.hash(token: token), scope: .notes, createdAt: Date()))
    }
    for socket in sockets {
      let closed = try await socket.waitUntilClosed()
      #expect(closed.code == 4401)
      #expect(closed.reason.contains("A bot now has your name"))
    }
    await server.stop()
  }

  @Test func aRevokedTokenIsRefusedAndItsConnectionsClosed() async throws {
    let (server, access) = try await Self.teamServer()
    let notes = try await join(server, room, headers: ["Authorization": "Bearer stb_notes"])
    #expect(try await access.revokeBot("notes"))
    let closed = try await notes.waitUntilClosed()
    #expect(closed.code == 4401)
    #expect(await refusal(server, room, headers: ["Authorization": "Bearer stb_notes"]) == 401)
    #expect(
      try httpResponse(port: server.port, "GET", "/api/standups", token: "stb_notes").status == 401)
    await server.stop()
  }

  /// A session that expires while its sockets are open closes them (4401), as it would refuse
  /// a new one: an open tab does not outlive its session.
  @Test func anOpenSocketClosesWhenItsSessionExpires() async throws {
    let server = try await TestServer.start(access: .inMemory(bots: Self.bots)) {
      $0.access = .team
      $0.sessionLifetime = .seconds(2)
    }
    let cookie = try signIn(server, name: "Ana")
    let socket = try await join(server, room, headers: ["Cookie": cookie])
    let closed = try await socket.waitUntilClosed()
    #expect(closed.code == 4401)
    #expect(closed.reason.contains("Your session expired"))
    #expect(await refusal(server, room, headers: ["Cookie": cookie]) == 401)
    await server.stop()
  }

  /// `?token=` is read on an upgrade only: on plain HTTP any page could make a member's
  /// browser send one (an image), and wrong tokens would lock their address out.
  @Test func aTokenInThePlainHTTPQueryIsNeitherTakenNorCounted() async throws {
    let (server, _) = try await Self.teamServer()
    for attempt in 1...12 {
      for path in ["/api/session", "/api/standups"] {
        let answer = try httpResponse(port: server.port, "GET", "\(path)?token=stb_guess\(attempt)")
        #expect(answer.status != 429, "\(path): \(answer.body)")
      }
    }
    // A good token there is not taken either: it belongs in the Authorization header.
    let inQuery = try httpResponse(port: server.port, "GET", "/api/standups?token=ci-secret-0001")
    #expect(inQuery.status == 401)
    #expect(inQuery.json?["message"]?.stringValue?.contains("Authorization: Bearer") == true)
    // The address was never locked out: the invite still lets Ana in, and bots still join.
    _ = try signIn(server, name: "Ana")
    let bot = try await join(server, "\(room)?token=ci-secret-0001", headers: [:])
    bot.close()
    // An empty one is none: a signed-in person's upgrade goes by the cookie, and one with
    // no cookie is asked to sign in (not told ?token= is for upgrades: this is one).
    let cookie = try signIn(server, name: "Ben")
    let ben = try await join(server, "\(room)?token=", headers: ["Cookie": cookie])
    ben.close()
    let bare = parseHTTP(try exchange(port: server.port, upgradeRequest("\(room)?token=")))
    #expect(bare.statusLine == "HTTP/1.1 401 Unauthorized")
    #expect(bare.body.contains("Sign in first"), "\(bare.body)")
    await server.stop()
  }

  @Test func guessingIsThrottledPerAddress() async throws {
    let (server, _) = try await Self.teamServer()
    let cookie = try signIn(server, name: "Ana")
    for attempt in 1...10 {
      #expect(
        try httpResponse(port: server.port, "GET", "/api/standups", token: "stb_guess\(attempt)")
          .status == 401)
    }
    let throttled = try httpResponse(
      port: server.port, "GET", "/api/standups", token: "stb_guess11")
    #expect(throttled.statusLine == "HTTP/1.1 429 Too Many Requests")
    let wait = try #require(throttled.headers["retry-after"].flatMap(Int.init))
    #expect((1...60).contains(wait))
    // While it waits, even a good token from that address waits…
    #expect(
      try httpResponse(port: server.port, "GET", "/api/standups", token: "ci-secret-0001").status
        == 429)
    #expect(await refusal(server, room, headers: ["Authorization": "Bearer ci-secret-0001"]) == 429)
    // …but not a person with a session (it cannot be guessed): a stranger's guesses from a
    // shared address lock nobody out.
    let ana = try await join(server, room, headers: ["Cookie": cookie])
    ana.close()
    let raw = parseHTTP(
      try exchange(port: server.port, upgradeRequest("/ws/lobby?token=stb_guess12")))
    #expect(raw.statusLine == "HTTP/1.1 429 Too Many Requests")
    #expect(raw.headers["retry-after"] != nil)
    await server.stop()
  }

  /// A cookie of the team's name that another site on this host planted (a forged value) is
  /// refused but counts as no guess: the requests a browser makes with it (a page asking
  /// `/api/session`) do not lock its address out of signing in with the good invite. An empty
  /// `Bearer` is no token (the session is read); a person's `HEAD` on the API is a method it
  /// has not (405), not a change refused for its origin.
  @Test func aPlantedCookieAnEmptyBearerAndAHeadAreNeitherGuessesNorChanges() async throws {
    let (server, _) = try await Self.teamServer()
    let cookie = try signIn(server, name: "Ana")
    let forged = String(cookie.dropLast(4) + "AAAA")
    for _ in 1...15 {
      let answer = try httpResponse(
        port: server.port, "GET", "/api/session", headers: ["Cookie": forged])
      #expect(answer.status == 200)
      #expect(answer.json?["signedIn"] == false)
    }
    #expect(await refusal(server, room, headers: ["Cookie": forged]) == 401)
    _ = try signIn(server, name: "Ben")
    let empty = try httpResponse(
      port: server.port, "GET", "/api/standups",
      headers: ["Cookie": cookie, "Authorization": "Bearer "])
    #expect(empty.status == 200, "\(empty.body)")
    let head = try httpResponse(
      port: server.port, "HEAD", "/api/standups", headers: ["Cookie": cookie])
    #expect(head.status == 405)
    #expect(head.headers["allow"] == "GET, POST")
    await server.stop()
  }

  @Test func anotherAuthorizationSchemeLeavesTheSessionInCharge() async throws {
    let (server, _) = try await Self.teamServer()
    let cookie = try signIn(server, name: "Ana")
    // A proxy's Basic authentication in front of the server is not ours to judge.
    let ana = try await join(
      server, room, headers: ["Cookie": cookie, "Authorization": "Basic YWxhZGRpbjpvcGVu"])
    ana.close()
    // Without a session, a token sent under another scheme is not read: the refusal says how
    // a bot sends it.
    let basic = try http(
      port: server.port, "GET", "/api/standups", headers: ["Authorization": "Basic ci-secret-0001"])
    #expect(basic.status == 401)
    #expect(
      basic.json?["message"]?.stringValue?.contains("\"Authorization: Bearer <token>\"") == true)
    await server.stop()
  }

  @Test func anOpenServerRefusesHostsItDoesNotKnow() async throws {
    let server = try await TestServer.start(access: .inMemory()) { $0.access = .open }
    // DNS rebinding: a page at evil.example, re-pointed at this machine, sends a matching
    // Origin and Host.
    let rebound =
      "GET /ws/lobby?name=Eve HTTP/1.1\r\nHost: evil.example:\(server.port)\r\n"
      + "Origin: http://evil.example:\(server.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    let refused = parseHTTP(try exchange(port: server.port, rebound))
    #expect(refused.status == 403)
    // It says what is wrong: the name it was reached by, not the page.
    #expect(
      refused.body
        == "This server does not answer to that host name: open it at its own address. (Behind a proxy, start it with --public-url.)"
    )
    // Nor read a standup's history, which an open server gives without a credential.
    let id = Standup.design.id.uuidString
    for path in ["history.md", "history.csv", "meetings?limit=1"] {
      let read =
        "GET /api/rooms/\(id)/\(path) HTTP/1.1\r\nHost: evil.example:\(server.port)\r\n"
        + "Connection: close\r\n\r\n"
      #expect(try httpStatus(port: server.port, read) == 403, "\(path)")
    }
    let local = try await join(
      server, "/ws/lobby?name=Ana", headers: ["Origin": "http://127.0.0.1:\(server.port)"])
    local.close()
    await server.stop()
  }

  /// An open server on every address (`--open-to-network`) knows the names a browser on the
  /// network reaches it by: this machine's (its invite link's) and its addresses.
  @Test func anOpenServerOnEveryAddressKnowsThisMachinesNames() async throws {
    let server = try await TestServer.start(access: .inMemory()) {
      $0.access = .open
      $0.host = "0.0.0.0"
    }
    let names =
      [ProcessInfo.processInfo.hostName] + Host.current().addresses.filter { !$0.contains(":") }
    #expect(names.count >= 2)
    for name in names + ["evil.example"] {
      let upgrade =
        "GET /ws/lobby?name=Ana HTTP/1.1\r\nHost: \(name):\(server.port)\r\n"
        + "Origin: http://\(name):\(server.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
      #expect(
        try httpStatus(port: server.port, upgrade) == (name == "evil.example" ? 403 : 101),
        "\(name)")
    }
    await server.stop()
  }

  @Test func answersCarrySecurityHeaders() async throws {
    let (server, _) = try await Self.teamServer()
    for answer in [
      try httpResponse(port: server.port, "GET", "/api/standups"),
      parseHTTP(try exchange(port: server.port, upgradeRequest("/ws/lobby"))),
      try httpResponse(port: server.port, "GET", "/healthz"),
    ] {
      #expect(answer.headers["content-security-policy"]?.contains("script-src 'self'") == true)
      #expect(answer.headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true)
      #expect(answer.headers["x-content-type-options"] == "nosniff")
      #expect(answer.headers["referrer-policy"] == "same-origin")
    }
    // Refusals before the upgrade are HTTP/1.1, so that strict clients read them.
    #expect(try exchange(port: server.port, upgradeRequest("/ws/lobby")).hasPrefix("HTTP/1.1 401"))
    await server.stop()
  }

  @Test func openModeLetsAnyoneInByName() async throws {
    let server = try await TestServer.start(access: .inMemory()) { $0.access = .open }
    #expect(server.server.inviteLink == nil)
    let session = try httpResponse(port: server.port, "GET", "/api/session")
    #expect(session.json?["open"] == true)
    let ana = try await join(server, "\(room)?name=Ana", headers: [:])
    ana.close()
    // Bot names stay reserved in open mode.
    #expect(await refusal(server, "\(room)?name=CI") == 400)
    // The page's history (downloads, older meetings, and whether a standup is there at all)
    // needs no credential, as joining needs none; the rest of the HTTP API is for bots (a
    // token).
    let id = Standup.design.id.uuidString
    #expect(try httpResponse(port: server.port, "GET", "/api/rooms/\(id)/history.md").status == 200)
    #expect(
      try httpResponse(port: server.port, "GET", "/api/rooms/\(id)/history.csv").status == 200)
    let page = try httpResponse(port: server.port, "GET", "/api/rooms/\(id)/meetings?limit=1")
    #expect(page.status == 200)
    #expect(page.json?["offset"] == 0)
    let missing = UUID().uuidString
    #expect(
      try httpResponse(port: server.port, "GET", "/api/rooms/\(missing)/meetings?limit=1").status
        == 404, "The web app tells a link to a standup that is gone by this 404.")
    #expect(
      try httpResponse(
        port: server.port, "POST", "/api/rooms/\(id)/actions",
        body: #"{"type": "startMeetingButtonTapped"}"#
      ).status == 401)
    #expect(try httpResponse(port: server.port, "GET", "/api/rooms/\(id)").status == 401)
    #expect(try httpResponse(port: server.port, "GET", "/api/standups").status == 401)
    // Someone guessing bot tokens from a shared address waits; people, who need no
    // credential here, are not locked out by it.
    for attempt in 1...11 {
      _ = try httpResponse(port: server.port, "GET", "/api/standups", token: "stb_guess\(attempt)")
    }
    #expect(
      try httpResponse(port: server.port, "GET", "/api/standups", token: "stb_guess12").status
        == 429)
    let ben = try await join(server, "\(room)?name=Ben", headers: [:])
    ben.close()
    #expect(try httpResponse(port: server.port, "GET", "/api/rooms/\(id)/history.md").status == 200)
    await server.stop()
  }
}

/// Sessions, invites and throttling without a server.
struct AccessUnitTests {
  /// A stored bot's standups that cannot all be read let it in nowhere, not everywhere (an
  /// empty list means every standup and the lobby).
  @Test func aBotWhoseStandupsCannotBeReadMayEnterNothing() {
    let (one, two) = (UUID(), UUID())
    #expect(Bot.standups(stored: "") == [])
    #expect(Bot.standups(stored: "\(one),\(two)") == [one, two])
    for damaged in ["\(one),not-an-id", "garbage", ","] {
      let bot = Bot(
        name: "Damaged", tokenHash: "", scope: .admin, standups: Bot.standups(stored: damaged),
        createdAt: Date())
      #expect(!bot.mayEnter(nil) && !bot.mayEnter(one) && !bot.mayEnter(two), "\(damaged)")
    }
  }

  @Test func sessionsVerifyOnlyUnderTheirSecretAndBeforeTheyExpire() {
    let secret = TeamSecret.random()
    let now = Date()
    let token = secret.session(name: "Ana", expires: now.addingTimeInterval(60), id: "s1")
    #expect(
      secret.verifySession(token, now: now)
        == .valid(
          Session(
            name: "Ana",
            expires: Date(timeIntervalSince1970: (now.timeIntervalSince1970 + 60).rounded(.down)),
            id: "s1")))
    #expect(secret.verifySession(token, now: now.addingTimeInterval(61)) == .expired)
    #expect(TeamSecret.random().verifySession(token, now: now) == .ended)
    var parts = token.split(separator: ".").map(String.init)
    parts[2] = Base64URL.encode(Array(#"{"exp":9999999999,"name":"Eve"}"#.utf8))
    #expect(secret.verifySession(parts.joined(separator: "."), now: now) == .forged)
    #expect(secret.verifySession("nonsense", now: now) == .forged)
    // The signature has one spelling: its last character's spare bits changed, it is refused.
    let signature = token.split(separator: ".").map(String.init)[3]
    for other in ["A", "B", "C", "D"] where other != String(signature.last!) {
      let respelled = token.dropLast() + other
      if Base64URL.decode(String(respelled.split(separator: ".")[3])) != nil {
        #expect(secret.verifySession(String(respelled), now: now) == .forged)
      }
    }
    // Sessions without an id (made before ids) are known by their signature.
    let old = secret.signedSession(Array(#"{"exp":9999999999,"name":"Old"}"#.utf8))
    guard case .valid(let session) = secret.verifySession(old, now: now) else {
      Issue.record("a session without an id is refused")
      return
    }
    #expect(session.id == String(old.split(separator: ".")[3]))
  }

  @Test func invitesAreDerivedAndCheckedInConstantTime() {
    let secret = TeamSecret.random()
    #expect(secret.invite.count == 43)
    #expect(secret.isInvite(secret.invite))
    #expect(!secret.isInvite(TeamSecret.random().invite))
    #expect(!secret.isInvite(""))
    #expect(!secret.isInvite("not base64!"))
    // The last character's unused bits changed: another spelling of the same bytes, refused.
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    if let last = secret.invite.last, let index = alphabet.firstIndex(of: last) {
      #expect(!secret.isInvite(String(secret.invite.dropLast()) + String(alphabet[index ^ 1])))
    }
    #expect(secret.invite != Base64URL.encode(secret.bytes))
  }

  @Test func failuresAreCountedPerAddressAndPerIPv6Network() {
    let failures = FailedAttempts(limit: 3, window: .seconds(60))
    let start = ContinuousClock.now
    for _ in 1...3 { failures.recordFailure("2001:db8:1:2:aaaa::1", now: start) }
    #expect(failures.retryAfter("2001:db8:1:2:bbbb::9", now: start + .seconds(1)) == 59)
    #expect(failures.retryAfter("2001:db8:1:3::1", now: start) == nil)
    #expect(failures.retryAfter("2001:db8:1:2::1", now: start + .seconds(61)) == nil)
    #expect(FailedAttempts.key(for: "::ffff:10.1.2.3") == "10.1.2.3")
    #expect(FailedAttempts.key(for: "10.1.2.3") == "10.1.2.3")
  }

  /// A caller failing from ever new addresses (IPv6 networks are many) cannot grow the count
  /// without end: at its capacity the addresses not over their limit are forgotten, and one
  /// waiting out its window still waits.
  @Test func failuresAreCountedForAtMostTheirCapacityOfAddresses() {
    let failures = FailedAttempts(limit: 2, window: .seconds(60), capacity: 8)
    let start = ContinuousClock.now
    for _ in 1...2 { failures.recordFailure("10.0.0.1", now: start) }
    for network in 1...100 {
      failures.recordFailure("2001:db8:\(String(network, radix: 16))::1", now: start)
      #expect(failures.count <= 8)
    }
    #expect(failures.retryAfter("10.0.0.1", now: start + .seconds(1)) == 59)
  }

  @Test func textRulesRefuseInvisibleAndControlCharacters() {
    #expect(TextRules.isPlain("Chloé 🎉"))
    // Joiners that emoji and scripts need stay allowed.
    for fine in [
      "👩‍💻", "🏳️‍🌈", "می‌خواهم", "co\u{00AD}operate",
      "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}",
    ] {
      #expect(TextRules.isPlain(fine), "\(fine.unicodeScalars.map(\.value))")
    }
    for bad in ["a\u{0}b", "a\nb", "a\u{202E}b", "a\u{200B}b", "a\u{2028}b"] {
      #expect(!TextRules.isPlain(bad), "\(bad.unicodeScalars.map(\.value))")
    }
  }

  @Test func namesThatReadAlikeAreTheSameName() {
    // Letters drawn alike, from Latin, digits, Cyrillic, Greek, Armenian and Cherokee.
    for (one, other) in [
      ("CI", "Cl"), ("CI", "c1"), ("CI", "ci"), ("CI", "C|"), ("CI", "\u{0421}\u{0406}"),
      ("BOT", "B0T"),
      ("Notes", "N\u{03BF}t\u{0435}s"), ("Anya", "\u{0410}nya"), ("Xena", "\u{03A7}ena"),
      ("Kim", "Kirn"), ("Zoë", "Zo\u{0451}"),
      ("Ana (bot)", "Ana （b\u{043E}t）"), ("Chloé", "Chloe\u{0301}"),
      ("Notes", "N\u{0585}tes"), ("Ops", "\u{0555}ps"), ("Hugo", "H\u{057D}\u{0581}o"),
      ("DEPLOY", "\u{13A0}\u{13AC}\u{13E2}\u{13DE}\u{0555}Y"), ("BOT", "\u{13F4}\u{0555}\u{13A2}"),
      ("bot", "\u{13FC}\u{0585}\u{AB72}"),  // Cherokee small letters read as their capitals
    ] {
      #expect(TextRules.readable(one) == TextRules.readable(other), "\(one) and \(other)")
    }
    // Names that only share letters' sounds, or that differ in a letter drawn differently.
    for (one, other) in [
      ("Ana", "Anna"), ("Ivan", "\u{0418}van"), ("Lee", "Lea"), ("Nate", "\u{03BD}ate"),
      ("Ani", "\u{0531}\u{0576}\u{056B}"),  // Armenian "Ani", drawn unlike Latin
    ] {
      #expect(TextRules.readable(one) != TextRules.readable(other), "\(one) and \(other)")
    }
    // A person is told which bot a name reads like.
    #expect(
      TextRules.problem(withDisplayName: "Cl", botNames: ["CI"])
        == "\"Cl\" reads like the name of the bot \"CI\": choose another.")
    #expect(
      TextRules.problem(withDisplayName: "ci", botNames: ["CI"])
        == "\"ci\" is a bot's name: choose another.")
    #expect(TextRules.problem(withDisplayName: "Cid", botNames: ["CI"]) == nil)
    #expect(
      TextRules.problem(withDisplayName: "Ben (b\u{043E}t)", botNames: ["CI"])
        == "\"(bot)\" marks a bot's notes, so a person's name cannot have it: choose another.")
    // Too short or too long says which, and by how much; a length counts characters.
    #expect(TextRules.problem(withDisplayName: "", botNames: []) == "Choose a name to go by.")
    // Nor a name drawn as nothing: a Hangul filler, a braille blank, a grapheme joiner, a soft
    // hyphen, a variation selector; a name with a letter among them is a name.
    for blank in ["\u{3164}", "\u{2800}", "\u{034F}", "\u{00AD}", "\u{FE0F}", "\u{3164}\u{2800}"] {
      #expect(TextRules.problem(withDisplayName: blank, botNames: []) == "Choose a name to go by.")
      #expect(Bot.problem(withName: blank) == "A bot needs a name.")
    }
    #expect(TextRules.problem(withDisplayName: "Uma\u{3164}", botNames: []) == nil)
    #expect(
      TextRules.problem(withDisplayName: String(repeating: "👩‍👩‍👧", count: 41), botNames: [])
        == "Your name has 41 characters; it holds 40 at most.")
    #expect(
      TextRules.problem(withDisplayName: String(repeating: "👩‍👩‍👧", count: 40), botNames: []) == nil)
    #expect(Bot.problem(withName: "") == "A bot needs a name.")
    // A bot is shown with "(bot)" after its name: one that ends in it, in any form that reads
    // so, would sign as another bot.
    for posing in ["Bob (bot)", "Bob (BOT)", "Bob（bot）", "Bob (b\u{00AD}ot)", "Bob (b0t)"] {
      #expect(
        Bot.problem(withName: posing)
          == "A bot's name cannot end in \"(bot)\": it is shown with one already.", "\(posing)")
    }
    #expect(Bot.problem(withName: "Robot") == nil)
    // A name that starts as a token does may be one pasted in the wrong place: never shown.
    #expect(
      Bot.problem(withName: "stb_abc")
        == "A bot's name cannot start with \"stb_\" as its tokens do: a name is shown to everyone.")
    #expect(
      Bot.problem(withName: String(repeating: "x", count: 41))
        == "A bot's name has 41 characters; it holds 40 at most.")
  }
}
