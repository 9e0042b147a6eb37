// Frames, one per line, read the way the server reads them: each is parsed or refused with a
// message, from a person or from a bot whose scope it must respect. The actions that decode
// are reduced in order on a room (with no meeting, with a meeting running, with the edit form
// open) and on the lobby, so that sequences (edit the title, then save) are explored; lines
// like `{"lobby":"live","index":0,"people":2}` (or "changed", "deleted") are what rooms tell
// the lobby. What a reducer accepts leaves a state whose title and names keep the rules a
// person is held to, and the room's encoder turns the last version's JSON into the new
// state's with a patch that rebuilds it exactly, as a room publishes. Built by `make fuzz`
// (STANDUPS_FUZZ=1 in Package.swift).
import Dependencies
import Foundation
import FuzzDriver
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Synchronization
import WebSocketTransport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let lines = UnsafeBufferPointer(start: data, count: size).split(separator: 0x0A).prefix(8)
  let inputs = lines.enumerated().compactMap { index, line in
    read(Array(line), from: senders[index % senders.count])
  }
  guard !inputs.isEmpty else { return 0 }
  withDependencies {
    $0.uuid = .incrementing
    $0.date = .constant(Date(timeIntervalSince1970: 1_800_000_000))
  } operation: {
    for start in rooms {
      var published = Published(state: start)
      for case .frame(let message, let sender) in inputs {
        reduceRoom(&published, message, from: sender)
      }
    }
    var published = Published(state: lobbyState)
    for input in inputs { reduceLobby(&published, input) }
  }
  return 0
}

/// A line of input: a frame from a sender, or what a room tells the lobby.
private enum Input {
  case frame(ClientMessage, Sender)
  case room(kind: String, index: Int, number: Int)
}

/// A state and its last version's JSON, as a room keeps them.
private struct Published<State: Encodable> {
  var state: State
  var json: JSONValue
  init(state: State) {
    self.state = state
    guard let json = try? JSONValue(encoding: state) else {
      fatalError("A start that does not encode")
    }
    self.json = json
  }

  /// Moves to `next` through `encode`, as a room publishes, and checks the patch.
  mutating func publish(
    _ next: State, _ encode: (State, State, inout JSONValue) throws -> [PatchOperation]
  ) {
    let before = json
    guard let patch = try? encode(next, state, &json) else {
      fatalError("An accepted action left a state that does not encode")
    }
    precondition(json == (try? JSONValue(encoding: next)), "The encoding is not the whole one")
    precondition((try? JSONPatch.apply(patch, to: before)) == json, "The patch does not rebuild it")
    state = next
  }
}

/// The line as an input, or nil if it is refused (with a message, as it must be).
private func read(_ bytes: [UInt8], from sender: Sender) -> Input? {
  if case .object(let members)? = try? JSONValue(parsing: bytes),
    let kind = members["lobby"]?.stringValue
  {
    return .room(
      kind: kind, index: members["index"]?.intValue ?? 0, number: members["people"]?.intValue ?? 0)
  }
  do {
    let message = try ClientMessage.parse(.text(bytes))
    precondition((message.ref?.count ?? 0) <= 64, "A message keeps a long ref")
    return message.history == nil ? .frame(message, sender) : nil
  } catch {
    precondition(!error.error.message.isEmpty, "A refusal without a message")
    precondition((error.ref?.count ?? 0) <= 64, "A refusal echoes a long ref")
    return nil
  }
}

private func reduceRoom(
  _ published: inout Published<Room.State>, _ message: ClientMessage, from sender: Sender
) {
  let action: Room.Action
  do {
    action = try ActionDecoding.roomAction(message.action, type: message.actionType, sender: sender)
  } catch {
    precondition(!error.message.isEmpty, "A refused action without a message")
    return
  }
  if let scope = sender.scope {
    precondition(
      BotScope.needed(forRoomAction: message.actionType) <= scope,
      "\(message.actionType) got past a bot's scope")
  }
  // NB: as the store does: a rejected action leaves the state as it was.
  var next = published.state
  let effect = room.reduce(
    into: &next, action: .acted(by: Actor(id: sender.participantID, name: sender.author), action))
  guard effect.rejection == nil else { return }
  check(next.standup)
  published.publish(next) { try RoomStateEncoder().encode($0, previous: $1, json: &$2) }
}

private func reduceLobby(_ published: inout Published<Lobby.State>, _ input: Input) {
  let action: Lobby.Action
  switch input {
  case .frame(let message, let sender):
    guard
      let decoded = try? ActionDecoding.lobbyAction(
        message.action, type: message.actionType, sender: sender)
    else { return }
    action = decoded
  case .room(let kind, let index, let number):
    let standups = published.state.standups
    // NB: an index past the end names a room the lobby does not list.
    let id = standups.indices.contains(index) ? standups[index].id : UUID(index)
    switch kind {
    case "live":
      action = .roomActivityChanged(
        id,
        number < 0
          ? nil
          : Lobby.Live(
            participants: number, meetingRunning: number.isMultiple(of: 2),
            people: (0..<min(number, 5)).map { "P\($0)" }))
    case "changed":
      guard var standup = standups[id: id] else { return }
      standup.title = "Renamed \(number)"
      action = .standupChanged(standup)
    case "deleted":
      action = .standupDeleted(id)
    default:
      return
    }
  }
  var next = published.state
  guard lobby.reduce(into: &next, action: action).rejection == nil else { return }
  for standup in next.standups { check(standup) }
  published.publish(next) {
    try LobbyStateEncoder().encode($0, previous: $1, json: &$2, after: action)
  }
}

/// What every saved standup keeps, whoever changed it.
private func check(_ standup: Standup) {
  precondition(
    StandupRules.validateTitle(standup.title) == nil, "Title \(standup.title.debugDescription)")
  for attendee in standup.attendees {
    precondition(
      StandupRules.validateName(attendee.name) == nil, "Name \(attendee.name.debugDescription)")
  }
  precondition(
    StandupRules.attendeeCount.contains(standup.attendees.count),
    "\(standup.attendees.count) attendees")
}

private let senders = [
  Sender(participantID: "p1", name: "Ana", isBot: false),
  Sender(participantID: "b1", name: "Deploy", isBot: true, scope: .notes),
  Sender(participantID: "b2", name: "Driver", isBot: true, scope: .drive),
]

private let room = Room().core
private let lobby = Lobby().core

/// NB: ids far from those an input's `.incrementing` uuids take (0, 1, 2, …), so that nothing
/// an action adds collides with them.
private let standup = Standup(
  id: UUID(1000),
  attendees: [Attendee(id: UUID(1001), name: "Ana"), Attendee(id: UUID(1002), name: "Ben")],
  duration: .seconds(300), theme: .sky, title: "Design")

/// A room with everyone in it: as it is, with a meeting running, with the edit form open.
private let rooms: [Room.State] = withDependencies {
  let counter = Mutex(2000)
  $0.uuid = UUIDGenerator {
    counter.withLock { count in
      count += 1
      return UUID(count)
    }
  }
  $0.date = .constant(Date(timeIntervalSince1970: 1_800_000_000))
} operation: {
  var idle = Room.State(standup: standup)
  for sender in senders {
    _ = room.reduce(
      into: &idle,
      action: .participantJoined(
        Participant(id: sender.participantID, name: sender.name, isBot: sender.isBot)))
  }
  let ana = Actor(id: "p1", name: "Ana")
  var meeting = idle
  _ = room.reduce(into: &meeting, action: .acted(by: ana, .startMeetingButtonTapped))
  var editing = idle
  _ = room.reduce(into: &editing, action: .acted(by: ana, .editButtonTapped))
  precondition(meeting.meeting != nil && editing.destination != nil)
  return [idle, meeting, editing]
}

private let lobbyState = Lobby.State(standups: [standup])

@_cdecl("wire_fuzz_main")
public func fuzzMain(
  _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
  FuzzDriver.run(argc, argv, fuzz)
}
