import CLibWebSockets
import Foundation
import Logging
import Synchronization

/// Routes libwebsockets' own log lines into swift-log, at most `linesPerWindow` every
/// `window`: a failure lws retries in a loop (an `accept` without a descriptor, say) would
/// otherwise write as fast as the disk takes it. The lines left out are counted, and said.
enum LWSLog {
  static let linesPerWindow = 20
  static let window = Duration.seconds(10)

  private struct State {
    var logger: Logger?
    var windowStart = ContinuousClock.now
    var lines = 0
    var leftOut = 0
  }
  private static let state = Mutex(State())

  /// Installs the emitter once per process; later calls only swap the logger.
  static func install(logger newLogger: Logger) {
    let first = state.withLock { state -> Bool in
      defer { state.logger = newLogger }
      return state.logger == nil
    }
    guard first else { return }
    let levels = Int32(LLL_ERR | LLL_WARN)
    lws_set_log_level(levels) { level, line in
      guard let line else { return }
      LWSLog.log(String(cString: line), error: level & Int32(LLL_ERR) != 0)
    }
  }

  static func log(_ line: String, error: Bool, now: ContinuousClock.Instant = .now) {
    let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
    state.withLock { state in
      if now - state.windowStart >= window {
        if state.leftOut > 0 {
          state.logger?.error(
            "lws: \(state.leftOut) more lines were not logged (more than \(linesPerWindow) in \(window))."
          )
        }
        state.windowStart = now
        state.lines = 0
        state.leftOut = 0
      }
      // NB: only lines the logger shows count (lws's warnings are debug lines here).
      guard let logger = state.logger, logger.logLevel <= (error ? .error : .debug) else { return }
      guard state.lines < linesPerWindow else {
        state.leftOut += 1
        return
      }
      state.lines += 1
      if error {
        logger.error("lws: \(text)")
      } else {
        logger.debug("lws: \(text)")
      }
    }
  }
}
