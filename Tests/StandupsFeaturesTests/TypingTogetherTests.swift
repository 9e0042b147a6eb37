import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

/// Two people typing in one field of the shared draft: both keep what they typed.
@MainActor
@Suite(.serialized)
struct TypingTogetherTests {
  /// A merge: the text both started from, what was sent, what the field holds, the result.
  struct Merge: CustomTestStringConvertible, Sendable {
    var base: String
    var mine: String
    var theirs: String
    var merged: String
    var testDescription: String { "\(base) + mine \(mine) + theirs \(theirs)" }
  }

  nonisolated static let merges: [Merge] = [
    // Nothing else changed, or only one side did.
    Merge(base: "Daily", mine: "Daily sync", theirs: "Daily", merged: "Daily sync"),
    Merge(base: "Daily", mine: "Daily", theirs: "Team daily", merged: "Team daily"),
    Merge(base: "Daily", mine: "Daily sync", theirs: "Daily sync", merged: "Daily sync"),
    // Different places: both.
    Merge(base: "Daily", mine: "Daily sync", theirs: "Team Daily", merged: "Team Daily sync"),
    Merge(base: "Daily", mine: "Team Daily", theirs: "Daily sync", merged: "Team Daily sync"),
    Merge(
      base: "Design review", mine: "Design sync review", theirs: "Design review (weekly)",
      merged: "Design sync review (weekly)"),
    Merge(base: "Design review", mine: "Design", theirs: "Big Design review", merged: "Big Design"),
    // Several changes on a side (typed while one was on its way): each where it was.
    Merge(base: "abcdef", mine: "XabcdefY", theirs: "abcZdef", merged: "XabcZdefY"),
    Merge(
      base: "one two three", mine: "One two three!", theirs: "one 2 three",
      merged: "One 2 three!"),
    Merge(base: "ab", mine: "aXbY", theirs: "aXb", merged: "aXbY"),
    // Both added at the same place: theirs came first.
    Merge(base: "Daily", mine: "Daily sync", theirs: "Daily standup", merged: "Daily standup sync"),
    Merge(base: "", mine: "Ana", theirs: "Ben", merged: "BenAna"),
    // The same change sent twice (again after a dropped connection): made once.
    Merge(base: "Daily", mine: "Daily!", theirs: "Daily!", merged: "Daily!"),
    Merge(base: "ab", mine: "aXb", theirs: "aXb", merged: "aXb"),
    // The same characters changed on both sides: what either took out is out, what each put in stays.
    Merge(base: "Daily", mine: "Weekly", theirs: "Monthly", merged: "MonthWeekly"),
    // One deleted a word while the other typed inside it: the word goes, the typing stays.
    Merge(base: "Design review", mine: "review", theirs: "DesZZZign review", merged: "ZZZreview"),
    Merge(base: "abcdef", mine: "aXef", theirs: "abcYf", merged: "aXYf"),
    Merge(base: "Daily", mine: "", theirs: "Dally", merged: "l"),
    // A word taken out beside a word put in: each whole, never one inside the other (a diff
    // may first find "two " taken out as "wo t").
    Merge(
      base: "one two three", mine: "one three", theirs: "one two 2 three", merged: "one 2 three"),
    Merge(
      base: "one two three", mine: "one two 2 three", theirs: "one three", merged: "one 2 three"),
    // Characters, never halves of one: a family emoji is one character of seven scalars.
    Merge(base: "👨‍👩‍👧", mine: "👨‍👩‍👧 team", theirs: "Our 👨‍👩‍👧", merged: "Our 👨‍👩‍👧 team"),
    Merge(base: "e", mine: "e\u{301}", theirs: "ex", merged: "e\u{301}x"),
    // é typed as one scalar or as e and an accent is the same character.
    Merge(base: "cafe\u{301}", mine: "caf\u{e9}", theirs: "cafe\u{301}!", merged: "cafe\u{301}!"),
    Merge(base: "cafe\u{301}", mine: "cafe\u{301}", theirs: "caf\u{e9}!", merged: "caf\u{e9}!"),
    // A cluster of scripts other than Latin is one character too (Devanagari "kṣa").
    Merge(base: "क्ष", mine: "क्ष!", theirs: "¡क्ष", merged: "¡क्ष!"),
  ]

  @Test(arguments: merges)
  nonisolated func aMergeKeepsWhatBothTyped(_ merge: Merge) {
    #expect(
      TextMerge.merge(base: merge.base, mine: merge.mine, theirs: merge.theirs) == merge.merged)
  }

  @Test nonisolated func textTooLongToBeAFieldIsNotMergedButTakenAsSent() {
    let long = String(repeating: "x", count: TextMerge.maxLength + 1)
    #expect(TextMerge.merge(base: "Daily", mine: long, theirs: "Team Daily") == long)
  }

  func makeStore() -> TestStore<Room> {
    var state = Room.State(standup: .mock())
    state.participants = [Participant(id: "p1", name: "Ana"), Participant(id: "p2", name: "Ben")]
    state.destination = .edit(StandupForm.State(standup: .mock()))
    return TestStore(initialState: state) { Room() }
  }

  func typed(_ field: Focus, from base: String, to value: String) -> Room.Action {
    .destination(.presented(.edit(.typed(in: field, base: base, value: value))))
  }

  /// Changes the open draft in `state`.
  func editing(_ state: inout Room.State, _ change: (inout StandupForm.State) -> Void) {
    guard case .edit(var form) = state.destination else { return }
    change(&form)
    state.destination = .edit(form)
  }

  @Test func twoPeopleTypingInTheTitleAtOnceBothKeepWhatTheyTyped() async {
    let store = makeStore()
    // Ana and Ben both start from "Design"; Ben's change reaches the room first.
    await store.send(typed(.title, from: "Design", to: "Team Design")) {
      editing(&$0) { $0.title = "Team Design" }
    }
    await store.send(typed(.title, from: "Design", to: "Design review")) {
      editing(&$0) { $0.title = "Team Design review" }
    }
    // Ana types on from what she sent; Ben's change is not taken back.
    await store.send(typed(.title, from: "Design review", to: "Design review!")) {
      editing(&$0) { $0.title = "Team Design review!" }
    }
  }

  @Test func twoPeopleTypingInOneAttendeesNameBothKeepWhatTheyTyped() async {
    let store = makeStore()
    let second = Standup.mock().attendees[1].id
    await store.send(typed(.attendee(second), from: "Person 2", to: "Dr Person 2")) {
      editing(&$0) { $0.attendees[id: second]?.name = "Dr Person 2" }
    }
    await store.send(typed(.attendee(second), from: "Person 2", to: "Person 2 (QA)")) {
      editing(&$0) { $0.attendees[id: second]?.name = "Dr Person 2 (QA)" }
    }
  }

  @Test func aMergeThatBreaksARuleIsRefusedAndChangesNothing() async {
    let store = makeStore()
    let ninetyFour = String(repeating: "x", count: 94)
    await store.send(typed(.title, from: "Design", to: "Design" + ninetyFour)) {
      editing(&$0) { $0.title = "Design" + ninetyFour }
    }
    // Each side fits in 100 characters; together they would not.
    await store.send(
      typed(.title, from: "Design", to: "Big Design"),
      rejectedWith: .invalidValue(
        "With what others typed meanwhile, the title would have 104 characters; "
          + "it holds 100 at most."))
    await store.send(
      typed(.title, from: "Design", to: String(repeating: "y", count: 101)),
      rejectedWith: .invalidValue("The title has 101 characters; it holds 100 at most."))
    let gone = UUID(9999)
    await store.send(
      typed(.attendee(gone), from: "Blob", to: "Blob Jr"),
      rejectedWith: .invalidValue("That attendee was removed from the draft."))
  }
}
