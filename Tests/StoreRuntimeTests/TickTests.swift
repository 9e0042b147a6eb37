import Clocks
import Synchronization
import Testing

@testable import StoreRuntime

/// `Effect.timer` without a shard to keep it (`Clock.tick(every:)`), and so a shard's own
/// timers' grid (`nextTick`, which both use), sleeps until the same instants as swift-clocks'
/// `timer(interval:)`, which it replaces, including when it wakes late.
struct TickTests {
  @Test func itSleepsUntilTheSameInstantsAsTheTimerItReplaces() async {
    // Woken on time, a little late, later than a whole second, much later.
    let lateness: [Duration] = [
      .zero, .milliseconds(300), .zero, .milliseconds(2_500), .zero, .seconds(5), .zero,
      .milliseconds(999), .zero,
    ]
    let ours = LateClock(lateness: lateness)
    let ticks = Mutex(0)
    await ours.tick(every: .seconds(1)) { ticks.withLock { $0 += 1 } }
    let theirs = LateClock(lateness: lateness)
    for await _ in theirs.timer(interval: .seconds(1)) {}
    #expect(ours.deadlines == theirs.deadlines)
    #expect(ours.deadlines.first == .init(offset: .seconds(1)))
    // One tick after every sleep but the last, which ended it (cancelled).
    #expect(ticks.withLock { $0 } == lateness.count)
  }
}

/// A clock whose every sleep returns late by the next of `lateness`, and is cancelled after
/// the last of them; it records the deadlines it was asked for.
final class LateClock: Clock, Sendable {
  struct Instant: InstantProtocol {
    var offset: Duration
    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct State {
    var now = Instant(offset: .zero)
    var lateness: [Duration]
    var deadlines: [Instant] = []
  }
  private let state: Mutex<State>

  init(lateness: [Duration]) { state = Mutex(State(lateness: lateness)) }

  var now: Instant { state.withLock { $0.now } }
  var minimumResolution: Duration { .zero }
  var deadlines: [Instant] { state.withLock { $0.deadlines } }

  func sleep(until deadline: Instant, tolerance: Duration?) async throws {
    try state.withLock { state in
      state.deadlines.append(deadline)
      guard !state.lateness.isEmpty else { throw CancellationError() }
      state.now = Swift.max(state.now, deadline).advanced(by: state.lateness.removeFirst())
    }
  }
}
