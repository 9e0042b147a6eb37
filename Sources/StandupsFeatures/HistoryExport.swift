import Foundation

/// A standup's meeting history as a file a team keeps: Markdown to read, CSV for a
/// spreadsheet. Newest meeting first, as the app shows them; the Markdown's times in the
/// time zone asked for (the web app asks for its own; else UTC), the CSV's as ISO 8601 UTC.
public enum HistoryExport {
  public static func markdown(_ standup: Standup, timeZone: TimeZone = .gmt) -> String {
    var lines = ["# \(escaped(standup.title)): meeting history", ""]
    if standup.meetings.isEmpty { lines += ["No meetings yet.", ""] }
    for meeting in standup.meetings {
      lines.append(
        "## \(dateText(meeting.date, timeZone: timeZone))"
          + (meeting.seconds > 0 ? " · \(lengthText(meeting.seconds))" : ""))
      lines.append("")
      if !meeting.present.isEmpty {
        lines += ["Present: \(escaped(meeting.present.joined(separator: ", ")))", ""]
      }
      let groups = notesBySpeaker(meeting)
      if groups.isEmpty { lines += ["No notes.", ""] }
      // NB: notes under no speaker (a late note sent without one) beside notes under one get
      // a heading of their own: without one they read as the last speaker's.
      let headed = groups.contains { !$0.speaker.isEmpty }
      for group in groups {
        if headed {
          lines += ["### \(group.speaker.isEmpty ? otherNotes : escaped(group.speaker))", ""]
        }
        lines += group.notes.map { "- **\(escaped($0.author))**: \(escaped($0.text))" }
        lines.append("")
      }
    }
    return lines.joined(separator: "\n")
  }

  /// The heading of a meeting's notes taken under no speaker, beside those under one.
  public static let otherNotes = "Other notes"

  /// Text as Markdown shows it literally: the punctuation Markdown reads inside a line
  /// (emphasis, code, links, HTML, tables, entities, and a heading's closing #s) is
  /// backslash-escaped. (Lines here start with the export's own markers, so line-start
  /// syntax cannot come from the text.)
  static func escaped(_ text: String) -> String {
    var result = ""
    for character in text {
      if "\\`*_[]<>|~&#".contains(character) { result.append("\\") }
      result.append(character)
    }
    return result
  }

  /// One row per note (a meeting without notes gets one row with an empty note), each with
  /// its meeting's id, so that a meeting's rows stay together when sorted. It begins with a
  /// byte order mark: without one, Excel reads UTF-8 as another encoding, and "José" wrong.
  public static func csv(_ standup: Standup) -> String {
    var rows = [["meeting_id", "date", "length_seconds", "present", "speaker", "author", "note"]]
    for meeting in standup.meetings {
      let facts = [
        meeting.id.uuidString, iso8601(meeting.date), String(meeting.seconds),
        meeting.present.joined(separator: "; "),
      ]
      let notes = notesBySpeaker(meeting).flatMap(\.notes)
      if notes.isEmpty { rows.append(facts + ["", "", ""]) }
      rows += notes.map { facts + [$0.speaker, $0.author, $0.text] }
    }
    return "\u{FEFF}" + rows.map { $0.map(cell).joined(separator: ",") }.joined(separator: "\r\n")
      + "\r\n"
  }

  /// The meeting's notes grouped under each speaker, speakers in the order they spoke.
  /// Meetings saved before notes kept their speaker come from the transcript, unattributed.
  public static func notesBySpeaker(_ meeting: Meeting) -> [(speaker: String, notes: [Note])] {
    let notes =
      meeting.notes.isEmpty
      ? meeting.transcript.split(separator: "\n").map { line -> Note in
        let parts = line.split(separator: ":", maxSplits: 1)
        return parts.count == 2
          ? Note(
            author: String(parts[0]), text: parts[1].trimmingCharacters(in: .whitespaces),
            speaker: "")
          : Note(author: "", text: String(line), speaker: "")
      }
      : meeting.notes
    var groups: [(speaker: String, notes: [Note])] = []
    for note in notes {
      if let index = groups.firstIndex(where: { $0.speaker == note.speaker }) {
        groups[index].notes.append(note)
      } else {
        groups.append((note.speaker, [note]))
      }
    }
    return groups
  }

  /// "12 min 5 s".
  public static func lengthText(_ seconds: Int) -> String {
    let minutes = seconds / 60
    let rest = seconds % 60
    if minutes == 0 { return "\(rest) s" }
    return rest == 0 ? "\(minutes) min" : "\(minutes) min \(rest) s"
  }

  /// "Sunday 22 November 2026, 09:00 UTC" (the same on every server, whatever its locale).
  static func dateText(_ date: Date, timeZone: TimeZone = .gmt) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    let parts = calendar.dateComponents(
      [.weekday, .day, .month, .year, .hour, .minute], from: date)
    let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    let months = [
      "January", "February", "March", "April", "May", "June", "July", "August", "September",
      "October", "November", "December",
    ]
    let weekday = weekdays[((parts.weekday ?? 1) - 1) % 7]
    let month = months[((parts.month ?? 1) - 1) % 12]
    let time = String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    let universal = ["UTC", "GMT", "Etc/UTC", "Etc/GMT", "Universal", "Zulu"]
    let zone = universal.contains(timeZone.identifier) ? "UTC" : "(\(timeZone.identifier))"
    return "\(weekday) \(parts.day ?? 1) \(month) \(parts.year ?? 1970), \(time) \(zone)"
  }

  static func iso8601(_ date: Date) -> String {
    date.formatted(.iso8601)
  }

  /// A CSV cell: quoted when it must be; a leading `=`, `+`, `-` or `@` is neutralised so
  /// that a spreadsheet shows a note instead of running it as a formula.
  static func cell(_ text: String) -> String {
    var text = text
    if let first = text.first, "=+-@".contains(first) { text = "'" + text }
    guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
      return text
    }
    return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }
}
