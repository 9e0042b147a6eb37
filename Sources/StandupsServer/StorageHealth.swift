import Foundation
import Logging
import Synchronization

/// Whether saving works, said honestly: `/healthz` answers 503 with the cause while saves
/// fail, and the log says each cause once a minute rather than once per action.
final class StorageHealth: Sendable {
  private struct Shared {
    /// The last failure, while no save has worked since.
    var problem: String?
    /// Per cause: when it was last logged, and how many failures since.
    var logged: [String: (at: ContinuousClock.Instant, unsaid: Int)] = [:]
  }

  static let logInterval: Duration = .seconds(60)
  private let shared = Mutex(Shared())
  private let logger: Logger

  init(logger: Logger) { self.logger = logger }

  /// What fails right now (`"saving a standup failed: disk full"`), or nil when saves work.
  var problem: String? { shared.withLock { $0.problem } }

  /// A save failed: remember it for `/healthz` and log it, once per cause per minute.
  func failed(_ what: String, _ error: any Error) {
    let cause = "\(what) failed: \(error)"
    let now = ContinuousClock.now
    let report: String? = shared.withLock { shared in
      shared.problem = cause
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

  /// A save worked: storage is healthy again.
  func succeeded() {
    let recovered = shared.withLock { shared -> Bool in
      defer {
        shared.problem = nil
        shared.logged = [:]
      }
      return shared.problem != nil
    }
    if recovered { logger.notice("Saving works again.") }
  }

  /// Runs one save: a failure is recorded (and thrown on), a success clears the problem.
  func checking(_ what: String, _ save: () async throws -> Void) async throws {
    do {
      try await save()
      succeeded()
    } catch {
      failed(what, error)
      throw error
    }
  }
}
