import Foundation
import StoreRuntime

/// Who did something: a participant's id and the name everyone saw.
public struct Actor: Equatable, Hashable, Sendable, Encodable {
  public var id: String
  public var name: String

  public init(id: String, name: String) {
    self.id = id
    self.name = name
  }
}

/// Something a person did that changed what everyone sees: "Ben ended the meeting".
public struct Activity: Equatable, Sendable, Encodable {
  public enum Kind: String, CaseIterable, Equatable, Sendable, Encodable {
    case startedMeeting, skippedToSpeaker, askedToEndMeeting, resumedMeeting, endedMeeting,
      discardedMeeting, startedEditing, savedChanges, cancelledEditing, askedToDelete,
      keptStandup, deletedStandup, restoredMeeting, restoredDraft, restoredStandup,
      addedLateNote
  }

  /// Counts up within a room: a client shows each activity once.
  public var seq: Int
  public var kind: Kind
  public var by: Actor
  /// The speaker skipped to, for `skippedToSpeaker`.
  public var detail: String?

  public init(seq: Int, kind: Kind, by: Actor, detail: String? = nil) {
    self.seq = seq
    self.kind = kind
    self.by = by
    self.detail = detail
  }

  /// The sentence a log or a bot can show: "Ben ended the meeting".
  public var sentence: String {
    let name = by.name
    switch kind {
    case .startedMeeting: return "\(name) started the meeting"
    // NB: any Next, not only a skip: the web app says "moved on to" too.
    case .skippedToSpeaker where detail == name: return "\(name) moved on to their own turn"
    case .skippedToSpeaker: return "\(name) moved on to \(detail ?? "the next speaker")"
    case .askedToEndMeeting: return "\(name) asked to end the meeting"
    case .resumedMeeting: return "\(name) resumed the meeting"
    case .endedMeeting: return "\(name) ended the meeting"
    case .discardedMeeting: return "\(name) discarded the meeting"
    case .startedEditing: return "\(name) started editing"
    case .savedChanges: return "\(name) saved the changes"
    case .cancelledEditing: return "\(name) cancelled editing"
    case .askedToDelete: return "\(name) asked to delete this standup"
    case .keptStandup: return "\(name) kept the standup"
    case .deletedStandup: return "\(name) deleted this standup"
    case .restoredMeeting: return "\(name) brought the meeting back"
    case .restoredDraft: return "\(name) brought the draft back"
    case .restoredStandup: return "\(name) kept the standup: deletion undone"
    case .addedLateNote: return "\(name) added a note to a meeting that ended"
    }
  }
}

/// The last destructive thing done in a room, which anyone there may undo for a while.
public struct Undo: Equatable, Sendable {
  public enum Restore: Equatable, Sendable {
    /// A discarded meeting, as it was (its end-meeting alert showing).
    case meeting(RecordMeeting.State)
    /// A cancelled draft, as it was.
    case draft(StandupForm.State)
    /// A deletion not yet carried out: the standup is removed when the window ends.
    case deletion
  }

  public var activity: Activity
  public var restore: Restore

  public init(activity: Activity, restore: Restore) {
    self.activity = activity
    self.restore = restore
  }
}

extension Room {
  /// What `action`, done by someone, changed that others should hear of; and what could be
  /// undone.
  static func activity(
    of action: Action, before: State, after: State
  ) -> (kind: Activity.Kind, detail: String?, restore: Undo.Restore?)? {
    switch action {
    case .startMeetingButtonTapped:
      return (.startedMeeting, nil, nil)
    case .historyNoteSubmitted:
      // NB: said, because the history it joins shows no change by itself (closed, or not on
      // screen): someone downloading it now knows to wait for it.
      return (.addedLateNote, nil, nil)
    case .meeting(.presented(.nextButtonTapped(_))):
      guard let meeting = after.meeting else { return nil }
      if meeting.alert != nil && before.meeting?.alert == nil {
        return (.askedToEndMeeting, nil, nil)
      }
      let speaker = meeting.standup.attendees[safe: meeting.speakerIndex]?.name
      return (.skippedToSpeaker, speaker, nil)
    case .meeting(.presented(.endMeetingButtonTapped)):
      return before.meeting?.alert == nil ? (.askedToEndMeeting, nil, nil) : nil
    case .meeting(.presented(.alert(.resume))), .meeting(.presented(.resumeButtonTapped)):
      return (.resumedMeeting, nil, nil)
    case .meeting(.presented(.alert(.saveAndEnd))):
      return (.endedMeeting, nil, nil)
    case .meeting(.presented(.alert(.discard))):
      return (.discardedMeeting, nil, before.meeting.map(Undo.Restore.meeting))
    case .editButtonTapped:
      return (.startedEditing, nil, nil)
    case .saveEditButtonTapped:
      return (.savedChanges, nil, nil)
    case .cancelEditButtonTapped:
      guard case .edit(let form) = before.destination else { return nil }
      return (.cancelledEditing, nil, .draft(form))
    case .deleteButtonTapped:
      return (.askedToDelete, nil, nil)
    case .destination(.presented(.alert(.dismissed))):
      return (.keptStandup, nil, nil)
    case .destination(.presented(.alert(.confirmDeletion))):
      return (.deletedStandup, nil, .deletion)
    case .undoButtonTapped(_):
      switch before.undo?.restore {
      case .meeting?: return (.restoredMeeting, nil, nil)
      case .draft?: return (.restoredDraft, nil, nil)
      case .deletion?: return (.restoredStandup, nil, nil)
      case nil: return nil
      }
    case .participantJoined, .participantLeft, .participantReplaced, .roomMoving, .meeting,
      .destination,
      .focusChanged, .acted, .undoWindowEnded, .saveFailed:
      return nil
    }
  }
}
