// Frames, one per line, read the way the server reads them: each is parsed or refused with a
// message, from a person or from a bot whose scope it must respect. The actions that decode
// are reduced in order on a room (with no meeting, with a meeting running, with the edit form
// open) and on the lobby, so that sequences (edit the title, then save) are explored. What a
// reducer accepts leaves a state that encodes, and a standup whose title and names keep the
// rules a person is held to. Built by `make fuzz` (STANDUPS_FUZZ=1 in Package.swift).
import Dependencies
import Foundation
import FuzzDriver
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import StandupsWire
import StoreRuntime
import WebSocketTransport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let lines = UnsafeBufferPointer(start: data, count: size).split(separator: 0x0A).prefix(8)
  let messages = lines.enumerated().compactMap { index, line in
    read(Array(line)).map { (message: $0, sender: senders[index % senders.count]) }
  }
  guard !messages.isEmpty else { return 0 }
  withDependencies {
    $0.uuid = .incrementing
    $0.date = .constant(Date(timeIntervalSince1970: 1_800_000_000))
  } operation: {
    for start in rooms {
      var state = start
      for (message, sender) in messages { reduceRoom(&state, message, from: sender) }
    }
    var state = lobbyState
    for (message, sender) in messages { reduceLobby(&state, message, from: sender) }
  }
  return 0
}

/// The frame as a message, or nil if it is refused (with a message, as it must be).
private func read(_ bytes: [UInt8]) -> ClientMessage? {
  do {
    let message = try ClientMessage.parse(.text(bytes))
    precondition((message.ref?.count ?? 0) <= 64, "A message keeps a long ref")
    return message.history == nil ? message : nil
  } catch {
    precondition(!error.error.message.isEmpty, "A refusal without a message")
    precondition((error.ref?.count ?? 0) <= 64, "A refusal echoes a long ref")
    return nil
  }
}

private func reduceRoom(_ state: inout Room.State, _ message: ClientMessage, from sender: Sender) {
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
  var next = state
  let effect = room.reduce(
    into: &next, action: .acted(by: Actor(id: sender.participantID, name: sender.author), action))
  guard effect.rejection == nil else { return }
  check(next.standup)
  precondition(
    (try? JSONValue(encoding: next)) != nil, "An accepted action left a room that does not encode")
  state = next
}

private func reduceLobby(_ state: inout Lobby.State, _ message: ClientMessage, from sender: Sender)
{
  guard
    let action = try? ActionDecoding.lobbyAction(
      message.action, type: message.actionType, sender: sender)
  else { return }
  var next = state
  guard lobby.reduce(into: &next, action: action).rejection == nil else { return }
  for standup in next.standups { check(standup) }
  precondition(
    (try? JSONValue(encoding: next)) != nil, "An accepted action left a lobby that does not encode")
  state = next
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

private let standup = Standup(
  id: UUID(0), attendees: [Attendee(id: UUID(1), name: "Ana"), Attendee(id: UUID(2), name: "Ben")],
  duration: .seconds(300), theme: .sky, title: "Design")

/// A room with everyone in it: as it is, with a meeting running, with the edit form open.
private let rooms: [Room.State] = withDependencies {
  $0.uuid = .incrementing
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
