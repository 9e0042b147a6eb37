import ConcurrencyExtras
import Dependencies

/// Where an action the store reduced came from.
public enum ActionOrigin: Sendable, Equatable {
  /// Passed to `Store.send(_:)`.
  case external
  /// Sent by an effect, or by `Effect.send(_:)`.
  case effect
}

/// Holds a feature's state, reduces actions one at a time, and runs their effects: a
/// `StoreCore` behind an actor of its own.
///
/// The store runs on a `Shard`: its actor is isolated to the shard's thread, and its effects
/// are tasks that prefer the same shard, so an effect's action reaches the store without
/// changing threads. Effects are owned by this store: each one inherits the store's
/// dependencies, and its cancellation ids are scoped to this store alone. `observer` is
/// called on the store's actor after every action that was reduced (not rejected), with the
/// new state. (A server's room owns a `StoreCore` itself, inside its own actor.)
///
/// ```swift
/// let store = Store(initialState: Counter.State(), reducer: Counter())
/// await store.send(.incrementButtonTapped)
/// ```
public actor Store<R: Reducer> {
  public typealias Observer =
    @Sendable (_ action: R.Action, _ state: R.State, _ origin: ActionOrigin) -> Void

  private let core: StoreCore<R>
  /// The thread this store and its effects run on; nil for a `TestStore`'s, which runs on
  /// the main actor's executor like the test itself, its effects on the global executor
  /// (both serial under `withMainSerialExecutor`, so that tests are deterministic).
  public nonisolated let shard: Shard?
  private nonisolated let effects: EffectTable
  private let observer: Observer?

  /// - Parameters:
  ///   - dependencies: what the reducer and its effects see; defaults to the caller's.
  ///   - shard: where the store and its effects run; by default the next one in turn.
  ///   - observer: called after each reduced action, on this actor.
  public init(
    initialState: R.State, reducer: R,
    dependencies: DependencyValues = DependencyValues._current,
    shard: Shard = .next(),
    observer: Observer? = nil
  ) {
    self.init(
      initialState: initialState, reducer: reducer, dependencies: dependencies, on: shard,
      observer: observer)
  }

  /// A store on `shard`, or for a `TestStore` (nil) on the main actor's executor.
  init(
    initialState: R.State, reducer: R, dependencies: DependencyValues, on shard: Shard?,
    observer: Observer?
  ) {
    let owner = WeakOwner<Store>()
    let core = StoreCore(
      initialState: initialState, reducer: reducer, dependencies: dependencies, shard: shard,
      deliver: { action, effect in await owner.value?.receive(action, fromEffect: effect) },
      deliverOnShard: { action, effect in
        owner.value?.assumeIsolated { $0.receive(action, fromEffect: effect) }
      })
    self.core = core
    self.effects = core.effects
    self.shard = shard
    self.observer = observer
    owner.set(self)
  }

  public nonisolated var unownedExecutor: UnownedSerialExecutor {
    shard?.asUnownedSerialExecutor() ?? MainActor.sharedUnownedExecutor
  }

  /// The current state.
  public var state: R.State { core.state }

  /// Reduces `action` (and any actions its effects send synchronously) and starts its
  /// effects. Returns the rejection if the reducer refused it; the state is then unchanged.
  @discardableResult
  public func send(_ action: R.Action) -> Rejection? {
    core.send(action) { [observer] in observer?($0, $1, $2) }
  }

  /// Runs `body` on this actor, so several operations happen with nothing in between.
  public func perform<T: Sendable>(_ body: @Sendable (isolated Store) throws -> T) rethrows -> T {
    try body(self)
  }

  /// Replaces the state without reducing an action, before anything observed it. Runs no
  /// effect.
  public func restore(_ state: R.State) { core.restore(state) }

  /// Cancels every effect this store runs.
  public func cancelAllEffects() { core.cancelAllEffects() }

  /// How many effects are running.
  public nonisolated var runningEffectCount: Int { effects.count }

  /// Where each running effect was started, e.g. `RecordMeeting.swift:42`.
  public nonisolated var runningEffectOrigins: [String] { effects.origins }

  private func receive(_ action: R.Action, fromEffect effect: EffectID) {
    core.receive(action, fromEffect: effect) { [observer] in observer?($0, $1, $2) }
  }
}
