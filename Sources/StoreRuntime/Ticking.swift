extension Clock<Duration> {
  /// Calls `tick` every `interval` on this clock's grid until cancelled, the first time
  /// `interval` from now, skipping the ticks it was too late for, as `timer(interval:)` does.
  /// (`Effect.timer` runs this where its store has no shard to keep the timer.)
  ///
  /// NB: on the clock itself: `timer(interval:)` wraps it in an `AnyClock`, whose instants
  /// are boxed and whose arithmetic goes through closures, on every tick of every meeting.
  package func tick(every interval: Duration, _ tick: () async -> Void) async {
    var last = now
    while true {
      let next = last.nextTick(every: interval, now: now)
      do {
        try await sleep(until: next, tolerance: nil)
      } catch {
        return
      }
      last = next
      await tick()
    }
  }
}

extension InstantProtocol where Duration == Swift.Duration {
  /// The deadline of the tick after one due at `self`, on a grid of `interval`: if it is
  /// already past at `now`, the last one of the grid that is, so that a timer woken late
  /// ticks once at once and then keeps to its grid (as swift-clocks' `timer(interval:)`).
  package func nextTick(every interval: Duration, now: Self) -> Self {
    let next = advanced(by: interval)
    guard next < now else { return next }
    return advanced(by: interval * Int((next.duration(to: now) / interval).rounded(.up)))
  }
}
