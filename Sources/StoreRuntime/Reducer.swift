/// A feature's logic: how an action changes state, and what work follows.
///
/// Implement `reduce(into:action:)` directly, or compose a `body` of other reducers:
///
/// ```swift
/// struct Counter: Reducer {
///   struct State: Equatable { var count = 0 }
///   enum Action { case incrementButtonTapped }
///   var body: some ReducerOf<Self> {
///     Reduce { state, action in
///       state.count += 1
///       return .none
///     }
///   }
/// }
/// ```
///
/// Reducers are pure: the only way they touch the world is the `Effect` they return, and
/// every dependency (clock, uuid, date) comes from `@Dependency`.
public protocol Reducer<State, Action>: Sendable {
  associatedtype State: Sendable
  associatedtype Action: Sendable
  associatedtype Body

  /// Evolves `state` for `action` and returns the effects to run; may instead return
  /// `.reject(_:)`, in which case the store keeps the state as it was.
  func reduce(into state: inout State, action: Action) -> Effect<Action>

  /// The reducers this one is made of.
  @ReducerBuilder<State, Action> var body: Body { get }

  /// What handles actions, built once: for a reducer made of others, its `body` (building it
  /// instantiates its key paths and case paths, which costs more than a tick's whole reduce);
  /// otherwise the reducer itself. Provided: do not implement.
  var core: BuiltReducer<State, Action> { get }
}

/// A reducer with the same state and action types as `R`: `some ReducerOf<Self>`.
public typealias ReducerOf<R: Reducer> = Reducer<R.State, R.Action>

extension Reducer where Body == Never {
  public var body: Body {
    fatalError("'\(Self.self)' has no body: implement 'reduce(into:action:)' or 'body'.")
  }
}

extension Reducer where Body: Reducer<State, Action> {
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    body.reduce(into: &state, action: action)
  }
}

extension Reducer {
  public var core: BuiltReducer<State, Action> {
    BuiltReducer { [self] in self.reduce(into: &$0, action: $1) }
  }
}

extension Reducer where Body: Reducer<State, Action> {
  public var core: BuiltReducer<State, Action> {
    let body = body
    return BuiltReducer { body.reduce(into: &$0, action: $1) }
  }
}

/// A reducer with its body built once (`Reducer.core`), behind a closure of a concrete type.
///
/// NB: not `any Reducer`: the closure is made where the reducer's type is known (in its own
/// conformance), so its body's reducers (`Scope`, `ifLet`, …) are specialized for their
/// state and action types, and an action costs no lookups of generic metadata or witness
/// tables, which through an existential were a tenth of a meeting's tick.
public struct BuiltReducer<State: Sendable, Action: Sendable>: Reducer {
  public typealias Body = Never
  let run: @Sendable (inout State, Action) -> Effect<Action>

  init(_ run: @escaping @Sendable (inout State, Action) -> Effect<Action>) { self.run = run }

  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    run(&state, action)
  }

  public var core: BuiltReducer<State, Action> { self }
}

/// A reducer from a closure.
public struct Reduce<State: Sendable, Action: Sendable>: Reducer {
  public typealias Body = Never
  let reduce: @Sendable (inout State, Action) -> Effect<Action>

  public init(
    _ reduce: @escaping @Sendable (_ state: inout State, _ action: Action) -> Effect<Action>
  ) {
    self.reduce = reduce
  }

  public init(_ reducer: some Reducer<State, Action>) {
    self.reduce = { reducer.reduce(into: &$0, action: $1) }
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    reduce(&state, action)
  }
}

/// A reducer that does nothing.
public struct EmptyReducer<State: Sendable, Action: Sendable>: Reducer {
  public typealias Body = Never
  public init() {}
  public func reduce(into state: inout State, action: Action) -> Effect<Action> { .none }
}

/// Runs reducers one after the other on the same action; a rejection stops the chain.
@resultBuilder
public enum ReducerBuilder<State: Sendable, Action: Sendable> {
  public static func buildExpression<R: Reducer<State, Action>>(_ reducer: R) -> R { reducer }

  public static func buildPartialBlock<R: Reducer<State, Action>>(first: R) -> R { first }

  public static func buildPartialBlock<R0: Reducer<State, Action>, R1: Reducer<State, Action>>(
    accumulated: R0, next: R1
  ) -> CombinedReducers<R0, R1> {
    CombinedReducers(first: accumulated, second: next)
  }

  public static func buildBlock() -> EmptyReducer<State, Action> { EmptyReducer() }

  /// `if condition { Reducer() }`: the reducer runs only when the condition held.
  public static func buildOptional<R: Reducer<State, Action>>(_ reducer: R?) -> OptionalReducer<R> {
    OptionalReducer(wrapped: reducer)
  }

  /// `if condition { A() } else { B() }`, and `switch`.
  public static func buildEither<First: Reducer<State, Action>, Second: Reducer<State, Action>>(
    first reducer: First
  ) -> EitherReducer<First, Second> {
    .first(reducer)
  }

  public static func buildEither<First: Reducer<State, Action>, Second: Reducer<State, Action>>(
    second reducer: Second
  ) -> EitherReducer<First, Second> {
    .second(reducer)
  }
}

/// A reducer that may be absent (`if` without `else` in a `ReducerBuilder`).
public struct OptionalReducer<Wrapped: Reducer>: Reducer {
  public typealias Body = Never
  let wrapped: Wrapped?

  public func reduce(into state: inout Wrapped.State, action: Wrapped.Action) -> Effect<
    Wrapped.Action
  > {
    wrapped?.reduce(into: &state, action: action) ?? .none
  }
}

/// One of two reducers (`if`/`else` or `switch` in a `ReducerBuilder`).
public enum EitherReducer<First: Reducer, Second: Reducer<First.State, First.Action>>: Reducer {
  public typealias Body = Never
  case first(First)
  case second(Second)

  public func reduce(into state: inout First.State, action: First.Action) -> Effect<First.Action> {
    switch self {
    case .first(let reducer): reducer.reduce(into: &state, action: action)
    case .second(let reducer): reducer.reduce(into: &state, action: action)
    }
  }
}

/// Two reducers run in order; see `ReducerBuilder`.
public struct CombinedReducers<First: Reducer, Second: Reducer<First.State, First.Action>>: Reducer
{
  public typealias Body = Never
  let first: First
  let second: Second

  public func reduce(into state: inout First.State, action: First.Action) -> Effect<First.Action> {
    let firstEffect = first.reduce(into: &state, action: action)
    if firstEffect.rejection != nil { return firstEffect }
    return firstEffect.merge(with: second.reduce(into: &state, action: action))
  }
}
