import Foundation
import IdentifiedCollections
import StoreRuntime

/// What keeps a meeting's notes: the running meeting, and the meeting saved once it ended
/// (a note that was being typed when it ended may still join it for a while).
public protocol TakesNotes {
  /// Every note as `Author: text`, one per line.
  var transcript: String { get set }
  /// The notes with the speaker each was written under, in order.
  var notes: [Note] { get set }
}

extension RecordMeeting.State: TakesNotes {}
extension Meeting: TakesNotes {}

extension StandupRules {
  /// How long a saved meeting still takes notes after it ended: for a note that was being
  /// typed when someone ended the meeting (or its time ran out).
  public static let lateNoteSeconds: TimeInterval = 600
  /// A meeting's transcript stops growing here (16 KiB).
  public static let transcriptLimit = 16 * 1024
}

extension TakesNotes {
  /// Adds `text` (trimmed), signed by `author`, written while `speaker` spoke; or says why not,
  /// and changes nothing. A note of `author`'s whose `id` it holds already was sent again (its
  /// answer lost): taken, and nothing changes — unless it is known to be another sender's
  /// (`fromSameSender` false: two people of one name). Another author's with that id is
  /// another note.
  public mutating func addNote(
    _ text: String, author: String, speaker: String, id: String? = nil, fromSameSender: Bool = true
  ) -> Rejection? {
    let note = text.trimmingCharacters(in: .whitespaces)
    guard (1...1000).contains(note.count), !note.contains(where: \.isNewline) else {
      return .invalidValue("A note must be one line of 1 to 1000 characters.")
    }
    guard !StandupRules.isBlank(note) else {
      return .invalidValue("A note must say something: this one shows nothing.")
    }
    guard StandupRules.isPlainText(note) else {
      return .invalidValue("A note " + StandupRules.notPlain)
    }
    // NB: after the text's checks (what is refused is refused whatever its id), before the
    // quotas (a note sent again when the meeting is full was taken).
    if let id, fromSameSender, notes.contains(where: { $0.id == id && $0.author == author }) {
      return nil
    }
    let line = "\(author): \(note)"
    let grown = transcript.isEmpty ? line : transcript + "\n" + line
    guard grown.utf8.count <= StandupRules.transcriptLimit else {
      return .quotaExceeded(
        "This note does not fit: a meeting's notes hold at most 16 KiB (a shorter one may).",
        limit: StandupRules.transcriptLimit)
    }
    guard notes.count < StandupRules.notesPerMeeting else {
      return .quotaExceeded(
        "A meeting takes at most \(StandupRules.notesPerMeeting) notes.",
        limit: StandupRules.notesPerMeeting)
    }
    transcript = grown
    notes.append(Note(author: author, text: note, speaker: speaker, id: id))
    return nil
  }

  /// Takes back the notes a refused change added (`before` → `after`), and only those: notes
  /// added since stay.
  public mutating func takeBackNotes(addedFrom before: some TakesNotes, to after: some TakesNotes) {
    if after.notes.count > before.notes.count, after.notes.starts(with: before.notes) {
      for note in after.notes.dropFirst(before.notes.count) {
        if let index = notes.lastIndex(of: note) { notes.remove(at: index) }
      }
    }
    if after.transcript.count > before.transcript.count,
      after.transcript.hasPrefix(before.transcript)
    {
      var lines = transcript.split(separator: "\n")
      for line in after.transcript.dropFirst(before.transcript.count).split(separator: "\n") {
        if let index = lines.lastIndex(of: line) { lines.remove(at: index) }
      }
      transcript = lines.joined(separator: "\n")
    }
  }
}

extension Standup {
  /// Whether this is `other` but for notes added to meetings both hold: what a note for a
  /// meeting that had ended changes.
  public func differsOnlyInNotes(from other: Standup) -> Bool {
    withoutHistory == other.withoutHistory && meetings.ids == other.meetings.ids
      && olderMeetingCount == other.olderMeetingCount
      && zip(meetings, other.meetings).allSatisfy { this, that in
        var this = this
        this.transcript = that.transcript
        this.notes = that.notes
        return this == that
      }
  }
}
