import Foundation
import IdentifiedCollections
import JSONPatch
import StandupsFeatures
import Testing

@testable import StandupsWire

/// The JSON built by hand for what changes most often is exactly the `Encodable` encoding.
@Suite struct WireShapeTests {
  @Test(arguments: Activity.Kind.allCases)
  func anActivityIsWrittenAsItsEncoding(kind: Activity.Kind) throws {
    let by = Actor(id: "p-1", name: "Ana \"A\" \u{e9}")
    for detail in [nil, "Ben", ""] as [String?] {
      let activity = Activity(seq: 41, kind: kind, by: by, detail: detail)
      let encoded = try JSONValue(encoding: activity)
      #expect(activity.wireJSON == encoded, "detail: \(detail ?? "nil")")
    }
  }

  @Test func aMeetingIsWrittenAsItsEncodingInEveryState() throws {
    let standup = Standup(
      id: UUID(),
      attendees: [Attendee(id: UUID(), name: "Ana"), Attendee(id: UUID(), name: "Ben")],
      duration: .seconds(300), theme: .teal, title: "Design")
    var meeting = RecordMeeting.State(id: UUID(), standup: standup)
    var states = [meeting]
    meeting.secondsElapsed = 61
    meeting.speakerIndex = 1
    states.append(meeting)
    meeting.alert = .endMeeting
    states.append(meeting)
    meeting.alert = nil
    for reason in [RecordMeeting.State.PauseReason.everyoneLeft, .serverRestarted, .moved] {
      meeting.pausedBecause = reason
      states.append(meeting)
    }
    meeting.transcript = "Ana: a line\nBen: \u{1F600} and \"quotes\""
    states.append(meeting)
    for state in states {
      #expect(state.wireJSON == (try JSONValue(encoding: state)))
    }
  }
}
