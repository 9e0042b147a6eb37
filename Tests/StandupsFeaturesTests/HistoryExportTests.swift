import Foundation
import IdentifiedCollections
import StandupsFeatures
import Testing

struct HistoryExportTests {
  var standup: Standup {
    var standup = Standup.mock()
    standup.title = "Design, weekly"
    standup.meetings = [
      Meeting(
        id: UUID(1), date: Date(timeIntervalSince1970: 1_795_338_000),
        transcript: "Ana: Shipped \"it\"\nCI (bot): =SUM(A1)\nBen: Blocked, on review",
        seconds: 725, present: ["Ana", "Ben", "CI"],
        notes: [
          Note(author: "Ana", text: "Shipped \"it\"", speaker: "Person 1"),
          Note(author: "CI (bot)", text: "=SUM(A1)", speaker: "Person 2"),
          Note(author: "Ben", text: "Blocked, on review", speaker: "Person 1"),
        ]),
      // Saved before notes kept their speaker: only its transcript.
      Meeting(
        id: UUID(2), date: Date(timeIntervalSince1970: 1_795_251_600), transcript: "Ana: Old note"),
    ]
    return standup
  }

  @Test func markdownGroupsNotesBySpeakerWithDateLengthAndWhoWasThere() {
    #expect(
      HistoryExport.markdown(standup) == """
        # Design, weekly: meeting history

        ## Sunday 22 November 2026, 09:00 UTC · 12 min 5 s

        Present: Ana, Ben, CI

        ### Person 1

        - **Ana**: Shipped "it"
        - **Ben**: Blocked, on review

        ### Person 2

        - **CI (bot)**: =SUM(A1)

        ## Saturday 21 November 2026, 09:00 UTC

        - **Ana**: Old note

        """)
  }

  /// A late note sent under no speaker, beside notes under one, has a heading of its own:
  /// without one it read as the last speaker's note.
  @Test func notesUnderNoSpeakerBesideNotesUnderOneHaveAHeading() {
    var standup = standup
    standup.meetings = [standup.meetings[0]]
    standup.meetings[0].notes.append(Note(author: "CI (bot)", text: "Late", speaker: ""))
    #expect(
      HistoryExport.markdown(standup).hasSuffix(
        """
        ### Person 2

        - **CI (bot)**: =SUM(A1)

        ### Other notes

        - **CI (bot)**: Late

        """))
  }

  @Test func csvHasARowPerNoteQuotedAndSafeFromFormulas() {
    let csv = HistoryExport.csv(standup)
    // A byte order mark first, for Excel to read it as UTF-8.
    #expect(csv.unicodeScalars.first == "\u{FEFF}")
    let rows = String(csv.dropFirst()).components(separatedBy: "\r\n")
    let first = "00000000-0000-0000-0000-000000000001"
    let second = "00000000-0000-0000-0000-000000000002"
    #expect(
      rows == [
        "meeting_id,date,length_seconds,present,speaker,author,note",
        "\(first),2026-11-22T09:00:00Z,725,Ana; Ben; CI,Person 1,Ana,\"Shipped \"\"it\"\"\"",
        "\(first),2026-11-22T09:00:00Z,725,Ana; Ben; CI,Person 1,Ben,\"Blocked, on review\"",
        "\(first),2026-11-22T09:00:00Z,725,Ana; Ben; CI,Person 2,CI (bot),'=SUM(A1)",
        "\(second),2026-11-21T09:00:00Z,0,,,Ana,Old note",
        "",
      ])
  }

  /// Asked for a time zone (the web app asks for its reader's), the headings' times are there,
  /// named by it: 09:00 UTC is 10:00 in Paris in November, and the day may change with it.
  @Test func markdownTimesAreInTheTimeZoneAskedFor() throws {
    let paris = try #require(TimeZone(identifier: "Europe/Paris"))
    let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
    let shown = HistoryExport.markdown(standup, timeZone: paris)
    #expect(shown.contains("## Sunday 22 November 2026, 10:00 (Europe/Paris) · 12 min 5 s\n"))
    #expect(
      HistoryExport.markdown(standup, timeZone: tokyo).contains(
        "## Sunday 22 November 2026, 18:00 (Asia/Tokyo)"))
    #expect(!shown.contains("UTC"))
    let utc = try #require(TimeZone(identifier: "Etc/UTC"))
    #expect(HistoryExport.markdown(standup, timeZone: utc) == HistoryExport.markdown(standup))
  }

  @Test func markdownShowsTextLiterally() {
    var standup = Standup.mock()
    standup.title = "*y* <b>"
    standup.meetings = [
      Meeting(
        id: UUID(3), date: Date(timeIntervalSince1970: 1_795_338_000), transcript: "",
        notes: [
          Note(author: "Ana_B", text: "see [x](y) `z` | a & b", speaker: "P ##"),
          Note(author: "Cy", text: "#1 done", speaker: "Q"),
        ])
    ]
    let markdown = HistoryExport.markdown(standup)
    #expect(markdown.hasPrefix("# \\*y\\* \\<b\\>: meeting history\n"))
    #expect(markdown.contains("- **Ana\\_B**: see \\[x\\](y) \\`z\\` \\| a \\& b\n"))
    // A heading's closing #s would be eaten: a speaker's "P ##" is shown whole.
    #expect(markdown.contains("### P \\#\\#\n"))
    #expect(markdown.contains("- **Cy**: \\#1 done\n"))
  }

  @Test func lengths() {
    #expect(HistoryExport.lengthText(45) == "45 s")
    #expect(HistoryExport.lengthText(300) == "5 min")
    #expect(HistoryExport.lengthText(725) == "12 min 5 s")
  }
}
