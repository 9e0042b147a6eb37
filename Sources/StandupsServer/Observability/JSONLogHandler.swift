import Foundation
import JSONPatch
import Logging
import Synchronization

/// Structured logs (`--log-format json`): one JSON object per line on standard error, for a
/// log collector — `{"time":"…","level":"error","label":"standups","source":"StandupsServer",
/// "message":"…","metadata":{…}}`.
public struct JSONLogHandler: LogHandler {
  public var logLevel: Logger.Level = .info
  public var metadata: Logger.Metadata = [:]
  public var metadataProvider: Logger.MetadataProvider?
  private let label: String
  private let write: @Sendable (String) -> Void

  /// - Parameter write: where each line goes (standard error by default; tests capture it).
  public init(label: String, write: (@Sendable (String) -> Void)? = nil) {
    self.label = label
    self.write = write ?? Self.standardError
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    var merged = metadata
    if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
    if let extra = event.metadata { merged.merge(extra) { $1 } }
    var line: [String: JSONValue] = [
      "time": .string(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date())),
      "level": .string(event.level.rawValue),
      "label": .string(label),
      "source": .string(event.source),
      "message": .string(event.message.description),
    ]
    if let error = event.error { line["error"] = .string("\(error)") }
    if !merged.isEmpty { line["metadata"] = .object(merged.mapValues(Self.json)) }
    write(JSONValue.object(line).encodedString + "\n")
  }

  private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
    switch value {
    case .string(let text): .string(text)
    case .stringConvertible(let value): .string(value.description)
    case .array(let values): .array(values.map(json))
    case .dictionary(let values): .object(values.mapValues(json))
    }
  }

  private static let lock = Mutex(())

  private static let standardError: @Sendable (String) -> Void = { line in
    // NB: one write per line, under a lock: lines from many threads never interleave.
    lock.withLock { _ in FileHandle.standardError.write(Data(line.utf8)) }
  }
}
