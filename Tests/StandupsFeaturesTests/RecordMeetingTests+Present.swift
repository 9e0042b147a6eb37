import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import IdentifiedCollections
import StandupsFeatures
import StoreRuntime
import Testing

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

  /// Someone whose session ends during the meeting (a rotated invite, a sign-out and back)
  /// comes back as a new sign-in: one person, present once, not once a sign-in. Two sign-ins
  /// of one name there at once are two people, also when one of them signs in again.
  @Test func someoneWhoSignsInAgainDuringTheMeetingIsPresentOnce() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let ana = Participant(id: "p1", name: "Ana", person: "k1")
      let alex = Participant(id: "p2", name: "Alex", person: "k2")
      let otherAlex = Participant(id: "p3", name: "Alex", person: "k3")
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await store.send(.participantJoined(alex)) { $0.participants = [ana, alex] }
      await store.send(.participantJoined(otherAlex)) { $0.participants = [ana, alex, otherAlex] }
      await store.send(.startMeetingButtonTapped) {
        $0.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
        $0.meeting?.present = ["Ana", "Alex"]
        $0.meeting?.presentBy = ["Ana": ["k1"], "Alex": ["k2", "k3"]]
      }
      await store.receive(\.meeting.presented.started)
      // The invite is rotated: everyone's connection closes, and each signs in again.
      await store.send(.participantLeft(ana.id)) { $0.participants = [alex, otherAlex] }
      await store.send(.participantLeft(alex.id)) { $0.participants = [otherAlex] }
      let anaAgain = Participant(id: "p4", name: "Ana", person: "k4")
      await store.send(.participantJoined(anaAgain)) {
        $0.participants = [otherAlex, anaAgain]
        $0.meeting?.presentBy["Ana"] = ["k4"]
      }
      // One Alex is back before the other has gone: the one gone is the one back.
      let alexAgain = Participant(id: "p5", name: "Alex", person: "k5")
      await store.send(.participantJoined(alexAgain)) {
        $0.participants = [otherAlex, anaAgain, alexAgain]
        $0.meeting?.presentBy["Alex"] = ["k3", "k5"]
      }
      await store.send(.participantLeft(otherAlex.id)) { $0.participants = [anaAgain, alexAgain] }
      let otherAlexAgain = Participant(id: "p6", name: "Alex", person: "k6")
      await store.send(.participantJoined(otherAlexAgain)) {
        $0.participants = [anaAgain, alexAgain, otherAlexAgain]
        $0.meeting?.presentBy["Alex"] = ["k5", "k6"]
      }
      await saveAndEnd(store, present: ["Ana", "Alex", "Alex"])
    }
  }

  /// A note sent again by someone who signed in again meanwhile (their answer lost as the
  /// session ended) is theirs: taken once.
  @Test func aNoteSentAgainAfterSigningInAgainIsTakenOnce() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let standup = Standup.mock()
      let store = makeStore(standup, clock: clock)
      let ana = Participant(id: "p1", name: "Ana", person: "k1")
      await store.send(.participantJoined(ana)) { $0.participants = [ana] }
      await store.send(.startMeetingButtonTapped) {
        $0.meeting = RecordMeeting.State(id: UUID(0), standup: standup)
        $0.meeting?.present = ["Ana"]
        $0.meeting?.presentBy = ["Ana": ["k1"]]
      }
      await store.receive(\.meeting.presented.started)
      let note = RecordMeeting.Action.noteSubmitted(author: "Ana", text: "+1", id: "n1", by: "k1")
      await store.send(.meeting(.presented(note))) {
        $0.meeting?.transcript = "Ana: +1"
        $0.meeting?.notes = [Note(author: "Ana", text: "+1", speaker: "Person 1", id: "n1")]
        $0.meeting?.noteSenders = ["n1": ["k1"]]
      }
      await store.send(.participantLeft(ana.id)) { $0.participants = [] }
      await store.receive(\.meeting.presented.roomEmptied) {
        $0.meeting?.pausedBecause = .everyoneLeft
        $0.meeting?.emptiedAt = Self.start
      }
      let anaAgain = Participant(id: "p2", name: "Ana", person: "k2")
      await store.send(.participantJoined(anaAgain)) {
        $0.participants = [anaAgain]
        $0.meeting?.presentBy = ["Ana": ["k2"]]
        $0.meeting?.noteSenders = ["n1": ["k1", "k2"]]
      }
      await store.receive(\.meeting.presented.someoneReturned) {
        $0.meeting?.pausedBecause = nil
        $0.meeting?.emptiedAt = nil
      }
      await store.send(
        .meeting(.presented(.noteSubmitted(author: "Ana", text: "+1", id: "n1", by: "k2"))))
      #expect(store.state.meeting?.transcript == "Ana: +1")
      #expect(store.state.meeting?.presentPeople == ["Ana"])
      await discard(store)
    }
  }
}
