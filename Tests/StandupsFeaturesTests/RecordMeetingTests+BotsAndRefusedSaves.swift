import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

/// A bot in the room (a notes bot, a CI job) is not someone at the meeting: it neither keeps
/// a meeting ticking once the people left, nor brings one back by joining (after a move too).
extension RecordMeetingTests {
  @Test func aBotLeftAloneInTheRoomDoesNotKeepTheMeetingTicking() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let now = LockIsolated(Self.start)
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock, now: now)
      let ana = Participant(id: "p1", name: "Ana")
      let notes = Participant(id: "b1", name: "Notes", isBot: true)
      let deploy = Participant(id: "b2", name: "Deploy", isBot: true)
      await joinAndStart(store, standup: standup, with: ana)
      await store.send(.participantJoined(notes)) {
        $0.participants = [ana, notes]
        // NB: a bot is listed as its notes are signed.
        $0.meeting?.present = ["Ana", "Notes (bot)"]
      }
      await store.send(.participantLeft(ana.id)) { $0.participants = [notes] }
      await store.receive(\.meeting.presented.roomEmptied) {
        $0.meeting?.pausedBecause = .everyoneLeft
        $0.meeting?.emptiedAt = Self.start
      }
      await clock.advance(by: .seconds(3))  // nothing ticks
      // Another bot joining within moments brings nothing back; the last bot leaving changes
      // nothing either.
      await store.send(.participantJoined(deploy)) {
        $0.participants = [notes, deploy]
        $0.meeting?.present = ["Ana", "Notes (bot)", "Deploy (bot)"]
      }
      await store.send(.participantLeft(notes.id)) { $0.participants = [deploy] }
      await store.send(.participantLeft(deploy.id)) { $0.participants = [] }
      await clock.advance(by: .seconds(3))
      // Ana back within moments: it goes on where it stopped.
      now.withValue { $0 += 6 }
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await goesOnByItself(store, clock: clock, to: 1)
      await discard(store)
    }
  }

  /// A bot back after a move brings nothing back either: a person who did not come back in
  /// time (a laptop asleep) must not find the meeting run through without them. A meeting
  /// only a bot was in waits for it to resume it.
  @Test func aMeetingABotRunsWaitsForItsResumeAfterAMove() async throws {
    try await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let deploy = Participant(id: "b1", name: "Deploy", isBot: true)
      await joinAndStart(store, standup: standup, with: deploy)
      await store.send(.roomMoving)
      await store.receive(\.meeting.presented.roomMoving) {
        $0.meeting?.pausedBecause = .moved
        $0.meeting?.emptiedAt = Self.start
      }
      await store.send(.participantLeft(deploy.id)) { $0.participants = [] }
      let checkpoint = try #require(store.state.meeting).checkpoint(standupID: standup.id)
      await discard(store)

      var opened = Room.State(standup: standup)
      opened.meeting = RecordMeeting.State(restoring: checkpoint, standup: standup)
      let next = makeStore(opened: opened, clock: clock, at: Self.start.addingTimeInterval(2))
      await next.send(.participantJoined(deploy)) { $0.participants = [deploy] }
      await clock.advance(by: .seconds(2))  // nothing ticks
      await next.send(.meeting(.presented(.resumeButtonTapped))) {
        $0.meeting?.pausedBecause = nil
        $0.meeting?.emptiedAt = nil
      }
      await clock.advance(by: .seconds(1))
      await next.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await discard(next)
    }
  }

  @Test func aMeetingOnlyBotsAreInStopsWhenTheLastOfThemLeaves() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let deploy = Participant(id: "b1", name: "Deploy", isBot: true)
      await joinAndStart(store, standup: standup, with: deploy)
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await store.send(.participantLeft(deploy.id)) { $0.participants = [] }
      await store.receive(\.meeting.presented.roomEmptied) {
        $0.meeting?.pausedBecause = .everyoneLeft
        $0.meeting?.emptiedAt = Self.start
      }
      await clock.advance(by: .seconds(3))
      await discard(store)
    }
  }
}

/// A meeting's change that could not be saved is taken back, and only it.
extension RecordMeetingTests {
  @Test func aNoteThatCouldNotBeSavedGoesButTheClockAndOthersNotesStay() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let ana = Participant(id: "p1", name: "Ana")
      await joinAndStart(store, standup: standup, with: ana)
      let before = store.state
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "Lost")))) {
        $0.meeting?.transcript = "Ana: Lost"
        $0.meeting?.notes = [Note(author: "Ana", text: "Lost", speaker: "Person 1")]
      }
      let after = store.state
      // While its save is under way, the clock ticks and Ben's note comes in.
      await clock.advance(by: .seconds(2))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 1
        $0.meeting?.secondsRun = 1
      }
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 2
        $0.meeting?.secondsRun = 2
      }
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ben", text: "Kept")))) {
        $0.meeting?.transcript = "Ana: Lost\nBen: Kept"
        $0.meeting?.notes.append(Note(author: "Ben", text: "Kept", speaker: "Person 1"))
      }
      await store.send(.saveFailed(before: before, after: after)) {
        $0.meeting?.transcript = "Ben: Kept"
        $0.meeting?.notes = [Note(author: "Ben", text: "Kept", speaker: "Person 1")]
      }
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = 3
        $0.meeting?.secondsRun = 3
      }
      await discard(store)
    }
  }

  /// Two notes in a row whose saves both fail: each failure takes back its own note.
  @Test func twoNotesThatCouldNotBeSavedBothGo() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      await joinAndStart(store, standup: standup, with: Participant(id: "p1", name: "Ana"))
      let before = store.state
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "One")))) {
        $0.meeting?.transcript = "Ana: One"
        $0.meeting?.notes = [Note(author: "Ana", text: "One", speaker: "Person 1")]
      }
      let afterOne = store.state
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ben", text: "Two")))) {
        $0.meeting?.transcript = "Ana: One\nBen: Two"
        $0.meeting?.notes.append(Note(author: "Ben", text: "Two", speaker: "Person 1"))
      }
      let afterTwo = store.state
      await store.send(.saveFailed(before: before, after: afterOne)) {
        $0.meeting?.transcript = "Ben: Two"
        $0.meeting?.notes = [Note(author: "Ben", text: "Two", speaker: "Person 1")]
      }
      await store.send(.saveFailed(before: afterOne, after: afterTwo)) {
        $0.meeting?.transcript = ""
        $0.meeting?.notes = []
      }
      await discard(store)
    }
  }

  @Test func aNextThatCouldNotBeSavedGoesBackToTheSpeakerAsTheClockHasMovedOn() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()  // 60 s a speaker
      let store = makeStore(standup, clock: clock)
      let ana = Participant(id: "p1", name: "Ana")
      await joinAndStart(store, standup: standup, with: ana)
      let before = store.state
      let perSpeaker = standup.secondsPerAttendee
      await store.send(.meeting(.presented(.nextButtonTapped(from: 0)))) {
        $0.meeting?.speakerIndex = 1
        $0.meeting?.secondsElapsed = perSpeaker
      }
      let after = store.state
      await clock.advance(by: .seconds(1))
      await store.receive(\.meeting.presented.timerTick) {
        $0.meeting?.secondsElapsed = perSpeaker + 1
        $0.meeting?.secondsRun = 1
      }
      await store.send(.saveFailed(before: before, after: after)) {
        $0.meeting?.speakerIndex = 0
        $0.meeting?.secondsElapsed = 1
      }
      await discard(store)
    }
  }
}

extension RecordMeetingTests {
  /// A note's save fails after the meeting's time ran out: the meeting stays ended and in the
  /// history (saved on its own), without the note; it does not come back and tick.
  @Test func aMeetingThatEndedSinceARefusedNoteStaysEndedAndInTheHistory() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock(attendees: 1, minutes: 1)
      let store = makeStore(standup, clock: clock)
      store.exhaustivity = .off
      await joinAndStart(store, standup: standup, with: Participant(id: "p1", name: "Ana"))
      let before = store.state
      await store.send(.meeting(.presented(.noteSubmitted(author: "Ana", text: "Lost"))))
      let after = store.state
      await clock.advance(by: .seconds(60))
      await store.skipReceivedActions()
      #expect(store.state.meeting == nil)
      let ended = try? #require(store.state.standup.meetings.first)
      #expect(ended?.notes.map(\.text) == ["Lost"])
      await store.send(.saveFailed(before: before, after: after))
      #expect(store.state.meeting == nil)
      #expect(store.state.standup.meetings.map(\.id) == [ended?.id])
      // Its sender was told it was not taken: it is not in the saved meeting either.
      #expect(store.state.standup.meetings.first?.notes == [])
      #expect(store.state.standup.meetings.first?.transcript == "")
      await clock.advance(by: .seconds(5))
      await store.skipReceivedActions()
      #expect(store.state.meeting == nil)
    }
  }
}

/// Someone renaming themselves during a meeting (their page connects again under the new
/// name, after or before its old connection goes) is present once, by the name they go by now.
extension RecordMeetingTests {
  @Test func someoneWhoRenamedThemselvesIsPresentOnceByTheirNewName() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let anna = Participant(id: "p1", name: "Anna", person: "k1")
      let ben = Participant(id: "p2", name: "Ben", person: "k2")
      await store.send(.participantJoined(anna)) { $0.participants = [anna] }
      await store.send(.participantJoined(ben)) { $0.participants = [anna, ben] }
      await store.send(.startMeetingButtonTapped) {
        $0.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
        $0.meeting?.present = ["Anna", "Ben"]
        $0.meeting?.presentBy = ["Anna": ["k1"], "Ben": ["k2"]]
      }
      await store.receive(\.meeting.presented.started)
      // Anna's page leaves, then comes back as "Ana K".
      let annaK = Participant(id: "p3", name: "Ana K", person: "k1")
      await store.send(.participantLeft(anna.id)) { $0.participants = [ben] }
      await store.send(.participantJoined(annaK)) {
        $0.participants = [ben, annaK]
        $0.meeting?.present = ["Ana K", "Ben"]
        $0.meeting?.presentBy = ["Ana K": ["k1"], "Ben": ["k2"]]
      }
      // Her second tab follows: nothing more to rename.
      let annaKAgain = Participant(id: "p4", name: "Ana K", person: "k1")
      await store.send(.participantJoined(annaKAgain)) {
        $0.participants = [ben, annaK, annaKAgain]
      }
      // Another sign-in that chose a name already present is listed once under it; one of
      // them renaming leaves it for the other.
      let otherBen = Participant(id: "p5", name: "Ben", person: "k3")
      await store.send(.participantJoined(otherBen)) {
        $0.participants = [ben, annaK, annaKAgain, otherBen]
        $0.meeting?.presentBy["Ben"] = ["k2", "k3"]
      }
      // Ben's page joins again under "Ben B" before his old connection goes.
      let benB = Participant(id: "p6", name: "Ben B", person: "k2")
      await store.send(.participantJoined(benB)) {
        $0.participants = [ben, annaK, annaKAgain, otherBen, benB]
        $0.meeting?.present = ["Ana K", "Ben", "Ben B"]
        $0.meeting?.presentBy["Ben"] = ["k3"]
        $0.meeting?.presentBy["Ben B"] = ["k2"]
      }
      await discard(store)
    }
  }

  /// One of two people who chose one name renames themselves to a third person's name: three
  /// people were there, and the saved meeting lists three (it listed two: the one renamed,
  /// under two names, counted under neither).
  @Test func oneOfTwoWithOneNameTakingAThirdsNameIsStillOneOfThree() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let ana = Participant(id: "p1", name: "Ana", person: "k1")
      let ben = Participant(id: "p2", name: "Ben", person: "k2")
      let otherBen = Participant(id: "p3", name: "Ben", person: "k3")
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await store.send(.participantJoined(ben)) { $0.participants = [ana, ben] }
      await store.send(.participantJoined(otherBen)) { $0.participants = [ana, ben, otherBen] }
      await store.send(.startMeetingButtonTapped) {
        $0.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
        $0.meeting?.present = ["Ana", "Ben"]
        $0.meeting?.presentBy = ["Ana": ["k1"], "Ben": ["k2", "k3"]]
      }
      await store.receive(\.meeting.presented.started)
      let benAsAna = Participant(id: "p4", name: "Ana", person: "k3")
      await store.send(.participantLeft(otherBen.id)) { $0.participants = [ana, ben] }
      await store.send(.participantJoined(benAsAna)) {
        $0.participants = [ana, ben, benAsAna]
        $0.meeting?.presentBy = ["Ana": ["k1", "k3"], "Ben": ["k2"]]
      }
      await saveAndEnd(store, present: ["Ana", "Ana", "Ben"])
    }
  }

  /// A room that opened again (a restart, a move) does not know who was there under each
  /// name before: a name from then is never taken for a former name.
  @Test func aNamePresentBeforeTheRoomOpenedAgainIsNotRenamed() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      var restored = Room.State(standup: standup)
      restored.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
      restored.meeting?.present = ["Ana", "Ben"]
      restored.meeting?.pausedBecause = .serverRestarted
      let store = makeStore(opened: restored, clock: clock)
      let ben = Participant(id: "p0", name: "Ben", person: "k2")
      await store.send(.participantJoined(ben)) {
        $0.participants = [ben]
        $0.meeting?.presentBy["Ben"] = ["", "k2"]
      }
      // Another "Ana" (or this one) comes, then renames: the "Ana" of before stays.
      let ana = Participant(id: "p1", name: "Ana", person: "k1")
      await store.send(.participantJoined(ana)) {
        $0.participants = [ben, ana]
        $0.meeting?.presentBy["Ana"] = ["", "k1"]
      }
      let anna = Participant(id: "p2", name: "Anna", person: "k1")
      await store.send(.participantLeft(ana.id)) { $0.participants = [ben] }
      await store.send(.participantJoined(anna)) {
        $0.participants = [ben, anna]
        $0.meeting?.present = ["Ana", "Ben", "Anna"]
        $0.meeting?.presentBy["Ana"] = [""]
        $0.meeting?.presentBy["Anna"] = ["k1"]
      }
      #expect(store.state.meeting?.presentPeople == ["Ana", "Ben", "Anna"])
    }
  }

  /// The sign-ins behind each name are in the meeting's checkpoint: after a restart, someone
  /// who renames themselves is still present once, by the name they go by now.
  @Test func someoneWhoRenamesAfterTheMeetingCameBackIsPresentOnce() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      var running = RecordMeeting.State(id: UUID(0), standup: standup)
      running.present = ["Ana", "Ben"]
      running.presentBy = ["Ana": ["k1"], "Ben": ["k2"]]
      var restored = Room.State(standup: standup)
      restored.meeting = RecordMeeting.State(
        restoring: running.checkpoint(standupID: standup.id), standup: standup)
      #expect(restored.meeting?.presentBy == running.presentBy)
      let store = makeStore(opened: restored, clock: clock)
      let ben = Participant(id: "p0", name: "Benjamin", person: "k2")
      await store.send(.participantJoined(ben)) {
        $0.participants = [ben]
        $0.meeting?.present = ["Ana", "Benjamin"]
        $0.meeting?.presentBy = ["Ana": ["k1"], "Benjamin": ["k2"]]
      }
    }
  }

  /// Two people who chose the same name are two people in the saved meeting (and in the
  /// history's count); one person in two tabs, or renamed, is one.
  @Test func twoPeopleWithOneNameArePresentTwiceInTheSavedMeeting() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let alex = Participant(id: "p1", name: "Alex", person: "k1")
      let otherAlex = Participant(id: "p2", name: "Alex", person: "k2")
      let alexAgain = Participant(id: "p3", name: "Alex", person: "k1")
      let sam = Participant(id: "p4", name: "Sam", person: "k3")
      await store.send(.participantJoined(alex)) { $0.participants = [alex] }
      await store.send(.startMeetingButtonTapped) {
        $0.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
        $0.meeting?.present = ["Alex"]
        $0.meeting?.presentBy = ["Alex": ["k1"]]
      }
      await store.receive(\.meeting.presented.started)
      await store.send(.participantJoined(otherAlex)) {
        $0.participants = [alex, otherAlex]
        $0.meeting?.presentBy["Alex"] = ["k1", "k2"]
      }
      await store.send(.participantJoined(alexAgain)) {
        $0.participants = [alex, otherAlex, alexAgain]
      }
      // Sam comes as "Sam", goes, and comes back as "Sam K": one Sam.
      let samK = Participant(id: "p5", name: "Sam K", person: "k3")
      await store.send(.participantJoined(sam)) {
        $0.participants = [alex, otherAlex, alexAgain, sam]
        $0.meeting?.present = ["Alex", "Sam"]
        $0.meeting?.presentBy["Sam"] = ["k3"]
      }
      await store.send(.participantLeft(sam.id)) { $0.participants = [alex, otherAlex, alexAgain] }
      await store.send(.participantJoined(samK)) {
        $0.participants = [alex, otherAlex, alexAgain, samK]
        $0.meeting?.present = ["Alex", "Sam K"]
        $0.meeting?.presentBy = ["Alex": ["k1", "k2"], "Sam K": ["k3"]]
      }
      await saveAndEnd(store, present: ["Alex", "Alex", "Sam K"])
    }
  }
}
