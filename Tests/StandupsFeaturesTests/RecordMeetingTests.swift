import CasePathsCore
import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

@MainActor
@Suite(.serialized)
struct RecordMeetingTests {
  nonisolated static let start = Date(timeIntervalSince1970: 1_795_338_000)

  /// `now`: the date the store reads (it moves only when a test moves it).
  func makeStore(
    _ standup: Standup, clock: TestClock<Duration>, now: LockIsolated<Date> = LockIsolated(start)
  ) -> TestStore<Room> {
    TestStore(initialState: Room.State(standup: standup)) {
      Room()
    } withDependencies: {
      $0.continuousClock = clock
      $0.uuid = .incrementing
      $0.date = DateGenerator { now.value }
    }
  }

  /// A store for a room opened as `state` (from a checkpoint, a restart), its date fixed at
  /// `date`.
  func makeStore(opened state: Room.State, clock: TestClock<Duration>, at date: Date = start)
    -> TestStore<Room>
  {
    TestStore(initialState: state) {
      Room()
    } withDependencies: {
      $0.continuousClock = clock
      $0.uuid = .incrementing
      $0.date = .constant(date)
    }
  }

  /// Starts `standup`'s meeting on `store` (its first: id 0), as Start meeting does.
  func startMeeting(_ store: TestStore<Room>, _ standup: Standup) async {
    await store.send(.startMeetingButtonTapped) {
      $0.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
    }
    await store.receive(\.meeting.presented.started)
  }

  @Test func fiveMinutesWithSevenAttendeesEndsAt300OnTheLastSpeaker() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock(attendees: 7, minutes: 5)
      let store = makeStore(standup, clock: clock)
      await startMeeting(store, standup)
      #expect(store.state.meeting?.secondsPerSpeaker == 42)
      for second in 1...299 {
        await clock.advance(by: .seconds(1))
        await store.receive(\.meeting.presented.timerTick) {
          $0.meeting?.secondsElapsed = second
          $0.meeting?.secondsRun = second
          $0.meeting?.speakerIndex = min(second / 42, 6)
        }
      }
      #expect(store.state.meeting?.speakerIndex == 6)
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 300
        $0.meeting?.secondsRun = 300
      }
      await store.receive(\.meeting.presented.delegate.timeIsUp) {
        $0.standup.meetings.insert(
          Meeting(
            id: UUID(0), date: Date(timeIntervalSince1970: 1_795_338_000), transcript: "",
            seconds: 300),
          at: 0)
        $0.meeting = nil
      }
      // No tick after the meeting saved itself.
      await clock.advance(by: .seconds(5))
      await store.finish()
    }
  }

  @Test func nextSpeakerJumpsToTheirSliceAndTheLastOneRaisesTheAlert() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock(attendees: 2, minutes: 5)
      let store = makeStore(standup, clock: clock)
      await startMeeting(store, standup)
      await store.send(.meeting(.presented(.nextButtonTapped(from: 0)))) {
        $0.meeting?.speakerIndex = 1
        $0.meeting?.secondsElapsed = 150
      }
      // A second tap meant for speaker 0 is stale now.
      await store.send(
        .meeting(.presented(.nextButtonTapped(from: 0))),
        rejectedWith: .stale("The speaker already changed: Person 2 is talking now."))
      // One for a speaker the meeting has not is a mistake, not a speaker that changed.
      for from in [-1, 2, Int.max] {
        await store.send(
          .meeting(.presented(.nextButtonTapped(from: from))),
          rejectedWith: .invalidValue("\"from\" is the speaker's index in the meeting: 0 to 1."))
      }
      await store.send(.meeting(.presented(.nextButtonTapped(from: 1)))) {
        $0.meeting?.alert = .endMeeting
      }
      // Ticks are ignored while the alert is up.
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick)
      await store.send(.meeting(.presented(.alert(.resume)))) { $0.meeting?.alert = nil }
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 151
        // Next moved the clock on; the meeting has really run one second.
        $0.meeting?.secondsRun = 1
      }
      await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
        $0.meeting?.alert = .endMeeting
      }
      await store.send(.meeting(.presented(.alert(.discard)))) { $0.meeting = nil }
      // Discarded: nothing saved, and no tick after it.
      await clock.advance(by: .seconds(3))
      await store.finish()
    }
  }

  /// Two people who chose one name, each signed in, may give the same id: each note is its
  /// sender's, and each sent again is taken once. A note with nothing that shows is refused,
  /// also under an id already taken.
  @Test func twoPeopleOfOneNameGivingOneIDSendTwoNotes() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      await startMeeting(store, standup)
      let first = RecordMeeting.Action.noteSubmitted(
        author: "Uma", text: "first", id: "n1", by: "k1")
      await store.send(.meeting(.presented(first))) {
        $0.meeting?.transcript = "Uma: first"
        $0.meeting?.notes = [Note(author: "Uma", text: "first", speaker: "Person 1", id: "n1")]
        $0.meeting?.noteSenders = ["n1": ["k1"]]
      }
      let other = RecordMeeting.Action.noteSubmitted(
        author: "Uma", text: "mine", id: "n1", by: "k2")
      await store.send(.meeting(.presented(other))) {
        $0.meeting?.transcript = "Uma: first\nUma: mine"
        $0.meeting?.notes.append(Note(author: "Uma", text: "mine", speaker: "Person 1", id: "n1"))
        $0.meeting?.noteSenders = ["n1": ["k1", "k2"]]
      }
      await store.send(.meeting(.presented(first)))
      await store.send(.meeting(.presented(other)))
      for blank in ["", " ", "\u{3164}", "\u{2800}\u{034F}", "\u{00AD}\u{FE0F}"] {
        await store.send(
          .meeting(.presented(.noteSubmitted(author: "Uma", text: blank, id: "n1", by: "k1"))),
          rejectedWith: .invalidValue(
            blank.trimmingCharacters(in: .whitespaces).isEmpty
              ? "A note must be one line of 1 to 1000 characters."
              : "A note must say something: this one shows nothing."))
      }
      await discard(store)
      await clock.advance(by: .seconds(3))
      await store.finish()
    }
  }

  /// A note goes under the speaker its sender saw as they sent it, though Next came first
  /// (it was on its way, or sent again after a drop); left out, under whoever speaks now.
  @Test func aNoteStaysWithTheSpeakerItWasSentFor() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock(attendees: 2, minutes: 5)
      let store = makeStore(standup, clock: clock)
      await startMeeting(store, standup)
      await store.send(.meeting(.presented(.nextButtonTapped(from: 0)))) {
        $0.meeting?.speakerIndex = 1
        $0.meeting?.secondsElapsed = 150
      }
      await store.send(
        .meeting(
          .presented(.noteSubmitted(author: "Ana", text: "About 1", id: "n-1", speaker: "Person 1"))
        )
      ) {
        $0.meeting?.transcript = "Ana: About 1"
        $0.meeting?.notes = [Note(author: "Ana", text: "About 1", speaker: "Person 1", id: "n-1")]
      }
      await store.send(.meeting(.presented(.noteSubmitted(author: "CI (bot)", text: "Now")))) {
        $0.meeting?.transcript = "Ana: About 1\nCI (bot): Now"
        $0.meeting?.notes.append(Note(author: "CI (bot)", text: "Now", speaker: "Person 2"))
      }
      // Nobody of that name attends: refused, nothing changes.
      await store.send(
        .meeting(.presented(.noteSubmitted(author: "Ana", text: "Who?", speaker: "Person 9"))),
        rejectedWith: .invalidValue(
          "\"speaker\" must be the name of one of this meeting's attendees: \"Person 9\" is not."))
      let long = String(repeating: "Bartholomew ", count: 5)
      await store.send(
        .meeting(.presented(.noteSubmitted(author: "Ana", text: "Who?", speaker: long))),
        rejectedWith: .invalidValue(
          "\"speaker\" must be the name of one of this meeting's attendees: \"\(long.prefix(39))…\" is not."
        ))
      await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
        $0.meeting?.alert = .endMeeting
      }
      await store.send(.meeting(.presented(.alert(.discard)))) { $0.meeting = nil }
      await store.finish()
    }
  }

  /// A note sent again with its id (its answer lost with the connection) is taken once;
  /// another id, or none, is another note, however alike.
  @Test func aNoteSentAgainWithItsIDIsTakenOnce() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      await startMeeting(store, standup)
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "+1", id: "n-1")))) {
        $0.meeting?.transcript = "Ana: +1"
        $0.meeting?.notes = [Note(author: "Ana", text: "+1", speaker: "Person 1", id: "n-1")]
      }
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "+1", id: "n-1"))))
      // Someone else's note with the same id is theirs.
      await store.send(
        .meeting(.presented(.noteSubmitted(author: "CI (bot)", text: "+1", id: "n-1")))
      ) {
        $0.meeting?.transcript = "Ana: +1\nCI (bot): +1"
        $0.meeting?.notes.append(
          Note(author: "CI (bot)", text: "+1", speaker: "Person 1", id: "n-1"))
      }
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "+1", id: "n-2")))) {
        $0.meeting?.transcript = "Ana: +1\nCI (bot): +1\nAna: +1"
        $0.meeting?.notes.append(Note(author: "Ana", text: "+1", speaker: "Person 1", id: "n-2"))
      }
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "+1")))) {
        $0.meeting?.transcript = "Ana: +1\nCI (bot): +1\nAna: +1\nAna: +1"
        $0.meeting?.notes.append(Note(author: "Ana", text: "+1", speaker: "Person 1"))
      }
      await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
        $0.meeting?.alert = .endMeeting
      }
      await store.send(.meeting(.presented(.alert(.discard)))) { $0.meeting = nil }
      await clock.advance(by: .seconds(3))
      await store.finish()
    }
  }

  @Test func saveAndEndAddsTheMeetingWithItsNotesAndStopsTheTimer() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      await startMeeting(store, standup)
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "Shipped the API"))))
      {
        $0.meeting?.transcript = "Ana: Shipped the API"
        $0.meeting?.notes = [Note(author: "Ana", text: "Shipped the API", speaker: "Person 1")]
      }
      await store.send(.meeting(.presented(.noteSubmitted(author: "CI", text: "  build green ")))) {
        $0.meeting?.transcript = "Ana: Shipped the API\nCI: build green"
        $0.meeting?.notes.append(Note(author: "CI", text: "build green", speaker: "Person 1"))
      }
      await store.send(
        .meeting(.presented(.noteSubmitted(author: "Ana", text: "two\nlines"))),
        rejectedWith: .invalidValue("A note must be one line of 1 to 1000 characters."))
      await store.send(
        .meeting(.presented(.noteSubmitted(author: "Ana", text: "all good \u{202E}dab"))),
        rejectedWith: .invalidValue(
          "A note cannot contain control characters (such as line breaks), invisible marks (such as direction marks), or more than 15 marks stacked on one character."
        ))
      await store.send(
        .meeting(.presented(.alert(.saveAndEnd))),
        rejectedWith: .invalidAction("The end-meeting alert is not showing."))
      await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
        $0.meeting?.alert = .endMeeting
      }
      await store.send(.meeting(.presented(.alert(.saveAndEnd)))) {
        $0.meeting = nil
        $0.standup.meetings = [
          Meeting(
            id: UUID(0), date: Date(timeIntervalSince1970: 1_795_338_000),
            transcript: "Ana: Shipped the API\nCI: build green",
            notes: [
              Note(author: "Ana", text: "Shipped the API", speaker: "Person 1"),
              Note(author: "CI", text: "build green", speaker: "Person 1"),
            ])
        ]
      }
      await clock.advance(by: .seconds(3))
    }
  }

  /// `person` joins and starts a meeting.
  func joinAndStart(_ store: TestStore<Room>, standup: Standup, with person: Participant) async {
    await store.send(.participantJoined(person)) { $0.participants = [person] }
    await store.send(.startMeetingButtonTapped) {
      $0.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
      $0.meeting?.present = [person.shownName]
    }
    await store.receive(\.meeting.presented.started)
  }

  /// Ends the meeting without saving it.
  func discard(_ store: TestStore<Room>) async {
    await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
      $0.meeting?.alert = .endMeeting
    }
    await store.send(.meeting(.presented(.alert(.discard)))) { $0.meeting = nil }
  }

  /// Ends the meeting, saved at the test clock's start with no notes, `present` there.
  func saveAndEnd(_ store: TestStore<Room>, present: [String]) async {
    await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
      $0.meeting?.alert = .endMeeting
    }
    await store.send(.meeting(.presented(.alert(.saveAndEnd)))) {
      $0.meeting = nil
      $0.standup.meetings = [
        Meeting(id: UUID(0), date: Self.start, transcript: "", present: present)
      ]
    }
  }

  /// `person` joins, starts a meeting that ticks once, and leaves: the room empties at
  /// `start`, and its meeting pauses.
  func tickOnceThenEmpty(
    _ store: TestStore<Room>, clock: TestClock<Duration>, standup: Standup,
    with person: Participant
  ) async {
    await joinAndStart(store, standup: standup, with: person)
    await clock.advance(by: .seconds(1))
    await store.receive(\.meeting.presented.timerTick) {
      $0.meeting?.secondsElapsed = 1
      $0.meeting?.secondsRun = 1
    }
    await store.send(.participantLeft(person.id)) { $0.participants = [] }
    await store.receive(\.meeting.presented.roomEmptied) {
      $0.meeting?.pausedBecause = .everyoneLeft
      $0.meeting?.emptiedAt = Self.start
    }
  }

  /// Someone came back in time: the meeting goes on by itself and ticks to `second`.
  func goesOnByItself(_ store: TestStore<Room>, clock: TestClock<Duration>, to second: Int) async {
    await store.receive(\.meeting.presented.someoneReturned) {
      $0.meeting?.pausedBecause = nil
      $0.meeting?.emptiedAt = nil
    }
    await clock.advance(by: .seconds(1))
    await store.receive(\.meeting.presented.timerTick) {
      $0.meeting?.secondsElapsed = second
      $0.meeting?.secondsRun = second
    }
  }

  /// A page reconnecting (`?replaces=`) takes its old connection's place in one change: the
  /// room is never empty, so a meeting its person is alone in ticks on, the question to end
  /// it stays up, and the person is present once.
  @Test func aConnectionTakingAnothersPlaceLeavesTheRoomNeverEmpty() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock, now: LockIsolated(Self.start))
      let ana = Participant(id: "p1", name: "Ana")
      let again = Participant(id: "p2", name: "Ana")
      await joinAndStart(store, standup: standup, with: ana)
      await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
        $0.meeting?.alert = .endMeeting
      }
      await store.send(.participantReplaced(ana.id, by: again)) { $0.participants = [again] }
      await store.send(.meeting(.presented(.alert(.resume)))) { $0.meeting?.alert = nil }
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
        $0.meeting?.alert = .endMeeting
      }
      await store.send(.meeting(.presented(.alert(.saveAndEnd)))) {
        $0.meeting = nil
        $0.standup.meetings = [
          Meeting(id: UUID(0), date: Self.start, transcript: "", seconds: 1, present: ["Ana"])
        ]
      }
    }
  }

  @Test func nothingTicksInAnEmptiedRoomUntilSomeoneResumes() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let now = LockIsolated(Self.start)
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock, now: now)
      let ana = Participant(id: "p1", name: "Ana")
      await tickOnceThenEmpty(store, clock: clock, standup: standup, with: ana)
      // Back after longer than a reload takes: it stays paused until someone resumes it.
      now.withValue { $0 += RecordMeeting.returnGrace + 1 }
      await clock.advance(by: .seconds(16))  // nothing ticks
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await store.receive(\.meeting.presented.someoneReturned) { $0.meeting?.emptiedAt = nil }
      await clock.advance(by: .seconds(5))  // still nothing
      await store.send(.meeting(.presented(.resumeButtonTapped))) {
        $0.meeting?.pausedBecause = nil
      }
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 2
        $0.meeting?.secondsRun = 2
      }
      await store.send(
        .meeting(.presented(.resumeButtonTapped)),
        rejectedWith: .invalidAction("The meeting is not paused."))
      await discard(store)
    }
  }

  /// A reload by the only person in the room empties it for a moment: the meeting pauses,
  /// and goes on by itself when they are back within `returnGrace`.
  @Test func aMeetingGoesOnWhenSomeoneIsBackInTheEmptiedRoomWithinMoments() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let now = LockIsolated(Self.start)
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock, now: now)
      let ana = Participant(id: "p1", name: "Ana")
      let anaAgain = Participant(id: "p2", name: "Ana")
      await tickOnceThenEmpty(store, clock: clock, standup: standup, with: ana)
      now.withValue { $0 += RecordMeeting.returnGrace }
      await clock.advance(by: .seconds(2))  // nothing ticks while the room is empty
      await store.send(.participantJoined(anaAgain)) { $0.participants = [anaAgain] }
      await goesOnByItself(store, clock: clock, to: 2)
      // Another joining later changes nothing more.
      await store.send(.participantJoined(ana)) { $0.participants = [anaAgain, ana] }
      await discard(store)
    }
  }

  /// A cluster's room is released once it empties, and opens again from its checkpoint on
  /// whichever server the next person reaches: back within moments, the meeting goes on.
  @Test func aMeetingOpenedFromItsCheckpointGoesOnIfSomeoneIsBackInMoments() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let checkpoint = MeetingCheckpoint(
        standupID: standup.id, meetingID: UUID(7), secondsElapsed: 7, speakerIndex: 0,
        transcript: "", present: ["Ana"], secondsRun: 7, pausedBecause: .everyoneLeft,
        emptiedAt: Self.start)
      var opened = Room.State(standup: standup)
      opened.meeting = RecordMeeting.State(restoring: checkpoint, standup: standup)
      #expect(opened.meeting?.emptiedAt == Self.start)
      // A meeting that was running when its server stopped keeps no such moment.
      var running = checkpoint
      running.pausedBecause = nil
      #expect(RecordMeeting.State(restoring: running, standup: standup).emptiedAt == nil)

      let store = makeStore(opened: opened, clock: clock, at: Self.start.addingTimeInterval(3))
      let ana = Participant(id: "p1", name: "Ana")
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await goesOnByItself(store, clock: clock, to: 8)
      await discard(store)
    }
  }

  /// A meeting that was paused before the room emptied (the server restarted) waits for a
  /// Resume, and keeps saying why it stopped: nobody chose to run it since, and it was not
  /// everyone leaving that stopped it.
  @Test func aMeetingPausedBeforeTheRoomEmptiedWaitsForAResume() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      // Running when its server stopped: back paused, "the server restarted".
      let checkpoint = MeetingCheckpoint(
        standupID: standup.id, meetingID: UUID(7), secondsElapsed: 7, speakerIndex: 0,
        transcript: "", present: ["Ana"], secondsRun: 7, pausedBecause: nil,
        emptiedAt: Self.start)
      var opened = Room.State(standup: standup)
      opened.meeting = RecordMeeting.State(restoring: checkpoint, standup: standup)
      #expect(opened.meeting?.pausedBecause == .serverRestarted)
      let store = makeStore(opened: opened, clock: clock)
      let ana = Participant(id: "p1", name: "Ana")
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await store.send(.participantLeft("p1")) { $0.participants = [] }
      await store.receive(\.meeting.presented.roomEmptied)
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await clock.advance(by: .seconds(3))  // nothing ticks
      await discard(store)
    }
  }

  /// A room handed on to another node (a rolling restart, the proxy's pick back) pauses its
  /// meeting as it goes; its people, sent on to the next node, find it going on there by
  /// itself when they are back within moments — nobody chose to stop it. Later, it waits
  /// for a Resume, saying it moved.
  @Test func aMeetingHandedOnGoesOnWhenItsPeopleAreBackInMoments() async throws {
    try await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let ana = Participant(id: "p1", name: "Ana")
      await joinAndStart(store, standup: standup, with: ana)
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await store.send(.roomMoving)
      await store.receive(\.meeting.presented.roomMoving) {
        $0.meeting?.pausedBecause = .moved
        $0.meeting?.emptiedAt = Self.start
      }
      // Its people leaving as the node lets them go keep the moment of the move.
      await store.send(.participantLeft("p1")) { $0.participants = [] }
      await store.receive(\.meeting.presented.roomEmptied)
      await clock.advance(by: .seconds(3))  // nothing ticks
      let checkpoint = try #require(store.state.meeting).checkpoint(standupID: standup.id)
      #expect(checkpoint.pausedBecause == .moved && checkpoint.emptiedAt == Self.start)

      // The next node opens the room from the checkpoint as Ana is back, 2 s on: it goes on.
      for (late, goesOn) in [(2.0, true), (RecordMeeting.returnGrace + 1, false)] {
        var opened = Room.State(standup: standup)
        opened.meeting = RecordMeeting.State(restoring: checkpoint, standup: standup)
        let next = makeStore(opened: opened, clock: clock, at: Self.start.addingTimeInterval(late))
        await next.send(.participantJoined(ana)) { $0.participants = [ana] }
        if goesOn {
          await goesOnByItself(next, clock: clock, to: 2)
        } else {
          await next.receive(\.meeting.presented.someoneReturned) { $0.meeting?.emptiedAt = nil }
          await clock.advance(by: .seconds(2))  // nothing ticks: it says it moved
          #expect(next.state.meeting?.pausedBecause == .moved)
        }
        await discard(next)
      }
      await discard(store)
    }
  }

  /// The end-meeting alert's Resume, on a meeting paused (here: the room moved), resumes it:
  /// everyone is told that Ana resumed the meeting, and its clock goes on.
  @Test func theAlertsResumeResumesAPausedMeeting() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      await startMeeting(store, standup)
      await store.send(.roomMoving)
      await store.receive(\.meeting.presented.roomMoving) {
        $0.meeting?.pausedBecause = .moved
        $0.meeting?.emptiedAt = Self.start
      }
      await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
        $0.meeting?.alert = .endMeeting
      }
      await clock.advance(by: .seconds(2))  // nothing ticks
      await store.send(.meeting(.presented(.alert(.resume)))) {
        $0.meeting?.alert = nil
        $0.meeting?.pausedBecause = nil
        $0.meeting?.emptiedAt = nil
      }
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await discard(store)
    }
  }

  @Test func aMeetingHandedOnToAnotherServerStopsAndSaysWhy() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      // No meeting: nothing to stop.
      await store.send(.roomMoving)
      await startMeeting(store, standup)
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await store.send(.roomMoving)
      await store.receive(\.meeting.presented.roomMoving) {
        $0.meeting?.pausedBecause = .moved
        $0.meeting?.emptiedAt = Self.start
      }
      await clock.advance(by: .seconds(10))  // nothing ticks
      // One paused already keeps its reason: the move did not stop it.
      await store.send(.meeting(.presented(.resumeButtonTapped))) {
        $0.meeting?.pausedBecause = nil
        $0.meeting?.emptiedAt = nil
      }
      await store.send(.participantJoined(Participant(id: "p1", name: "Ana"))) {
        $0.participants = [Participant(id: "p1", name: "Ana")]
        $0.meeting?.present = ["Ana"]
      }
      await store.send(.participantLeft("p1")) { $0.participants = [] }
      await store.receive(\.meeting.presented.roomEmptied) {
        $0.meeting?.pausedBecause = .everyoneLeft
        $0.meeting?.emptiedAt = Self.start
      }
      await store.send(.roomMoving)
      await store.receive(\.meeting.presented.roomMoving)
      await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
        $0.meeting?.alert = .endMeeting
      }
      await store.send(.meeting(.presented(.alert(.discard)))) { $0.meeting = nil }
    }
  }

  @Test func meetingActionsWithoutAMeetingAndASecondStartAreRejected() async {
    let clock = TestClock()
    let standup = Standup.mock()
    let store = makeStore(standup, clock: clock)
    await store.send(
      .meeting(.presented(.nextButtonTapped(from: nil))),
      rejectedWith: .invalidAction("No meeting is running."))
    await startMeeting(store, standup)
    await store.send(
      .startMeetingButtonTapped, rejectedWith: .invalidAction("A meeting is already running."))
    await store.send(.meeting(.presented(.endMeetingButtonTapped))) {
      $0.meeting?.alert = .endMeeting
    }
    await store.send(.meeting(.presented(.alert(.discard)))) { $0.meeting = nil }
  }

  @Test func aMeetingTakesAtMost200Notes() async {
    let standup = Standup.mock()
    var state = Room.State(standup: standup)
    var meeting = RecordMeeting.State(id: UUID(0), standup: standup)
    meeting.notes = Array(
      repeating: Note(author: "Ana", text: "n", speaker: "Person 1"), count: 200)
    meeting.transcript = Array(repeating: "Ana: n", count: 200).joined(separator: "\n")
    state.meeting = meeting
    let store = TestStore(initialState: state) { Room() }
    await store.send(
      .meeting(.presented(.noteSubmitted(author: "Ana", text: "one more"))),
      rejectedWith: .quotaExceeded("A meeting takes at most 200 notes.", limit: 200))
  }
}
