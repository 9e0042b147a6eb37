import Foundation
import Logging
import Synchronization

/// Whether saving works, said honestly: `/healthz` answers 503 with the cause while saves
/// fail, and the log says each cause once a minute rather than once per action.
final class StorageHealth: Sendable {
  private struct Shared {
    /// Per kind of save that fails now: its last failure, until a save of that kind works.
    var problems: [String: String] = [:]
    /// Per cause: when it was last logged, and how many failures since.
    var logged: [String: (at: ContinuousClock.Instant, unsaid: Int)] = [:]
  }

  /// The one-row write `/healthz` tries: when it works, writing works again for every kind.
  static let probe = "Checking storage"

  static let logInterval: Duration = .seconds(60)
  private let shared = Mutex(Shared())
  private let logger: Logger

  init(logger: Logger) { self.logger = logger }

  /// What fails right now (`"Saving a standup failed: disk full"`), or nil when saves work:
  /// a save people asked for rather than the probe's, when both fail.
  var problem: String? {
    shared.withLock { shared in
      let saves = shared.problems.filter { $0.key != Self.probe }
      return saves.keys.min().flatMap { saves[$0] } ?? shared.problems[Self.probe]
    }
  }

  /// A save failed: remember it for `/healthz` and log it, once per cause per minute.
  func failed(_ what: String, _ error: any Error) {
    let cause = "\(what) failed: \(error)"
    let now = ContinuousClock.now
    let report: String? = shared.withLock { shared in
      shared.problems[what] = cause
      if let last = shared.logged[what], now - last.at < Self.logInterval {
        shared.logged[what]?.unsaid += 1
        return nil
      }
      let unsaid = shared.logged[what]?.unsaid ?? 0
      shared.logged[what] = (now, 0)
      return unsaid > 0 ? "\(cause) (and \(unsaid) more times in the last minute)" : cause
    }
    if let report { logger.error("\(report). Changes are refused until saving works again.") }
  }

  /// A save of this kind worked: it is healthy again (the probe's: every kind is).
  func succeeded(_ what: String) {
    let recovered = shared.withLock { shared -> Bool in
      let wasFailing = !shared.problems.isEmpty
      if what == Self.probe {
        shared.problems = [:]
        shared.logged = [:]
      } else {
        shared.problems[what] = nil
        shared.logged[what] = nil
      }
      return wasFailing && shared.problems.isEmpty
    }
    if recovered { logger.notice("Saving works again.") }
  }

  /// Runs one save: a failure is recorded (and thrown on), a success clears the problem.
  func checking(_ what: String, _ save: () async throws -> Void) async throws {
    do {
      try await save()
      succeeded(what)
    } catch {
      failed(what, error)
      throw error
    }
  }
}
