import Foundation
import JSONPatch
import Logging
import StandupsWire
import Synchronization
import Testing
import WebSocketTransport

@testable import StandupsServer

/// Signing out ends the session itself, not only this browser's copy of its cookie.
extension AccessTests {
  func signOut(_ server: TestServer, cookie: String) throws -> HTTPAnswer {
    try httpResponse(
      port: server.port, "DELETE", "/api/session",
      headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"])
  }

  @Test func aSignedOutSessionIsRefusedAndItsSocketsCloseWhereverItIsUsed() async throws {
    let (server, access) = try await Self.teamServer()
    let cookie = try signIn(server, name: "Ana")
    // Ana on another device: the same name, a session of its own.
    let other = try signIn(server, name: "Ana")
    let copy = try await join(server, room, headers: ["Cookie": cookie])
    let elsewhere = try await join(server, room, headers: ["Cookie": other])

    let answer = try signOut(server, cookie: cookie)
    #expect(answer.status == 200)
    #expect(answer.headers["set-cookie"]?.contains("Max-Age=0") == true)
    // A copy of the cookie kept somewhere else is refused at once, and its socket closes.
    #expect(await refusal(server, room, headers: ["Cookie": cookie]) == 401)
    let session = try httpResponse(
      port: server.port, "GET", "/api/session", headers: ["Cookie": cookie])
    #expect(session.json?["signedIn"] == false)
    #expect(session.json?["reason"]?.stringValue?.contains("signed out") == true)
    let closed = try await copy.waitUntilClosed()
    #expect(closed.code == 4401)
    #expect(closed.reason.contains("signed out"))
    // The other device's session is untouched.
    #expect(elsewhere.closed == nil)
    let still = try httpResponse(
      port: server.port, "GET", "/api/session", headers: ["Cookie": other])
    #expect(still.json?["signedIn"] == true)
    // Without a session there is nothing to end: the answer still clears the cookie.
    #expect(try signOut(server, cookie: "").status == 200)
    elsewhere.close()
    await server.stop()

    // Kept in storage: a restarted server (or another node) refuses it too.
    let (restarted, _) = try await Self.teamServer(access)
    #expect(await refusal(restarted, room, headers: ["Cookie": cookie]) == 401)
    #expect(await refusal(restarted, room, headers: ["Cookie": other]) == 101)
    await restarted.stop()
  }

  /// Once the sign-out is answered, its session does nothing more here: this node's sockets
  /// of it are closed before the answer, not at the next reload (a second later), so an
  /// action sent right after it is not taken.
  @Test func aSignedOutSessionsSocketTakesNothingOnceTheSignOutIsAnswered() async throws {
    let (server, _) = try await Self.teamServer()
    let cookie = try signIn(server, name: "Ana")
    let ana = try await join(server, room, headers: ["Cookie": cookie])
    let ben = try await join(server, room, headers: ["Cookie": try signIn(server, name: "Ben")])

    #expect(try signOut(server, cookie: cookie).status == 200)
    ana.send(
      ["type": "action", "ref": "after", "action": .object(["type": "editButtonTapped"])])
    let closed = try await ana.waitUntilClosed()
    #expect(closed.code == 4401)
    #expect(!ana.allMessages.contains { $0["ref"] == "after" })
    // Anything Ana's socket took would have reached the room ahead of Ben's ping.
    ben.send(raw: #"{"type":"ping","ref":"behind"}"#)
    #expect(try await ben.next { $0["ref"] == "behind" }["type"] == "pong")
    #expect(ben.state?["destination"] == .null)
    ben.close()
    await server.stop()
  }

  /// A neighbour on this host can set a cookie with our name (cookies ignore ports), on a
  /// longer path so that it is sent first: its own session, ahead of the person's. Sign out
  /// ends every session the request carries, the person's too, not only the one read first.
  @Test func signingOutEndsEverySessionTheRequestCarries() async throws {
    let (server, _) = try await Self.teamServer()
    let person = try signIn(server, name: "Ana")
    let planted = try signIn(server, name: "Mallory")
    let both = "\(planted); \(person)"
    let asWho = try httpResponse(
      port: server.port, "GET", "/api/session", headers: ["Cookie": both])
    #expect(asWho.json?["name"] == "Mallory")
    #expect(try signOut(server, cookie: both).status == 200)
    for cookie in [person, planted] {
      let session = try httpResponse(
        port: server.port, "GET", "/api/session", headers: ["Cookie": cookie])
      #expect(session.json?["signedIn"] == false)
      #expect(await refusal(server, room, headers: ["Cookie": cookie]) == 401)
    }
    await server.stop()
  }

  /// Of two sessions a sign-out carries, the second cannot be saved: the answer says the
  /// sign-out failed, but the first is signed out all the same, and its socket here takes
  /// nothing more at once (not at the next reload); the other session holds.
  @Test func aSignOutSavedInPartClosesWhatItSignedOut() async throws {
    var access = AccessStorage.inMemory(bots: Self.bots)
    let signOutSession = access.signOutSession
    let writes = Mutex(0)
    access.signOutSession = { key, expires in
      let write = writes.withLock { count in
        count += 1
        return count
      }
      guard write == 1 else { throw CancellationError() }
      try await signOutSession(key, expires)
    }
    let (server, _) = try await Self.teamServer(access)
    // Sessions are signed out in the order of their keys: the first is saved, the second not.
    let cookies = try [signIn(server, name: "Ana"), signIn(server, name: "Mallory")].sorted {
      key(of: $0, server) < key(of: $1, server)
    }
    let first = try await join(server, room, headers: ["Cookie": cookies[0]])
    let second = try await join(server, room, headers: ["Cookie": cookies[1]])
    #expect(try signOut(server, cookie: "\(cookies[1]); \(cookies[0])").status == 503)
    for socket in [first, second] {
      socket.send(["type": "action", "ref": "after", "action": ["type": "editButtonTapped"]])
    }
    #expect(try await first.waitUntilClosed().code == 4401)
    #expect(!first.allMessages.contains { $0["ref"] == "after" })
    // The one whose save failed still holds: its action is taken.
    #expect(try await second.next { $0["ref"] == "after" }["type"] == "ack")
    second.close()
    await server.stop()
  }

  private func key(of cookie: String, _ server: TestServer) -> String {
    let request = HTTPRequest(
      method: "GET", path: "/", headers: ["cookie": cookie], remoteAddress: "127.0.0.1")
    return server.server.hub.gatekeeper.validSession(in: request)?.signedOutKey ?? ""
  }

  /// A cookie kept from before a rename is the same session: signing out the renamed one
  /// ends it too; and no other spelling of a signed-out cookie gets in.
  @Test func signingOutEndsTheSessionUnderEveryNameAndSpelling() async throws {
    let (server, _) = try await Self.teamServer()
    let before = try signIn(server, name: "Ana")
    let renamed = try httpResponse(
      port: server.port, "POST", "/api/session",
      headers: ["Cookie": before, "Origin": "http://127.0.0.1:\(server.port)"],
      body: #"{"name":"Ana B"}"#)
    #expect(renamed.status == 200)
    let after = String(try #require(renamed.headers["set-cookie"]?.split(separator: ";").first))
    #expect(after != before)
    #expect(try signOut(server, cookie: after).status == 200)
    for cookie in [before, after] {
      #expect(await refusal(server, room, headers: ["Cookie": cookie]) == 401)
    }
    // The signature's last character carries two spare bits: other spellings are refused.
    for last in ["A", "B", "C", "D", "E", "Q", "g", "w"] where !before.hasSuffix(last) {
      #expect(await refusal(server, room, headers: ["Cookie": before.dropLast() + last]) == 401)
    }
    await server.stop()
  }

  @Test func aSignOutThatCannotBeSavedSaysSoAndEndsNothing() async throws {
    var access = AccessStorage.inMemory(bots: Self.bots)
    access.signOutSession = { _, _ in throw CancellationError() }
    let (server, _) = try await Self.teamServer(access)
    let cookie = try signIn(server, name: "Ana")
    let answer = try signOut(server, cookie: cookie)
    #expect(answer.status == 503)
    #expect(answer.json?["message"]?.stringValue?.contains("Could not sign out") == true)
    // NB: the cookie is not cleared: the page says the sign-out failed, and it did.
    #expect(answer.headers["set-cookie"] == nil)
    #expect(await refusal(server, room, headers: ["Cookie": cookie]) == 101)
    await server.stop()
  }

  @Test func aNewNameKeepsTheSessionsEnd() async throws {
    let (server, access) = try await Self.teamServer()
    let secret = try await access.teamSecret()
    let ends = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 100).rounded(.down))
    let cookie =
      "\(Gatekeeper.cookiePrefix)\(secret.keyID)=\(secret.session(name: "Ana", expires: ends))"
    let renamed = try httpResponse(
      port: server.port, "POST", "/api/session",
      headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"],
      body: #"{"name":"Ana B"}"#)
    #expect(renamed.status == 200, "\(renamed.body)")
    #expect(renamed.json?["expires"]?.stringValue == ISO8601DateFormatter().string(from: ends))
    let maxAge = try #require(
      renamed.headers["set-cookie"]?.split(separator: ";").first { $0.contains("Max-Age=") }
        .flatMap { Int($0.split(separator: "=")[1]) })
    #expect((90...100).contains(maxAge))
    await server.stop()
  }

  /// A session from before names drawn as nothing were refused (a Hangul filler) is asked for
  /// a name that shows, and may choose one with no invite: it is not told a bot took its name.
  @Test func aSessionWhoseNameShowsNothingIsAskedForOne() async throws {
    let (server, access) = try await Self.teamServer()
    let secret = try await access.teamSecret()
    let ends = Date().addingTimeInterval(100)
    let cookie =
      "\(Gatekeeper.cookiePrefix)\(secret.keyID)=\(secret.session(name: "\u{3164}", expires: ends))"
    let session = try httpResponse(
      port: server.port, "GET", "/api/session", headers: ["Cookie": cookie])
    #expect(session.json?["signedIn"] == false)
    #expect(session.json?["mayRename"] == true)
    #expect(
      session.json?["reason"]?.stringValue
        == "Your name shows nothing: choose one to come back in.")
    let renamed = try httpResponse(
      port: server.port, "POST", "/api/session",
      headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(server.port)"],
      body: #"{"name":"Uma"}"#)
    #expect(renamed.status == 200, "\(renamed.body)")
    await server.stop()
  }

  /// A reload can end a credential between an upgrade's check and its connection being
  /// recorded as open, where the reload looks for the connections to close: the opening asks
  /// again. What it asks, for every way a credential ends.
  @Test func anUpgradeLetInIsAskedAgainOnceItsConnectionOpens() async throws {
    let access = AccessStorage.inMemory(bots: Self.bots)
    let gatekeeper = try await Gatekeeper(
      mode: .team, storage: access, logger: Logger(label: "test"))
    func upgrade(cookie: String? = nil, token: String? = nil) -> HTTPRequest {
      HTTPRequest(
        method: "GET", path: room, query: token.map { [("token", $0)] } ?? [],
        headers: cookie.map { ["cookie": String($0.prefix { $0 != ";" })] } ?? [:],
        remoteAddress: "127.0.0.1")
    }
    let ana = upgrade(cookie: gatekeeper.sessionCookie(for: "Ana").value)
    let signedOut = upgrade(cookie: gatekeeper.sessionCookie(for: "Ana").value)
    let drive = upgrade(token: "stb_drive")
    let notes = upgrade(token: "stb_notes")
    let named = upgrade(cookie: gatekeeper.sessionCookie(for: "Deploy").value)
    for request in [ana, signedOut, drive, notes, named] {
      #expect(gatekeeper.stillLetsIn(request) == nil)
    }
    // A sign-out, a revoked bot and a bot given a person's name, read at a reload.
    #expect(try await gatekeeper.signOut(signedOut) == 1)
    #expect(try await access.revokeBot("Driver"))
    try await access.addBot(
      Bot(
        name: "Deploy", tokenHash: Bot.hash(token: "stb_deploy"), scope: .notes, createdAt: Date()))
    _ = try await gatekeeper.reload()
    #expect(gatekeeper.stillLetsIn(ana) == nil)
    #expect(gatekeeper.stillLetsIn(notes) == nil)
    #expect(gatekeeper.stillLetsIn(signedOut)?.contains("signed out") == true)
    #expect(gatekeeper.stillLetsIn(drive)?.contains("revoked") == true)
    #expect(gatekeeper.stillLetsIn(named)?.contains("bot's name") == true)
    // A rotation ends every person's session; the bots stay.
    _ = try await access.rotateTeamSecret()
    _ = try await gatekeeper.reload()
    #expect(gatekeeper.stillLetsIn(ana) != nil)
    #expect(gatekeeper.stillLetsIn(notes) == nil)
  }
}
