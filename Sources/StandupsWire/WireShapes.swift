import Foundation
import JSONPatch
import StandupsFeatures

// The wire shapes of what changes in a room on almost every action and tick — the last
// activity and the running meeting — built as JSON directly rather than through `Encoder`
// (which costs a keyed container, a box per member and dynamic casts each time). Each one
// is exactly its `Encodable` encoding: `WireShapeTests` compares them.

extension Activity {
  /// `{"by":{"id","name"},"detail","kind","seq"}` (`detail` null when there is none), as
  /// `Encodable` writes it.
  public var wireJSON: JSONValue {
    .object([
      "by": .object(["id": .string(by.id), "name": .string(by.name)]),
      "detail": detail.map(JSONValue.string) ?? .null,
      "kind": .string(kind.rawValue), "seq": .int(seq),
    ])
  }
}

extension RecordMeeting.State {
  /// What the page shows of a meeting, as `encode(to:)` writes it.
  public var wireJSON: JSONValue {
    var fields: [String: JSONValue] = [:]
    fields.reserveCapacity(8)
    forEachWireField { fields[$0] = $1 }
    return .object(fields)
  }

  /// Each field of `wireJSON`, in the order of their keys (as `JSONPatch.diff` goes through
  /// them): a tick compares these with the last version's without building the object. With
  /// `id` false, all but the meeting's id (a comparison with the same meeting's: it never
  /// changes, and its string is not built on every tick).
  public func forEachWireField(
    id includesID: Bool = true, _ body: (_ key: String, _ value: JSONValue) -> Void
  ) {
    body("alert", alert.map { .string($0.rawValue) } ?? .null)
    if includesID { body("id", .string(id.uuidString)) }
    body("isPaused", .bool(isPaused))
    body("pausedBecause", pausedBecause.map { .string($0.rawValue) } ?? .null)
    body("secondsElapsed", .int(secondsElapsed))
    body("secondsPerSpeaker", .int(secondsPerSpeaker))
    body("speakerIndex", .int(speakerIndex))
    body("transcript", .string(transcript))
  }
}
