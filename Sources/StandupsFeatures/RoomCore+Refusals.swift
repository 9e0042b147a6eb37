import StoreRuntime

/// Why a room refuses an action, saying who got there first where someone did.
extension RoomCore {
  /// A meeting is running (perhaps someone started it at the same moment: says who).
  func meetingRunning(_ state: State, otherwise message: String) -> Rejection {
    let last = state.activity
    return .invalidAction(
      last?.kind == .startedMeeting
        ? "\(last?.by.name ?? "Someone") started the meeting: it is running." : message)
  }

  /// No meeting runs (perhaps someone ended it at the same moment): who ended it, and how.
  static func meetingOver(_ state: State) -> Rejection {
    let last = state.activity
    return switch last?.kind {
    case .endedMeeting?:
      .invalidAction(
        "\(last?.by.name ?? "Someone") saved and ended the meeting: no meeting is running.")
    case .discardedMeeting?:
      .invalidAction("\(last?.by.name ?? "Someone") discarded the meeting: no meeting is running.")
    default:
      .invalidAction("No meeting is running.")
    }
  }

  /// The end-meeting alert is not up (perhaps someone resumed the meeting at the same moment).
  static func alertClosed(_ state: State) -> Rejection {
    let last = state.activity
    return .invalidAction(
      last?.kind == .resumedMeeting
        ? "\(last?.by.name ?? "Someone") resumed the meeting: it goes on."
        : RecordMeeting.alertNotShowing)
  }

  /// The edit form is not open (perhaps someone saved or cancelled it at the same moment).
  func formNotOpen(_ state: State) -> Rejection {
    guard let last = state.activity else { return .invalidAction(Destination.nothingEdited) }
    switch last.kind {
    case .savedChanges:
      return .invalidAction("\(last.by.name) saved the changes: the form is closed.")
    case .cancelledEditing:
      return .invalidAction("\(last.by.name) cancelled editing: the form is closed.")
    default: return .invalidAction(Destination.nothingEdited)
    }
  }
}
