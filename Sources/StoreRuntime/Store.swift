import ConcurrencyExtras
import Dependencies

/// Where an action the store reduced came from.
public enum ActionOrigin: Sendable, Equatable {
  /// Passed to `Store.send(_:)`.
  case external
  /// Sent by an effect, or by `Effect.send(_:)`.
  case effect
}

/// Holds a feature's state, reduces actions one at a time, and runs their effects.
///
/// The store runs on a `Shard`: its actor is isolated to the shard's thread, and its effects
/// are tasks that prefer the same shard, so an effect's action reaches the store without
/// changing threads. Effects are owned by this store: each one inherits the store's
/// dependencies, and its cancellation ids are scoped to this store alone. `observer` is
/// called on the store's actor after every action that was reduced (not rejected), with the
/// new state — the server broadcasts its patches from there, in order.
///
/// ```swift
/// let store = Store(initialState: Counter.State(), reducer: Counter())
/// await store.send(.incrementButtonTapped)
/// ```
public actor Store<R: Reducer> {
  public typealias Observer =
    @Sendable (_ action: R.Action, _ state: R.State, _ origin: ActionOrigin) -> Void

  /// The current state.
  public private(set) var state: R.State
  /// The thread this store and its effects run on; nil for a `TestStore`'s, which runs on
  /// the main actor's executor like the test itself, its effects on the global executor
  /// (both serial under `withMainSerialExecutor`, so that tests are deterministic).
  public nonisolated let shard: Shard?
  /// `reducer.core`: its body, built once.
  private let reducer: any Reducer<R.State, R.Action>
  private let dependencies: DependencyValues
  private let effects = EffectTable()
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
    self.state = initialState
    self.shard = shard
    self.reducer = DependencyValues.$_current.withValue(dependencies) { reducer.core }
    self.dependencies = dependencies
    self.observer = observer
  }

  deinit { effects.cancelAll() }

  public nonisolated var unownedExecutor: UnownedSerialExecutor {
    shard?.asUnownedSerialExecutor() ?? MainActor.sharedUnownedExecutor
  }

  /// Reduces `action` (and any actions its effects send synchronously) and starts its
  /// effects. Returns the rejection if the reducer refused it; the state is then unchanged.
  @discardableResult
  public func send(_ action: R.Action) -> Rejection? {
    process(action, origin: .external)
  }

  /// Runs `body` on this actor, so several operations happen with nothing in between.
  public func perform<T: Sendable>(_ body: @Sendable (isolated Store) throws -> T) rethrows -> T {
    try body(self)
  }

  /// Replaces the state without reducing an action, before anything observed it: a room that
  /// opens from what was saved elsewhere (a cluster's other node). Runs no effect.
  public func restore(_ state: R.State) {
    self.state = state
  }

  /// Cancels every effect this store runs (a room emptied).
  public func cancelAllEffects() { effects.cancelAll() }

  /// How many effects are running.
  public nonisolated var runningEffectCount: Int { effects.count }

  /// Where each running effect was started, e.g. `RecordMeeting.swift:42`.
  public nonisolated var runningEffectOrigins: [String] { effects.origins }

  private func process(_ action: R.Action, origin: ActionOrigin) -> Rejection? {
    var newState = state
    // NB: the store's values replace the caller's outright, so the task-local is set directly
    // (`withDependencies` would copy the caller's values first, on every action).
    let effect = DependencyValues.$_current.withValue(dependencies) {
      reducer.reduce(into: &newState, action: action)
    }
    if let rejection = effect.rejection { return rejection }
    state = newState
    observer?(action, state, origin)
    run(effect)
    return nil
  }

  private func run(_ effect: Effect<R.Action>) {
    for item in effect.items {
      switch item {
      case .cancel(let id):
        effects.cancel(id: id)
      case .send(let action):
        _ = process(action, origin: .effect)
      case .run(let run):
        start(run)
      }
    }
  }

  private func start(_ run: Effect<R.Action>.Run) {
    let id = effects.reserve(cancelIDs: run.cancelIDs, origin: "\(run.fileID):\(run.line)")
    let effects = effects
    let weakStore = WeakReference(self)
    // NB: a task inherits task-locals where it is created, so the effect sees this store's
    // dependencies, not the defaults.
    let task = withDependencies {
      $0 = dependencies
    } operation: {
      Task(executorPreference: shard, priority: run.priority) {
        await run.operation(
          Send { action in await weakStore.value?.receive(action, fromEffect: id) })
        effects.finish(id)
      }
    }
    effects.attach(task, to: id)
  }

  private func receive(_ action: R.Action, fromEffect id: Int) {
    // NB: an effect cancelled while its send was on the way here must not act any more.
    guard effects.isActive(id) else { return }
    _ = process(action, origin: .effect)
  }
}

/// Lets effects reach their store without keeping it alive.
private final class WeakReference<Value: AnyObject & Sendable>: Sendable {
  weak let value: Value?
  init(_ value: Value) { self.value = value }
}
