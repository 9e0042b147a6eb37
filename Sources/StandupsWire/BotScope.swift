/// What a bot's token allows.
public enum BotScope: String, Sendable, CaseIterable, Comparable {
  /// Submit notes during a meeting (and to one that just ended).
  case notes
  /// Also start meetings, move to the next speaker, end them (saving) and resume them.
  case drive
  /// Everything a person can do, the lobby included.
  case admin

  public static func < (a: BotScope, b: BotScope) -> Bool {
    a.rank < b.rank
  }

  private var rank: Int {
    switch self {
    case .notes: 0
    case .drive: 1
    case .admin: 2
    }
  }

  /// The least scope an action needs.
  public static func needed(forRoomAction type: String) -> BotScope {
    switch type {
    case "meeting.noteSubmitted", "history.noteSubmitted", "focusChanged":
      return .notes
    case "startMeetingButtonTapped", "meeting.nextButtonTapped", "meeting.endMeetingButtonTapped",
      "meeting.alert.saveAndEnd", "meeting.alert.resume", "meeting.resumeButtonTapped":
      return .drive
    default:
      return .admin
    }
  }
}
