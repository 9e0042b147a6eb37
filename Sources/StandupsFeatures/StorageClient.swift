import Dependencies
import DependenciesMacros
import Foundation
import IdentifiedCollections
import Synchronization

/// Where standups live between runs. The live value is chosen by the server; tests use
/// `.inMemory()` or override single endpoints.
@DependencyClient
public struct StorageClient: Sendable {
  /// Every standup, in creation order, each with its most recent meetings
  /// (`Standup.recentMeetingLimit`) and the count of the older ones.
  public var load: @Sendable () async throws -> [Standup]
  /// One standup as saved (with its recent meetings), or nil if there is none: what a node
  /// of a cluster opens a room with, whatever its own lobby has heard so far.
  public var loadStandup: @Sendable (_ id: Standup.ID) async throws -> Standup?
  /// Creates or replaces a standup; its meetings are added or updated, never removed (the
  /// older ones are not in `meetings`). Its draft, if one was saved, is forgotten in the same
  /// write: the standup saved replaces it; so is the checkpoint of a meeting it now holds.
  public var save: @Sendable (_ standup: Standup) async throws -> Void
  /// Saves a standup as `save` does while its edit form stays open: `draft` takes the saved
  /// draft's place in the same write, so what was typed in the form is on disk throughout.
  public var saveKeepingDraft:
    @Sendable (_ standup: Standup, _ draft: StandupDraft) async throws -> Void
  /// Records a saved meeting's notes again (one added after it ended): only its transcript and
  /// notes are written, so an open edit form's draft stays. A meeting not saved is an error.
  public var saveMeetingNotes:
    @Sendable (_ standupID: Standup.ID, _ meeting: Meeting) async throws -> Void
  /// A page of a standup's saved meetings, newest first, and how many there are in all.
  public var loadMeetings:
    @Sendable (_ standupID: Standup.ID, _ offset: Int, _ limit: Int) async throws -> MeetingPage
  /// Deletes a standup and its history; deleting one that is gone is not an error.
  public var delete: @Sendable (_ id: Standup.ID) async throws -> Void
  /// Every running meeting's last checkpoint, by standup.
  public var loadCheckpoints: @Sendable () async throws -> [MeetingCheckpoint]
  /// One standup's running meeting's checkpoint, if it has one.
  public var loadCheckpoint: @Sendable (_ id: Standup.ID) async throws -> MeetingCheckpoint?
  /// Records where a running meeting is (nil: no meeting runs any more).
  public var saveCheckpoint:
    @Sendable (_ standupID: Standup.ID, _ checkpoint: MeetingCheckpoint?) async throws -> Void
  /// One standup's saved draft, if its edit form is open.
  public var loadDraft: @Sendable (_ id: Standup.ID) async throws -> StandupDraft?
  /// Records an open edit form's draft (nil: the form closed, saved or cancelled); only for
  /// a standup that still exists.
  public var saveDraft:
    @Sendable (_ standupID: Standup.ID, _ draft: StandupDraft?) async throws -> Void
  /// Reserves the next `count` versions of a room (`lobby` or a standup id): versions no
  /// earlier reservation got, in this run or any other. Returns the first.
  public var reserveVersions: @Sendable (_ room: String, _ count: Int) async throws -> Int
  /// Gives back the end of a reservation that was not used: the room's next reservation
  /// starts at `next` — if nothing was reserved since, i.e. the last reservation still ends
  /// at `end`.
  public var returnVersions:
    @Sendable (_ room: String, _ next: Int, _ end: Int) async throws -> Void
  /// Where running meetings' clocks are now, all in one write (the server's heartbeat): a
  /// checkpoint moves forward only, and only for the meeting it belongs to.
  public var saveMeetingClocks: @Sendable (_ clocks: [MeetingClock]) async throws -> Void = { _ in }
  /// One small write, to see whether saving works again after a failure.
  public var probe: @Sendable () async throws -> Void = {}
}

/// The versions reserved so far for each room, in memory (tests, `inMemory`).
struct VersionReservations {
  var next: [String: Int] = [:]

  mutating func reserve(_ room: String, _ count: Int) -> Int {
    let first = next[room, default: 1]
    next[room] = first + count
    return first
  }

  mutating func giveBack(_ room: String, next value: Int, end: Int) {
    if next[room] == end { next[room] = value }
  }
}

/// Some of a standup's saved meetings, newest first.
public struct MeetingPage: Equatable, Sendable {
  public var meetings: [Meeting]
  /// Every saved meeting of the standup.
  public var total: Int

  public init(meetings: [Meeting], total: Int) {
    self.meetings = meetings
    self.total = total
  }
}

/// A running meeting's clock, as the heartbeat records it.
public struct MeetingClock: Equatable, Sendable {
  public var standupID: Standup.ID
  public var meetingID: UUID
  public var secondsElapsed: Int
  public var speakerIndex: Int
  public var secondsRun: Int

  public init(
    standupID: Standup.ID, meetingID: UUID, secondsElapsed: Int, speakerIndex: Int,
    secondsRun: Int = 0
  ) {
    self.standupID = standupID
    self.meetingID = meetingID
    self.secondsElapsed = secondsElapsed
    self.speakerIndex = speakerIndex
    self.secondsRun = secondsRun
  }
}

/// Where a running meeting was when it last changed speaker, took a note or paused; after a
/// crash it comes back paused here.
public struct MeetingCheckpoint: Codable, Equatable, Sendable {
  public var standupID: Standup.ID
  public var meetingID: UUID
  public var secondsElapsed: Int
  public var speakerIndex: Int
  public var transcript: String
  public var notes: [Note]
  public var present: [String]
  /// Who was present under each name, by sign-in (`RecordMeeting.State.presentBy`): someone
  /// who renames themselves after the meeting came back is still present once.
  public var presentBy: [String: Set<String>]
  /// Seconds it really ran (its length in the history).
  public var secondsRun: Int
  /// Why it was paused, if it was (everyone left); a meeting that was running comes back
  /// paused because the server restarted.
  public var pausedBecause: RecordMeeting.State.PauseReason?
  /// When its room emptied, if that is why it paused: someone back within
  /// `RecordMeeting.returnGrace` resumes it, on whichever server opens the room again.
  public var emptiedAt: Date?

  public init(
    standupID: Standup.ID, meetingID: UUID, secondsElapsed: Int, speakerIndex: Int,
    transcript: String, notes: [Note] = [], present: [String] = [],
    presentBy: [String: Set<String>] = [:], secondsRun: Int = 0,
    pausedBecause: RecordMeeting.State.PauseReason? = nil, emptiedAt: Date? = nil
  ) {
    self.standupID = standupID
    self.meetingID = meetingID
    self.secondsElapsed = secondsElapsed
    self.speakerIndex = speakerIndex
    self.transcript = transcript
    self.notes = notes
    self.present = present
    self.presentBy = presentBy
    self.secondsRun = secondsRun
    self.pausedBecause = pausedBecause
    self.emptiedAt = emptiedAt
  }
}

extension RecordMeeting.State {
  /// The meeting as a checkpoint.
  public func checkpoint(standupID: Standup.ID) -> MeetingCheckpoint {
    MeetingCheckpoint(
      standupID: standupID, meetingID: id, secondsElapsed: secondsElapsed,
      speakerIndex: speakerIndex, transcript: transcript, notes: notes, present: present,
      presentBy: presentBy, secondsRun: secondsRun, pausedBecause: pausedBecause,
      emptiedAt: emptiedAt)
  }

  /// A meeting brought back from a checkpoint, paused until someone resumes it.
  public init(restoring checkpoint: MeetingCheckpoint, standup: Standup) {
    self.init(id: checkpoint.meetingID, standup: standup)
    secondsElapsed = checkpoint.secondsElapsed
    speakerIndex = min(checkpoint.speakerIndex, lastSpeakerIndex)
    transcript = checkpoint.transcript
    notes = checkpoint.notes
    present = checkpoint.present
    // NB: a checkpoint from before sign-ins were kept has none: its names' people are not
    // known ("" where a sign-in comes back under one of them, as `notePresent` says).
    presentBy = checkpoint.presentBy
    secondsRun = checkpoint.secondsRun
    pausedBecause = checkpoint.pausedBecause ?? .serverRestarted
    // NB: a room released once it emptied (a cluster's), or handed on to another node, opens
    // again for whoever comes back: within moments, the meeting goes on by itself, as it
    // would have there.
    emptiedAt = pausedBecause == .serverRestarted ? nil : checkpoint.emptiedAt
  }
}

extension StorageClient: TestDependencyKey {
  public static let testValue = StorageClient()

  /// Standups kept in memory for the life of the value.
  public static func inMemory(_ standups: [Standup] = []) -> StorageClient {
    let storage = Mutex(standups)
    let checkpoints = Mutex<[Standup.ID: MeetingCheckpoint]>([:])
    let drafts = Mutex<[Standup.ID: StandupDraft]>([:])
    let versions = Mutex(VersionReservations())
    // NB: kept with every meeting; `load` gives the recent ones, as SQLite does.
    @Sendable func recent(_ standup: Standup) -> Standup {
      var recent = standup
      recent.meetings = IdentifiedArray(
        uniqueElements: standup.meetings.prefix(Standup.recentMeetingLimit))
      recent.olderMeetingCount = standup.meetings.count - recent.meetings.count
      return recent
    }
    @Sendable func save(_ standup: Standup, keeping draft: StandupDraft?) {
      storage.withLock { standups in
        var merged = standup
        if let index = standups.firstIndex(where: { $0.id == standup.id }) {
          for meeting in standups[index].meetings where merged.meetings[id: meeting.id] == nil {
            merged.meetings.append(meeting)
          }
          merged.meetings.sort { $0.date > $1.date }
          merged.olderMeetingCount = 0
          standups[index] = merged
        } else {
          standups.append(merged)
        }
      }
      drafts.withLock { $0[standup.id] = draft }
      checkpoints.withLock { checkpoints in
        if let running = checkpoints[standup.id],
          storage.withLock({ $0.first { $0.id == standup.id }?.meetings[id: running.meetingID] })
            != nil
        {
          checkpoints[standup.id] = nil
        }
      }
    }
    return StorageClient(
      load: { storage.withLock { $0.map(recent) } },
      loadStandup: { id in storage.withLock { $0.first { $0.id == id }.map(recent) } },
      save: { save($0, keeping: nil) },
      saveKeepingDraft: { save($0, keeping: $1) },
      saveMeetingNotes: { id, meeting in
        try storage.withLock { standups in
          guard let index = standups.firstIndex(where: { $0.id == id }),
            standups[index].meetings[id: meeting.id] != nil
          else { throw InMemoryStorageError.meetingNotSaved }
          standups[index].meetings[id: meeting.id]?.transcript = meeting.transcript
          standups[index].meetings[id: meeting.id]?.notes = meeting.notes
        }
      },
      loadMeetings: { id, offset, limit in
        storage.withLock { standups in
          let meetings = standups.first { $0.id == id }?.meetings ?? []
          return MeetingPage(
            meetings: Array(meetings.dropFirst(offset).prefix(limit)), total: meetings.count)
        }
      },
      delete: { id in
        storage.withLock { $0.removeAll { $0.id == id } }
        checkpoints.withLock { $0[id] = nil }
        drafts.withLock { $0[id] = nil }
      },
      loadCheckpoints: { checkpoints.withLock { Array($0.values) } },
      loadCheckpoint: { id in checkpoints.withLock { $0[id] } },
      saveCheckpoint: { id, checkpoint in
        // NB: only for a standup that still exists, as the databases do.
        let exists = storage.withLock { $0.contains { $0.id == id } }
        checkpoints.withLock { $0[id] = exists ? checkpoint : nil }
      },
      loadDraft: { id in drafts.withLock { $0[id] } },
      saveDraft: { id, draft in
        let exists = storage.withLock { $0.contains { $0.id == id } }
        drafts.withLock { $0[id] = exists ? draft : nil }
      },
      reserveVersions: { room, count in versions.withLock { $0.reserve(room, count) } },
      returnVersions: { room, next, end in
        versions.withLock { $0.giveBack(room, next: next, end: end) }
      },
      saveMeetingClocks: { clocks in
        checkpoints.withLock { checkpoints in
          for clock in clocks {
            guard let saved = checkpoints[clock.standupID], saved.meetingID == clock.meetingID,
              saved.secondsRun < clock.secondsRun
            else { continue }
            checkpoints[clock.standupID]?.secondsElapsed = clock.secondsElapsed
            checkpoints[clock.standupID]?.speakerIndex = clock.speakerIndex
            checkpoints[clock.standupID]?.secondsRun = clock.secondsRun
          }
        }
      },
      probe: {}
    )
  }
}

/// A write whose outcome is not known: its connection went, or it went unanswered, while it
/// may have committed. Neither done nor undone: whoever asked is told so (`outcome_unknown`),
/// and what it wrote is known once the room opens again from storage.
public struct WriteOutcomeUnknown: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// What the in-memory storage refuses, as the databases do.
enum InMemoryStorageError: Error { case meetingNotSaved }

extension DependencyValues {
  public var storage: StorageClient {
    get { self[StorageClient.self] }
    set { self[StorageClient.self] = newValue }
  }
}
