import Foundation
import Testing

@testable import StandupsServer

/// The server's clock is real time: these tests sleep for milliseconds.
@Suite struct ScheduledClockTests {
  let clock = ScheduledClock(scheduler: SleepScheduler(name: "test-timer"))

  @Test func sleepersWakeInDeadlineOrderAndNeverEarly() async throws {
    let clock = clock
    let start = clock.now
    let delays = [30, 10, 20]
    let woke = try await withThrowingTaskGroup(of: (Int, ContinuousClock.Instant).self) { group in
      for (index, milliseconds) in delays.enumerated() {
        group.addTask {
          try await clock.sleep(until: start + .milliseconds(milliseconds))
          return (index, clock.now)
        }
      }
      var woke: [(Int, ContinuousClock.Instant)] = []
      for try await sleeper in group { woke.append(sleeper) }
      return woke
    }
    #expect(woke.map(\.0) == [1, 2, 0])
    for (index, at) in woke {
      #expect(at >= start + .milliseconds(delays[index]))
    }
  }

  @Test func anEarlierDeadlineWakesTheThreadWaitingForALaterOne() async throws {
    let clock = clock
    let late = Task { try await clock.sleep(until: clock.now + .seconds(30)) }
    try await Task.sleep(for: .milliseconds(20))  // the thread now waits for the late one
    let start = clock.now
    try await clock.sleep(until: start + .milliseconds(10))
    #expect(clock.now - start < .seconds(5))
    late.cancel()
    await #expect(throws: CancellationError.self) { try await late.value }
  }

  @Test func cancellingASleeperEndsItAtOnceWithCancellationError() async throws {
    let clock = clock
    let sleeper = Task { try await clock.sleep(until: clock.now + .seconds(30)) }
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    // Already cancelled before it sleeps.
    let early = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await clock.sleep(until: clock.now + .seconds(30))
    }
    await #expect(throws: CancellationError.self) { try await early.value }
  }
}
