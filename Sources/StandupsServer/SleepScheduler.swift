import CLibWebSockets
import Dispatch
import Foundation
import HeapModule
import Synchronization

/// The server's clock: `ContinuousClock` time, with every sleep kept in one heap that one
/// thread serves.
///
/// `ContinuousClock.sleep` on Linux is a dispatch timer per sleep: arming it wakes
/// dispatch's manager thread, and firing it wakes it again before a pool thread runs the
/// sleeper. With hundreds of meetings ticking that is most of a tick's cost. Here arming a
/// sleep is a heap insertion (the thread is woken only if the new deadline comes first), and
/// a tick wakes only this thread, which resumes every sleeper that is due.
public struct ScheduledClock: Clock {
  public typealias Duration = Swift.Duration
  public typealias Instant = ContinuousClock.Instant

  let scheduler: SleepScheduler

  /// The clock of one process.
  public static let shared = ScheduledClock(scheduler: SleepScheduler(name: "sleep-timer"))

  public var now: Instant { .now }
  public var minimumResolution: Duration { ContinuousClock().minimumResolution }

  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try await scheduler.sleep(until: deadline)
  }
}

/// Sleepers by deadline, and the thread that wakes them.
final class SleepScheduler: Sendable {
  private struct Entry: Comparable {
    var deadline: ContinuousClock.Instant
    var id: UInt64
    static func < (lhs: Entry, rhs: Entry) -> Bool {
      (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id)
    }
  }

  private struct State {
    var heap = Heap<Entry>()
    var sleepers: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    /// Sleeps that have an id but are not in the heap yet.
    var arriving: Set<UInt64> = []
    /// Of those, the ones cancelled already.
    var cancelledEarly: Set<UInt64> = []
    var nextID: UInt64 = 0
    var threadStarted = false
  }

  private let state = Mutex(State())
  private let signal = DispatchSemaphore(value: 0)
  private let name: String

  init(name: String) { self.name = name }

  func sleep(until deadline: ContinuousClock.Instant) async throws {
    let id = state.withLock { state in
      state.nextID += 1
      state.arriving.insert(state.nextID)
      return state.nextID
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
    enum Outcome { case cancelled, wakeThread, startThread, nothing }
    let outcome = state.withLock { state -> Outcome in
      state.arriving.remove(id)
      if state.cancelledEarly.remove(id) != nil { return .cancelled }
      let wasFirst = state.heap.min.map { deadline < $0.deadline } ?? true
      state.heap.insert(Entry(deadline: deadline, id: id))
      state.sleepers[id] = continuation
      if !state.threadStarted {
        state.threadStarted = true
        return .startThread
      }
      return wasFirst ? .wakeThread : .nothing
    }
    switch outcome {
    case .cancelled: continuation.resume(throwing: CancellationError())
    case .wakeThread: signal.signal()
    case .startThread: startThread()
    case .nothing: break
    }
  }

  private func cancel(_ id: UInt64) {
    let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
      if let continuation = state.sleepers.removeValue(forKey: id) { return continuation }
      // NB: not in the heap yet: `add` will see it. (Already woken: nothing to do.)
      if state.arriving.contains(id) { state.cancelledEarly.insert(id) }
      return nil
    }
    continuation?.resume(throwing: CancellationError())
  }

  private func startThread() {
    let thread = Thread { [self] in
      clws_name_thread(name)
      run()
    }
    thread.start()
  }

  /// Wakes every sleeper that is due, then waits for the next deadline (or an earlier one).
  private func run() {
    while true {
      let (due, next) = state.withLock {
        state -> ([CheckedContinuation<Void, any Error>], ContinuousClock.Instant?) in
        let now = ContinuousClock.now
        var due: [CheckedContinuation<Void, any Error>] = []
        while let first = state.heap.min, first.deadline <= now {
          state.heap.removeMin()
          // NB: a cancelled sleeper left its entry behind; it has no continuation any more.
          if let continuation = state.sleepers.removeValue(forKey: first.id) {
            due.append(continuation)
            ServerMetrics.shared.timerWoke(late: now - first.deadline)
          }
        }
        return (due, state.heap.min?.deadline)
      }
      for continuation in due { continuation.resume() }
      if let next {
        let wait = ContinuousClock.now.duration(to: next)
        guard wait > .zero else { continue }
        let (seconds, attoseconds) = wait.components
        _ = signal.wait(
          timeout: .now()
            + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
      } else {
        signal.wait()
      }
    }
  }
}
