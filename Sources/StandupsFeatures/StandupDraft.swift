import Foundation
import IdentifiedCollections

/// What an open edit form holds that is not saved yet: written before an `edit.*` change is
/// acknowledged, so that a restart, a crash or everyone leaving does not lose what was typed.
/// The form comes back open with it when its room opens again.
public struct StandupDraft: Codable, Equatable, Sendable {
  public var standupID: Standup.ID
  public var title: String
  /// Whole minutes, as seconds.
  public var durationSeconds: Int
  public var theme: Theme
  /// Blank names included: the draft is kept exactly as typed.
  public var attendees: [Attendee]

  public init(
    standupID: Standup.ID, title: String, durationSeconds: Int, theme: Theme,
    attendees: [Attendee]
  ) {
    self.standupID = standupID
    self.title = title
    self.durationSeconds = durationSeconds
    self.theme = theme
    self.attendees = attendees
  }

  /// The body as the databases keep it: JSON, without the standup's id (their key).
  public func encodedBody() throws -> String {
    String(decoding: try JSONEncoder().encode(Body(self)), as: UTF8.self)
  }

  /// A draft from its saved body; nil if the body is not one (it is then left unused).
  public init?(standupID: Standup.ID, body: String) {
    guard let body = try? JSONDecoder().decode(Body.self, from: Data(body.utf8)) else {
      return nil
    }
    self.init(
      standupID: standupID, title: body.title, durationSeconds: body.duration, theme: body.theme,
      attendees: body.attendees)
  }

  private struct Body: Codable {
    var title: String
    var duration: Int
    var theme: Theme
    var attendees: [Attendee]

    init(_ draft: StandupDraft) {
      title = draft.title
      duration = draft.durationSeconds
      theme = draft.theme
      attendees = draft.attendees
    }
  }
}

extension StandupForm.State {
  /// The form's draft, as storage keeps it.
  public var savedDraft: StandupDraft {
    StandupDraft(
      standupID: id, title: title, durationSeconds: Int(duration.components.seconds),
      theme: theme, attendees: Array(attendees))
  }

  /// The form as it was when its draft was saved, over the standup as it is now (its history
  /// is the standup's, never the draft's).
  public init(restoring draft: StandupDraft, standup: Standup) {
    self.init(standup: standup)
    title = draft.title
    duration = .seconds(draft.durationSeconds)
    theme = draft.theme
    // NB: ids are unique in a draft the form wrote; a damaged body keeps its first of each.
    var attendees = IdentifiedArrayOf<Attendee>()
    for attendee in draft.attendees where attendees[id: attendee.id] == nil {
      attendees.append(attendee)
    }
    if !attendees.isEmpty { self.attendees = attendees }
  }
}

extension Room.State {
  /// The open edit form, if one is open.
  public var editForm: StandupForm.State? {
    if case .edit(let form) = destination { form } else { nil }
  }
}
