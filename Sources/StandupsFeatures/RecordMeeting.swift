import CasePaths
import Dependencies
import Foundation
import IdentifiedCollections
import StoreRuntime

/// A meeting in progress: one timer on the server, ticking for everyone in the room.
///
/// Speakers get equal slices of the duration; the last one also gets the remainder, so the
/// meeting always ends at `duration` on the last speaker and saves itself.
public struct RecordMeeting: Reducer {
  public struct State: Equatable, Identifiable, Sendable, Encodable {
    /// Also the id of the `Meeting` this becomes when saved.
    public let id: UUID
    /// The standup as it was when the meeting started.
    public let standup: Standup
    public var alert: Alert?
    /// Why the meeting is paused, or nil while it runs.
    public var pausedBecause: PauseReason?
    public var secondsElapsed = 0
    /// Seconds the meeting really ran (ticks; Next moves `secondsElapsed` on, not this).
    public var secondsRun = 0
    public var speakerIndex = 0
    public var transcript = ""
    /// The notes with the speaker each was written under (the history groups them by it).
    public var notes: [Note] = []
    /// Who has been in the room while the meeting ran, in the order they came.
    public var present: [String] = []
    /// For each name in `present`, the sign-ins (`Participant.person`) that were in the room
    /// under it ("": someone from before the room opened again, not known): someone who
    /// renames themselves is present once. Bots and an open server's people have no sign-in
    /// (a bot's name is its own). Not sent; kept in its checkpoint.
    public var presentBy: [String: Set<String>] = [:]
    /// For each note id given, who gave it (`noteSubmitted`'s `by`): two people of one name
    /// who give the same id send two notes. Not sent, nor kept in the checkpoint: after a
    /// restart, a note is known again by its id and author alone.
    public var noteSenders: [String: Set<String>] = [:]
    /// When the room emptied, while it stays empty and the meeting paused for it (or when the
    /// room was handed on to another node, `moved`): someone back within `returnGrace` (a
    /// reload, a tab closed by mistake, people sent on to the next node) resumes the meeting.
    /// Not on the wire; kept in its checkpoint, so that a room released once empty (a
    /// cluster's) resumes the same way wherever it opens again.
    public var emptiedAt: Date?

    public enum Alert: String, Equatable, Sendable, Encodable {
      case endMeeting
    }

    /// Why a meeting stopped ticking, for the page to say so truthfully.
    public enum PauseReason: String, Equatable, Sendable, Codable {
      /// The last person left the room.
      case everyoneLeft
      /// The server stopped (or crashed) while it ran; it came back from its checkpoint.
      case serverRestarted
      /// Its room moved to another server of a cluster (handed on in a restart, or back to
      /// the node the proxy picks again): it came back from where it was handed on, and goes
      /// on by itself when someone is back within `returnGrace` of the move.
      case moved
    }

    public var isPaused: Bool { pausedBecause != nil }

    public init(id: UUID, standup: Standup) {
      self.id = id
      self.standup = standup
    }

    public var secondsPerSpeaker: Int { standup.secondsPerAttendee }
    public var durationSeconds: Int { Int(standup.duration.components.seconds) }
    public var lastSpeakerIndex: Int { max(standup.attendees.count - 1, 0) }

    private enum CodingKeys: String, CodingKey {
      case alert, id, isPaused, pausedBecause, secondsElapsed, secondsPerSpeaker, speakerIndex,
        transcript
    }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(alert, forKey: .alert)
      try container.encode(id, forKey: .id)
      try container.encode(isPaused, forKey: .isPaused)
      try container.encode(pausedBecause, forKey: .pausedBecause)
      try container.encode(secondsElapsed, forKey: .secondsElapsed)
      try container.encode(secondsPerSpeaker, forKey: .secondsPerSpeaker)
      try container.encode(speakerIndex, forKey: .speakerIndex)
      try container.encode(transcript, forKey: .transcript)
    }
  }

  @CasePathable
  public enum Action: Equatable, Sendable {
    /// The meeting was presented: start the timer.
    case started
    case timerTick
    /// `from`: the speaker the sender saw; if it has moved on, the tap is stale.
    case nextButtonTapped(from: Int?)
    case endMeetingButtonTapped
    case alert(AlertAction)
    /// Everyone left: stop the clock until someone resumes.
    case roomEmptied
    /// Someone came into the emptied room: within `returnGrace`, the clock goes on by itself.
    case someoneReturned
    /// The room is handed on to another server: stop the clock there, to resume here.
    case roomMoving
    case resumeButtonTapped
    /// `id`: the sender's for this note, if any (`Note.id`); `by`: who sent it (a sign-in, a
    /// bot), where known: another person of the same name may give the same id.
    /// `speaker`: the attendee the person saw speaking as they sent it (a note that reaches
    /// the room after Next stays theirs); nil, whoever speaks as it arrives.
    case noteSubmitted(
      author: String, text: String, id: String? = nil, by: String? = nil, speaker: String? = nil)
    case delegate(Delegate)

    @CasePathable
    public enum AlertAction: Equatable, Sendable {
      case saveAndEnd
      case discard
      case resume
    }

    @CasePathable
    public enum Delegate: Equatable, Sendable {
      /// Time is up: save this meeting to the standup's history and end it, in one step, so
      /// that no note lands between the two.
      case timeIsUp
    }
  }

  public enum CancelID: Hashable, Sendable { case timer }

  /// Why an answer to the end-meeting alert is refused when it is not up.
  public static let alertNotShowing = "The end-meeting alert is not showing."

  @Dependency(\.continuousClock) var clock
  @Dependency(\.date.now) var now

  /// How soon someone must come back into an emptied room for its meeting to go on by
  /// itself: long enough for a reload or a browser brought back up, short enough that a room
  /// everyone left for good keeps its "everyone had left" until someone resumes it.
  public static let returnGrace: TimeInterval = 15

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .started:
        return state.isPaused ? .none : startTimer()

      case .timerTick:
        guard state.alert == nil, !state.isPaused else { return .none }
        state.secondsElapsed += 1
        state.secondsRun += 1
        if state.secondsElapsed >= state.durationSeconds {
          state.speakerIndex = state.lastSpeakerIndex
          // NB: not TCA's `.run { send(.delegate(…)); await dismiss() }`: between its two steps
          // the room takes other actions, and a note taken there would be acknowledged into a
          // meeting already in the history, then dropped with it.
          return .merge(.cancel(id: CancelID.timer), .send(.delegate(.timeIsUp)))
        }
        state.speakerIndex = min(
          state.secondsElapsed / max(state.secondsPerSpeaker, 1), state.lastSpeakerIndex)
        return .none

      case .nextButtonTapped(let from):
        // NB: a `from` no speaker has is a mistake, not a speaker that changed meanwhile.
        if let from, !(0...state.lastSpeakerIndex).contains(from) {
          return .reject(
            .invalidValue(
              "\"from\" is the speaker's index in the meeting: 0 to \(state.lastSpeakerIndex)."))
        }
        if let from, from != state.speakerIndex {
          // NB: by name: a number here would be read as 1-based by people, 0-based by bots
          // (which read `speakerIndex` in the state).
          let speaker = state.standup.attendees[safe: state.speakerIndex]?.name
          return .reject(
            .stale("The speaker already changed: \(speaker ?? "someone else") is talking now."))
        }
        guard state.alert == nil else {
          return .reject(.invalidAction("Answer the end-meeting alert first."))
        }
        if state.speakerIndex >= state.lastSpeakerIndex {
          state.alert = .endMeeting
          return .none
        }
        state.speakerIndex += 1
        state.secondsElapsed = state.speakerIndex * state.secondsPerSpeaker
        return .none

      case .endMeetingButtonTapped:
        state.alert = .endMeeting
        return .none

      case .alert(let alertAction):
        guard state.alert != nil else {
          return .reject(.invalidAction(Self.alertNotShowing))
        }
        // Saving and discarding end the presentation: the room does that.
        guard alertAction == .resume else { return .none }
        state.alert = nil
        // NB: Resume resumes: a meeting paused under the alert (the server restarted, the
        // room moved, everyone had left) goes on too, as everyone is told it did.
        guard state.isPaused else { return .none }
        state.pausedBecause = nil
        state.emptiedAt = nil
        return startTimer()

      case .roomEmptied:
        // NB: only a meeting this stopped goes on by itself when someone is back, or one a
        // move stopped, which keeps when; one paused already (the server restarted) keeps
        // saying why it stopped.
        guard state.pausedBecause != .moved else { return .cancel(id: CancelID.timer) }
        state.emptiedAt = state.isPaused ? nil : now
        if !state.isPaused { state.pausedBecause = .everyoneLeft }
        return .cancel(id: CancelID.timer)

      case .someoneReturned:
        guard let emptiedAt = state.emptiedAt else { return .none }
        state.emptiedAt = nil
        guard state.pausedBecause == .everyoneLeft || state.pausedBecause == .moved,
          now.timeIntervalSince(emptiedAt) <= Self.returnGrace
        else { return .none }
        state.pausedBecause = nil
        return startTimer()

      case .roomMoving:
        // NB: a meeting paused already keeps its reason: it was not stopped by the move.
        guard !state.isPaused else { return .cancel(id: CancelID.timer) }
        state.pausedBecause = .moved
        // Nobody chose to stop it: its people, sent on to the next node, find it going on
        // there by itself when they are back within moments, as after a reload.
        state.emptiedAt = now
        return .cancel(id: CancelID.timer)

      case .resumeButtonTapped:
        guard state.isPaused else { return .reject(.invalidAction("The meeting is not paused.")) }
        state.pausedBecause = nil
        state.emptiedAt = nil
        return startTimer()

      case .noteSubmitted(let author, let text, let id, let by, let seen):
        let current = state.standup.attendees[safe: state.speakerIndex]?.name ?? ""
        if let seen, !state.standup.attendees.contains(where: { $0.name == seen }) {
          // NB: a name longer than an attendee's can be is cut short, and says so.
          let shown = seen.count > 40 ? seen.prefix(39) + "…" : seen
          return .reject(
            .invalidValue(
              "\"speaker\" must be the name of one of this meeting's attendees: \(shown.debugDescription) is not."
            ))
        }
        let speaker = seen ?? current
        // NB: a note of that id and author is this sender's unless it is known to be another's.
        let senders = id.flatMap { state.noteSenders[$0] }
        let sameSender = by.map { senders?.contains($0) ?? true } ?? true
        if let problem = state.addNote(
          text, author: author, speaker: speaker, id: id, fromSameSender: sameSender)
        {
          return .reject(problem)
        }
        if let id, let by { state.noteSenders[id, default: []].insert(by) }
        return .none

      case .delegate:
        return .none
      }
    }
  }

  private func startTimer() -> Effect<Action> {
    .timer(every: .seconds(1), on: clock, send: .timerTick)
      .cancellable(id: CancelID.timer, cancelInFlight: true)
  }
}

extension IdentifiedArray {
  subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

extension RecordMeeting.State {
  /// The meeting with what an action that could not be saved did to it taken back (`before`:
  /// the meeting before the action, `after`: right after it), and only that: what went on
  /// since (`now`: the clock's ticks, others' notes, people arriving, a pause) stays. A
  /// meeting the action started or ended is as it was before; one that ended since stays
  /// ended (it is in the standup's history already, or was discarded).
  public static func restoring(_ before: Self?, undoing after: Self?, since now: Self?) -> Self? {
    if after != nil && now?.id != after?.id { return now }
    guard let before, let after, var meeting = now, before.id == after.id else { return before }
    // The note it added goes (others' since stay).
    meeting.takeBackNotes(addedFrom: before, to: after)
    // A Next: the clock goes back by its jump, keeping the seconds that ran since.
    if after.secondsElapsed != before.secondsElapsed {
      meeting.secondsElapsed = max(
        meeting.secondsElapsed - (after.secondsElapsed - before.secondsElapsed), 0)
      meeting.speakerIndex = min(
        meeting.secondsElapsed / max(meeting.secondsPerSpeaker, 1), meeting.lastSpeakerIndex)
    }
    // A Resume, or the alert, as before, unless they changed again since.
    if after.pausedBecause != before.pausedBecause, meeting.pausedBecause == after.pausedBecause {
      meeting.pausedBecause = before.pausedBecause
      meeting.emptiedAt = before.emptiedAt
    }
    if after.alert != before.alert, meeting.alert == after.alert { meeting.alert = before.alert }
    meeting.present.removeAll { !before.present.contains($0) && after.present.contains($0) }
    return meeting
  }
}
