import Dependencies
import Foundation
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import StoreRuntime
import Testing

@testable import StandupsWire

@Suite struct LobbyStateEncoderTests {
  /// Random creations, edits, deletions, joins and leaves through the lobby's reducer: after
  /// each, the patch the encoder writes from the action alone rebuilds exactly the whole
  /// encoding, and touches only the summary the action names.
  @Test func patchesWrittenFromTheActionRebuildTheWholeEncoding() throws {
    var generator = RandomInputTests.Generator(state: 7)
    let lobby = Lobby().core
    var state = Lobby.State()
    var previous = state
    var json = try JSONValue(encoding: state)
    var written = 0
    try withDependencies {
      $0.uuid = .incrementing
    } operation: {
      for step in 0..<600 {
        let ids = Array(state.standups.ids)
        let someID = ids.isEmpty ? UUID() : ids[Int(generator.next() % UInt64(ids.count))]
        let action: Lobby.Action
        switch generator.next() % 10 {
        case 0, 1:
          action = .addStandupSubmitted(
            Lobby.NewStandup(
              title: "Standup \(step)", durationSeconds: 300, theme: "sky",
              attendeeNames: ["Ana", "Ben"]))
        case 2:
          guard var standup = state.standups[id: someID] else { continue }
          standup.title = "Renamed \(step)"
          action = .standupChanged(standup)
        case 3 where generator.next() % 3 == 0:
          action = .standupDeleted(someID)
        case 4:
          action = .roomActivityChanged(someID, nil)
        default:
          let people = Int(generator.next() % 4)
          action = .roomActivityChanged(
            someID,
            Lobby.Live(
              participants: people, meetingRunning: generator.next() % 2 == 0,
              people: (0..<people).map { "P\($0)" }))
        }
        guard lobby.reduce(into: &state, action: action).rejection == nil else { continue }
        // NB: every action the lobby takes here names its standup: none needs the whole lobby.
        #expect(
          try LobbyStateEncoder.change(after: action, state, previous) != nil,
          "step \(step): \(action) should be encoded from the action alone")
        let before = json
        let patch = try LobbyStateEncoder().encode(
          state, previous: previous, json: &json, after: action)
        #expect(json == (try JSONValue(encoding: state)), "step \(step): \(action)")
        #expect(try JSONPatch.apply(patch, to: before) == json, "step \(step)")
        let paths = Set(patch.map { $0.json["path"]?.stringValue?.split(separator: "/").prefix(2) })
        #expect(paths.count <= 1, "step \(step): \(action) touched \(paths)")
        written += patch.isEmpty ? 0 : 1
        previous = state
      }
    }
    #expect(written > 300)
    #expect(state.standups.count > 20)
  }
}
