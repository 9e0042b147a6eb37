import ConcurrencyExtras
import Dependencies

/// A store without an actor: the state, the reducer's body built once, and the effects it
/// runs. Whoever owns it (a `Store`, or a server's room) calls it from its own isolation, one
/// call at a time, and is called back with each action's new state (`observe`).
///
/// Effects are tasks that prefer `shard`; the actions they send come back through `deliver`,
/// which the owner points at its own isolation and then at `receive(_:fromEffect:observe:)`.
///
/// ```swift
/// actor Counter {
///   let core: StoreCore<CounterFeature>
///   func tapped() { _ = core.send(.incrementButtonTapped) { _, state, _ in print(state) } }
/// }
/// ```
public final class StoreCore<R: Reducer> {
  /// How an effect's action reaches the owner (which hands it to `receive`).
  public typealias Deliver = @Sendable (_ action: R.Action, _ effect: EffectID) async -> Void
  /// How a timer's action reaches an owner isolated to `shard`, from the shard's own loop
  /// (the owner `assumeIsolated`s and hands it to `receive`).
  public typealias DeliverOnShard = @Sendable (_ action: R.Action, _ effect: EffectID) -> Void
  /// Called after every action that was reduced (not rejected), with the new state.
  public typealias Observe = (_ action: R.Action, _ state: R.State, _ origin: ActionOrigin) ->
    Void

  /// The current state.
  public private(set) var state: R.State
  /// Where the effects run; nil: wherever the caller's task prefers (a `TestStore`).
  public let shard: Shard?
  /// `reducer.core`: its body, built once.
  private let reducer: BuiltReducer<R.State, R.Action>
  private let dependencies: DependencyValues
  /// Sendable: a `Store` reads it from any thread.
  let effects = EffectTable()
  private let deliver: Deliver
  private let deliverOnShard: DeliverOnShard?

  /// - Parameter deliverOnShard: given, `Effect.timer`s on the shards' clock tick from the
  ///   shard's loop through it; without it, they run as tasks and tick through `deliver`.
  public init(
    initialState: R.State, reducer: R, dependencies: DependencyValues, shard: Shard?,
    deliver: @escaping Deliver, deliverOnShard: DeliverOnShard? = nil
  ) {
    self.state = initialState
    self.shard = shard
    self.reducer = DependencyValues.$_current.withValue(dependencies) { reducer.core }
    self.dependencies = dependencies
    self.deliver = deliver
    self.deliverOnShard = deliverOnShard
  }

  deinit { effects.cancelAll() }

  /// Reduces `action` (and any actions its effects send synchronously) and starts its
  /// effects. Returns the rejection if the reducer refused it; the state is then unchanged.
  public func send(_ action: R.Action, observe: Observe) -> Rejection? {
    process(action, origin: .external, observe: observe)
  }

  /// An action an effect sent (through `deliver`): dropped if the effect was cancelled while
  /// the action was on its way.
  public func receive(_ action: R.Action, fromEffect id: EffectID, observe: Observe) {
    guard effects.isActive(id.rawValue) else { return }
    _ = process(action, origin: .effect, observe: observe)
  }

  /// Replaces the state without reducing an action, before anything observed it: a room that
  /// opens from what was saved elsewhere (a cluster's other node). Runs no effect.
  public func restore(_ state: R.State) {
    self.state = state
  }

  /// Cancels every effect this store runs (a room emptied).
  public func cancelAllEffects() { effects.cancelAll() }

  /// How many effects are running (safe from any thread).
  public var runningEffectCount: Int { effects.count }

  /// Where each running effect was started, e.g. `RecordMeeting.swift:42`.
  public var runningEffectOrigins: [String] { effects.origins }

  private func process(_ action: R.Action, origin: ActionOrigin, observe: Observe) -> Rejection? {
    var newState = state
    // NB: the store's values replace the caller's outright, so the task-local is set directly
    // (`withDependencies` would copy the caller's values first, on every action).
    let effect = DependencyValues.$_current.withValue(dependencies) {
      reducer.reduce(into: &newState, action: action)
    }
    if let rejection = effect.rejection { return rejection }
    state = newState
    observe(action, state, origin)
    for item in effect.items {
      switch item {
      case .cancel(let id):
        effects.cancel(id: id)
      case .send(let action):
        _ = process(action, origin: .effect, observe: observe)
      case .run(let run):
        start(run)
      case .timer(let timer):
        if let shard, let deliverOnShard, timer.clock is ShardClock {
          start(timer, on: shard, deliverOnShard)
        } else {
          start(timer.run)
        }
      }
    }
    return nil
  }

  private func start(_ run: Effect<R.Action>.Run) {
    let id = effects.reserve(cancelIDs: run.cancelIDs, origin: "\(run.fileID):\(run.line)")
    let effects = effects
    let deliver = deliver
    let effect = EffectID(rawValue: id)
    // NB: a task inherits task-locals where it is created, so the effect sees this store's
    // dependencies, not the defaults.
    let task = withDependencies {
      $0 = dependencies
    } operation: {
      Task(executorPreference: shard, priority: run.priority) {
        await run.operation(Send { action in await deliver(action, effect) })
        effects.finish(id)
      }
    }
    effects.attach(.task(task), to: id)
  }

  private func start(
    _ timer: Effect<R.Action>.Timer, on shard: Shard, _ deliver: @escaping DeliverOnShard
  ) {
    let id = effects.reserve(cancelIDs: timer.cancelIDs, origin: "\(timer.fileID):\(timer.line)")
    let effect = EffectID(rawValue: id)
    let action = timer.action
    effects.attach(
      .timer(shard.repeating(every: timer.interval) { deliver(action, effect) }), to: id)
  }
}

/// One running effect of a store.
public struct EffectID: Sendable, Hashable {
  let rawValue: Int
}

/// Lets an owner's effects reach it without keeping it alive. Set once, in the owner's
/// initializer, before any effect can run.
public final class WeakOwner<Value: AnyObject & Sendable>: @unchecked Sendable {
  // NB: @unchecked: `value` is written once, before the owner hands out anything that reads
  // it (effects start only after the initializer returned).
  public private(set) weak var value: Value?
  public init() {}
  public func set(_ value: Value) { self.value = value }
}
