import JSONPatch
import StandupsFeatures
import StandupsWire
import StoreRuntime
import WebSocketTransport

/// What the runtime needs to know of a feature to run it as a room: how the wire's messages
/// become its actions, what a change must save, and how its state is encoded.
public protocol RoomFeature: Sendable {
  associatedtype R: Reducer where R.State: Encodable & Equatable
  /// The `room` field of `welcome`: a standup id, or `lobby`.
  var roomName: String { get }
  /// What a peer arriving (`joined`) or leaving does to the state, if anything.
  func joined(_ sender: Sender) -> R.Action?
  func left(_ participantID: String) -> R.Action?
  /// A peer taking the place of another (`?replaces=`) in one change, if the feature has
  /// one (nil: it joins, then the other leaves).
  func replaced(_ participantID: String, by sender: Sender) -> R.Action?
  /// What the room reduces before it is handed on to another server, if anything.
  func moving() -> R.Action?
  /// What the room must carry out before it closes under its people (it restarts, moves or
  /// drains), or it would be forgotten: what they were told will happen, if anything.
  func stopping(_ state: R.State) -> R.Action?
  /// The room closes everyone at once (it restarts, or moves to another server) without
  /// reducing their leaving: what `state` showed of them is over. Queue what that needs on
  /// `work` (it runs after the work changes queued before). Called before they are closed.
  func closingEveryone(_ state: R.State, work: inout RoomWork)
  func decode(_ message: ClientMessage, sender: Sender) throws(WireError) -> R.Action
  /// Called after each change (`action` made it), in order: queue saves and notifications on
  /// `work` (they run in order, off the room's shard). A save that fails throws, so that the
  /// action that caused it is refused and rolled back.
  func stateDidChange(
    from old: R.State, to new: R.State, after action: R.Action, work: inout RoomWork)
  /// What undoes what an action changed that could not be saved (`before`: the state before
  /// it; `after`: right after it, before anything else changed the state), keeping what a
  /// person typed.
  func rollback(to before: R.State, from after: R.State) -> R.Action
  /// What the answer to an action (its ack, or its HTTP answer) says besides its version,
  /// read the moment it was reduced: `json` is `after`'s encoding. Nothing, unless a feature
  /// says (the lobby names the standup an action made).
  func answer(to action: R.Action, before: R.State, after: R.State, json: JSONValue)
    -> [String: JSONValue]
  /// A page of saved history, for rooms that have one (nil: this room has none).
  func history(_ page: ClientMessage.HistoryPage) async throws -> MeetingPage?
  /// Whether the room may be released once empty (nothing left that must survive).
  func isIdle(_ state: R.State) -> Bool
  /// Set when the room must close everyone (its standup was deleted).
  func closing(_ state: R.State) -> (code: CloseCode, reason: String)?
  /// Turns `json`, the encoding of `previous`, into the encoding of `state`, and returns the
  /// patch between them; leaves `json` untouched if it throws (`StateEncoding`). `action` is
  /// what turned `previous` into `state`, when one action did.
  func encode(
    _ state: R.State, previous: R.State, json: inout JSONValue, after action: R.Action?
  ) throws -> [PatchOperation]
}

extension RoomFeature {
  public func replaced(_ participantID: String, by sender: Sender) -> R.Action? { nil }
  /// Nothing to do before the room is handed on.
  public func moving() -> R.Action? { nil }
  /// Nothing to carry out before the room closes.
  public func stopping(_ state: R.State) -> R.Action? { nil }
  public func closingEveryone(_ state: R.State, work: inout RoomWork) {}

  public func history(_ page: ClientMessage.HistoryPage) async throws -> MeetingPage? { nil }

  public func answer(to action: R.Action, before: R.State, after: R.State, json: JSONValue)
    -> [String: JSONValue]
  { [:] }

  /// The whole state, compared with the last version's (a feature with an encoder of its own
  /// that goes by the action costs less per change).
  public func encode(
    _ state: R.State, previous: R.State, json: inout JSONValue, after action: R.Action?
  ) throws -> [PatchOperation] {
    try StateEncoding.whole(state, json: &json)
  }
}

/// What a change asks a room to do after it (saves, then notices), in order, off the shard.
/// A piece that throws marks the change as not saved: it is refused and rolled back.
public struct RoomWork: Sendable {
  public private(set) var pieces: [@Sendable () async throws -> Void] = []

  public init() {}

  public mutating func enqueue(_ piece: @escaping @Sendable () async throws -> Void) {
    pieces.append(piece)
  }
}
