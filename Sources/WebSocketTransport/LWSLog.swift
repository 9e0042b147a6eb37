import CLibWebSockets
import Foundation
import Logging
import Synchronization

/// Routes libwebsockets' own log lines into swift-log.
enum LWSLog {
  private static let logger = Mutex<Logger?>(nil)

  /// Installs the emitter once per process; later calls only swap the logger.
  static func install(logger newLogger: Logger) {
    let first = logger.withLock { current -> Bool in
      defer { current = newLogger }
      return current == nil
    }
    guard first else { return }
    let levels = Int32(LLL_ERR | LLL_WARN)
    lws_set_log_level(levels) { level, line in
      guard let line else { return }
      let text = String(cString: line).trimmingCharacters(in: .whitespacesAndNewlines)
      LWSLog.logger.withLock { logger in
        if level & Int32(LLL_ERR) != 0 {
          logger?.error("lws: \(text)")
        } else {
          logger?.debug("lws: \(text)")
        }
      }
    }
  }
}
