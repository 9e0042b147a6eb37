import CasePathsCore
import Clocks
import ConcurrencyExtras
import Dependencies
import Testing

@testable import StoreRuntime

@MainActor
@Suite(.serialized)
struct EffectTests {
  @Test func aTimerTicksOnTheTestClockAndStopsWhenCancelled() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = TestStore(initialState: Ticker.State(id: 1)) {
        Ticker()
      } withDependencies: {
        $0.continuousClock = clock
      }
      await store.send(.started)
      await clock.advance(by: .seconds(1))
      await store.receive(\.tick) { $0.ticks = 1 }
      await clock.advance(by: .seconds(1))
      await store.receive(\.tick) { $0.ticks = 2 }
      await store.skipInFlightEffects()
      await clock.advance(by: .seconds(5))
    }
  }

  @Test func cancelInFlightReplacesTheRunningTimer() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = TestStore(initialState: Ticker.State(id: 1)) {
        Ticker()
      } withDependencies: {
        $0.continuousClock = clock
      }
      await store.send(.started)
      await clock.advance(by: .milliseconds(500))
      await store.send(.started)
      // Only the second timer is left: one tick at 1.5 s, none at 1 s.
      await clock.advance(by: .milliseconds(500))
      await clock.advance(by: .milliseconds(500))
      await store.receive(\.tick) { $0.ticks = 1 }
      await store.skipInFlightEffects()
    }
  }

  @Test func cancellationIsScopedToOneStore() async throws {
    try await withMainSerialExecutor {
      let clock = TestClock()
      let (ticks, continuation) = AsyncStream<Int>.makeStream()
      let first = Store(
        initialState: Ticker.State(id: 1), reducer: Ticker(),
        dependencies: withDependencies {
          $0.continuousClock = clock
        } operation: {
          DependencyValues._current
        },
        // NB: on the main executor, as the test is: each timer is asleep on the test clock
        // before the test advances it.
        on: nil, observer: { action, _, _ in if action == .tick { continuation.yield(1) } })
      let second = Store(
        initialState: Ticker.State(id: 2), reducer: Ticker(),
        dependencies: withDependencies {
          $0.continuousClock = clock
        } operation: {
          DependencyValues._current
        },
        on: nil, observer: { action, _, _ in if action == .tick { continuation.yield(2) } })
      await first.send(.started)
      await second.send(.started)
      // Cancelling "timer" in the first store leaves the second store's "timer" running.
      await first.cancelAllEffects()
      #expect(first.runningEffectCount == 0)
      #expect(second.runningEffectCount == 1)
      await clock.advance(by: .seconds(1))
      var iterator = ticks.makeAsyncIterator()
      #expect(await iterator.next() == 2)
      #expect(await second.state.ticks == 1)
      #expect(await first.state.ticks == 0)
      await second.cancelAllEffects()
      _ = try #require(Optional(first))
    }
  }
}

@MainActor
@Suite(.serialized)
struct PresentationTests {
  /// `ifLet` through the `@CasePathable` macro's case path (`\.ticker`), and through a
  /// `CaseKeyPath`.
  @Test(arguments: [false, true]) func dismissingAChildCancelsItsTimerAtOnce(
    throughCaseKeyPath: Bool
  ) async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = parentStore(clock, throughCaseKeyPath: throughCaseKeyPath)
      await store.send(.showButtonTapped) {
        $0.presentations = 1
        $0.ticker = Ticker.State(id: 1)
      }
      await store.receive(\.ticker.presented.started)
      await clock.advance(by: .seconds(1))
      await store.receive(\.ticker.presented.tick) { $0.ticker?.ticks = 1 }
      await store.send(.hideButtonTapped) { $0.ticker = nil }
      // The test ends here: the exhaustive store fails if the timer outlived its child.
      await clock.advance(by: .seconds(3))
    }
  }

  /// `ifLet` through the `@CasePathable` macro's case path (`\.ticker`), and through a
  /// `CaseKeyPath`.
  @Test(arguments: [false, true]) func aChildDismissesItselfThroughTheDismissDependency(
    throughCaseKeyPath: Bool
  ) async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = parentStore(clock, throughCaseKeyPath: throughCaseKeyPath)
      await store.send(.showButtonTapped) {
        $0.presentations = 1
        $0.ticker = Ticker.State(id: 1)
      }
      await store.receive(\.ticker.presented.started)
      await store.send(.ticker(.presented(.doneButtonTapped)))
      await store.receive(\.ticker.dismiss) { $0.ticker = nil }
      await clock.advance(by: .seconds(2))
      await store.finish()
    }
  }

  /// `ifLet` through the `@CasePathable` macro's case path (`\.ticker`), and through a
  /// `CaseKeyPath`.
  @Test(arguments: [false, true]) func presentingANewChildCancelsTheOldOnesEffectsOnly(
    throughCaseKeyPath: Bool
  ) async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = parentStore(clock, throughCaseKeyPath: throughCaseKeyPath)
      await store.send(.showButtonTapped) {
        $0.presentations = 1
        $0.ticker = Ticker.State(id: 1)
      }
      await store.receive(\.ticker.presented.started)
      // Another child (id 2) takes its place in one action: the old timer dies, a new one starts.
      await store.send(.showButtonTapped) {
        $0.presentations = 2
        $0.ticker = Ticker.State(id: 2)
      }
      await store.receive(\.ticker.presented.started)
      await clock.advance(by: .seconds(1))
      await store.receive(\.ticker.presented.tick) { $0.ticker?.ticks = 1 }
      await store.send(.hideButtonTapped) { $0.ticker = nil }
    }
  }

  @Test func presentationsAreTheSameWhenTheirTypeAndIdAre() {
    let ticker = PresentationID.identifier(for: Ticker.State.self)
    #expect(ticker(Ticker.State(id: 1)) == ticker(Ticker.State(id: 1, ticks: 5)))
    #expect(ticker(Ticker.State(id: 1)) != ticker(Ticker.State(id: 2)))
    #expect(
      Set([ticker(Ticker.State(id: 1)), ticker(Ticker.State(id: 1)), ticker(Ticker.State(id: 2))])
        .count == 2)
    // Without an id, a presentation is its type: another type is another presentation.
    let parent = PresentationID.identifier(for: Parent.State.self)
    #expect(parent(Parent.State()) == parent(Parent.State(presentations: 3)))
    #expect(parent(Parent.State()) != ticker(Ticker.State(id: 1)))
    // Ids of another type never compare equal, whatever their value.
    let one = PresentationID(type: ObjectIdentifier(Int.self), id: 1)
    #expect(one != PresentationID(type: ObjectIdentifier(Int.self), id: "1"))
    #expect(one != PresentationID(type: ObjectIdentifier(Int.self), id: nil))
    #expect(one == PresentationID(type: ObjectIdentifier(Int.self), id: 1))
  }

  @Test func aChildThatChangesItsStateAndRefusesLeavesTheStateAsItWas() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = parentStore(clock)
      await store.send(.showButtonTapped) {
        $0.presentations = 1
        $0.ticker = Ticker.State(id: 1)
      }
      await store.receive(\.ticker.presented.started)
      // The child is reduced in place; the refusal drops the store's whole new state.
      await store.send(
        .ticker(.presented(.tickTooFar)), rejectedWith: .invalidValue("That is too far."))
      #expect(store.state.ticker?.ticks == 0)
      await store.send(.hideButtonTapped) { $0.ticker = nil }
    }
  }

  @Test(arguments: [false, true])
  func aChildActionWithNothingPresentedIsRejected(throughCaseKeyPath: Bool) async {
    let store = TestStore(initialState: Parent.State()) {
      Parent(throughCaseKeyPath: throughCaseKeyPath)
    }
    await store.send(
      .ticker(.presented(.tick)), rejectedWith: .invalidAction("No ticker is showing."))
  }
}

@MainActor
@Suite(.serialized)
struct BindingTests {
  @Test func aBindingSetsItsFieldAndValidationCanRejectIt() async {
    let store = TestStore(initialState: Form.State()) { Form() }
    await store.send(.binding(.set(\.$title, "Daily"))) { $0.title = "Daily" }
    // Rejected after the binding applied: the store keeps the state as it was.
    await store.send(
      .binding(.set(\.$title, "Too long")), rejectedWith: .invalidValue("At most 5 characters."))
    #expect(store.state.title == "Daily")
  }
}

@MainActor
@Suite(.serialized)
struct TestStoreTests {
  @Test func anUnassertedStateChangeFails() async {
    let store = TestStore(initialState: Form.State()) { Form() }
    await withKnownIssue {
      await store.send(.binding(.set(\.$title, "Daily")))
    }
  }

  @Test func anEffectStillRunningAtTheEndFails() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      await withKnownIssue {
        let store = TestStore(initialState: Ticker.State(id: 1)) {
          Ticker()
        } withDependencies: {
          $0.continuousClock = clock
        }
        store.timeout = .milliseconds(50)
        await store.send(.started)
        await store.finish()
      }
    }
  }

  @Test func exhaustivityOffChecksOnlyWhatIsAsserted() async {
    await withMainSerialExecutor {
      let clock = TestClock()
      let store = parentStore(clock)
      store.exhaustivity = .off
      // Only `presentations` is asserted; the new ticker and the `started` action are not.
      await store.send(.showButtonTapped) { $0.presentations = 1 }
      await clock.advance(by: .seconds(2))
      await store.receive(\.ticker.presented.tick) { $0.ticker?.ticks = 1 }
      #expect(store.state.ticker?.id == 1)
      await store.skipInFlightEffects()
    }
  }
}

/// A parent of a ticker child, on `clock`.
@MainActor
func parentStore(_ clock: TestClock<Duration>, throughCaseKeyPath: Bool = false) -> TestStore<
  Parent
> {
  TestStore(initialState: Parent.State()) {
    Parent(throughCaseKeyPath: throughCaseKeyPath)
  } withDependencies: {
    $0.continuousClock = clock
  }
}
