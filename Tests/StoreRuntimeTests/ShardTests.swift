import ConcurrencyExtras
import Dependencies
import Fixtures
import Foundation
import StoreRuntime
import Testing

@Suite struct ShardTests {
  /// Jobs enqueued one after the other run in that order, each on the shard's own thread.
  @Test func tasksThatPreferAShardRunThereInOrder() async {
    let shard = Shard(name: "test-order")
    let seen = LockIsolated<[(Int, Bool)]>([])
    let tasks = (0..<200).map { index in
      Task(executorPreference: shard) {
        seen.withValue { $0.append((index, Shard.current === shard)) }
      }
    }
    for task in tasks { await task.value }
    let result = seen.value
    #expect(result.map(\.0) == Array(0..<200))
    #expect(result.allSatisfy { $0.1 })
    #expect(Shard.current == nil, "The test's own thread is no shard.")
  }

  /// A store is isolated to its shard, and its effects run there too.
  @Test func aStoreAndItsEffectsRunOnItsShard() async {
    let shard = Shard(name: "test-store")
    let (names, continuation) = AsyncStream<String?>.makeStream()
    let store = Store(
      initialState: 0,
      reducer: Reduce<Int, Int> { state, action in
        state += action
        return .run { _ in continuation.yield(Shard.current?.name) }
      },
      shard: shard,
      observer: { _, _, _ in continuation.yield(Shard.current?.name) })
    await store.send(1)
    var iterator = names.makeAsyncIterator()
    #expect(await iterator.next() == "test-store", "The observer runs on the store's actor.")
    #expect(await iterator.next() == "test-store", "The effect prefers the store's shard.")
    #expect(await store.state == 1)
  }

  /// Sleepers wake in deadline order, whatever order they went to sleep in.
  @Test func sleepersWakeInDeadlineOrder() async throws {
    let shard = Shard(name: "test-sleep")
    let woke = LockIsolated<[Int]>([])
    let start = ContinuousClock.now
    let tasks = [30, 10, 20].map { milliseconds in
      Task(executorPreference: shard) {
        try await ShardClock().sleep(until: start + .milliseconds(milliseconds))
        #expect(ContinuousClock.now >= start + .milliseconds(milliseconds), "Never early.")
        woke.withValue { $0.append(milliseconds) }
      }
    }
    for task in tasks { try await task.value }
    #expect(woke.value == [10, 20, 30])
  }

  /// A sleep from another thread with a deadline earlier than the one the shard waits for
  /// wakes the shard (the shard's timers are real time: these sleep for milliseconds).
  @Test func anEarlierDeadlineWakesAShardWaitingForALaterOne() async throws {
    let shard = Shard(name: "test-earlier")
    let late = Task { try await shard.sleep(until: .now + .seconds(30)) }
    try await eventually("The shard never waited for the late one.") { shard.isWaitingForASleeper }
    let start = ContinuousClock.now
    try await shard.sleep(until: start + .milliseconds(10))
    #expect(ContinuousClock.now - start < .seconds(5))
    late.cancel()
    await #expect(throws: CancellationError.self) { try await late.value }
  }

  /// A cancelled sleep ends at once with `CancellationError`, long before its deadline, on
  /// the shard or off it, and also when it was cancelled before it began.
  @Test func aCancelledSleepEndsAtOnce() async {
    let shard = Shard(name: "test-cancel")
    let onShard = Task(executorPreference: shard) {
      try await ShardClock().sleep(until: .now + .seconds(3600))
    }
    onShard.cancel()
    await #expect(throws: CancellationError.self) { try await onShard.value }
    let offShard = Task { try await shard.sleep(until: .now + .seconds(3600)) }
    offShard.cancel()
    await #expect(throws: CancellationError.self) { try await offShard.value }
    let early = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await shard.sleep(until: .now + .seconds(3600))
    }
    await #expect(throws: CancellationError.self) { try await early.value }
  }

  /// An `Effect.timer` on the shards' clock is kept by the store's shard: each tick is
  /// reduced on the shard's thread, with no task of its own, until the timer is cancelled,
  /// and then the shard keeps nothing of it.
  @Test func aTimerTicksOnItsStoresShardUntilCancelled() async throws {
    enum Action: Sendable { case start, tick, stop }
    let shard = Shard(name: "test-timer")
    let ticks = LockIsolated<[String?]>([])
    let store = Store(
      initialState: 0,
      reducer: Reduce<Int, Action> { state, action in
        switch action {
        case .start:
          return .timer(every: .milliseconds(10), on: ShardClock(), send: .tick)
            .cancellable(id: "timer")
        case .tick:
          state += 1
          return .none
        case .stop:
          return .cancel(id: "timer")
        }
      },
      shard: shard,
      observer: { action, _, _ in
        if action == .tick { ticks.withValue { $0.append(Shard.current?.name) } }
      })
    await store.send(.start)
    #expect(shard.repeatingTimerCount == 1, "The shard keeps the timer: no task runs it.")
    #expect(store.runningEffectCount == 1)
    try await eventually("The timer never ticked three times.") { await store.state >= 3 }
    await store.send(.stop)
    #expect(shard.repeatingTimerCount == 0)
    #expect(store.runningEffectCount == 0)
    let count = await store.state
    #expect(ticks.value.count == count)
    #expect(ticks.value.allSatisfy { $0 == "test-timer" }, "Each tick is reduced on the shard.")
    // NB: a timer fires from the shard's loop only while the shard keeps it (checked above);
    // three of its intervals more confirm that nothing was left behind to tick.
    try await holds("A cancelled timer ticked.", for: .milliseconds(30)) {
      await store.state == count
    }
  }

  /// Cancelled along with the store's other effects (a room emptied), a timer stops too.
  @Test func aTimerStopsWithEveryOtherEffectOfItsStore() async {
    let shard = Shard(name: "test-timer-all")
    let store = Store(
      initialState: 0,
      reducer: Reduce<Int, Int> { state, action in
        state += action
        return action == 0
          ? .timer(every: .seconds(3600), on: ShardClock(), send: 1) : .none
      },
      shard: shard)
    await store.send(0)
    #expect(shard.repeatingTimerCount == 1)
    await store.cancelAllEffects()
    #expect(shard.repeatingTimerCount == 0)
    #expect(store.runningEffectCount == 0)
  }

  /// Work that several jobs of one batch ask for at its end runs once, after all of them.
  @Test func aHookAskedForByManyJobsOfABatchRunsOnceAfterThem() async {
    let shard = Shard(name: "test-batch")
    let log = LockIsolated<[String]>([])
    let key = ObjectIdentifier(Shard.self)
    let done = await withCheckedContinuation { (finished: CheckedContinuation<[String], Never>) in
      // NB: jobs enqueued from a job of the shard all run before the shard looks for hooks.
      Task(executorPreference: shard) {
        for index in 0..<10 {
          Task(executorPreference: shard) {
            log.withValue { $0.append("job \(index)") }
            Shard.atEndOfBatch(key) {
              log.withValue { $0.append("hook") }
              finished.resume(returning: log.value)
            }
          }
        }
      }
    }
    #expect(done == (0..<10).map { "job \($0)" } + ["hook"])
  }

  /// A shard that never runs out of jobs (each one queues the next) still runs a hook asked
  /// for meanwhile, once it has waited `hookWait`: a busy shard's frames are not held back.
  @Test func aBusyShardStillRunsItsHooks() async {
    let shard = Shard(name: "test-busy")
    let key = ObjectIdentifier(Shard.self)
    let ran = LockIsolated(false)
    let start = ContinuousClock.now
    // NB: the chain stops once the hook ran, or after 5 s without it.
    let stoppedBecauseHookRan = await withCheckedContinuation {
      (finished: CheckedContinuation<Bool, Never>) in
      @Sendable func next() {
        Task(executorPreference: shard) {
          if ran.value { return finished.resume(returning: true) }
          if ContinuousClock.now - start > .seconds(5) { return finished.resume(returning: false) }
          next()
        }
      }
      Task(executorPreference: shard) {
        Shard.atEndOfBatch(key) { ran.withValue { $0 = true } }
        next()
      }
    }
    #expect(stoppedBecauseHookRan)
  }

  /// Off a shard, a hook runs at once.
  @Test func offAShardAHookRunsAtOnce() {
    let ran = LockIsolated(false)
    Shard.atEndOfBatch(ObjectIdentifier(Shard.self)) { ran.withValue { $0 = true } }
    #expect(ran.value)
  }
}
