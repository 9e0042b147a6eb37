import Fixtures
import Foundation
import IdentifiedCollections
import JSONPatch
import RoomRuntime
import StandupsFeatures
import Storage
import Synchronization
import Testing

@testable import StandupsServer

/// The shared edit form's draft, saved like everything else a person typed: refused and put
/// back when it cannot be written, never left behind by what replaced it.
@Suite(.serialized)
struct DraftTests {
  /// In-memory storage whose writes can be made to fail, one kind at a time.
  final class FailingStorage: Sendable {
    let base = StorageClient.inMemory([.design])
    let failDrafts = Mutex(false)
    let failStandups = Mutex(false)
    /// Standup saves asked for, failed ones included.
    let standupSaves = Mutex(0)

    var client: StorageClient {
      var client = base
      client.saveDraft = { [self] id, draft in
        if failDrafts.withLock({ $0 }) { throw StorageError("disk full") }
        try await base.saveDraft(id, draft)
      }
      client.save = { [self] standup in
        standupSaves.withLock { $0 += 1 }
        if failStandups.withLock({ $0 }) { throw StorageError("disk full") }
        try await base.save(standup)
      }
      // NB: one write, the standup's: only failing standups' saves make it fail.
      client.saveKeepingDraft = { [self] standup, draft in
        standupSaves.withLock { $0 += 1 }
        if failStandups.withLock({ $0 }) { throw StorageError("disk full") }
        try await base.saveKeepingDraft(standup, draft)
      }
      return client
    }
  }

  /// The design standup's room without a server: each call hands it a change of its state
  /// and carries out the work the change makes (its saves), failures and all.
  /// Each call says whether every save of the change worked.
  static func changes(savingTo storage: FailingStorage) -> (Room.State, Room.State) async -> Bool {
    let health = StorageHealth(logger: LogLines().logger)
    let feature = StandupRoomFeature(
      standupID: Standup.design.id, storage: storage.client, lobby: LobbyNotifier(),
      catalog: StandupCatalog([.design]), health: health,
      heartbeat: MeetingHeartbeat(storage: storage.client, health: health),
      remoteRooms: RemoteRooms())
    return { old, new in
      var work = RoomWork()
      // NB: which action made the change does not matter to a standup's room.
      feature.stateDidChange(from: old, to: new, after: .roomMoving, work: &work)
      var saved = true
      for piece in work.pieces {
        do { try await piece() } catch { saved = false }
      }
      return saved
    }
  }

  func title(_ client: TestClient) -> JSONValue? {
    client.state?["destination"]?["edit"]?["draft"]?["title"]
  }

  @Test func aDraftChangeThatCannotBeSavedIsRefusedAndPutBack() async throws {
    let storage = FailingStorage()
    let server = try await TestServer.start(storage: storage.client)
    let ana = try await server.room(name: "Ana")
    let id = Standup.design.id
    try await ana.act("editButtonTapped")
    #expect(try await ana.act("edit.binding", ["path": "/title", "value": "One"])["type"] == "ack")
    #expect(try await storage.base.loadDraft(id)?.title == "One")

    storage.failDrafts.withLock { $0 = true }
    let refused = try await ana.act("edit.binding", ["path": "/title", "value": "Two"])
    #expect(refused["code"] == "storage_unavailable")
    _ = try await ana.waitForState { $0["destination"]?["edit"]?["draft"]?["title"] == "One" }
    #expect(try await storage.base.loadDraft(id)?.title == "One")

    // A refused save of the form puts the draft back: the standup is as saved, only the draft
    // is written again (nothing is saved twice, and the draft row stays as it was).
    storage.failDrafts.withLock { $0 = false }
    storage.failStandups.withLock { $0 = true }
    #expect(try await ana.act("saveEditButtonTapped")["code"] == "storage_unavailable")
    _ = try await ana.waitForState { $0["destination"]?["edit"]?["draft"]?["title"] == "One" }
    #expect(storage.standupSaves.withLock { $0 } == 1)
    #expect(try await storage.base.loadDraft(id)?.title == "One")
    storage.failStandups.withLock { $0 = false }

    // Saving the form writes the standup, which forgets the draft in the same write: no
    // second write that could fail after the standup was saved.
    #expect(try await ana.act("saveEditButtonTapped")["type"] == "ack")
    #expect(ana.state?["standup"]?["title"] == "One")
    #expect(try await storage.base.loadStandup(id)?.title == "One")
    #expect(try await storage.base.loadDraft(id) == nil)
    await server.stop()
  }

  /// A meeting whose saving was refused comes back; discarded afterwards, it is gone for
  /// good: its checkpoint does not outlive it (and cannot hide a later draft after a restart).
  @Test func aMeetingDiscardedAfterARefusedSaveLeavesNoCheckpoint() async throws {
    let storage = FailingStorage()
    let server = try await TestServer.start(storage: storage.client)
    let ana = try await server.room(name: "Ana")
    let id = Standup.design.id
    try await ana.act("startMeetingButtonTapped")
    try await ana.act("meeting.noteSubmitted", ["text": "kept until discarded"])
    #expect(try await storage.base.loadCheckpoint(id) != nil)
    try await ana.act("meeting.endMeetingButtonTapped")
    storage.failStandups.withLock { $0 = true }
    let refused = try await ana.act("meeting.alert.saveAndEnd")
    #expect(refused["code"] == "storage_unavailable")
    _ = try await ana.waitForState { $0["meeting"] != .null }
    #expect(try await storage.base.loadCheckpoint(id) != nil)

    #expect(try await ana.act("meeting.alert.discard")["type"] == "ack")
    #expect(try await storage.base.loadCheckpoint(id) == nil)
    storage.failStandups.withLock { $0 = false }
    try await ana.act("editButtonTapped")
    #expect(try await storage.base.loadDraft(id) != nil)
    await server.stop()
  }

  /// A meeting whose time ran out is saved into the standup by the timer (never rolled back).
  /// While that save fails, its checkpoint stays, so that the meeting comes back after a
  /// restart rather than being lost; the next meeting starts only once the standup (with the
  /// ended meeting) is saved, since its checkpoint would take the ended one's place; a meeting
  /// discarded is not kept.
  @Test func aMeetingWhoseTimeRanOutKeepsItsCheckpointWhileItsSaveFails() async throws {
    let storage = FailingStorage()
    let change = Self.changes(savingTo: storage)
    let id = Standup.design.id
    let idle = Room.State(standup: .design)
    var running = idle
    running.meeting = RecordMeeting.State(id: UUID(), standup: .design)
    #expect(await change(idle, running))
    let first = try #require(running.meeting?.id)
    #expect(try await storage.base.loadCheckpoint(id)?.meetingID == first)

    storage.failStandups.withLock { $0 = true }
    var ended = running
    ended.standup.addMeeting(Meeting(id: first, date: Date(), transcript: ""))
    ended.meeting = nil
    #expect(await change(running, ended) == false)
    #expect(try await storage.base.loadCheckpoint(id)?.meetingID == first)

    // The next meeting, while the standup still cannot be saved: refused (the room takes the
    // start back), and the ended meeting's checkpoint stays.
    var next = ended
    next.meeting = RecordMeeting.State(id: UUID(), standup: ended.standup)
    #expect(await change(ended, next) == false)
    #expect(try await storage.base.loadCheckpoint(id)?.meetingID == first)

    // Once saving works, the standup is saved with the ended meeting, then the next one's
    // checkpoint.
    storage.failStandups.withLock { $0 = false }
    #expect(await change(ended, next))
    #expect(try await storage.base.loadStandup(id)?.meetings.ids.contains(first) == true)
    #expect(try await storage.base.loadCheckpoint(id)?.meetingID == next.meeting?.id)

    // Discarded (not in the standup): it goes.
    #expect(await change(next, ended))
    #expect(try await storage.base.loadCheckpoint(id) == nil)
  }

  /// The form opened after a meeting whose time ran out could not be saved: the first
  /// draft written saves the standup with it, so that the room, opening again, brings back
  /// the form as typed (not the ended meeting's checkpoint in its place, whose save would
  /// then delete the draft).
  @Test func aDraftTypedAfterAFailedSaveComesBackWithTheRoom() async throws {
    let storage = FailingStorage()
    let change = Self.changes(savingTo: storage)
    let id = Standup.design.id
    var running = Room.State(standup: .design)
    running.meeting = RecordMeeting.State(id: UUID(), standup: .design)
    #expect(await change(Room.State(standup: .design), running))
    let first = try #require(running.meeting?.id)

    storage.failStandups.withLock { $0 = true }
    var ended = running
    ended.standup.addMeeting(Meeting(id: first, date: Date(), transcript: ""))
    ended.meeting = nil
    #expect(await change(running, ended) == false)
    storage.failStandups.withLock { $0 = false }

    var editing = ended
    var form = StandupForm.State(standup: ended.standup)
    form.title = "Typed"
    editing.destination = .edit(form)
    #expect(await change(ended, editing))
    #expect(try await storage.base.loadStandup(id)?.meetings.ids.contains(first) == true)
    #expect(try await storage.base.loadCheckpoint(id) == nil)
    #expect(try await storage.base.loadDraft(id) == form.savedDraft)
    let reopened = try await StandupRoomFeature.savedState(
      of: try #require(try await storage.base.loadStandup(id)), storage: storage.base)
    #expect(reopened.meeting == nil)
    #expect(reopened.editForm?.title == "Typed")

    // Saved once: the next keys are a draft's write alone.
    let saves = storage.standupSaves.withLock { $0 }
    var typed = editing
    form.title = "Typed on"
    typed.destination = .edit(form)
    #expect(await change(editing, typed))
    #expect(storage.standupSaves.withLock { $0 } == saves)
    #expect(try await storage.base.loadDraft(id)?.title == "Typed on")
  }

  /// A room that restarts on its own (here: it cannot number more changes) opens again as
  /// saved, with its open form's draft.
  @Test func aRoomThatRestartsOpensWithItsDraft() async throws {
    let server = try await TestServer.startWithFourVersionsPerRoom()
    let ana = try await server.room(name: "Ana")
    try await ana.act("editButtonTapped")
    try await ana.act("edit.binding", ["path": "/title", "value": "Design review"])
    #expect(ana.version == 4)  // the last of the block
    // NB: a change that saves nothing, so that only the version runs out.
    _ = try? await ana.act("focusChanged", ["field": "title"])
    #expect(try await ana.waitUntilClosed().code == 1011)

    let ben = try await server.room(name: "Ben")
    #expect(title(ben) == "Design review")
    #expect(ben.state?["standup"]?["title"] == "Design")
    await server.stop()
  }
}
