import ConcurrencyExtras
import IssueReporting

/// Work a reducer asks for: run async code that feeds actions back, send an action at once,
/// or cancel work in flight. Effects are values; the store runs them.
///
/// ```swift
/// return .run { send in
///   for await _ in clock.timer(interval: .seconds(1)) { await send(.timerTick) }
/// }
/// .cancellable(id: CancelID.timer)
/// ```
public struct Effect<Action: Sendable>: Sendable {
  enum Item: Sendable {
    case run(Run)
    case send(Action)
    case cancel(AnyHashableSendable)
    case timer(Timer)
  }

  struct Run: Sendable {
    var priority: TaskPriority?
    var cancelIDs: [AnyHashableSendable] = []
    var operation: @Sendable (Send<Action>) async -> Void
    var fileID: StaticString
    var line: UInt
  }

  /// An action sent every `interval` on `clock`'s grid until cancelled.
  struct Timer: Sendable {
    var interval: Duration
    var clock: any Clock<Duration>
    var action: Action
    var cancelIDs: [AnyHashableSendable] = []
    var fileID: StaticString
    var line: UInt

    /// The same timer as a `run` effect: where the store has no shard to keep it (a
    /// `TestStore`), or the clock is not the shards' (a test clock).
    var run: Run {
      let (clock, interval, action) = (clock, interval, action)
      return Run(
        priority: nil, cancelIDs: cancelIDs,
        operation: { send in await clock.tick(every: interval) { await send(action) } },
        fileID: fileID, line: line)
    }
  }

  var items: [Item]
  /// Set when the reducer refused the action; the store then undoes the state change.
  public internal(set) var rejection: Rejection?

  init(items: [Item], rejection: Rejection? = nil) {
    self.items = items
    self.rejection = rejection
  }

  /// No work.
  public static var none: Self { Self(items: []) }

  /// Async work that may send actions back into the store; cancelled work stops sending.
  ///
  /// - Parameters:
  ///   - operation: the work; it receives `send` to feed actions back.
  ///   - handler: called with any error `operation` throws (other than cancellation).
  public static func run(
    priority: TaskPriority? = nil,
    operation: @escaping @Sendable (_ send: Send<Action>) async throws -> Void,
    catch handler: (@Sendable (_ error: any Error, _ send: Send<Action>) async -> Void)? = nil,
    fileID: StaticString = #fileID, line: UInt = #line
  ) -> Self {
    Self(items: [
      .run(
        Run(
          priority: priority,
          operation: { send in
            do {
              try await operation(send)
            } catch is CancellationError {
            } catch {
              if let handler {
                await handler(error, send)
              } else {
                reportIssue(
                  "An effect started at \(fileID):\(line) threw an unhandled error: \(error)")
              }
            }
          },
          fileID: fileID, line: line))
    ])
  }

  /// Sends `action` every `interval` on `clock`'s grid until cancelled: the first one
  /// `interval` from now. A tick the store was too late for is skipped, as
  /// `clock.timer(interval:)` does. The same as
  ///
  /// ```swift
  /// .run { send in for await _ in clock.timer(interval: interval) { await send(action) } }
  /// ```
  ///
  /// but on a store's shard, with the shards' clock (`ShardClock`), the shard keeps the timer
  /// itself and reduces each tick from its own loop: no task, no continuation and no hop to
  /// the store per tick.
  public static func timer(
    every interval: Duration, on clock: any Clock<Duration>, send action: Action,
    fileID: StaticString = #fileID, line: UInt = #line
  ) -> Self {
    // NB: a zero interval's next tick would always be due: the shard would never leave it.
    precondition(interval > .zero, "A timer's interval must be positive (\(fileID):\(line)).")
    return Self(items: [
      .timer(Timer(interval: interval, clock: clock, action: action, fileID: fileID, line: line))
    ])
  }

  /// Sends `action` into the store right after the current action, before anything else.
  public static func send(_ action: Action) -> Self { Self(items: [.send(action)]) }

  /// Cancels every effect of this store that was marked `cancellable(id:)` with `id`.
  public static func cancel(id: some Hashable & Sendable) -> Self {
    Self(items: [.cancel(AnyHashableSendable(id))])
  }

  /// Refuses the action: the store keeps its state and runs nothing.
  public static func reject(_ rejection: Rejection) -> Self {
    Self(items: [], rejection: rejection)
  }

  /// All of these effects, in order.
  public static func merge(_ effects: Self...) -> Self { merge(effects) }

  public static func merge(_ effects: [Self]) -> Self {
    effects.reduce(.none) { $0.merge(with: $1) }
  }

  public func merge(with other: Self) -> Self {
    // NB: most actions start nothing: merging nothing copies no array.
    if other.isNone { return self }
    if isNone { return other }
    return Self(items: items + other.items, rejection: rejection ?? other.rejection)
  }

  /// Marks the run effects in here with `id`, so `.cancel(id:)` stops them; with
  /// `cancelInFlight`, work already running under `id` is cancelled first.
  public func cancellable(id: some Hashable & Sendable, cancelInFlight: Bool = false) -> Self {
    let id = AnyHashableSendable(id)
    var items = self.items.map { item -> Item in
      switch item {
      case .run(var run):
        run.cancelIDs.append(id)
        return .run(run)
      case .timer(var timer):
        timer.cancelIDs.append(id)
        return .timer(timer)
      case .send, .cancel:
        return item
      }
    }
    if cancelInFlight { items.insert(.cancel(id), at: 0) }
    return Self(items: items, rejection: rejection)
  }

  /// The same effect for a parent's action type.
  public func map<ParentAction: Sendable>(
    _ transform: @escaping @Sendable (Action) -> ParentAction
  ) -> Effect<ParentAction> {
    Effect<ParentAction>(
      items: items.map { item in
        switch item {
        case .send(let action): return .send(transform(action))
        case .cancel(let id): return .cancel(id)
        case .timer(let timer):
          return .timer(
            .init(
              interval: timer.interval, clock: timer.clock, action: transform(timer.action),
              cancelIDs: timer.cancelIDs, fileID: timer.fileID, line: timer.line))
        case .run(let run):
          return .run(
            .init(
              priority: run.priority, cancelIDs: run.cancelIDs,
              operation: { send in await run.operation(send.map(transform)) },
              fileID: run.fileID, line: run.line))
        }
      },
      rejection: rejection)
  }

  /// Wraps every run operation, e.g. to give it dependencies. (A timer runs none of the
  /// feature's code: it only sends its action.)
  func wrappingRuns(
    _ wrap:
      @escaping @Sendable (
        _ operation: @escaping @Sendable (Send<Action>) async -> Void, _ send: Send<Action>
      ) async -> Void
  ) -> Self {
    Self(
      items: items.map { item in
        guard case .run(var run) = item else { return item }
        let operation = run.operation
        run.operation = { send in await wrap(operation, send) }
        return .run(run)
      },
      rejection: rejection)
  }

  /// True if running this effect would do nothing.
  public var isNone: Bool { items.isEmpty && rejection == nil }
}

/// Feeds actions from an effect back into its store. Once the effect is cancelled, sends
/// are dropped.
public struct Send<Action: Sendable>: Sendable {
  let send: @Sendable (Action) async -> Void

  public init(send: @escaping @Sendable (Action) async -> Void) { self.send = send }

  public func callAsFunction(_ action: Action) async {
    guard !Task.isCancelled else { return }
    await send(action)
  }

  func map<Child: Sendable>(_ transform: @escaping @Sendable (Child) -> Action) -> Send<Child> {
    Send<Child> { await self(transform($0)) }
  }
}
