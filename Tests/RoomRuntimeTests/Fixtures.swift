import CasePaths
import Clocks
import Dependencies
import Fixtures
import Foundation
import JSONPatch
import Logging
import RoomRuntime
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Synchronization
import Testing
import WebSocketTransport

/// A small room: who is in it, a count anyone can raise, a timer anyone can start.
struct Tally: Reducer {
  struct State: Codable, Equatable, Sendable {
    var count = 0
    var people: [String] = []
    var seconds = 0
  }
  @CasePathable
  enum Action: Equatable, Sendable {
    case joined(String)
    case left(String)
    case incrementButtonTapped
    case startButtonTapped
    case tick
    case saveFailed(before: State)
  }
  enum CancelID { case timer }
  @Dependency(\.continuousClock) var clock

  var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .joined(let id):
        state.people.append(id)
        return .none
      case .left(let id):
        state.people.removeAll { $0 == id }
        return .none
      case .incrementButtonTapped:
        guard state.count < 3 else { return .reject(.invalidAction("Three is the most.")) }
        state.count += 1
        return .none
      case .startButtonTapped:
        return .run { [clock] send in
          for await _ in clock.timer(interval: .seconds(1)) { await send(.tick) }
        }
        .cancellable(id: CancelID.timer, cancelInFlight: true)
      case .tick:
        state.seconds += 1
        return .none
      case .saveFailed(let before):
        state.count = before.count
        return .none
      }
    }
  }
}

/// The tally as a room: a count is saved through `save` before it is acknowledged.
struct TallyRoom: RoomFeature {
  typealias R = Tally
  /// Saves a count; throws to refuse it.
  var save: @Sendable (Int) async throws -> Void = { _ in }
  /// When the room has nothing to keep it with nobody in it.
  var idle: @Sendable (Tally.State) -> Bool = { _ in true }
  /// Whether a state can be encoded (one that cannot is never published).
  var encodable: @Sendable (Tally.State) -> Bool = { _ in true }
  /// What the room reduces before it is handed on.
  var movingAction: Tally.Action? = nil
  /// The timer's second at which the room closes everyone (as a deleted standup's does), and
  /// the save each second takes before that close.
  var closesAtSecond: Int? = nil
  var saveSeconds: @Sendable (Int) async throws -> Void = { _ in }

  var roomName: String { "tally" }
  func joined(_ sender: Sender) -> Tally.Action? { .joined(sender.participantID) }
  func left(_ participantID: String) -> Tally.Action? { .left(participantID) }

  func decode(_ message: ClientMessage, sender: Sender) throws(WireError) -> Tally.Action {
    switch message.actionType {
    case "incrementButtonTapped": .incrementButtonTapped
    case "startButtonTapped": .startButtonTapped
    default: throw WireError(.unknownAction, "Unknown action \"\(message.actionType)\".")
    }
  }

  func stateDidChange(
    from old: Tally.State, to new: Tally.State, after action: Tally.Action, work: inout RoomWork
  ) {
    if old.seconds != new.seconds, closesAtSecond != nil {
      work.enqueue { [saveSeconds, seconds = new.seconds] in try await saveSeconds(seconds) }
    }
    guard old.count != new.count else { return }
    work.enqueue { [save, count = new.count] in try await save(count) }
  }

  func rollback(to before: Tally.State, from after: Tally.State) -> Tally.Action {
    .saveFailed(before: before)
  }
  func isIdle(_ state: Tally.State) -> Bool { idle(state) }
  func moving() -> Tally.Action? { movingAction }
  func encode(
    _ state: Tally.State, previous: Tally.State, json: inout JSONValue, after action: Tally.Action?
  ) throws -> [PatchOperation] {
    guard encodable(state) else { throw Unencodable() }
    return try StateEncoding.whole(state, json: &json)
  }
  struct Unencodable: Error {}
  func closing(_ state: Tally.State) -> (code: CloseCode, reason: String)? {
    guard let closesAtSecond, state.seconds >= closesAtSecond else { return nil }
    return (CloseCode(rawValue: 4410), "The tally was deleted.")
  }
}

/// Where a test room's frames go: kept, per connection, as JSON.
final class Recorder: FrameSink {
  private let frames = Mutex<[ConnectionID: [JSONValue]]>([:])
  private let closes = Mutex<[ConnectionID: CloseCode]>([:])

  func queue(_ message: OutboundMessage, to connections: [ConnectionID]) {
    let json = (try? JSONValue(parsing: message.bytes)) ?? .null
    frames.withLock { frames in
      for connection in connections { frames[connection, default: []].append(json) }
    }
  }

  func flush() {}

  func close(_ connection: ConnectionID, code: CloseCode, reason: String) {
    closes.withLock { $0[connection] = code }
  }

  func received(by connection: ConnectionID) -> [JSONValue] {
    frames.withLock { $0[connection] ?? [] }
  }

  func closeCode(of connection: ConnectionID) -> CloseCode? { closes.withLock { $0[connection] } }
}

extension JSONValue {
  var type: String? { self["type"]?.stringValue }
  var version: Int? { self["version"]?.intValue }
}

/// What a room counted (`RoomMetrics`): each action's outcome, each patch's peers.
final class Counts: Sendable {
  private let state = Mutex<(outcomes: [String], patchPeers: [Int])>(([], []))
  var outcomes: [String] { state.withLock { $0.outcomes } }
  var patchPeers: [Int] { state.withLock { $0.patchPeers } }

  var metrics: RoomMetrics {
    RoomMetrics(
      actionAnswered: { outcome in self.state.withLock { $0.outcomes.append(outcome) } },
      patchSent: { bytes, peers in
        precondition(bytes > 0)
        self.state.withLock { $0.patchPeers.append(peers) }
      })
  }
}

/// A boolean a test and a room share.
final class Switch: Sendable {
  private let state: Mutex<Bool>
  init(_ value: Bool) { state = Mutex(value) }
  var isOn: Bool { state.withLock { $0 } }
  func set(_ value: Bool) { state.withLock { $0 = value } }
}

let testLogger = Logger(label: "room-runtime-tests")

/// What a storage that cannot write throws.
struct DiskFull: Error {}
