import Foundation
import JSONPatch
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Testing

/// Every wire action a room or the lobby knows, read without a socket: what each becomes,
/// and the error each kind of bad input gets.
struct ActionDecodingTests {
  static let ana = Sender(participantID: "p1", name: "Ana", isBot: false)
  static let attendee = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
  static let meeting = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!

  /// A wire action: its type and the rest of its fields.
  struct Case: CustomTestStringConvertible, Sendable {
    var type: String
    var fields: [String: JSONValue] = [:]
    var testDescription: String { type + (fields.isEmpty ? "" : " \(JSONValue.object(fields))") }
    var action: [String: JSONValue] { fields.merging(["type": .string(type)]) { $1 } }
  }

  static let roomActions: [(Case, Room.Action)] = [
    (Case(type: "startMeetingButtonTapped"), .startMeetingButtonTapped),
    (
      Case(type: "meeting.nextButtonTapped", fields: ["from": 2]),
      .meeting(.presented(.nextButtonTapped(from: 2)))
    ),
    (Case(type: "meeting.nextButtonTapped"), .meeting(.presented(.nextButtonTapped(from: nil)))),
    (Case(type: "meeting.endMeetingButtonTapped"), .meeting(.presented(.endMeetingButtonTapped))),
    (Case(type: "meeting.alert.saveAndEnd"), .meeting(.presented(.alert(.saveAndEnd)))),
    (Case(type: "meeting.alert.discard"), .meeting(.presented(.alert(.discard)))),
    (Case(type: "meeting.alert.resume"), .meeting(.presented(.alert(.resume)))),
    (Case(type: "meeting.resumeButtonTapped"), .meeting(.presented(.resumeButtonTapped))),
    (
      Case(type: "meeting.noteSubmitted", fields: ["text": "Shipped it"]),
      .meeting(.presented(.noteSubmitted(author: "Ana", text: "Shipped it")))
    ),
    (
      Case(type: "meeting.noteSubmitted", fields: ["text": "Shipped it", "id": "n-1"]),
      .meeting(.presented(.noteSubmitted(author: "Ana", text: "Shipped it", id: "n-1")))
    ),
    (
      Case(type: "meeting.noteSubmitted", fields: ["text": "Shipped it", "id": nil]),
      .meeting(.presented(.noteSubmitted(author: "Ana", text: "Shipped it")))
    ),
    (
      Case(type: "meeting.noteSubmitted", fields: ["text": "Shipped it", "speaker": "Blob"]),
      .meeting(.presented(.noteSubmitted(author: "Ana", text: "Shipped it", speaker: "Blob")))
    ),
    (
      Case(type: "meeting.noteSubmitted", fields: ["text": "Shipped it", "speaker": nil]),
      .meeting(.presented(.noteSubmitted(author: "Ana", text: "Shipped it")))
    ),
    (
      Case(
        type: "history.noteSubmitted",
        fields: ["meeting": .string(meeting.uuidString.lowercased()), "text": "Late"]),
      .historyNoteSubmitted(meeting: meeting, author: "Ana", text: "Late", speaker: nil)
    ),
    (
      Case(
        type: "history.noteSubmitted",
        fields: ["meeting": .string(meeting.uuidString), "text": "Late", "speaker": "Ben"]),
      .historyNoteSubmitted(meeting: meeting, author: "Ana", text: "Late", speaker: "Ben")
    ),
    (Case(type: "editButtonTapped"), .editButtonTapped),
    (
      Case(type: "edit.binding", fields: ["path": "/title", "value": "Retro"]),
      .destination(.presented(.edit(.binding(.set(\.$title, "Retro")))))
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/duration", "value": 600]),
      .destination(.presented(.edit(.binding(.set(\.$duration, .seconds(600))))))
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/theme", "value": "navy"]),
      .destination(.presented(.edit(.binding(.set(\.$theme, .navy)))))
    ),
    (
      Case(
        type: "edit.binding",
        fields: ["path": .string("/attendees/\(attendee.uuidString)/name"), "value": "Robin"]),
      .destination(.presented(.edit(.binding(.set(\.$attendees, \.[nameOf: attendee], "Robin")))))
    ),
    (
      Case(
        type: "edit.binding", fields: ["path": "/title", "value": "Daily sync", "base": "Daily"]),
      .destination(.presented(.edit(.typed(in: .title, base: "Daily", value: "Daily sync"))))
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/title", "value": "Retro", "base": nil]),
      .destination(.presented(.edit(.binding(.set(\.$title, "Retro")))))
    ),
    (
      Case(
        type: "edit.binding",
        fields: [
          "path": .string("/attendees/\(attendee.uuidString)/name"), "value": "Robin",
          "base": "Rob",
        ]),
      .destination(.presented(.edit(.typed(in: .attendee(attendee), base: "Rob", value: "Robin"))))
    ),
    (
      Case(type: "edit.addAttendeeButtonTapped"),
      .destination(.presented(.edit(.addAttendeeButtonTapped)))
    ),
    (
      Case(type: "edit.deleteAttendeesTapped", fields: ["ids": [.string(attendee.uuidString)]]),
      .destination(.presented(.edit(.deleteAttendeesTapped(ids: [attendee]))))
    ),
    (Case(type: "saveEditButtonTapped"), .saveEditButtonTapped),
    (Case(type: "cancelEditButtonTapped"), .cancelEditButtonTapped),
    (Case(type: "deleteButtonTapped"), .deleteButtonTapped),
    (Case(type: "alert.confirmDeletion"), .destination(.presented(.alert(.confirmDeletion)))),
    (Case(type: "alert.dismissed"), .destination(.presented(.alert(.dismissed)))),
    (Case(type: "undoButtonTapped", fields: ["seq": 3]), .undoButtonTapped(seq: 3)),
    (
      Case(type: "focusChanged", fields: ["field": "title"]),
      .focusChanged(participant: "p1", field: .title)
    ),
    (
      Case(type: "focusChanged", fields: ["field": .string("attendee:\(attendee.uuidString)")]),
      .focusChanged(participant: "p1", field: .attendee(attendee))
    ),
    (
      Case(type: "focusChanged", fields: ["field": nil]),
      .focusChanged(participant: "p1", field: nil)
    ),
    (Case(type: "focusChanged"), .focusChanged(participant: "p1", field: nil)),
  ]

  @Test(arguments: roomActions)
  func aRoomActionReadsAsWhatThePersonDid(_ wire: Case, _ expected: Room.Action) throws {
    #expect(
      try ActionDecoding.roomAction(wire.action, type: wire.type, sender: Self.ana) == expected)
  }

  static let badRoomActions: [(Case, WireError.Code, String)] = [
    (Case(type: "dance"), .unknownAction, "This room does not know the action \"dance\"."),
    (Case(type: "meeting.noteSubmitted"), .invalidValue, "\"text\" must be a string"),
    (Case(type: "meeting.noteSubmitted", fields: ["text": 5]), .invalidValue, "\"text\""),
    (
      Case(type: "meeting.noteSubmitted", fields: ["text": "a", "id": ""]), .invalidValue,
      "\"id\" must be a string of 1 to 64 characters"
    ),
    (
      Case(type: "meeting.noteSubmitted", fields: ["text": "a", "id": 7]), .invalidValue,
      "\"id\" must be a string of 1 to 64 characters"
    ),
    (
      Case(type: "meeting.noteSubmitted", fields: ["text": "a", "speaker": 1]), .invalidValue,
      "\"speaker\" must be the name of the attendee the note is about, or left out."
    ),
    (
      Case(
        type: "meeting.noteSubmitted",
        fields: ["text": "a", "id": .string(String(repeating: "x", count: 65))]),
      .invalidValue, "\"id\" must be a string of 1 to 64 characters"
    ),
    (
      Case(type: "history.noteSubmitted", fields: ["text": "Late"]), .invalidValue,
      "\"meeting\" must be the id of a meeting in the history."
    ),
    (
      Case(type: "history.noteSubmitted", fields: ["meeting": "yesterday", "text": "Late"]),
      .invalidValue, "\"meeting\" must be the id"
    ),
    (
      Case(type: "history.noteSubmitted", fields: ["meeting": .string(meeting.uuidString)]),
      .invalidValue, "\"text\" must be a string"
    ),
    (
      Case(
        type: "history.noteSubmitted",
        fields: ["meeting": .string(meeting.uuidString), "text": "Late", "speaker": 3]),
      .invalidValue, "\"speaker\" must be an attendee's name, or null."
    ),
    (
      Case(type: "meeting.nextButtonTapped", fields: ["from": "two"]), .invalidValue,
      "\"from\" must be a whole number."
    ),
    (Case(type: "edit.binding"), .invalidValue, "\"path\" must be /title"),
    (
      Case(type: "edit.binding", fields: ["path": "/standup", "value": 1]), .invalidValue,
      "\"/standup\" cannot be edited"
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/title", "value": 1]), .invalidValue,
      "The title must be a string"
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/duration", "value": "long"]), .invalidValue,
      "The duration must be whole seconds"
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/theme", "value": "beige"]), .invalidValue,
      "The theme must be one of"
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/title", "value": "Retro", "base": 3]),
      .invalidValue, "\"base\" must be a string: the field's text the change started from."
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/theme", "value": "navy", "base": "teal"]),
      .invalidValue, "\"base\" goes only with a text field"
    ),
    (
      Case(type: "edit.binding", fields: ["path": "/attendees/7/name", "value": "A"]),
      .invalidValue, "Attendees are addressed by id"
    ),
    (
      Case(type: "edit.deleteAttendeesTapped", fields: ["ids": ["x"]]), .invalidValue,
      "\"ids\" must be a list of attendee ids (UUIDs)."
    ),
    (
      Case(type: "edit.deleteAttendeesTapped"), .invalidValue,
      "\"ids\" must be a list of attendee ids."
    ),
    (Case(type: "undoButtonTapped"), .invalidValue, "\"seq\" must be the number"),
    (Case(type: "focusChanged", fields: ["field": 3]), .invalidValue, "\"field\" is \"title\""),
    (
      Case(type: "focusChanged", fields: ["field": "attendee:7"]), .invalidValue,
      "Focus is \"title\""
    ),
  ]

  @Test(arguments: badRoomActions)
  func badInputGetsItsCodeAndASentenceToActOn(
    _ wire: Case, _ code: WireError.Code, _ message: String
  ) {
    #expect(throws: WireError.self) {
      try ActionDecoding.roomAction(wire.action, type: wire.type, sender: Self.ana)
    }
    do {
      _ = try ActionDecoding.roomAction(wire.action, type: wire.type, sender: Self.ana)
    } catch {
      #expect(error.code == code)
      #expect(error.message.hasPrefix(message), "\(error.message)")
    }
  }

  @Test func aBotMayDoWhatItsScopeAllowsAndSignsItsNotes() throws {
    let notes = Sender(participantID: "b1", name: "Deploy", isBot: true, scope: .notes)
    let drive = Sender(participantID: "b2", name: "Driver", isBot: true, scope: .drive)
    let note = try ActionDecoding.roomAction(
      ["type": "meeting.noteSubmitted", "text": "v2 is out"], type: "meeting.noteSubmitted",
      sender: notes)
    #expect(
      note
        == .meeting(
          .presented(.noteSubmitted(author: "Deploy (bot)", text: "v2 is out", by: "Deploy (bot)")))
    )
    // A person's note says whose sign-in sent it: another of the same name is someone else.
    let uma = Sender(participantID: "p9", name: "Uma", person: "k9", isBot: false)
    #expect(
      try ActionDecoding.roomAction(
        ["type": "meeting.noteSubmitted", "text": "Hi", "id": "n1"], type: "meeting.noteSubmitted",
        sender: uma)
        == .meeting(.presented(.noteSubmitted(author: "Uma", text: "Hi", id: "n1", by: "k9"))))
    #expect(
      try ActionDecoding.roomAction(
        ["type": "startMeetingButtonTapped"], type: "startMeetingButtonTapped", sender: drive)
        == .startMeetingButtonTapped)
    let refused: [(Sender, String, String)] = [
      (notes, "startMeetingButtonTapped", "This bot's token allows notes only"),
      (drive, "deleteButtonTapped", "This bot's token allows drive only"),
      (drive, "editButtonTapped", "This bot's token allows drive only"),
    ]
    for (sender, type, message) in refused {
      do {
        _ = try ActionDecoding.roomAction(["type": .string(type)], type: type, sender: sender)
        Issue.record("\(type) was allowed to \(sender.name)")
      } catch {
        #expect(error.code == .forbidden)
        #expect(error.message.hasPrefix(message), "\(error.message)")
      }
    }
    // A misspelt action is unknown, whoever sends it: not "needs admin".
    do {
      _ = try ActionDecoding.roomAction(["type": "strat"], type: "strat", sender: notes)
      Issue.record("a misspelt action was read")
    } catch {
      #expect(error.code == .unknownAction)
    }
  }

  @Test func theLobbyReadsANewStandupAndRefusesTheRest() throws {
    let standup: JSONValue = [
      "title": "Design", "duration": 600, "theme": "sky", "attendees": [["name": "Ana"]],
    ]
    #expect(
      try ActionDecoding.lobbyAction(
        ["type": "addStandupSubmitted", "standup": standup], type: "addStandupSubmitted",
        sender: Self.ana)
        == .addStandupSubmitted(
          .init(title: "Design", durationSeconds: 600, theme: "sky", attendeeNames: ["Ana"])))
    let bad: [([String: JSONValue], WireError.Code, String)] = [
      (["type": "addStandupSubmitted"], .invalidValue, "\"standup\" must be an object"),
      (
        ["type": "addStandupSubmitted", "standup": ["duration": 600]], .invalidValue,
        "\"standup.title\""
      ),
      (
        [
          "type": "addStandupSubmitted",
          "standup": ["title": "T", "duration": 600, "theme": "sky"],
        ],
        .invalidValue, "\"standup.attendees\""
      ),
      (["type": "renameLobby"], .unknownAction, "The lobby does not know the action"),
    ]
    for (action, code, message) in bad {
      do {
        _ = try ActionDecoding.lobbyAction(
          action, type: action["type"]?.stringValue ?? "", sender: Self.ana)
        Issue.record("\(action) was read")
      } catch {
        #expect(error.code == code)
        #expect(error.message.hasPrefix(message), "\(error.message)")
      }
    }
    let notes = Sender(participantID: "b1", name: "Deploy", isBot: true, scope: .notes)
    #expect(throws: WireError.self) {
      try ActionDecoding.lobbyAction(
        ["type": "addStandupSubmitted", "standup": standup], type: "addStandupSubmitted",
        sender: notes)
    }
  }

  /// Who may take whose place in a room (`?replaces=`): the one that names the old
  /// connection's key, and is the same sign-in, the same bot, or on a server nobody signs
  /// in to, the same name.
  @Test func aSenderReplacesOnlyItself() {
    func person(_ name: String, _ person: String?, key: String? = "k") -> Sender {
      Sender(participantID: UUID().uuidString, name: name, person: person, isBot: false, key: key)
    }
    func bot(_ name: String) -> Sender {
      Sender(participantID: UUID().uuidString, name: name, isBot: true, scope: .drive, key: "k")
    }
    var cases: [(Sender, Sender, String, Bool, String)] = [
      (person("Ben", "p1"), person("Ben", "p1"), "k", true, "one sign-in"),
      (person("Ben", "p1"), person("Ben2", "p1"), "k", true, "one sign-in, renamed since"),
      (person("Ben", "p1"), person("Ben", "p1"), "k2", false, "another key"),
      (person("Ben", "p1"), person("Ben", "p1", key: nil), "k", false, "a connection without one"),
      (person("Ben", "p2"), person("Ben", "p1"), "k", false, "another sign-in of the name"),
      (person("Ben", nil), person("Ben", "p1"), "k", false, "no sign-in for a signed-in one"),
      (person("Ana", nil), person("Ana", nil), "k", true, "an open server: the name"),
      (person("Cy", nil), person("Ana", nil), "k", false, "an open server: another name"),
      (bot("CI"), bot("CI"), "k", true, "the same bot"),
      (bot("Deploy"), bot("CI"), "k", false, "another bot"),
      (person("CI", nil), bot("CI"), "k", false, "a person for a bot"),
      (bot("CI"), person("CI", nil), "k", false, "a bot for a person"),
    ]
    var replaced = person("Ben", "p1", key: "k3")
    replaced.formerKey = "k"
    cases.append((person("Ben", "p1"), replaced, "k", true, "one that took the named key's place"))
    for (new, old, key, expected, why) in cases {
      #expect(new.mayReplace(old, naming: key) == expected, "\(why)")
    }
    let keys = Set((0..<100).map { _ in Sender.newKey() })
    #expect(keys.count == 100 && keys.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
  }
}
