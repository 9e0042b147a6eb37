import Dependencies
import Foundation
import HashTreeCollections
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

@MainActor
@Suite(.serialized)
struct LobbyTests {
  @Test func addingAValidStandupAppendsIt() async {
    let store = TestStore(initialState: Lobby.State()) {
      Lobby()
    } withDependencies: {
      $0.uuid = .incrementing
    }
    await store.send(
      .addStandupSubmitted(
        .init(
          title: "  Design ", durationSeconds: 600, theme: "teal", attendeeNames: ["Ana", "Ben"]))
    ) {
      $0.standups = [
        Standup(
          id: UUID(0),
          attendees: [Attendee(id: UUID(1), name: "Ana"), Attendee(id: UUID(2), name: "Ben")],
          duration: .seconds(600), theme: .teal, title: "Design")
      ]
    }
  }

  @Test func invalidStandupsAreRejectedWithTheRule() async {
    let store = TestStore(initialState: Lobby.State()) {
      Lobby()
    } withDependencies: {
      $0.uuid = .incrementing
    }
    func new(
      title: String = "Design", seconds: Int = 300, theme: String = "orange",
      names: [String] = ["Ana"]
    ) -> Lobby.Action {
      .addStandupSubmitted(
        .init(title: title, durationSeconds: seconds, theme: theme, attendeeNames: names))
    }
    await store.send(
      new(title: " "), rejectedWith: .invalidValue("A standup needs a title."))
    // NB: a title of characters drawn as nothing (a Hangul filler, a braille blank) is none.
    await store.send(
      new(title: "\u{3164}\u{2800}"), rejectedWith: .invalidValue("A standup needs a title."))
    await store.send(
      new(title: String(repeating: "x", count: 101)),
      rejectedWith: .invalidValue("The title has 101 characters; it holds 100 at most."))
    // Control characters and invisible direction marks are refused in titles and names; so
    // is one character stacking 17 code points (a length counts characters, not bytes).
    let stacked = "e" + String(repeating: "\u{301}", count: 16)
    for bad in ["Design\nPlanning", "Design\u{0}", "\u{202E}ngiseD", "De\u{200B}sign", stacked] {
      await store.send(
        new(title: bad),
        rejectedWith: .invalidValue(
          "The title cannot contain control characters (such as line breaks), invisible marks (such as direction marks), or more than 15 marks stacked on one character."
        ))
      await store.send(
        new(names: ["Ana", bad]),
        rejectedWith: .invalidValue(
          "An attendee's name cannot contain control characters (such as line breaks), invisible marks (such as direction marks), or more than 15 marks stacked on one character."
        ))
    }
    for seconds in [240, 330, 1860] {
      await store.send(
        new(seconds: seconds),
        rejectedWith: .invalidValue(
          "The duration must be 5 to 30 whole minutes (300 to 1800 seconds, in steps of 60)."))
    }
    await store.send(
      new(names: []), rejectedWith: .invalidValue("A standup needs at least one attendee."))
    await store.send(
      new(names: Array(repeating: "A", count: 51)),
      rejectedWith: .quotaExceeded("A standup has at most 50 attendees.", limit: 50))
    await store.send(
      new(names: ["Ana", " "]),
      rejectedWith: .invalidValue("Every attendee needs a name."))
    await store.send(
      new(names: ["Ana", "\u{034F}"]),
      rejectedWith: .invalidValue("Every attendee needs a name."))
    await store.send(
      new(names: ["Ana", String(repeating: "b", count: 41)]),
      rejectedWith: .invalidValue("An attendee's name has 41 characters; it holds 40 at most."))
    await store.send(
      new(names: ["Ana", "Ben", " ana "]),
      rejectedWith: .invalidValue(
        "Two attendees are called \"ana\": give each a name of their own."))
    await store.send(
      new(theme: "beige"),
      rejectedWith: .invalidValue(
        "Unknown theme \"beige\": use one of bubblegum, buttercup, indigo, lavender, magenta, navy, orange, oxblood, periwinkle, poppy, purple, seafoam, sky, tan, teal, yellow."
      ))
  }

  @Test func emojiSequencesAndAccentsArePlainText() {
    // The longest emoji sequences (10 code points), a flag of tags, combining accents.
    for text in ["👩🏽‍❤️‍💋‍👨🏻", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "Zoë", "e\u{301}\u{302}", "नमस्ते"] {
      #expect(StandupRules.isPlainText(text), "\(text)")
    }
    // A character of 16 code points is the most: a letter and 15 marks, as the refusal says.
    #expect(StandupRules.isPlainText("e" + String(repeating: "\u{301}", count: 15)))
    #expect(!StandupRules.isPlainText("e" + String(repeating: "\u{301}", count: 16)))
  }

  @Test func roomsReportActivityAndChanges() async {
    var standup = Standup.mock()
    let store = TestStore(initialState: Lobby.State(standups: [standup])) { Lobby() }
    let live = Lobby.Live(participants: 2, meetingRunning: true)
    await store.send(.roomActivityChanged(standup.id, live)) { $0.live[standup.id] = live }
    standup.title = "Design sync"
    await store.send(.standupChanged(standup)) { $0.standups[0].title = "Design sync" }
    await store.send(.standupDeleted(standup.id)) {
      $0.standups = []
      $0.live = [:]
    }
  }

  /// A new standup that could not be saved goes again, and only it: one another node made
  /// meanwhile (heard of while the save was on its way) stays.
  @Test func aRefusedNewStandupGoesAndOnlyIt() async {
    let made = Standup(id: UUID(1), title: "Made here")
    let heard = Standup(id: UUID(2), title: "Made elsewhere")
    let store = TestStore(initialState: Lobby.State(standups: [made, heard])) { Lobby() }
    await store.send(
      .roomActivityChanged(made.id, Lobby.Live(participants: 1, meetingRunning: false))
    ) {
      $0.live[made.id] = Lobby.Live(participants: 1, meetingRunning: false)
    }
    await store.send(.saveFailed(added: [made.id])) {
      $0.standups = [heard]
      $0.live = [:]
    }
  }

  @Test func aTeamHasAtMost500Standups() async {
    var state = Lobby.State()
    for index in 0..<StandupRules.standupsPerTeam {
      state.standups.append(Standup(id: UUID(index + 1), title: "S\(index)"))
    }
    let store = TestStore(initialState: state) {
      Lobby()
    } withDependencies: {
      $0.uuid = .incrementing
    }
    await store.send(
      .addStandupSubmitted(
        .init(title: "One more", durationSeconds: 300, theme: "teal", attendeeNames: ["Ana"])),
      rejectedWith: .quotaExceeded(
        "This team has 500 standups, the most it can have: delete one first.", limit: 500))
  }
}
