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

/// A note that was being typed when the meeting ended joins the saved meeting, over a real
/// socket: saved on its own, whatever else is open, and refused and taken back when it cannot
/// be saved.
@Suite(.serialized)
struct LateNoteServerTests {
  /// In-memory storage whose notes' writes can be made to fail.
  final class Storage: Sendable {
    let base = StorageClient.inMemory([.design])
    let failNotes = Mutex(false)

    var client: StorageClient {
      var client = base
      client.saveMeetingNotes = { [self] id, meeting in
        if failNotes.withLock({ $0 }) { throw StorageError("disk full") }
        try await base.saveMeetingNotes(id, meeting)
      }
      return client
    }
  }

  func notes(_ client: TestClient) -> [JSONValue] {
    client.state?["standup"]?["meetings"]?[0]?["notes"]?.arrayValue ?? []
  }

  @Test func aLateNoteIsSavedWhileTheFormIsOpenAndTheDraftStays() async throws {
    let storage = Storage()
    let server = try await TestServer.start(storage: storage.client)
    let id = Standup.design.id
    let ana = try await server.room(name: "Ana")
    let ben = try await server.room(name: "Ben")
    try await ana.act("startMeetingButtonTapped")
    try await ana.act("meeting.noteSubmitted", ["text": "During"])
    try await ana.act("meeting.endMeetingButtonTapped")
    #expect(try await ana.act("meeting.alert.saveAndEnd")["type"] == "ack")
    let meeting = try #require(ana.state?["standup"]?["meetings"]?[0]?["id"])
    // Ana opens the form and types while Ben's note, typed as the meeting ended, comes in.
    try await ana.act("editButtonTapped")
    try await ana.act("edit.binding", ["path": "/title", "value": "Typed"])
    let speaker = Standup.design.attendees[1].name
    let late = try await ben.act(
      "history.noteSubmitted", ["meeting": meeting, "text": "Late", "speaker": .string(speaker)])
    #expect(late["type"] == "ack")
    _ = try await ana.waitForState { $0["standup"]?["meetings"]?[0]?["notes"]?[1] != nil }
    #expect(notes(ana).map { $0["author"] } == ["Ana", "Ben"])
    #expect(notes(ana).last?["speaker"] == .string(speaker))
    let saved = try #require(try await storage.base.loadStandup(id)?.meetings.first)
    #expect(saved.transcript == "Ana: During\nBen: Late")
    #expect(try await storage.base.loadDraft(id)?.title == "Typed")
    #expect(ana.state?["destination"]?["edit"]?["draft"]?["title"] == "Typed")

    // The room opens again with it once everyone left (from what the server keeps of the
    // standup), the form open as typed; saving the form keeps the note.
    ana.close()
    ben.close()
    try await eventually("The emptied room was not released.") { server.server.openRoomCount == 0 }
    let cy = try await server.room(name: "Cy")
    #expect(notes(cy).map { $0["text"] } == ["During", "Late"])
    #expect(cy.state?["destination"]?["edit"]?["draft"]?["title"] == "Typed")
    #expect(try await cy.act("saveEditButtonTapped")["type"] == "ack")
    #expect(try await storage.base.loadStandup(id)?.meetings.first?.notes.count == 2)
    #expect(try await storage.base.loadStandup(id)?.title == "Typed")
    await server.stop()
  }

  /// The meeting's own save failed (its time ran out while storage was failing): a late note
  /// saves the whole standup, meeting and all, and the open form's draft after it.
  @Test func aLateNoteForAMeetingWhoseSaveFailedSavesTheStandup() async throws {
    let storage = DraftTests.FailingStorage()
    let change = DraftTests.changes(savingTo: storage)
    var running = Room.State(standup: .design)
    running.meeting = RecordMeeting.State(id: UUID(), standup: .design)
    storage.failStandups.withLock { $0 = true }
    var ended = running
    var meeting = Meeting(id: try #require(running.meeting?.id), date: Date(), transcript: "")
    ended.standup.addMeeting(meeting)
    ended.meeting = nil
    #expect(await change(running, ended) == false)
    #expect(try await storage.base.loadStandup(Standup.design.id)?.meetings.isEmpty == true)
    storage.failStandups.withLock { $0 = false }

    var editing = ended
    editing.destination = .edit(StandupForm.State(standup: ended.standup))
    #expect(await change(ended, editing))
    var noted = editing
    #expect(meeting.addNote("Late", author: "Ben", speaker: "") == nil)
    noted.standup.meetings[id: meeting.id] = meeting
    // NB: the form's draft is kept by the standup's save itself: a draft write failing now
    // (after a standup save that failed) cannot leave what was typed in the form off disk.
    storage.failDrafts.withLock { $0 = true }
    #expect(await change(editing, noted))
    let saved = try #require(try await storage.base.loadStandup(Standup.design.id))
    #expect(saved.meetings.map(\.transcript) == ["Ben: Late"])
    #expect(try await storage.base.loadDraft(Standup.design.id) == editing.editForm?.savedDraft)
  }

  /// A late note while the standup's last save failed with the form open (a refused Save put
  /// the form back): the standup is saved whole, the form's draft kept in that same write, so
  /// a draft write failing meanwhile loses nothing.
  @Test func aLateNoteUnderAFormWhoseSaveWasRefusedKeepsItsDraftInOneWrite() async throws {
    let storage = DraftTests.FailingStorage()
    let change = DraftTests.changes(savingTo: storage)
    let id = Standup.design.id
    var ended = Room.State(standup: .design)
    var meeting = Meeting(id: UUID(), date: Date(), transcript: "")
    ended.standup.addMeeting(meeting)
    #expect(await change(Room.State(standup: .design), ended))
    var editing = ended
    var form = StandupForm.State(standup: ended.standup)
    form.title = "Typed"
    editing.destination = .edit(form)
    #expect(await change(ended, editing))

    // Save refused: the room puts the form back (only the draft is written).
    storage.failStandups.withLock { $0 = true }
    var saved = editing
    saved.standup.title = "Typed"
    saved.destination = nil
    #expect(await change(editing, saved) == false)
    #expect(await change(saved, editing))
    storage.failStandups.withLock { $0 = false }

    storage.failDrafts.withLock { $0 = true }
    let saves = storage.standupSaves.withLock { $0 }
    var noted = editing
    #expect(meeting.addNote("Late", author: "Ben", speaker: "") == nil)
    noted.standup.meetings[id: meeting.id] = meeting
    #expect(await change(editing, noted))
    #expect(storage.standupSaves.withLock { $0 } == saves + 1)
    #expect(try await storage.base.loadStandup(id)?.meetings.map(\.transcript) == ["Ben: Late"])
    #expect(try await storage.base.loadDraft(id) == form.savedDraft)
  }

  @Test func aLateNoteThatCannotBeSavedIsRefusedAndTakenBack() async throws {
    let storage = Storage()
    let server = try await TestServer.start(storage: storage.client)
    let ana = try await server.room(name: "Ana")
    try await ana.act("startMeetingButtonTapped")
    try await ana.act("meeting.endMeetingButtonTapped")
    try await ana.act("meeting.alert.saveAndEnd")
    let meeting = try #require(ana.state?["standup"]?["meetings"]?[0]?["id"])
    storage.failNotes.withLock { $0 = true }
    let refused = try await ana.act("history.noteSubmitted", ["meeting": meeting, "text": "Lost?"])
    #expect(refused["code"] == "storage_unavailable")
    _ = try await ana.waitForState { $0["standup"]?["meetings"]?[0]?["notes"] == [] }
    #expect(ana.state?["standup"]?["meetings"]?[0]?["transcript"] == "")
    #expect(try await storage.base.loadStandup(Standup.design.id)?.meetings.first?.notes == [])

    // Bad input changes nothing either.
    storage.failNotes.withLock { $0 = false }
    let unknown = try await ana.act(
      "history.noteSubmitted", ["meeting": .string(UUID().uuidString), "text": "Hi"])
    #expect(unknown["code"] == "invalid_action")
    await server.stop()
  }
}
