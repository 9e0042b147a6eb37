import Foundation
import JSONPatch
import StandupsFeatures
import StoreRuntime

/// Who sent an action: the server fills in what the wire does not carry.
public struct Sender: Sendable {
  public var participantID: String
  public var name: String
  /// The same for every connection of one sign-in, and for no other (`Participant.person`);
  /// nil without a session (a bot, anyone on an `--open` server).
  public var person: String?
  public var isBot: Bool
  /// What a bot may do; nil for a person (everything).
  public var scope: BotScope?
  /// Where it connects from (per-address limits).
  public var address: String
  /// A secret only this connection is told (its welcome's `key`): a later connection of the
  /// same client names it to take this one's place (`?replaces=`). Unlike `participantID`,
  /// which everyone in the room sees, nobody else can name it. Nil: nothing can replace it.
  public var key: String?
  /// The key this connection named when it joined (`?replaces=`): it answers to it too, so
  /// that a client whose welcome was lost, and so still holds the older key, replaces it.
  public var formerKey: String?

  public init(
    participantID: String, name: String, person: String? = nil, isBot: Bool,
    scope: BotScope? = nil, address: String = "", key: String? = nil
  ) {
    self.participantID = participantID
    self.name = name
    self.person = person
    self.isBot = isBot
    self.scope = scope
    self.address = address
    self.key = key
  }

  /// A new connection's `key`: 128 random bits, in hex.
  public static func newKey() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<2).map { _ in
      let hex = String(generator.next() as UInt64, radix: 16)
      return String(repeating: "0", count: 16 - hex.count) + hex
    }.joined()
  }

  /// Whether this sender may take the place of `other`, whose `key` it named (a page that
  /// reconnects after a drop the server has not noticed yet). The key proves it was told it;
  /// the sign-in must match too, so that a key that leaked serves no one else: the same
  /// sign-in, the same bot (bot names are unique), or — where nobody signs in (an `--open`
  /// server) — the same name, which is all such a server knows.
  public func mayReplace(_ other: Sender, naming key: String) -> Bool {
    guard other.answers(to: key) else { return false }
    guard isBot == other.isBot, person == other.person else { return false }
    return person != nil || name == other.name
  }

  /// Whether `key` names this connection: its own, or the one it named when it joined.
  public func answers(to key: String) -> Bool {
    self.key == key || formerKey == key
  }

  /// Refuses an action this sender's scope does not allow.
  public func check(_ type: String, needs needed: BotScope) throws(WireError) {
    guard let scope, scope < needed else { return }
    throw WireError(
      .forbidden,
      "This bot's token allows \(scope.rawValue) only: \"\(type)\" needs \(needed.rawValue).")
  }

  /// The name a note is signed with: a bot's says so.
  public var author: String { isBot ? "\(name) (bot)" : name }
}

/// Turns a wire action (`{"type":"meeting.nextButtonTapped","from":2}`) into a feature action.
public enum ActionDecoding {
  public static func roomAction(_ action: [String: JSONValue], type: String, sender: Sender)
    throws(WireError)
    -> Room.Action
  {
    // NB: decoded first, so that a misspelt action is `unknown_action`, not "needs admin".
    let decoded = try decodeRoomAction(action, type: type, sender: sender)
    try sender.check(type, needs: BotScope.needed(forRoomAction: type))
    return decoded
  }

  private static func decodeRoomAction(_ action: [String: JSONValue], type: String, sender: Sender)
    throws(WireError) -> Room.Action
  {
    switch type {
    case "startMeetingButtonTapped":
      return .startMeetingButtonTapped
    case "meeting.nextButtonTapped":
      return .meeting(.presented(.nextButtonTapped(from: try optionalInt(action, "from"))))
    case "meeting.endMeetingButtonTapped":
      return .meeting(.presented(.endMeetingButtonTapped))
    case "meeting.alert.saveAndEnd":
      return .meeting(.presented(.alert(.saveAndEnd)))
    case "meeting.alert.discard":
      return .meeting(.presented(.alert(.discard)))
    case "meeting.alert.resume":
      return .meeting(.presented(.alert(.resume)))
    case "meeting.resumeButtonTapped":
      return .meeting(.presented(.resumeButtonTapped))
    case "meeting.noteSubmitted":
      guard let text = action["text"]?.stringValue else {
        throw WireError(
          .invalidValue, "\"text\" must be a string: the note, one line of 1 to 1000 characters.")
      }
      let id: String?
      switch action["id"] {
      case nil, .null?: id = nil
      case .string(let given)? where (1...64).contains(given.count): id = given
      default:
        throw WireError(
          .invalidValue,
          "\"id\" must be a string of 1 to 64 characters that names this note, or left out.")
      }
      // NB: the speaker the person saw as they sent it; left out, whoever speaks as it arrives.
      let speaker: String?
      switch action["speaker"] {
      case nil, .null?: speaker = nil
      case .string(let name)?: speaker = name
      default:
        throw WireError(
          .invalidValue,
          "\"speaker\" must be the name of the attendee the note is about, or left out.")
      }
      // NB: by sign-in, or a bot's name; on an open server a name is all there is.
      let by = sender.person ?? (sender.isBot ? sender.author : nil)
      return .meeting(
        .presented(
          .noteSubmitted(author: sender.author, text: text, id: id, by: by, speaker: speaker)))
    case "history.noteSubmitted":
      guard let meeting = action["meeting"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
        throw WireError(.invalidValue, "\"meeting\" must be the id of a meeting in the history.")
      }
      guard let text = action["text"]?.stringValue else {
        throw WireError(
          .invalidValue, "\"text\" must be a string: the note, one line of 1 to 1000 characters.")
      }
      let speaker: String?
      switch action["speaker"] {
      case nil, .null?: speaker = nil
      case .string(let name)?: speaker = name
      default: throw WireError(.invalidValue, "\"speaker\" must be an attendee's name, or null.")
      }
      return .historyNoteSubmitted(
        meeting: meeting, author: sender.author, text: text, speaker: speaker)
    case "editButtonTapped":
      return .editButtonTapped
    case "edit.binding":
      return .destination(.presented(.edit(try binding(action))))
    case "edit.addAttendeeButtonTapped":
      return .destination(.presented(.edit(.addAttendeeButtonTapped)))
    case "edit.deleteAttendeesTapped":
      guard let values = action["ids"]?.arrayValue else {
        throw WireError(.invalidValue, "\"ids\" must be a list of attendee ids.")
      }
      var ids: [UUID] = []
      for value in values {
        guard let id = value.stringValue.flatMap(UUID.init(uuidString:)) else {
          throw WireError(.invalidValue, "\"ids\" must be a list of attendee ids (UUIDs).")
        }
        ids.append(id)
      }
      return .destination(.presented(.edit(.deleteAttendeesTapped(ids: ids))))
    case "saveEditButtonTapped":
      return .saveEditButtonTapped
    case "cancelEditButtonTapped":
      return .cancelEditButtonTapped
    case "deleteButtonTapped":
      return .deleteButtonTapped
    case "alert.confirmDeletion":
      return .destination(.presented(.alert(.confirmDeletion)))
    case "alert.dismissed":
      return .destination(.presented(.alert(.dismissed)))
    case "undoButtonTapped":
      guard let seq = try optionalInt(action, "seq") else {
        throw WireError(.invalidValue, "\"seq\" must be the number of the activity to undo.")
      }
      return .undoButtonTapped(seq: seq)
    case "focusChanged":
      switch action["field"] {
      case nil, .null?:
        return .focusChanged(participant: sender.participantID, field: nil)
      case .string(let text)?:
        guard let field = Focus(text) else {
          throw WireError(
            .invalidValue,
            "Focus is \"title\", \"attendee:{id}\" of an attendee in the draft, or null.")
        }
        return .focusChanged(participant: sender.participantID, field: field)
      default:
        throw WireError(.invalidValue, "\"field\" is \"title\", \"attendee:{id}\" or null.")
      }
    default:
      throw WireError(.unknownAction, "This room does not know the action \"\(type)\".")
    }
  }

  public static func lobbyAction(_ action: [String: JSONValue], type: String, sender: Sender)
    throws(WireError)
    -> Lobby.Action
  {
    let decoded = try decodeLobbyAction(action, type: type)
    try sender.check(type, needs: .admin)
    return decoded
  }

  private static func decodeLobbyAction(_ action: [String: JSONValue], type: String)
    throws(WireError)
    -> Lobby.Action
  {
    switch type {
    case "addStandupSubmitted":
      guard case .object(let standup)? = action["standup"] else {
        throw WireError(
          .invalidValue,
          "\"standup\" must be an object: {title, duration, theme, attendees: [{name}]}.")
      }
      guard let title = standup["title"]?.stringValue else {
        throw WireError(.invalidValue, "\"standup.title\" must be a string of 1 to 100 characters.")
      }
      guard let duration = standup["duration"]?.intValue else {
        throw WireError(
          .invalidValue, "\"standup.duration\" must be whole seconds: 300 to 1800, in steps of 60.")
      }
      guard let theme = standup["theme"]?.stringValue else {
        throw WireError(
          .invalidValue, "\"standup.theme\" must be one of \(StandupRules.themeList).")
      }
      guard let attendees = standup["attendees"]?.arrayValue else {
        throw WireError(
          .invalidValue, "\"standup.attendees\" must be a list of 1 to 50 {\"name\": ...}.")
      }
      var names: [String] = []
      for attendee in attendees {
        guard let name = attendee["name"]?.stringValue else {
          throw WireError(.invalidValue, "Every attendee needs a \"name\" of 1 to 40 characters.")
        }
        names.append(name)
      }
      return .addStandupSubmitted(
        .init(title: title, durationSeconds: duration, theme: theme, attendeeNames: names))
    default:
      throw WireError(.unknownAction, "The lobby does not know the action \"\(type)\".")
    }
  }

  /// `edit.binding`: one of the draft's bindable fields, addressed by JSON Pointer. A text
  /// field's change with a `base` (the text it started from) is merged with others' typing.
  private static func binding(_ action: [String: JSONValue]) throws(WireError)
    -> StandupForm.Action
  {
    guard let path = action["path"]?.stringValue, let pointer = JSONPointer(path) else {
      throw WireError(
        .invalidValue, "\"path\" must be /title, /duration, /theme or /attendees/{id}/name.")
    }
    let value = action["value"]
    var base: String?
    if let given = action["base"], given != .null {
      guard let text = given.stringValue else {
        throw WireError(
          .invalidValue, "\"base\" must be a string: the field's text the change started from.")
      }
      base = text
    }
    if base != nil, pointer.tokens == ["duration"] || pointer.tokens == ["theme"] {
      throw WireError(
        .invalidValue, "\"base\" goes only with a text field: /title or /attendees/{id}/name.")
    }
    switch pointer.tokens {
    case ["title"]:
      guard let title = value?.stringValue else {
        throw WireError(.invalidValue, "The title must be a string of at most 100 characters.")
      }
      if let base { return .typed(in: .title, base: base, value: title) }
      return .binding(.set(\.$title, title))
    case ["duration"]:
      guard let seconds = value?.intValue else {
        throw WireError(
          .invalidValue, "The duration must be whole seconds: 300 to 1800, in steps of 60.")
      }
      return .binding(.set(\.$duration, .seconds(seconds)))
    case ["theme"]:
      guard let theme = value?.stringValue.flatMap(Theme.init(rawValue:)) else {
        throw WireError(.invalidValue, "The theme must be one of \(StandupRules.themeList).")
      }
      return .binding(.set(\.$theme, theme))
    case let tokens where tokens.count == 3 && tokens[0] == "attendees" && tokens[2] == "name":
      guard let id = UUID(uuidString: tokens[1]) else {
        throw WireError(.invalidValue, "Attendees are addressed by id: /attendees/{id}/name.")
      }
      guard let name = value?.stringValue else {
        throw WireError(
          .invalidValue, "An attendee's name must be a string of at most 40 characters.")
      }
      if let base { return .typed(in: .attendee(id), base: base, value: name) }
      return .binding(.set(\.$attendees, \.[nameOf: id], name))
    default:
      throw WireError(
        .invalidValue,
        "\"\(path)\" cannot be edited: use /title, /duration, /theme or /attendees/{id}/name.")
    }
  }

  private static func optionalInt(_ action: [String: JSONValue], _ key: String) throws(WireError)
    -> Int?
  {
    guard let value = action[key], value != .null else { return nil }
    guard let int = value.intValue else {
      throw WireError(.invalidValue, "\"\(key)\" must be a whole number.")
    }
    return int
  }
}
