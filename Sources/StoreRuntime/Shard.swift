import Dispatch
import HeapModule
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One thread that runs stores and their effects, and wakes their sleeps.
///
/// A shard is the `SerialExecutor` of the stores placed on it (their actor runs here, one job
/// at a time, in the order the jobs came) and the `TaskExecutor` their effects prefer, so an
/// effect and its store never change threads. It also keeps the sleeps of `ShardClock` and its
/// repeating timers (`Effect.timer`'s) in one heap and wakes the ones that are due from the
/// same loop: a meeting's tick goes from its timer to its reduce, its diff and its frames
/// being queued in one turn of this thread, with no task, continuation or job in between.
///
/// When a batch of jobs is done (nothing left to run, nothing due), the shard runs the hooks
/// that jobs of the batch asked for with `atEndOfBatch(_:_:)` once each: the server wakes its
/// transport once per batch, not once per frame. A shard that never runs out of work runs
/// them too, once the first has waited `hookWait`.
///
/// ```swift
/// let store = Store(initialState: Counter.State(), reducer: Counter(), shard: Shard.next())
/// ```
public final class Shard: SerialExecutor, TaskExecutor, @unchecked Sendable {
  // NB: @unchecked because `hooks` is touched only on the shard's own thread; everything
  // else that other threads reach is behind `shared`.

  /// The shards stores are spread over, in turn: `configure(count:)`'s, or `defaultCount`.
  /// Made when first asked for.
  public static let all: [Shard] = {
    made.store(true, ordering: .releasing)
    let configured = configuredCount.load(ordering: .acquiring)
    return (0..<(configured > 0 ? configured : defaultCount)).map { Shard(name: "shard-\($0)") }
  }()

  /// One per core but one, left to the transport's service thread; at least one.
  ///
  /// On two cores, one shard took 8–14 % less of the server's CPU than two for 500 ticking
  /// rooms (docs/BENCHMARKS.md, "One shard on two cores"), probably because the shard and
  /// the service thread then each keep a core, and every room's tick runs on one core's caches.
  public static var defaultCount: Int { max(1, systemCoreCount() - 1) }

  /// Sets how many shards there are (`standups-server --shards`); call it before the first
  /// store is made, which makes them.
  public static func configure(count: Int) {
    precondition(count > 0, "A process needs at least one shard.")
    precondition(!made.load(ordering: .acquiring), "The shards were made before configure(count:).")
    configuredCount.store(count, ordering: .releasing)
  }
  private static let configuredCount = Atomic<Int>(0)
  private static let made = Atomic<Bool>(false)
  private static let turn = Atomic<Int>(0)

  /// The next shard in turn.
  public static func next() -> Shard {
    all[turn.wrappingAdd(1, ordering: .relaxed).oldValue % all.count]
  }

  /// The shard running the current thread, if it is one.
  public static var current: Shard? {
    guard let pointer = pthread_getspecific(threadKey) else { return nil }
    return Unmanaged<Shard>.fromOpaque(pointer).takeUnretainedValue()
  }

  /// Has every shard call `observer` with how late it woke each sleeper (for metrics).
  public static func observeWakeUps(_ observer: @escaping @Sendable (Duration) -> Void) {
    wakeObserver.withLock { $0 = WakeObserver(call: observer) }
  }
  // NB: the closure sits in a class: a closure read out of a generic `Mutex` comes back
  // behind two more reabstraction thunks on every read (the `inout` is reabstracted both
  // ways and written back), so each call would cost more than the last.
  private final class WakeObserver: Sendable {
    let call: @Sendable (Duration) -> Void
    init(call: @escaping @Sendable (Duration) -> Void) { self.call = call }
  }
  private static let wakeObserver = Mutex<WakeObserver?>(nil)

  private struct Sleeper: Comparable {
    var deadline: ContinuousClock.Instant
    var id: UInt64
    static func < (lhs: Sleeper, rhs: Sleeper) -> Bool {
      (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id)
    }
  }

  private struct RepeatingTimer {
    var interval: Duration
    var fire: @Sendable () -> Void
  }

  private struct Shared {
    var jobs: [UnownedJob] = []
    var heap = Heap<Sleeper>()
    var sleepers: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    /// Repeating timers (`repeating(every:_:)`), by the id of their next deadline's entry.
    var timers: [UInt64: RepeatingTimer] = [:]
    /// Sleeps that have an id but are not in the heap yet.
    var arriving: Set<UInt64> = []
    /// Of those, the ones cancelled already.
    var cancelledEarly: Set<UInt64> = []
    var nextID: UInt64 = 0
    /// The thread is waiting (or about to) on `signal`: the next arrival must wake it.
    var isWaiting = false
  }

  public let name: String
  private let shared = Mutex(Shared())
  private let signal = DispatchSemaphore(value: 0)
  /// Shard thread only: what to run at the end of the current batch, by key.
  private var hooks: [ObjectIdentifier: () -> Void] = [:]
  /// When the first of `hooks` was asked for.
  private var hooksSince = ContinuousClock.now
  /// The longest a hook waits for its batch to end: a busy shard's frames go out meanwhile.
  public static let hookWait = Duration.milliseconds(2)

  /// Starts a shard's thread (it lives as long as the process).
  public init(name: String) {
    self.name = name
    let box = Unmanaged.passRetained(self).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
      &thread, nil,
      { box in
        // NB: the thread keeps its shard for ever: shards are made once per process.
        guard let box else { return nil }
        Unmanaged<Shard>.fromOpaque(box).takeUnretainedValue().run()
        return nil
      }, box)
    precondition(created == 0, "A shard's thread could not be started (\(created)).")
    pthread_detach(thread)
  }

  /// Whether the shard's thread waits for a sleeper's deadline, nothing else to do (tests).
  package var isWaitingForASleeper: Bool {
    shared.withLock { $0.isWaiting && !$0.heap.isEmpty }
  }

  /// How many repeating timers the shard keeps (tests).
  package var repeatingTimerCount: Int { shared.withLock { $0.timers.count } }

  // MARK: Executor

  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let wake = shared.withLock { shared in
      shared.jobs.append(job)
      defer { shared.isWaiting = false }
      return shared.isWaiting
    }
    if wake { signal.signal() }
  }

  public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }

  public func checkIsolated() {
    precondition(Shard.current === self, "Expected to run on \(name).")
  }

  /// Runs `hook` once when the current batch of this shard's jobs is done; another hook with
  /// the same `key` in the same batch is dropped. Off a shard, runs `hook` at once.
  public static func atEndOfBatch(_ key: ObjectIdentifier, _ hook: @escaping () -> Void) {
    guard let shard = current else { return hook() }
    if shard.hooks.isEmpty { shard.hooksSince = .now }
    if shard.hooks[key] == nil { shard.hooks[key] = hook }
  }

  // MARK: Sleeping

  /// Suspends until `deadline`; throws `CancellationError` if the task is cancelled first.
  public func sleep(until deadline: ContinuousClock.Instant) async throws {
    let id = shared.withLock { shared in
      shared.nextID += 1
      shared.arriving.insert(shared.nextID)
      return shared.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        add(id, deadline: deadline, continuation)
      }
    } onCancel: {
      cancel(id)
    }
  }

  private func add(
    _ id: UInt64, deadline: ContinuousClock.Instant,
    _ continuation: CheckedContinuation<Void, any Error>
  ) {
    enum Outcome { case cancelled, wake, nothing }
    let outcome = shared.withLock { shared -> Outcome in
      shared.arriving.remove(id)
      if shared.cancelledEarly.remove(id) != nil { return .cancelled }
      let isFirst = shared.heap.min.map { deadline < $0.deadline } ?? true
      shared.heap.insert(Sleeper(deadline: deadline, id: id))
      shared.sleepers[id] = continuation
      guard isFirst, shared.isWaiting else { return .nothing }
      shared.isWaiting = false
      return .wake
    }
    switch outcome {
    case .cancelled: continuation.resume(throwing: CancellationError())
    case .wake: signal.signal()
    case .nothing: break
    }
  }

  private func cancel(_ id: UInt64) {
    let continuation = shared.withLock { shared -> CheckedContinuation<Void, any Error>? in
      if let continuation = shared.sleepers.removeValue(forKey: id) { return continuation }
      // NB: not in the heap yet: `add` will see it. (Already woken: nothing to do.)
      if shared.arriving.contains(id) { shared.cancelledEarly.insert(id) }
      return nil
    }
    continuation?.resume(throwing: CancellationError())
  }

  // MARK: Repeating timers

  /// Calls `fire` on this shard's thread every `interval` from now, on that grid, until the
  /// returned timer is cancelled; a tick the shard was too late for is skipped, as
  /// `ShardClock().tick(every:)` does. The shard calls `fire` from its own loop, between
  /// jobs, so an actor isolated to the shard may `assumeIsolated` there; timers due together
  /// fire in one turn, and the frames they queue go out with one wake-up.
  public func repeating(every interval: Duration, _ fire: @escaping @Sendable () -> Void)
    -> Repeating
  {
    precondition(interval > .zero, "A repeating timer's interval must be positive.")
    let deadline = ContinuousClock.now + interval
    let wake = shared.withLock { shared in
      shared.nextID += 1
      let isFirst = shared.heap.min.map { deadline < $0.deadline } ?? true
      shared.heap.insert(Sleeper(deadline: deadline, id: shared.nextID))
      shared.timers[shared.nextID] = RepeatingTimer(interval: interval, fire: fire)
      return (id: shared.nextID, wake: isFirst && shared.isWaiting)
    }
    if wake.wake { signal.signal() }
    return Repeating(shard: self, id: wake.id)
  }

  /// A repeating timer of a shard. `cancel()` stops it, from any thread: it fires no more
  /// after that, unless the shard had taken it for the turn under way.
  public final class Repeating: Sendable {
    private let shard: Shard
    private let id: UInt64
    fileprivate init(shard: Shard, id: UInt64) {
      self.shard = shard
      self.id = id
    }
    /// NB: its entry in the heap stays until its deadline, and is then dropped.
    public func cancel() { _ = shard.shared.withLock { $0.timers.removeValue(forKey: id) } }
  }

  // MARK: The loop

  private func run() {
    pthread_setspecific(Self.threadKey, Unmanaged.passUnretained(self).toOpaque())
    Self.nameThread(name)
    var jobs: [UnownedJob] = []
    var due: [CheckedContinuation<Void, any Error>] = []
    var firing: [@Sendable () -> Void] = []
    var lateness: [Duration] = []
    while true {
      let next = shared.withLock { shared -> ContinuousClock.Instant? in
        shared.isWaiting = false
        swap(&jobs, &shared.jobs)
        let now = ContinuousClock.now
        while let first = shared.heap.min, first.deadline <= now {
          shared.heap.removeMin()
          // NB: a cancelled sleeper or timer left its entry behind; it has nothing any more.
          if let continuation = shared.sleepers.removeValue(forKey: first.id) {
            due.append(continuation)
            lateness.append(now - first.deadline)
          } else if let timer = shared.timers[first.id] {
            firing.append(timer.fire)
            lateness.append(now - first.deadline)
            shared.heap.insert(
              Sleeper(
                deadline: first.deadline.nextTick(every: timer.interval, now: now),
                id: first.id))
          }
        }
        // NB: about to wait unless there is work: arrivals from now on must signal.
        shared.isWaiting = jobs.isEmpty && due.isEmpty && firing.isEmpty && hooks.isEmpty
        return shared.heap.min?.deadline
      }
      if !jobs.isEmpty || !due.isEmpty || !firing.isEmpty {
        // NB: a woken sleeper's task is enqueued here (it prefers this shard) and runs in
        // the next turn, with the jobs that came meanwhile. A timer's tick is reduced now.
        for continuation in due { continuation.resume() }
        due.removeAll(keepingCapacity: true)
        if !lateness.isEmpty, let observer = Self.wakeObserver.withLock({ $0 }) {
          for late in lateness { observer.call(late) }
        }
        lateness.removeAll(keepingCapacity: true)
        for job in jobs {
          job.runSynchronously(
            isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
        jobs.removeAll(keepingCapacity: true)
        // NB: after the jobs that came before the ticks were due.
        for fire in firing { fire() }
        firing.removeAll(keepingCapacity: true)
        // NB: a shard that always finds more to run still hands on what its jobs queued.
        if !hooks.isEmpty, ContinuousClock.now - hooksSince >= Self.hookWait { runHooks() }
        continue
      }
      if !hooks.isEmpty {
        runHooks()
        continue
      }
      wait(until: next)
    }
  }

  private func runHooks() {
    let batch = hooks
    hooks.removeAll(keepingCapacity: true)
    for hook in batch.values { hook() }
  }

  private func wait(until deadline: ContinuousClock.Instant?) {
    guard let deadline else { return signal.wait() }
    let wait = ContinuousClock.now.duration(to: deadline)
    guard wait > .zero else { return }
    let (seconds, attoseconds) = wait.components
    _ = signal.wait(
      timeout: .now()
        + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
  }

  private static let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let created = pthread_key_create(&key, nil)
    precondition(created == 0, "No thread-local key for shards (\(created)).")
    return key
  }()

  /// Names the calling thread for `top -H` and `perf` (`pthread_setname_np` is not visible
  /// to Swift on Glibc; `/proc/thread-self/comm` is the same name).
  private static func nameThread(_ name: String) {
    #if os(Linux)
      guard let file = fopen("/proc/thread-self/comm", "w") else { return }
      fputs(String(name.prefix(15)), file)
      fclose(file)
    #endif
  }

  private static func systemCoreCount() -> Int {
    Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  }
}

/// `ContinuousClock` time whose sleeps are kept by a shard: the one running the sleeper (an
/// effect of a store placed on a shard), or else the next one.
///
/// `ContinuousClock.sleep` on Linux is a dispatch timer per sleep: arming it wakes dispatch's
/// manager thread, and firing it wakes it again before a pool thread runs the sleeper. Here
/// arming a sleep is a heap insertion, and a tick wakes only the shard that runs the sleeper.
public struct ShardClock: Clock {
  public typealias Duration = Swift.Duration
  public typealias Instant = ContinuousClock.Instant

  public init() {}

  public var now: Instant { .now }
  public var minimumResolution: Duration { ContinuousClock().minimumResolution }

  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try await (Shard.current ?? Shard.next()).sleep(until: deadline)
  }
}
