import Foundation
import IdentifiedCollections
import JSONPatch
import Logging
import StandupsFeatures
@testable import StandupsServer
import Testing

@Suite struct IncrementalEncodingTests {
  /// Every way a room's state changes, one after the other: the reused encoding must be
  /// exactly the whole encoding each time.
  @Test func reusingUnchangedPartsGivesTheSameJSONAsEncodingItAll() throws {
    let feature = StandupRoomFeature(
      standupID: Standup.design.id, storage: .inMemory(), lobby: LobbyNotifier(),
      logger: Logger(label: "test"))
    var state = Room.State(standup: .design)
    var steps: [(String, (inout Room.State) -> Void)] = [
      ("join", { $0.participants.append(Participant(id: "p1", name: "Ana")) }),
      ("focus", { $0.participants[0].focus = "title" }),
      ("edit", { $0.destination = .edit(StandupForm.State(standup: $0.standup)) }),
      ("draft", {
        guard case .edit(var form) = $0.destination else { return }
        form.title = "New"
        $0.destination = .edit(form)
      }),
      ("alert", { $0.destination = .alert(.confirmDeletion) }),
      ("close", { $0.destination = nil }),
      ("start", { $0.meeting = RecordMeeting.State(id: UUID(), standup: $0.standup) }),
      ("note", { $0.meeting?.transcript = "Ana: hi" }),
      ("save", {
        $0.standup.meetings.insert(Meeting(id: UUID(), date: Date(timeIntervalSince1970: 0), transcript: "x"), at: 0)
        $0.meeting = nil
      }),
      ("rename", { $0.standup.title = "Renamed" }),
      ("leave", { $0.participants = [] }),
    ]
    for tick in 1...3 {
      steps.insert(("tick \(tick)", { $0.meeting?.secondsElapsed += 1 }), at: 8)
    }
    var previous = (state: state, json: try JSONValue(encoding: state))
    for (name, change) in steps {
      change(&state)
      let reused = try feature.encode(state, previous: previous)
      #expect(reused == (try JSONValue(encoding: state)), "after \(name)")
      previous = (state, reused)
    }
  }
}
