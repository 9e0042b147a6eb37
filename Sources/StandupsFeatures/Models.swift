import Foundation
import IdentifiedCollections
import StoreRuntime

/// The 16 colours a standup can wear (Scrumdinger's themes).
public enum Theme: String, CaseIterable, Codable, Equatable, Hashable, Sendable {
  case bubblegum, buttercup, indigo, lavender, magenta, navy, orange, oxblood, periwinkle,
    poppy, purple, seafoam, sky, tan, teal, yellow
}

public struct Attendee: Codable, Equatable, Hashable, Identifiable, Sendable {
  public var id: UUID
  public var name: String

  public init(id: UUID, name: String = "") {
    self.id = id
    self.name = name
  }
}

/// A note taken during a meeting: who wrote it, and whose turn it was.
public struct Note: Codable, Equatable, Hashable, Sendable {
  public var author: String
  public var text: String
  /// The attendee who was speaking when it was written.
  public var speaker: String
  /// The id its sender gave it, if any: the same note sent again (its answer lost with the
  /// connection) is taken once.
  public var id: String?

  public init(author: String, text: String, speaker: String, id: String? = nil) {
    self.author = author
    self.text = text
    self.speaker = speaker
    self.id = id
  }
}

/// A meeting that took place: when it ended, how long it ran, who was there, what was noted.
public struct Meeting: Codable, Equatable, Hashable, Identifiable, Sendable {
  public var id: UUID
  public var date: Date
  /// Every note as `Author: text`, one per line (Scrumdinger's transcript).
  public var transcript: String
  /// How long it ran, in seconds (0 for meetings saved before this was recorded).
  public var seconds: Int
  /// Who was in the room while it ran, people and bots, in the order they came.
  public var present: [String]
  /// The notes with the speaker each was written under, in order.
  public var notes: [Note]

  public init(
    id: UUID, date: Date, transcript: String, seconds: Int = 0, present: [String] = [],
    notes: [Note] = []
  ) {
    self.id = id
    self.date = date
    self.transcript = transcript
    self.seconds = seconds
    self.present = present
    self.notes = notes
  }

  private enum CodingKeys: String, CodingKey { case id, date, transcript, seconds, present, notes }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decode(UUID.self, forKey: .id)
    date = try container.decode(Date.self, forKey: .date)
    transcript = try container.decode(String.self, forKey: .transcript)
    seconds = try container.decodeIfPresent(Int.self, forKey: .seconds) ?? 0
    present = try container.decodeIfPresent([String].self, forKey: .present) ?? []
    notes = try container.decodeIfPresent([Note].self, forKey: .notes) ?? []
  }
}

/// A daily standup: who attends, for how long, and its history (newest first).
public struct Standup: Codable, Equatable, Hashable, Identifiable, Sendable {
  public var id: UUID
  public var attendees: IdentifiedArrayOf<Attendee>
  /// Whole minutes, as seconds: 300...1800 in steps of 60.
  public var duration: Duration
  public var meetings: IdentifiedArrayOf<Meeting>
  public var theme: Theme
  public var title: String
  /// How many saved meetings are older than those in `meetings` (the most recent
  /// `recentMeetingLimit`); they are read a page at a time.
  public var olderMeetingCount: Int

  /// The meetings a standup carries in live state; the rest stay in storage.
  public static let recentMeetingLimit = 10

  public init(
    id: UUID, attendees: IdentifiedArrayOf<Attendee> = [], duration: Duration = .seconds(300),
    meetings: IdentifiedArrayOf<Meeting> = [], theme: Theme = .bubblegum, title: String = "",
    olderMeetingCount: Int = 0
  ) {
    self.id = id
    self.attendees = attendees
    self.duration = duration
    self.meetings = meetings
    self.theme = theme
    self.title = title
    self.olderMeetingCount = olderMeetingCount
  }

  /// Adds a meeting that just ended at the top; the oldest of the recent ones moves to the
  /// older ones (still saved).
  public mutating func addMeeting(_ meeting: Meeting) {
    meetings.insert(meeting, at: 0)
    while meetings.count > Self.recentMeetingLimit {
      meetings.removeLast()
      olderMeetingCount += 1
    }
  }

  /// The standup as the lobby keeps it: no meetings (the lobby shows none).
  public var withoutHistory: Standup {
    var standup = self
    standup.meetings = []
    standup.olderMeetingCount = 0
    return standup
  }

  /// Every meeting of the standup counts, recent and older.
  public var meetingCount: Int { meetings.count + olderMeetingCount }

  /// Each speaker's slice; the last speaker also gets the remainder.
  public var secondsPerAttendee: Int {
    Int(duration.components.seconds) / max(attendees.count, 1)
  }

  private enum CodingKeys: String, CodingKey {
    case id, attendees, duration, meetings, theme, title, olderMeetingCount
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decode(UUID.self, forKey: .id)
    attendees = try container.decode(IdentifiedArrayOf<Attendee>.self, forKey: .attendees)
    duration = .seconds(try container.decode(Int.self, forKey: .duration))
    meetings = try container.decode(IdentifiedArrayOf<Meeting>.self, forKey: .meetings)
    theme = try container.decode(Theme.self, forKey: .theme)
    title = try container.decode(String.self, forKey: .title)
    olderMeetingCount = try container.decodeIfPresent(Int.self, forKey: .olderMeetingCount) ?? 0
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(id, forKey: .id)
    try container.encode(attendees, forKey: .attendees)
    try container.encode(Int(duration.components.seconds), forKey: .duration)
    try container.encode(meetings, forKey: .meetings)
    try container.encode(theme, forKey: .theme)
    try container.encode(title, forKey: .title)
    try container.encode(olderMeetingCount, forKey: .olderMeetingCount)
  }
}

/// The rules every saved standup keeps, with messages a person can act on.
public enum StandupRules {
  public static let titleLength = 1...100
  public static let nameLength = 1...40
  public static let attendeeCount = 1...50
  public static let durationSeconds = 300...1800
  /// Quotas (`quota_exceeded`): standups a team (a server) has…
  public static let standupsPerTeam = 500
  /// …meetings a standup keeps…
  public static let meetingsPerStandup = 5000
  /// …and notes a meeting takes (its transcript also stops at 16 KiB).
  public static let notesPerMeeting = 200

  public static func validateTitle(_ title: String) -> String? {
    guard !isBlank(title) else { return "A standup needs a title." }
    guard title.count <= titleLength.upperBound else {
      return tooLong("The title", count: title.count, limit: titleLength.upperBound)
    }
    return isPlainText(title) ? nil : "The title " + notPlain
  }

  /// Whether `text` shows nothing: only blanks and characters drawn as nothing — the
  /// default-ignorable ones (joiners, soft hyphens, the grapheme joiner, variation selectors,
  /// Hangul fillers), other format characters, and the braille blank. A name, title or note
  /// made of them reads as none: a person nobody sees, a note signed with nothing after it.
  public static func isBlank(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { scalar in
      scalar.properties.isWhitespace || scalar.properties.isDefaultIgnorableCodePoint
        || scalar.properties.generalCategory == .format || scalar.value == 0x2800
    }
  }

  /// Whether `text` holds no control characters (line breaks, NUL), no line separators and
  /// none of the invisible marks that make text read differently from what it is: direction
  /// overrides and isolates (U+202A–202E, U+2066–2069, U+200E/F, U+061C) and zero-width
  /// spaces (U+200B, U+2060, U+FEFF). The joiners that emoji and many scripts need (U+200C,
  /// U+200D), soft hyphens and emoji tag characters stay allowed. No character stacks more
  /// than `scalarsPerCharacter` code points: lengths count characters, so without it one
  /// "character" could carry kilobytes of combining marks.
  public static func isPlainText(_ text: String) -> Bool {
    guard text.allSatisfy({ $0.unicodeScalars.count <= scalarsPerCharacter }) else {
      return false
    }
    return text.unicodeScalars.allSatisfy { scalar in
      switch scalar.properties.generalCategory {
      case .control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned:
        return false
      case .format:
        return !invisibleMarks.contains(scalar.value)
      default:
        return true
      }
    }
  }

  private static let invisibleMarks: Set<UInt32> = Set(
    [0x061C, 0x180E, 0x200B, 0x200E, 0x200F, 0xFEFF, 0xFFF9, 0xFFFA, 0xFFFB]
      + Array(0x202A...0x202E) + Array(0x2060...0x2064) + Array(0x2066...0x206F))

  /// The most code points one character may stack (the longest emoji sequences take 10).
  public static let scalarsPerCharacter = 16
  /// The same, as a person counts: marks stacked on one letter.
  public static let marksPerCharacter = scalarsPerCharacter - 1

  /// The sentence that refuses text over its limit: "The title has 101 characters; it holds
  /// 100 at most." (`count` in characters, as every length here.)
  public static func tooLong(_ what: String, count: Int, limit: Int) -> String {
    "\(what) has \(count) characters; it holds \(limit) at most."
  }

  /// The end of the sentence that refuses text which is not plain.
  public static let notPlain =
    "cannot contain control characters (such as line breaks), invisible marks (such as direction marks), "
    + "or more than \(marksPerCharacter) marks stacked on one character."

  public static func validateDuration(seconds: Int) -> String? {
    durationSeconds.contains(seconds) && seconds % 60 == 0
      ? nil : "The duration must be 5 to 30 whole minutes (300 to 1800 seconds, in steps of 60)."
  }

  /// A name for a saved attendee: 1 to 40 characters after trimming.
  public static func validateName(_ name: String) -> String? {
    let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !isBlank(trimmed) else { return "Every attendee needs a name." }
    guard trimmed.count <= nameLength.upperBound else {
      return tooLong("An attendee's name", count: trimmed.count, limit: nameLength.upperBound)
    }
    return isPlainText(name) ? nil : "An attendee's name " + notPlain
  }

  /// Attendees of one standup go by different names (compared without case or the spaces
  /// around them): the meeting says who is up by name, and the history files notes under it.
  public static func validateDistinctNames(_ names: some Sequence<String>) -> String? {
    let names = Array(names)
    return repeatedName(names).map { Self.nameTaken(names[$0]) }
  }

  /// Where a name first comes again (`validateDistinctNames`), if one does.
  public static func repeatedName(_ names: [String]) -> Int? {
    var seen = Set<String>()
    return names.firstIndex { name in
      !seen.insert(name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()).inserted
    }
  }

  /// The refusal for an attendee called as another one is.
  public static func nameTaken(_ name: String) -> String {
    let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
    return "Two attendees are called \"\(trimmed)\": give each a name of their own."
  }

  public static func validateAttendeeCount(_ count: Int) -> String? {
    if count < attendeeCount.lowerBound { return "A standup needs at least one attendee." }
    if count > attendeeCount.upperBound {
      return "A standup has at most \(attendeeCount.upperBound) attendees."
    }
    return nil
  }

  /// The quota a new standup with `attendees` names would pass, in a lobby of `standups`.
  public static func quotaProblem(standups: Int, attendees: Int) -> Rejection? {
    if standups >= standupsPerTeam {
      return .quotaExceeded(
        "This team has \(standupsPerTeam) standups, the most it can have: delete one first.",
        limit: standupsPerTeam)
    }
    if attendees > attendeeCount.upperBound {
      return .quotaExceeded(
        "A standup has at most \(attendeeCount.upperBound) attendees.",
        limit: attendeeCount.upperBound)
    }
    return nil
  }

  public static func theme(named name: String) -> Theme? { Theme(rawValue: name) }

  public static var themeList: String { Theme.allCases.map(\.rawValue).joined(separator: ", ") }
}
