import Clocks
import Dependencies
import Fixtures
import Foundation
import JSONPatch
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Synchronization
import Testing
import WebSocketTransport

@testable import RoomRuntime

/// A room end to end without a socket: events in, frames out (`Recorder`), saves awaited.
@Suite struct RoomChannelTests {
  let ana = ConnectionID(rawValue: 1)
  let ben = ConnectionID(rawValue: 2)

  struct Harness {
    var room: RoomChannel<TallyRoom>
    var frames: Recorder
    var storage: StorageClient
    /// Set once the room said it is idle (its last peer left).
    var idle: Switch
    var counts: Counts
  }

  func open(_ feature: TallyRoom = TallyRoom(), clock: TestClock<Duration> = TestClock())
    -> Harness
  {
    let frames = Recorder()
    let outlet = Outlet()
    outlet.attach(frames)
    let storage = StorageClient.inMemory()
    let idle = Switch(false)
    let counts = Counts()
    let room = RoomChannel(
      feature: feature, initialState: Tally.State(), reducer: Tally(),
      dependencies: withDependencies {
        $0.continuousClock = clock
      } operation: {
        DependencyValues._current
      },
      versions: VersionLease(
        room: "tally", storage: storage, sizes: .init(block: 100, lowWater: 10),
        logger: testLogger),
      outlet: outlet, metrics: counts.metrics, logger: testLogger,
      onIdle: { _ in idle.set(true) })
    return Harness(room: room, frames: frames, storage: storage, idle: idle, counts: counts)
  }

  func person(_ id: String) -> Sender { Sender(participantID: id, name: id, isBot: false) }

  func action(_ type: String, ref: String) -> InboundMessage {
    .text(Array(#"{"type":"action","ref":"\#(ref)","action":{"type":"\#(type)"}}"#.utf8))
  }

  /// Waits for the answer (`ack` or `error`) to `ref` and returns it.
  func answer(to ref: String, on connection: ConnectionID, in harness: Harness) async throws
    -> JSONValue
  {
    try await eventually("no answer to \(ref)") {
      harness.frames.received(by: connection).contains { $0["ref"]?.stringValue == ref }
    }
    return try #require(
      harness.frames.received(by: connection).first { $0["ref"]?.stringValue == ref })
  }

  @Test func everyoneGetsAnActionsPatchAndItsSenderTheAckAfterIt() async throws {
    let harness = open()
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    harness.room.enqueue(.join(ben, person("ben"), since: nil))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a1")))
    let ack = try await answer(to: "a1", on: ana, in: harness)
    #expect(ack.type == "ack")

    let anas = harness.frames.received(by: ana)
    let welcome = try #require(anas.first)
    #expect(welcome.type == "welcome")
    #expect(welcome["state"]?["people"] == ["ana"])
    let first = try #require(welcome.version)
    // Ben's arrival, then the count, then the ack of the count at the count's version.
    #expect(anas.map(\.type) == ["welcome", "patch", "patch", "ack"])
    #expect(anas.dropFirst().map(\.version) == [first + 1, first + 2, first + 2])
    #expect(anas[2]["ops"] == [["op": "replace", "path": "/count", "value": 1]])
    // Ben sees the same document: welcomed at Ana's second version, then the count.
    let bens = harness.frames.received(by: ben)
    #expect(bens.map(\.type) == ["welcome", "patch"])
    #expect(bens.first?.version == first + 1)
    #expect(bens.first?["state"]?["people"] == ["ana", "ben"])
    #expect(bens.last == anas[2])
    // Counted: one action answered, and the patches to the peers each reached.
    #expect(harness.counts.outcomes == ["ok"])
    #expect(harness.counts.patchPeers == [1, 2])
  }

  @Test func anActionTheReducerRefusesChangesNothingAndSaysWhy() async throws {
    let harness = open()
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    for ref in ["a1", "a2", "a3", "a4"] {
      harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: ref)))
    }
    let refused = try await answer(to: "a4", on: ana, in: harness)
    #expect(refused.type == "error")
    #expect(refused["code"] == "invalid_action")
    #expect(refused["message"] == "Three is the most.")
    #expect(harness.frames.received(by: ana).filter { $0.type == "patch" }.count == 3)
    #expect(await harness.room.read(\.count) == 3)

    harness.room.enqueue(.message(ana, action("shrugged", ref: "a5")))
    #expect(try await answer(to: "a5", on: ana, in: harness)["code"] == "unknown_action")
    #expect(harness.counts.outcomes == ["ok", "ok", "ok", "invalid_action", "unknown_action"])
  }

  @Test func aChangeThatCannotBeSavedIsUndoneForEveryoneAndNotAcknowledged() async throws {
    let saves = Switch(false)
    let harness = open(
      TallyRoom(save: { _ in
        guard saves.isOn else { throw DiskFull() }
      }))
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    harness.room.enqueue(.join(ben, person("ben"), since: nil))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a1")))
    let refused = try await answer(to: "a1", on: ana, in: harness)
    #expect(refused.type == "error")
    #expect(refused["code"] == "storage_unavailable")
    #expect(!harness.frames.received(by: ana).contains { $0.type == "ack" })
    // Ben saw the count go up, then back: the room is as it was saved.
    let counts = harness.frames.received(by: ben).filter { $0.type == "patch" }.map(\.["ops"])
    #expect(
      counts == [
        [["op": "replace", "path": "/count", "value": 1]],
        [["op": "replace", "path": "/count", "value": 0]],
      ])
    #expect(await harness.room.read(\.count) == 0)

    saves.set(true)
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a2")))
    #expect(try await answer(to: "a2", on: ana, in: harness).type == "ack")
    #expect(await harness.room.read(\.count) == 1)
  }

  /// A write that may have landed (its connection went under it) is not said to be undone:
  /// told so, a client would make it again, twice if it had landed. It says what is known.
  @Test func aChangeWhoseSaveMayHaveLandedIsNotSaidToBeUndone() async throws {
    let harness = open(
      TallyRoom(save: { _ in throw WriteOutcomeUnknown("the connection went during the write") }))
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a1")))
    let answer = try await answer(to: "a1", on: ana, in: harness)
    #expect(answer.type == "error")
    #expect(answer["code"] == "outcome_unknown")
    #expect(answer["message"]?.stringValue?.contains("may have been saved or not") == true)
    #expect(answer["message"]?.stringValue?.contains("undone") == false)
    #expect(harness.counts.outcomes == ["outcome_unknown"])
  }

  /// A tally room whose count of 2 cannot be encoded, whose first save (of 1) waits until
  /// `release`, and the counts it saved.
  func roomWhoseSecondCountCannotBePublished(movingAction: Tally.Action? = nil) -> (
    Harness, AsyncStream<Void>.Continuation, SavedCounts
  ) {
    let (opened, release) = AsyncStream<Void>.makeStream()
    let saved = SavedCounts()
    let harness = open(
      TallyRoom(
        save: { count in
          if count == 1 { for await _ in opened { break } }
          saved.counts.withLock { $0.append(count) }
        },
        encodable: { $0.count != 2 }, movingAction: movingAction))
    return (harness, release, saved)
  }

  final class SavedCounts: Sendable {
    let counts = Mutex<[Int]>([])
  }

  /// A change that cannot be published restarts the room, behind what was queued already:
  /// those are refused, never published or saved with it (its sender was told it failed,
  /// and would send it again).
  @Test func whatWasQueuedBehindAChangeThatCouldNotBePublishedIsRefused() async throws {
    let (harness, release, saved) = roomWhoseSecondCountCannotBePublished()
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    // The first waits for its save; the other two queue behind it, and so do Ben, who comes
    // in, and his ping (the room is busy: it has not answered pings for him yet).
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a1")))
    harness.room.enqueue(.join(ben, person("ben"), since: nil))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a2")))
    harness.room.enqueue(.message(ben, .text(Array(#"{"type":"ping","ref":"p1"}"#.utf8))))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a3")))
    release.finish()
    #expect(try await answer(to: "a1", on: ana, in: harness).type == "ack")
    #expect(try await answer(to: "a2", on: ana, in: harness)["code"] == "room_moving")
    #expect(try await answer(to: "a3", on: ana, in: harness)["code"] == "room_moving")
    // A ping is answered as ever.
    #expect(try await answer(to: "p1", on: ben, in: harness).type == "pong")
    try await eventually("the room never restarted") { harness.frames.closeCode(of: ana) != nil }
    #expect(saved.counts.withLock { $0 } == [1])
    let patches = harness.frames.received(by: ana).filter { $0.type == "patch" }.map(\.["ops"])
    #expect(
      patches == [
        [["op": "replace", "path": "/count", "value": 1]],
        [["op": "add", "path": "/people/1", "value": "ben"]],
      ])
  }

  /// Nor does a hand-on queued before that restart reduce what a move asks on top of the
  /// refused change: it would publish and save it with its own.
  @Test func aHandOnAfterAChangeThatCouldNotBePublishedSavesNothingOfIt() async throws {
    let (harness, release, saved) = roomWhoseSecondCountCannotBePublished(
      movingAction: .incrementButtonTapped)
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a1")))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a2")))
    harness.room.enqueue(.restart(why: "handed on", code: .serviceRestart, handingOn: true))
    release.finish()
    #expect(try await answer(to: "a2", on: ana, in: harness)["code"] == "room_moving")
    try await eventually("the room never restarted") { harness.frames.closeCode(of: ana) != nil }
    #expect(saved.counts.withLock { $0 } == [1])
  }

  /// A change an effect makes that closes the room (a deletion's undo window ends) closes
  /// nobody before it is saved, though actions queued before it are answered first: closed
  /// sooner, the room could open anew and read the deleted standup back.
  @Test func aCloseAnEffectAsksForWaitsForItsSaveBehindQueuedActions() async throws {
    let clock = TestClock()
    let (countOpened, releaseCount) = AsyncStream<Void>.makeStream()
    let (secondsOpened, releaseSeconds) = AsyncStream<Void>.makeStream()
    let harness = open(
      TallyRoom(
        save: { count in if count == 1 { for await _ in countOpened { break } } },
        closesAtSecond: 1, saveSeconds: { _ in for await _ in secondsOpened { break } }),
      clock: clock)
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    harness.room.enqueue(.message(ana, action("startButtonTapped", ref: "s1")))
    #expect(try await answer(to: "s1", on: ana, in: harness).type == "ack")
    // It waits for its save; meanwhile the timer's second closes the room, its close queued
    // behind it.
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a1")))
    try await eventually("the timer never ticked") {
      await clock.advance(by: .seconds(1))
      return await harness.room.read(\.seconds) >= 1
    }
    releaseCount.finish()
    #expect(try await answer(to: "a1", on: ana, in: harness).type == "ack")
    #expect(harness.frames.closeCode(of: ana) == nil)
    releaseSeconds.finish()
    try await eventually("the room never closed") {
      harness.frames.closeCode(of: ana) == CloseCode(rawValue: 4410)
    }
  }

  @Test func aMeetingTimerTicksUntilTheLastPeerLeaves() async throws {
    let clock = TestClock()
    let harness = open(clock: clock)
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    harness.room.enqueue(.message(ana, action("startButtonTapped", ref: "s1")))
    #expect(try await answer(to: "s1", on: ana, in: harness).type == "ack")
    // NB: the timer sleeps on the room's shard; advance until it has woken once.
    try await eventually("the timer never ticked") {
      await clock.advance(by: .seconds(1))
      return harness.frames.received(by: ana).contains {
        $0["ops"]?[0]?["path"] == "/seconds"
      }
    }
    #expect(await harness.room.runningEffectCount == 1)

    harness.room.enqueue(.leave(ana))
    try await eventually("the room never said it was idle") { harness.idle.isOn }
    #expect(await harness.room.runningEffectCount == 0)
    // (What shows it: no effect runs. The state is read too, though a tick on its way to
    // the room when the clock moved could still land after the read.)
    let seconds = await harness.room.read(\.seconds)
    await clock.advance(by: .seconds(5))
    #expect(await harness.room.read(\.seconds) == seconds)
    #expect(await harness.room.read(\.people) == [])
  }

  /// A request from outside (a bot over HTTP) starts something in a room nobody is in, which
  /// keeps the room; once an effect ends it (a meeting's time ran out), the room is released,
  /// as after a request, though no request or person is there to see it.
  @Test func aRoomAnEffectLeavesWithNothingToKeepItIsReleased() async throws {
    let clock = TestClock()
    let harness = open(TallyRoom(idle: { $0.seconds >= 2 }), clock: clock)
    let started = Switch(false)
    harness.room.enqueue(
      .request(
        try ClientMessage.parse(action("startButtonTapped", ref: "s1")), person("bot"),
        reply: { _ in started.set(true) }))
    try await eventually("the request was not answered") { started.isOn }
    try await eventually("the timer never ticked") {
      await clock.advance(by: .seconds(1))
      return await harness.room.read(\.seconds) >= 1
    }
    // NB: kept while it runs (a tick may have come since, and ended it).
    let seconds = await harness.room.read(\.seconds)
    #expect(!harness.idle.isOn || seconds >= 2)
    try await eventually("the room was not released") {
      await clock.advance(by: .seconds(1))
      return harness.idle.isOn
    }
    #expect(await harness.room.read(\.seconds) >= 2)
  }

  @Test func aPeerThatResumesGetsOnlyWhatItMissed() async throws {
    let harness = open()
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a1")))
    let seen = try #require(try await answer(to: "a1", on: ana, in: harness).version)
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a2")))
    _ = try await answer(to: "a2", on: ana, in: harness)

    harness.room.enqueue(.join(ben, person("ben"), since: seen))
    try await eventually("Ben never caught up") {
      harness.frames.received(by: ben).count == 3
    }
    let bens = harness.frames.received(by: ben)
    #expect(bens[0].type == "welcome")
    #expect(bens[0]["resumed"] == true)
    #expect(bens[0]["state"] == .null)
    #expect(bens[0].version == seen)
    #expect(bens[0]["latest"] == .int(seen + 2), "It says where the patches that follow end.")
    // The second count, then Ben's own arrival: the same patches Ana got.
    #expect(bens.dropFirst().map(\.version) == [seen + 1, seen + 2])
    #expect(
      Array(bens.dropFirst())
        == harness.frames.received(by: ana).filter { $0.type == "patch" }.suffix(2))

    // A version this room never issued gets the whole state.
    let cat = ConnectionID(rawValue: 3)
    harness.room.enqueue(.join(cat, person("cat"), since: seen + 1_000))
    try await eventually("Cat was never welcomed") {
      !harness.frames.received(by: cat).isEmpty
    }
    let welcome = try #require(harness.frames.received(by: cat).first)
    #expect(welcome["resumed"] == nil)
    #expect(welcome["state"]?["count"] == 2)
    #expect(welcome["state"]?["people"] == ["ana", "ben", "cat"])
    #expect(welcome.version == seen + 3)
  }

  @Test func aClosedRoomTakesNoMoreEventsAndGivesBackItsUnusedVersions() async throws {
    let harness = open()
    harness.room.enqueue(.join(ana, person("ana"), since: nil))
    harness.room.enqueue(.message(ana, action("incrementButtonTapped", ref: "a1")))
    let last = try #require(try await answer(to: "a1", on: ana, in: harness).version)
    harness.room.close()
    await harness.room.closed()
    #expect(!harness.room.enqueue(.join(ben, person("ben"), since: nil)))
    // The next opening of the room goes on right after the last version issued.
    let next = VersionLease(room: "tally", storage: harness.storage, logger: testLogger)
    #expect(await next.start() == last + 1)
  }
}
