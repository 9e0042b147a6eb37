import Fixtures
import Foundation
import HashTreeCollections
import IdentifiedCollections
import JSONPatch
import Logging
import StandupsFeatures
import StandupsWire
import Testing

@testable import StandupsServer

@Suite struct IncrementalEncodingTests {
  /// Every way a room's state changes, one after the other: the reused encoding must be
  /// exactly the whole encoding each time.
  @Test func reusingUnchangedPartsGivesTheSameJSONAsEncodingItAll() throws {
    var state = Room.State(standup: .design)
    var steps: [(String, (inout Room.State) -> Void)] = [
      ("join", { $0.participants.append(Participant(id: "p1", name: "Ana")) }),
      ("focus", { $0.participants[0].focus = .title }),
      ("edit", { $0.destination = .edit(StandupForm.State(standup: $0.standup)) }),
      (
        "draft",
        {
          guard case .edit(var form) = $0.destination else { return }
          form.title = "New"
          $0.destination = .edit(form)
        }
      ),
      ("alert", { $0.destination = .alert(.confirmDeletion) }),
      ("close", { $0.destination = nil }),
      ("start", { $0.meeting = RecordMeeting.State(id: UUID(), standup: $0.standup) }),
      ("note", { $0.meeting?.transcript = "Ana: hi" }),
      // The same meeting changing in several fields at once, then in each kind of field.
      (
        "next speaker",
        {
          $0.meeting?.speakerIndex = 1
          $0.meeting?.secondsElapsed = 60
        }
      ),
      ("pause", { $0.meeting?.pausedBecause = .everyoneLeft }),
      ("resume", { $0.meeting?.pausedBecause = nil }),
      ("alert", { $0.meeting?.alert = .endMeeting }),
      ("alert closed", { $0.meeting?.alert = nil }),
      // Another meeting in its place: encoded whole.
      ("another meeting", { $0.meeting = RecordMeeting.State(id: UUID(), standup: $0.standup) }),
      (
        "save",
        {
          $0.standup.meetings.insert(
            Meeting(id: UUID(), date: Date(timeIntervalSince1970: 0), transcript: "x"), at: 0)
          $0.meeting = nil
        }
      ),
      ("rename", { $0.standup.title = "Renamed" }),
      ("leave", { $0.participants = [] }),
    ]
    for tick in 1...3 {
      steps.insert(("tick \(tick)", { $0.meeting?.secondsElapsed += 1 }), at: 8)
    }
    var previous = state
    var json = try JSONValue(encoding: state)
    for (name, change) in steps {
      change(&state)
      let before = json
      let patch = try RoomStateEncoder().encode(state, previous: previous, json: &json)
      #expect(json == (try JSONValue(encoding: state)), "after \(name)")
      #expect(try JSONPatch.apply(patch, to: before) == json, "after \(name)")
      #expect(patch == JSONPatch.diff(before, json), "after \(name)")
      previous = state
    }
  }
}

@Suite struct LobbyEncodingTests {
  /// Joins, leaves, meetings, new, renamed and deleted standups: the reused encoding must be
  /// exactly the whole encoding each time, and a join must cost one summary, not all of them.
  @Test func reusingUnchangedSummariesGivesTheSameJSONAsEncodingItAll() throws {
    let others = (0..<3).map { index in
      Standup(
        id: UUID(), attendees: [Attendee(id: UUID(), name: "A\(index)")], duration: .seconds(300),
        theme: .teal, title: "Team \(index)")
    }
    var state = Lobby.State(standups: IdentifiedArray(uniqueElements: [.design] + others))
    let design = Standup.design.id
    let steps: [(String, (inout Lobby.State) -> Void)] = [
      ("join", { $0.live[design] = Lobby.Live(participants: 1, meetingRunning: false) }),
      ("second join", { $0.live[design]?.participants = 2 }),
      ("meeting", { $0.live[design]?.meetingRunning = true }),
      (
        "another room",
        { $0.live[others[1].id] = Lobby.Live(participants: 1, meetingRunning: false) }
      ),
      (
        "new standup",
        {
          $0.standups.append(
            Standup(
              id: UUID(), attendees: [Attendee(id: UUID(), name: "B")], duration: .seconds(600),
              theme: .sky, title: "New"))
        }
      ),
      ("rename", { $0.standups[id: others[0].id]?.title = "Renamed" }),
      ("attendee", { $0.standups[id: design]?.attendees.append(Attendee(id: UUID(), name: "C")) }),
      (
        "history only",
        {
          $0.standups[id: design]?.meetings.insert(
            Meeting(id: UUID(), date: Date(timeIntervalSince1970: 0), transcript: "x"), at: 0)
        }
      ),
      (
        "delete",
        {
          $0.standups.remove(id: others[1].id)
          $0.live[others[1].id] = nil
        }
      ),
      ("empty", { $0.live[design] = nil }),
    ]
    var previous = state
    var json = try JSONValue(encoding: state)
    for (name, change) in steps {
      change(&state)
      let before = json
      let patch = try LobbyStateEncoder().encode(state, previous: previous, json: &json)
      #expect(json == (try JSONValue(encoding: state)), "after \(name)")
      #expect(try JSONPatch.apply(patch, to: before) == json, "after \(name)")
      previous = state
    }
    // A join in one room: one operation, on that room's summary only.
    state.live[others[2].id] = Lobby.Live(participants: 1, meetingRunning: false)
    let operations = try LobbyStateEncoder().encode(state, previous: previous, json: &json)
    #expect(operations.count == 1)
    #expect(operations.first?.json["path"] == "/standups/2/live")
  }
}
