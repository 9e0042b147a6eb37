import Fixtures
import Foundation
import Synchronization
import Testing

@testable import WebSocketTransport

/// The keepalive wheel alone: when it pings and when it drops.
struct KeepaliveWheelTests {
  @Test func aQuietConnectionIsPingedThenDroppedIfItNeverAnswers() {
    var wheel = KeepaliveWheel(pingAfter: 30, hangUpAfter: 45)
    wheel.opened(1)
    var seen: [UInt32: [KeepaliveWheel.Decision]] = [:]
    for _ in 1...50 {
      let decisions = wheel.tick { _ in true }
      if !decisions.isEmpty { seen[wheel.now] = decisions }
    }
    #expect(seen == [30: [.ping(1)], 45: [.drop(1)]])
    #expect(wheel.count == 0)
  }

  @Test func anAnswerOrAnyMessageKeepsItAlive() {
    var wheel = KeepaliveWheel(pingAfter: 30, hangUpAfter: 45)
    wheel.opened(1)
    var pings: [UInt32] = []
    for _ in 1...200 {
      let decisions = wheel.tick { _ in true }
      if decisions.contains(.ping(1)) { pings.append(wheel.now) }
      #expect(!decisions.contains(.drop(1)))
      // The peer answers each ping two seconds late, and talks at second 100.
      if let last = pings.last, wheel.now == last + 2 { wheel.heard(1) }
      if wheel.now == 100 { wheel.heard(1) }
    }
    #expect(pings == [30, 62, 94, 130, 162, 194])
  }

  /// With more time to answer than to fall quiet, an answered ping still brings the next one
  /// `pingAfter` after the answer, not at the answered ping's deadline; and the hang-up still
  /// comes `hangUpAfter` after the last thing heard.
  @Test func theNextPingIsDueFromTheAnswerNotFromTheLastPingsDeadline() {
    var wheel = KeepaliveWheel(pingAfter: 1, hangUpAfter: 5)
    wheel.opened(1)
    var seen: [UInt32: [KeepaliveWheel.Decision]] = [:]
    for _ in 1...12 {
      let decisions = wheel.tick { _ in true }
      if !decisions.isEmpty { seen[wheel.now] = decisions }
      if wheel.now == 2 { wheel.heard(1) }  // answers the first ping only
    }
    #expect(seen == [1: [.ping(1)], 3: [.ping(1)], 7: [.drop(1)]])
    #expect(wheel.count == 0)
  }

  @Test func aConnectionThatCannotTakeAFrameIsAskedAgainNextSecond() {
    var wheel = KeepaliveWheel(pingAfter: 2, hangUpAfter: 4)
    wheel.opened(7)
    #expect(wheel.tick { _ in false } == [])
    #expect(wheel.tick { _ in false } == [])
    #expect(wheel.tick { _ in true } == [.ping(7)])
    #expect(wheel.tick { _ in true } == [])
    #expect(wheel.tick { _ in true } == [.drop(7)])
  }

  @Test func oneThatNeverTakesAFrameIsDroppedOnTimeAllTheSame() {
    var wheel = KeepaliveWheel(pingAfter: 2, hangUpAfter: 4)
    wheel.opened(7)
    let decisions = (1...4).map { _ in wheel.tick { _ in false } }
    #expect(decisions == [[], [], [], [.drop(7)]])
    #expect(wheel.count == 0)
  }

  @Test func extremeSettingsStayInOrder() {
    var wheel = KeepaliveWheel(pingAfter: 65535, hangUpAfter: 65535)
    #expect(wheel.pingAfter == 65535 && wheel.hangUpAfter == 65536)
    wheel = KeepaliveWheel(pingAfter: 0, hangUpAfter: 0)
    wheel.opened(1)
    #expect(wheel.tick { _ in true } == [.ping(1)])
    #expect(wheel.tick { _ in true } == [.drop(1)])
  }

  /// Turned ten times a second, the wheel pings each connection in the tenth of a second it
  /// fell quiet in: connections that fell quiet within the same second are not pinged in one
  /// batch.
  @Test func withTicksPerSecondPingsGoOutInTheTenthTheyAreDue() {
    var wheel = KeepaliveWheel(pingAfter: 2, hangUpAfter: 4, ticksPerSecond: 10)
    #expect(wheel.pingAfter == 20 && wheel.hangUpAfter == 40)
    wheel.opened(1)
    for _ in 1...3 { #expect(wheel.tick { _ in true } == []) }
    wheel.opened(2)
    var seen: [UInt32: [KeepaliveWheel.Decision]] = [:]
    for _ in 4...50 {
      let decisions = wheel.tick { _ in true }
      if !decisions.isEmpty { seen[wheel.now] = decisions }
    }
    #expect(seen == [20: [.ping(1)], 23: [.ping(2)], 40: [.drop(1)], 43: [.drop(2)]])
  }

  @Test func closedConnectionsAreForgotten() {
    var wheel = KeepaliveWheel(pingAfter: 1, hangUpAfter: 2)
    for id in 1...1000 { wheel.opened(UInt64(id)) }
    for id in 1...1000 { wheel.closed(UInt64(id)) }
    #expect(wheel.tick { _ in true } == [])
    #expect(wheel.count == 0)
  }
}

/// Pings waiting for a frame to go out behind.
struct WaitingPingsTests {
  @Test func aPingsWaitIsOverAfterItsTurnsAndNotBefore() {
    var waiting = WaitingPings(turns: 3)
    waiting.add(1)
    #expect(waiting.advance() == [])
    waiting.add(2)
    #expect(waiting.advance() == [])
    #expect(waiting.advance() == [1])
    #expect(waiting.advance() == [2])
    #expect(waiting.advance() == [])
  }

  @Test func oneTurnIsTheShortestWait() {
    var waiting = WaitingPings(turns: 0)
    waiting.add(5)
    waiting.add(6)
    #expect(waiting.advance() == [5, 6])
    #expect(waiting.advance() == [])
  }
}

/// The keepalive against a real server, with a raw socket that answers pings or not.
@Suite(.serialized)
struct KeepaliveServerTests {
  @Test func aPeerThatAnswersStaysAndOneThatStopsIsDropped() throws {
    let (server, _) = try startEchoServer {
      $0.pingAfterSeconds = 1
      $0.hangUpAfterSeconds = 2
    }
    defer { server.shutdown() }
    let socket = try RawSocket(port: server.port)
    socket.write(RawSocket.upgrade("/ws"))
    #expect(socket.readHead().hasPrefix("HTTP/1.1 101"))
    // Two pings in a row answered: still open.
    for _ in 1...2 {
      #expect(socket.becomesReadable(within: 5_000))
      let ping = try #require(socket.readFrame())
      #expect(ping.opcode == 0x9)
      #expect(!ping.payload.isEmpty)  // this lws drops empty pongs unseen
      socket.writeFrame(opcode: 0xA, payload: ping.payload)
    }
    // Then silence: the next ping goes unanswered and the server hangs up.
    #expect(socket.becomesReadable(within: 5_000))
    #expect(socket.readFrame()?.opcode == 0x9)
    #expect(socket.becomesReadable(within: 5_000))
    #expect([.end, .reset].contains(socket.readToEnd()))
    #expect(server.webSocketCount == 0)
    #expect(server.pingsSent.alone == 3 && server.pingsSent.behindAFrame == 0)
  }

  /// A connection the server sends to anyway (a meeting's tick) gets its pings in the same
  /// write as a frame: no send, no segment of their own. They are pings all the same: it is
  /// dropped once it stops answering them. The first rides a short frame (a one-byte length),
  /// the second a 300-byte one (a two-byte length).
  @Test func aConnectionThatIsSentToGetsItsPingsBehindItsFrames() async throws {
    let (server, delegate) = try startEchoServer {
      $0.pingAfterSeconds = 1
      $0.hangUpAfterSeconds = 5  // a ping waits up to 1 s for a frame
    }
    defer { server.shutdown() }
    let socket = try RawSocket(port: server.port)
    socket.write(RawSocket.upgrade("/ws"))
    #expect(socket.readHead().hasPrefix("HTTP/1.1 101"))
    try await eventually("the connection opens") { delegate.open.withLock { $0.count == 1 } }
    let connection = try #require(delegate.open.withLock { $0.first })
    // NB: ticks from a dispatch timer, not a task: this test blocks its own thread reading.
    let long = Atomic<Bool>(false)
    let ticks = Atomic<Int>(0)
    let ticker = DispatchSource.makeTimerSource(queue: .global())
    ticker.schedule(deadline: .now(), repeating: .milliseconds(100))
    ticker.setEventHandler {
      let tick = ticks.add(1, ordering: .relaxed).newValue
      let padding = long.load(ordering: .relaxed) ? String(repeating: "x", count: 300) : ""
      server.send(OutboundMessage(text: "tick \(tick) \(padding)"), to: connection)
    }
    ticker.resume()
    defer { ticker.cancel() }
    var previous: (opcode: UInt8, payload: [UInt8])?
    var pings = 0
    while pings < 2 {
      #expect(socket.becomesReadable(within: 5_000))
      let frame = try #require(socket.readFrame())
      if frame.opcode == 0x9 {
        #expect(frame.payload == Array("ping".utf8))
        #expect(previous?.opcode == 0x1)
        #expect(previous?.payload.count ?? 0 > (pings == 0 ? 0 : 300))
        socket.writeFrame(opcode: 0xA, payload: frame.payload)
        pings += 1
        long.store(true, ordering: .relaxed)
        // NB: frames already queued are still short: the next ping rides a long one.
        try await eventually("the pings are counted") {
          server.pingsSent.behindAFrame == pings
        }
      } else {
        #expect(frame.opcode == 0x1)
        #expect(String(decoding: frame.payload, as: UTF8.self).hasPrefix("tick "))
      }
      previous = frame
    }
    #expect(server.pingsSent.alone == 0)
    // Then it stops answering (it still reads): the server hangs up.
    let deadline = ContinuousClock.now + .seconds(15)
    var ended = false
    while ContinuousClock.now < deadline, socket.becomesReadable(within: 5_000) {
      guard let frame = socket.readFrame() else {
        ended = true
        break
      }
      #expect([0x1, 0x9].contains(frame.opcode))
    }
    #expect(ended, "the server hung up")
    #expect(server.pingsSent.alone == 0)
    try await eventually("the server forgets it") { server.webSocketCount == 0 }
  }
}
