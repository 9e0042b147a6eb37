import Fixtures
import Foundation
import JSONPatch
import StandupsFeatures
import Testing
import WebSocketTransport

@testable import StandupsServer

@Suite struct AdmissionTests {
  /// A trusted proxy is known however its address is spelled, and a client it names counts
  /// as one address however the proxy spells it: else every client would count as the proxy,
  /// and one caller's failed guesses lock everyone out.
  @Test func aTrustedProxyIsKnownHoweverItsAddressIsSpelled() {
    var limits = ServerLimits()
    limits.trustedProxies = ["::1", "10.0.0.5"]
    for spelling in ["0:0:0:0:0:0:0:1", "::1", "::ffff:10.0.0.5", "10.0.0.5"] {
      #expect(limits.trusts(spelling), "\(spelling)")
    }
    #expect(!limits.trusts("10.0.0.6") && !limits.trusts("::2") && !limits.trusts("proxy"))
    let forwarded = { (from: String, client: String) in
      HTTPRequest(
        method: "GET", path: "/", headers: ["x-forwarded-for": "203.0.113.9, \(client)"],
        remoteAddress: from
      ).fromClient(trusting: limits).remoteAddress
    }
    #expect(forwarded("::ffff:10.0.0.5", "198.51.100.7") == "198.51.100.7")
    #expect(forwarded("::ffff:198.51.100.7", "::ffff:198.51.100.7") == "::ffff:198.51.100.7")
    #expect(forwarded("0:0:0:0:0:0:0:1", "::ffff:198.51.100.7") == "198.51.100.7")
    #expect(forwarded("0:0:0:0:0:0:0:1", "2001:DB8:0:0::1") == "2001:db8::1")
    // Nobody else's header is believed.
    #expect(forwarded("198.51.100.7", "10.9.9.9") == "198.51.100.7")
  }

  @Test func aTokenBucketAllowsABurstThenTheRateThenCloses() {
    var limits = ServerLimits()
    limits.messagesPerSecond = 2
    limits.burst = 3
    limits.closeAfterRefused = 2
    let admission = Admission(limits: limits)
    let connection = ConnectionID(rawValue: 1)
    admission.opened(connection, address: "10.0.0.1")
    let start = ContinuousClock.now
    #expect(
      (0..<3).map { _ in admission.take(connection, now: start) } == [.accept, .accept, .accept])
    #expect(admission.take(connection, now: start) == .refuse)
    // Half a second later, one token has come back.
    #expect(admission.take(connection, now: start + .milliseconds(500)) == .accept)
    #expect(admission.take(connection, now: start + .milliseconds(500)) == .refuse)
    #expect(admission.take(connection, now: start + .milliseconds(500)) == .refuse)
    #expect(admission.take(connection, now: start + .milliseconds(500)) == .close)
  }

  @Test func aClientSendingOverTheRateIsClosedThoughTokensComeBackBetweenItsMessages() {
    // A flood read a few messages at a time (a busy server) has a token come back between
    // reads: its refusals are not "in a row", and they still add up.
    var limits = ServerLimits()
    limits.messagesPerSecond = 10
    limits.burst = 1
    limits.closeAfterRefused = 10
    let admission = Admission(limits: limits)
    func verdicts(every gap: Duration, count: Int) -> [Admission.Verdict] {
      let connection = ConnectionID(rawValue: UInt64(count))
      admission.opened(connection, address: "10.0.0.\(count)")
      let start = ContinuousClock.now
      return (0..<count).map { admission.take(connection, now: start + gap * $0) }
    }
    // Five times the rate: one message in five is taken, and the refusals outrun their
    // forgiving by three in each tenth of a second: closed within half a second.
    let flood = verdicts(every: .milliseconds(20), count: 50)
    #expect(flood.contains(.accept))
    #expect(flood.firstIndex(of: .close).map { $0 > 10 && $0 < 25 } == true, "\(flood)")
    // Just over the rate, for a minute: some refused, never closed.
    let steady = verdicts(every: .milliseconds(95), count: 630)
    #expect(steady.contains(.refuse))
    #expect(!steady.contains(.close))
  }

  @Test func connectionsFromOneIPv6NetworkCountAsFromOneAddress() {
    var limits = ServerLimits()
    limits.maxConnectionsPerAddress = 2
    let admission = Admission(limits: limits)
    func upgrade(from address: String) -> HTTPRequest {
      HTTPRequest(method: "GET", path: "/ws/lobby", remoteAddress: address)
    }
    admission.opened(ConnectionID(rawValue: 1), address: "2001:db8:1:2::1")
    admission.opened(ConnectionID(rawValue: 2), address: "2001:db8:1:2::2")
    // A third address of the same /64 (one machine's, as a rule) is the same address.
    #expect(admission.refusal(for: upgrade(from: "2001:db8:1:2:aaaa::3"))?.status == 503)
    #expect(admission.refusal(for: upgrade(from: "2001:db8:1:3::1")) == nil)
    #expect(admission.refusal(for: upgrade(from: "10.0.0.1")) == nil)
    admission.closed(ConnectionID(rawValue: 1))
    #expect(admission.refusal(for: upgrade(from: "2001:db8:1:2:aaaa::3")) == nil)
  }

  @Test func httpAPICallersHaveABucketEachAndAreToldHowLongToWait() {
    var limits = ServerLimits()
    limits.messagesPerSecond = 2
    limits.burst = 2
    let admission = Admission(limits: limits)
    let start = ContinuousClock.now
    #expect(admission.takeRequest(from: "bot:a", now: start) == nil)
    #expect(admission.takeRequest(from: "bot:a", now: start) == nil)
    #expect(admission.takeRequest(from: "bot:a", now: start) == 1)
    #expect(admission.takeRequest(from: "bot:b", now: start) == nil)
    #expect(admission.takeRequest(from: "bot:a", now: start + .milliseconds(500)) == nil)
    #expect(admission.takeRequest(from: "bot:a", now: start + .milliseconds(500)) == 1)
  }
}

@Suite(.serialized)
struct LimitsTests {
  let room = "/ws/rooms/\(Standup.design.id.uuidString)"

  @Test func connectionsOverTheLimitsAreRefusedWith503() async throws {
    let server = try await TestServer.start { $0.limits.maxConnections = 2 }
    let ana = try await server.room(name: "Ana")
    _ = try await server.room(name: "Ben")
    #expect(try httpStatus(port: server.port, upgradeRequest("\(room)?name=Cy")) == 503)
    ana.close()
    _ = try await ana.waitUntilClosed()
    // Once the server has heard of the close (refused until then), Cy gets in.
    try await eventually("Cy is let in once Ana's connection closed") {
      (try? await server.room(name: "Cy")) != nil
    }
    await server.stop()

    let perAddress = try await TestServer.start { $0.limits.maxConnectionsPerAddress = 1 }
    _ = try await perAddress.room(name: "Ana")
    #expect(try httpStatus(port: perAddress.port, upgradeRequest("/ws/lobby?name=Ben")) == 503)
    await perAddress.stop()
  }

  @Test func theHTTPAPIAnswers429ToACallerOverItsRateAndOnlyToIt() async throws {
    let server = try await TestServer.start {
      $0.limits.messagesPerSecond = 0.001  // no refill during the test
      $0.limits.burst = 3
    }
    for _ in 1...3 {
      #expect(
        try http(port: server.port, "GET", "/api/standups", token: "ci-secret-0001").status == 200)
    }
    let refused = try httpResponse(
      port: server.port, "GET", "/api/standups", token: "ci-secret-0001")
    #expect(refused.status == 429)
    #expect(refused.json?["code"] == "rate_limited")
    #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 >= 1)
    // Another bot has a bucket of its own.
    #expect(
      try http(port: server.port, "GET", "/api/standups", token: "bot-secret-0002").status == 200)
    await server.stop()
  }

  /// A connection opened again starts from what the address's last one left: closing and
  /// opening again is no way to a full burst (it was, every time).
  @Test func openingAgainIsNoWayToAFullBurst() async throws {
    let server = try await TestServer.start {
      $0.limits.messagesPerSecond = 0.001
      $0.limits.burst = 10
    }
    let ben = try await server.room(name: "Ben")
    let message = #"{"type":"action","action":{"type":"meeting.endMeetingButtonTapped"}}"#
    let ana = try await server.room(name: "Ana")
    for _ in 0..<11 { ana.send(raw: message) }  // 10 taken, the 11th refused
    _ = try await ana.next { $0["code"] == "rate_limited" }
    ana.close()
    // NB: Ben sees her go once the server has closed her connection.
    _ = try await ben.waitForState { $0["participants"]?.arrayValue?.count == 1 }
    let again = try await server.room(name: "Ana")
    again.send(
      raw: #"{"type":"action","ref":"r-1","action":{"type":"meeting.endMeetingButtonTapped"}}"#)
    let answer = try await again.next { $0["ref"] == "r-1" }
    #expect(answer["code"] == "rate_limited")
    await server.stop()
  }

  @Test func aFloodIsAnsweredRateLimitedThenClosedWith1008() async throws {
    // No refill during the test, so the counts are exact: the 21st refusal is the last
    // message sent (a server closing a socket with unread input would reset it).
    let server = try await TestServer.start {
      $0.limits.messagesPerSecond = 0.001
      $0.limits.burst = 10
      $0.limits.closeAfterRefused = 20
    }
    let ana = try await server.room(name: "Ana")
    let message = #"{"type":"action","action":{"type":"meeting.endMeetingButtonTapped"}}"#
    for _ in 0..<15 { ana.send(raw: message) }  // 10 taken, 5 refused
    let limited = try await ana.next { $0["code"] == "rate_limited" }
    #expect(limited["message"]?.stringValue?.contains("messages a second") == true)
    #expect(ana.closed == nil)
    for _ in 0..<16 { ana.send(raw: message) }  // refusals 6 to 21: closed
    let closed = try await ana.waitUntilClosed()
    #expect(closed.code == 1008)
    await server.stop()
  }
}
