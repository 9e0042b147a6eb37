import Foundation
import IdentifiedCollections
import JSONPatch
import Logging
import RoomRuntime
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Synchronization
import WebSocketTransport

/// One standup's room.
struct StandupRoomFeature: RoomFeature {
  typealias R = Room
  let standupID: UUID
  let storage: StorageClient
  let lobby: LobbyNotifier
  let catalog: StandupCatalog
  let health: StorageHealth
  let heartbeat: MeetingHeartbeat
  /// What other nodes said of their rooms (empty on a single server).
  let remoteRooms: RemoteRooms
  /// In a cluster, a room goes as soon as nobody is in it, meeting or not: what must survive
  /// is in the database, and the room's lock must be free for the node people go to next.
  var releasesWhenEmpty = false
  /// Set while the standup's last save failed: a meeting that ended into it (saved in the
  /// room, not on disk) keeps its checkpoint, so that it comes back rather than being lost.
  let standupUnsaved = Flag()

  var roomName: String { standupID.uuidString }

  func joined(_ sender: Sender) -> Room.Action? { .participantJoined(Self.participant(sender)) }
  func left(_ participantID: String) -> Room.Action? { .participantLeft(participantID) }
  func replaced(_ participantID: String, by sender: Sender) -> Room.Action? {
    .participantReplaced(participantID, by: Self.participant(sender))
  }
  static func participant(_ sender: Sender) -> Participant {
    Participant(
      id: sender.participantID, name: sender.name, person: sender.person, isBot: sender.isBot)
  }
  func moving() -> Room.Action? { .roomMoving }

  /// A deletion waiting for its undo window is carried out: closed under it, the room would
  /// forget a deletion it acknowledged and its people were told of (the standup would stay).
  /// Undo goes with the room. (A drain lets the windows it finds end first; this is for one
  /// confirmed after, and for a room moving to another node.)
  func stopping(_ state: Room.State) -> Room.Action? {
    guard state.deletionIsPending, let undo = state.undo else { return nil }
    return .undoWindowEnded(seq: undo.activity.seq)
  }

  /// The lobby shows nobody here any more (the room restarts or moves: its people come back
  /// through a join, here or on another node), and a meeting as it opens again: paused —
  /// unless another node has said it serves the room meanwhile (its word is the truth then).
  func closingEveryone(_ state: Room.State, work: inout RoomWork) {
    // NB: an empty room too: a meeting a bot started runs in it (the lobby shows it running,
    // and it opens again paused), or the last leave's word may not have gone out (its change
    // could not be published).
    let left = Self.left(state)
    work.enqueue { [lobby, standupID, remoteRooms] in
      guard !remoteRooms.haveWord(about: standupID) else { return }
      await lobby.send(.roomActivityChanged(standupID, left))
    }
  }

  /// What the lobby shows of a room nobody is in: its meeting, paused, if it has one.
  static func left(_ state: Room.State) -> Lobby.Live? {
    state.meeting == nil
      ? nil : Lobby.Live(participants: 0, meetingRunning: true, meetingPaused: true)
  }

  func decode(_ message: ClientMessage, sender: Sender) throws(WireError) -> Room.Action {
    .acted(
      by: Actor(id: sender.participantID, name: sender.author),
      try ActionDecoding.roomAction(message.action, type: message.actionType, sender: sender))
  }

  func stateDidChange(
    from old: Room.State, to new: Room.State, after action: Room.Action, work: inout RoomWork
  ) {
    if new.isDeleted && !old.isDeleted {
      // NB: the last one out can be what carries a deletion out: the lobby hears they left
      // first, or it would show them in the room for good when storage refuses the deletion
      // (the standup stays; the rollback changes nobody's presence).
      tellTheLobby(from: old, to: new, work: &work)
      work.enqueue { [storage, health, lobby, catalog, standupID] in
        try await health.checking("Deleting a standup") { try await storage.delete(standupID) }
        catalog.remove(standupID)
        await lobby.send(.standupDeleted(standupID))
      }
      return
    }
    // NB: what is typed in the edit form is saved too (its draft), so that nothing typed and
    // acknowledged is lost. Saving the standup forgets its draft in the same transaction, so
    // a form that closed with a save is gone exactly when the standup is saved.
    let form = new.editForm
    // NB: compared once: a tick changes neither, and runs this for every room every second.
    let standupChanged = old.standup != new.standup
    // NB: the standup changes under an open form only when a refused save of the form puts
    // both back: the standup is then as saved already, and only the draft is written again
    // (saving the standup would delete the draft, and a second write could fail after it).
    if standupChanged && new.standup.differsOnlyInNotes(from: old.standup) {
      // A note for a meeting that had ended: that meeting alone (a draft open stays saved).
      // If the standup's last save failed (a meeting that ended into it is not on disk), the
      // whole standup is saved instead, an open form's draft kept in the same write.
      let standup = new.standup
      let draft = form?.savedDraft
      let changed = standup.meetings.filter { old.standup.meetings[id: $0.id] != $0 }
      work.enqueue { [self] in
        guard !standupUnsaved.value else { return try await save(standup, keeping: draft) }
        for meeting in changed {
          try await health.checking("Saving a meeting's notes") {
            try await storage.saveMeetingNotes(standupID, meeting)
          }
        }
        // NB: the room opens again from the catalog (one node): with the note.
        catalog.update(standup)
      }
    } else if standupChanged && form == nil {
      let standup = new.standup
      work.enqueue { [self] in try await save(standup) }
    } else if standupChanged || old.editForm != form {
      let draft = form?.savedDraft
      let standup = new.standup
      work.enqueue { [self] in
        // NB: while the standup's last save failed (its time up), the meeting that ended into
        // it is on disk only as its checkpoint, which a room opening again brings back in
        // place of the form (and the meeting's save then deletes the draft): the standup goes
        // with the draft. (A standup put back by a refused save is as saved: the draft alone.)
        if standupUnsaved.value, !standupChanged, let draft {
          return try await save(standup, keeping: draft)
        }
        try await health.checking("Saving a draft") {
          try await storage.saveDraft(standupID, draft)
        }
      }
    }
    if let meeting = new.meeting, meeting.secondsElapsed != old.meeting?.secondsElapsed {
      heartbeat.note(standupID, meeting)
    }
    if Self.checkpointMoment(old.meeting) != Self.checkpointMoment(new.meeting) {
      let checkpoint = new.meeting.map { $0.checkpoint(standupID: standupID) }
      // NB: a meeting that ended by being saved (Save & End, or its time up) is in the
      // standup; one discarded is not, and goes.
      let endedIntoStandup =
        checkpoint == nil && old.meeting.map { new.standup.meetings[id: $0.id] != nil } == true
      // NB: one checkpoint per standup: while the standup's last save failed, the one saved
      // holds the meeting that ended into it, and a new meeting's would take its place. The
      // standup (with that meeting) is saved first, or the new meeting does not start.
      let standup = new.standup
      work.enqueue { [self] in
        if endedIntoStandup && standupUnsaved.value { return }
        if checkpoint != nil && standupUnsaved.value { try await save(standup) }
        try await health.checking("Saving a meeting's progress") {
          try await storage.saveCheckpoint(standupID, checkpoint)
        }
      }
    }
    tellTheLobby(from: old, to: new, work: &work)
  }

  /// Tells the lobby who is in the room and how its meeting goes, when that changed.
  private func tellTheLobby(from old: Room.State, to new: Room.State, work: inout RoomWork) {
    // NB: a tick changes neither who is in the room nor whether a meeting runs: the lobby's
    // summary is built only when one of those changed (arrays that share storage compare
    // at once).
    guard
      new.participants != old.participants || (new.meeting == nil) != (old.meeting == nil)
        || new.meeting?.isPaused != old.meeting?.isPaused
        || (new.meeting?.alert == nil) != (old.meeting?.alert == nil)
    else { return }
    let live = Self.live(new)
    if live != Self.live(old) {
      work.enqueue { [lobby, standupID] in await lobby.send(.roomActivityChanged(standupID, live)) }
    }
  }

  /// Saves the standup (and with it, the meetings that ended into it; its saved draft goes,
  /// or is `draft` for a form still open), then tells the lobby. A failure is remembered until
  /// a save works.
  private func save(_ standup: Standup, keeping draft: StandupDraft? = nil) async throws {
    do {
      try await health.checking("Saving a standup") {
        if let draft {
          try await storage.saveKeepingDraft(standup, draft)
        } else {
          try await storage.save(standup)
        }
      }
    } catch {
      standupUnsaved.set(true)
      throw error
    }
    standupUnsaved.set(false)
    catalog.update(standup)
    await lobby.send(.standupChanged(standup))
  }

  func rollback(to before: Room.State, from after: Room.State) -> Room.Action {
    .saveFailed(before: before, after: after)
  }

  func history(_ page: ClientMessage.HistoryPage) async throws -> MeetingPage? {
    try await storage.loadMeetings(standupID, page.offset, page.limit)
  }

  /// A room with a meeting or an undo window stays (its meeting ticks again once resumed, its
  /// undo can still be used); an open form does not keep it: its draft is saved, and the
  /// room opens with it again. A cluster's room goes once empty: its meeting is saved too,
  /// and opens again on the next node — but for a meeting that runs with nobody in the room
  /// (a bot started it over HTTP), which keeps running there until someone ends or pauses it,
  /// as on a single server. An alert (a bot asked to delete, or to end a paused meeting, over
  /// HTTP) keeps the room everywhere: it is not saved, and the bot's next request answers it.
  func isIdle(_ state: Room.State) -> Bool {
    if case .alert = state.destination { return false }
    if state.meeting?.alert != nil { return false }
    if let meeting = state.meeting, !meeting.isPaused { return false }
    return releasesWhenEmpty || (state.meeting == nil && state.undo == nil)
  }

  func closing(_ state: Room.State) -> (code: CloseCode, reason: String)? {
    state.isDeleted ? (.gone, "This standup was deleted.") : nil
  }

  func encode(
    _ state: Room.State, previous: Room.State, json: inout JSONValue, after action: Room.Action?
  ) throws -> [PatchOperation] {
    try RoomStateEncoder().encode(state, previous: previous, json: &json)
  }

  /// What a checkpoint records a change of: a meeting starting or ending, a new speaker, a
  /// note, a pause (not every tick).
  struct CheckpointMoment: Equatable {
    var meetingID: UUID
    var speakerIndex: Int
    var transcript: String
    var isPaused: Bool
    var present: [String]
    var presentBy: [String: Set<String>]
  }

  static func checkpointMoment(_ meeting: RecordMeeting.State?) -> CheckpointMoment? {
    meeting.map {
      CheckpointMoment(
        meetingID: $0.id, speakerIndex: $0.speakerIndex, transcript: $0.transcript,
        isPaused: $0.isPaused, present: $0.present, presentBy: $0.presentBy)
    }
  }

  /// The room as saved: its standup, with the meeting that was running (back paused) or the
  /// edit form that was open (with its draft). What every room opens with, on any node.
  static func savedState(of standup: Standup, storage: StorageClient) async throws -> Room.State {
    var state = Room.State(standup: standup)
    if let checkpoint = try await storage.loadCheckpoint(standup.id) {
      state.meeting = RecordMeeting.State(restoring: checkpoint, standup: standup)
    } else if let draft = try await storage.loadDraft(standup.id) {
      state.destination = .edit(StandupForm.State(restoring: draft, standup: standup))
    }
    return state
  }

  /// A room whose saved state could not be read: people reconnect (1012) and try again.
  static let unreadable = RoomChannel<Self>.Opening.Outcome.refused(
    code: .serviceRestart, reason: "The standup could not be read: reconnecting.",
    error: WireError(.storageUnavailable, "The standup could not be read. Try again."))

  static func live(_ state: Room.State) -> Lobby.Live? {
    state.participants.isEmpty && state.meeting == nil
      ? nil
      : Lobby.Live(
        participants: state.participants.count, meetingRunning: state.meeting != nil,
        // NB: its clock stands still while the question whether to end it is open, too.
        meetingPaused: state.meeting.map { $0.isPaused || $0.alert != nil } == true,
        people: presentPeople(state.participants))
  }

  /// Who is in the room, each once: a sign-in's tabs are one person, and two people who
  /// chose one name are two (a name without a session, once). A bot's name says so, as its
  /// notes are signed: "CI (bot)". People by name, then bots: an order nobody's reconnecting
  /// changes, so that a lobby card names the same people, and sends no patch, when someone's
  /// connection drops and comes back.
  static func presentPeople(_ participants: IdentifiedArrayOf<Participant>) -> [String] {
    var seen: Set<String> = []
    let present = participants.filter { person in
      // NB: a bot and a person of one name are two (the bot's is shown as a bot's).
      seen.insert(person.person.map { "person:\($0)" } ?? "name:\(person.isBot):\(person.name)")
        .inserted
    }
    return present.sorted { a, b in
      if a.isBot != b.isBot { return b.isBot }
      let order = a.name.compare(b.name, options: [.caseInsensitive, .diacriticInsensitive])
      return order == .orderedSame ? a.name < b.name : order == .orderedAscending
    }
    .map(\.shownName)
  }
}

/// The lobby: every standup, live.
struct LobbyFeature: RoomFeature {
  typealias R = Lobby
  let storage: StorageClient
  let catalog: StandupCatalog
  let health: StorageHealth
  /// Tells the other nodes of a cluster about the standups this lobby adds.
  let notifier: LobbyNotifier
  /// New standups per address in the last minute.
  let creations: FailedAttempts

  var roomName: String { "lobby" }

  func joined(_ sender: Sender) -> Lobby.Action? { nil }
  func left(_ participantID: String) -> Lobby.Action? { nil }

  func decode(_ message: ClientMessage, sender: Sender) throws(WireError) -> Lobby.Action {
    let action = try ActionDecoding.lobbyAction(
      message.action, type: message.actionType, sender: sender)
    if case .addStandupSubmitted = action {
      if let wait = creations.retryAfter(sender.address) {
        throw WireError(
          .rateLimited,
          "Too many new standups at once: at most \(creations.limit) a minute from one network, "
            + "everyone on it together (refused tries count too). Try again in \(wait) s.",
          retryAfter: wait)
      }
      creations.recordFailure(sender.address)
    }
    return action
  }

  func stateDidChange(
    from old: Lobby.State, to new: Lobby.State, after action: Lobby.Action, work: inout RoomWork
  ) {
    // NB: only what this lobby makes is saved here. The rest is saved already, by the room
    // that changed or deleted its standup, or by the node that made one: the lobby hears of it
    // to show it (writing it again would undo what its room saved since, and drop its draft).
    // Rooms keep the catalog up to date as they save; here only what the lobby adds or takes
    // back (a refused save) changes it.
    switch action {
    case .addStandupSubmitted:
      for standup in new.standups where old.standups[id: standup.id] == nil {
        catalog.made(standup)
        work.enqueue { [storage, health, notifier, catalog] in
          try await health.checking("Saving a new standup") { try await storage.save(standup) }
          catalog.saved(standup.id)
          notifier.tellOthers(.standupChanged(standup))
        }
      }
    case .saveFailed(let added):
      for id in added { catalog.unmade(id) }
    case .standupChanged, .standupDeleted, .roomActivityChanged:
      break
    }
  }

  /// A standup made over HTTP is answered with itself, as the lobby lists it: its `id` names
  /// its room.
  func answer(to action: Lobby.Action, before: Lobby.State, after: Lobby.State, json: JSONValue)
    -> [String: JSONValue]
  {
    guard case .addStandupSubmitted = action,
      let made = after.standups.ids.last(where: { before.standups[id: $0] == nil }),
      let listed = json["standups"]?.arrayValue?.last(where: {
        $0["id"]?.stringValue.flatMap(UUID.init(uuidString:)) == made
      })
    else { return [:] }
    return ["standup": listed]
  }

  func rollback(to before: Lobby.State, from after: Lobby.State) -> Lobby.Action {
    .saveFailed(added: after.standups.ids.filter { before.standups[id: $0] == nil })
  }

  func isIdle(_ state: Lobby.State) -> Bool { false }

  func encode(
    _ state: Lobby.State, previous: Lobby.State, json: inout JSONValue, after action: Lobby.Action?
  ) throws -> [PatchOperation] {
    try LobbyStateEncoder().encode(state, previous: previous, json: &json, after: action)
  }

  func closing(_ state: Lobby.State) -> (code: CloseCode, reason: String)? { nil }
}

/// A Boolean shared by a feature's pieces of work.
final class Flag: Sendable {
  private let state = Mutex(false)
  var value: Bool { state.withLock { $0 } }
  func set(_ value: Bool) { state.withLock { $0 = value } }
}
