import Logging
import Synchronization

/// What a logger said, line by line, for tests that check what is logged (and how often).
public final class LogLines: Sendable {
  private let lines = Mutex<[String]>([])

  public init() {}

  /// A logger whose every message lands here.
  public var logger: Logger {
    Logger(label: "test") { _ in Handler(lines: self) }
  }

  public var all: [String] { lines.withLock { $0 } }

  fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

  private struct Handler: LogHandler {
    let lines: LogLines
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(
      level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
      file: String, function: String, line: UInt
    ) {
      lines.append(message.description)
    }
  }
}
