import CasePaths
import Dependencies

/// The actions of a presented child: its own, or being dismissed.
@CasePathable
public enum PresentationAction<Action: Sendable>: Sendable {
  /// The child goes away (its state becomes `nil`; its effects are cancelled).
  case dismiss
  case presented(Action)
}

extension PresentationAction: Equatable where Action: Equatable {}

extension Reducer {
  /// Runs `child` on an optional part of the state while it is present.
  ///
  /// Effects the child starts are tied to the child's identity (its type and, if it is
  /// `Identifiable`, its id): the moment that state becomes `nil` or another child takes its
  /// place, they are cancelled. Inside them, `@Dependency(\.dismiss)` dismisses the child.
  /// A child action while nothing is presented is rejected with `invalidAction` and
  /// `absentMessage`.
  @_disfavoredOverload
  public func ifLet<ChildState, ChildAction, Child: Reducer>(
    _ toChildState: WritableKeyPath<State, ChildState?> & Sendable,
    action toChildAction: CaseKeyPath<Action, PresentationAction<ChildAction>>,
    absentMessage: String = "That is not possible right now.",
    @ReducerBuilder<ChildState, ChildAction> then child: () -> Child
  ) -> PresentationReducer<Self, Child>
  where Child.State == ChildState, Child.Action == ChildAction {
    ifLet(
      toChildState, action: toChildAction, absentMessage: { _ in absentMessage }, then: child)
  }

  /// `ifLet(_:action:absentMessage:then:)`, saying why for each action refused while nothing
  /// is presented (an enum of destinations: "nothing is being edited", "no alert is showing").
  @_disfavoredOverload
  public func ifLet<ChildState, ChildAction, Child: Reducer>(
    _ toChildState: WritableKeyPath<State, ChildState?> & Sendable,
    action toChildAction: CaseKeyPath<Action, PresentationAction<ChildAction>>,
    absentMessage: @escaping @Sendable (ChildAction) -> String,
    @ReducerBuilder<ChildState, ChildAction> then child: () -> Child
  ) -> PresentationReducer<Self, Child>
  where Child.State == ChildState, Child.Action == ChildAction {
    PresentationReducer(
      parent: self, child: child().core, toChildState: toChildState,
      toChildAction: AnyCasePath(toChildAction), absentMessage: absentMessage,
      identify: PresentationID.identifier(for: ChildState.self))
  }

  /// `ifLet(_:action:absentMessage:then:)` for one case of a `@CasePathable` action, written the
  /// same way (`action: \.meeting`): the macro's case path, taken once.
  ///
  /// NB: a `CaseKeyPath` is walked as a key path on every use (each extract builds the case
  /// path again and casts through `Any`); the macro's own `AnyCasePath` is a `switch` and the
  /// case's constructor. Every action a room takes goes through each `ifLet` of its body, and
  /// each of a presented child's effect actions is embedded once.
  public func ifLet<ChildState, ChildAction, Child: Reducer>(
    _ toChildState: WritableKeyPath<State, ChildState?> & Sendable,
    action toChildAction: KeyPath<
      Action.AllCasePaths, AnyCasePath<Action, PresentationAction<ChildAction>>
    >,
    absentMessage: String = "That is not possible right now.",
    @ReducerBuilder<ChildState, ChildAction> then child: () -> Child
  ) -> PresentationReducer<Self, Child>
  where Action: CasePathable, Child.State == ChildState, Child.Action == ChildAction {
    ifLet(
      toChildState, action: toChildAction, absentMessage: { _ in absentMessage }, then: child)
  }

  /// `ifLet(_:action:absentMessage:then:)` with a message for each action refused, for one
  /// case of a `@CasePathable` action (see above).
  public func ifLet<ChildState, ChildAction, Child: Reducer>(
    _ toChildState: WritableKeyPath<State, ChildState?> & Sendable,
    action toChildAction: KeyPath<
      Action.AllCasePaths, AnyCasePath<Action, PresentationAction<ChildAction>>
    >,
    absentMessage: @escaping @Sendable (ChildAction) -> String,
    @ReducerBuilder<ChildState, ChildAction> then child: () -> Child
  ) -> PresentationReducer<Self, Child>
  where Action: CasePathable, Child.State == ChildState, Child.Action == ChildAction {
    PresentationReducer(
      parent: self, child: child().core, toChildState: toChildState,
      toChildAction: Action.allCasePaths[keyPath: toChildAction], absentMessage: absentMessage,
      identify: PresentationID.identifier(for: ChildState.self))
  }
}

/// See `Reducer.ifLet(_:action:absentMessage:then:)`.
public struct PresentationReducer<Parent: Reducer, Child: Reducer>: Reducer {
  public typealias Body = Never
  let parent: Parent
  /// `child.core`: built once, with the parent's body.
  let child: BuiltReducer<Child.State, Child.Action>
  let toChildState: WritableKeyPath<Parent.State, Child.State?> & Sendable
  let toChildAction: AnyCasePath<Parent.Action, PresentationAction<Child.Action>>
  let absentMessage: @Sendable (Child.Action) -> String
  /// The identity of a presented child, worked out once for its type.
  let identify: @Sendable (Child.State) -> PresentationID

  public func reduce(into state: inout Parent.State, action: Parent.Action) -> Effect<Parent.Action>
  {
    let before = identity(in: &state)
    var childEffect = Effect<Parent.Action>.none

    switch toChildAction.extract(from: action) {
    case .presented(let childAction)?:
      guard let before else {
        return .reject(.invalidAction(absentMessage(childAction)))
      }
      // NB: in place: a copy would retain every part of the child, and make the child's
      // arrays copy themselves on their next change. A rejection drops the store's whole new
      // state, so the child needs no copy to roll back. The unwrap cannot fail: `before` is
      // the identity of the child that is there.
      // swift-format-ignore: NeverForceUnwrap
      let effect = child.reduce(into: &state[keyPath: toChildState]!, action: childAction)
      if let rejection = effect.rejection { return .reject(rejection) }
      childEffect = presented(effect, id: before)
    case .dismiss?:
      state[keyPath: toChildState] = nil
    case nil:
      break
    }

    let parentEffect = parent.reduce(into: &state, action: action)
    if parentEffect.rejection != nil { return parentEffect }

    let after = identity(in: &state)
    // NB: the child's own effects start first, then whatever it had running is cancelled if
    // it went away, and only then the parent's effects run (which may present a new child).
    var dismissal = Effect<Parent.Action>.none
    if let before, before != after { dismissal = .cancel(id: before) }
    // NB: chained, not `.merge(…)`: a variadic call allocates an array on every action.
    return childEffect.merge(with: dismissal).merge(with: parentEffect)
  }

  /// The presented child's identity, read where the child is: the key path's getter would
  /// copy the whole child first.
  private func identity(in state: inout Parent.State) -> PresentationID? {
    Self.identity(of: &state[keyPath: toChildState], identify)
  }

  private static func identity(
    of child: inout Child.State?, _ identify: (Child.State) -> PresentationID
  ) -> PresentationID? {
    switch child {
    case .some(let child): identify(child)
    case .none: nil
    }
  }

  private func presented(_ effect: Effect<Child.Action>, id: PresentationID) -> Effect<
    Parent.Action
  > {
    // NB: most child actions (a meeting's tick) start nothing: nothing to wrap.
    guard !effect.isNone else { return .none }
    let toChildAction = toChildAction
    return effect.map { toChildAction.embed(.presented($0)) }
      .wrappingRuns { operation, send in
        await withDependencies {
          $0.dismiss = DismissEffect { await send(toChildAction.embed(.dismiss)) }
        } operation: {
          await operation(send)
        }
      }
      .cancellable(id: id)
  }
}

/// The identity of one presentation of a child: its type, and its id if it has one.
///
/// NB: the id is an `any Hashable`, not an `AnyHashable`: making an `AnyHashable` casts the
/// value at run time (for a custom representation), and comparing two opens both boxes;
/// twice on every action the room takes, that was 8 % of a ticking meeting's work.
struct PresentationID: Hashable, @unchecked Sendable {
  // NB: @unchecked because `id` is an `any Hashable`; it only ever holds the `id` of a
  // `Sendable` state value.
  let type: ObjectIdentifier
  let id: (any Hashable)?

  static func == (lhs: Self, rhs: Self) -> Bool {
    guard lhs.type == rhs.type else { return false }
    switch (lhs.id, rhs.id) {
    case (nil, nil): return true
    case (let left?, let right?): return equal(left, right)
    default: return false
    }
  }

  /// NB: both ids opened, not `right as? ID`: a dynamic cast out of an existential on every
  /// action the room takes was 3 % of a ticking meeting's work; comparing metatypes is not.
  private static func equal<ID: Hashable>(_ left: ID, _ right: any Hashable) -> Bool {
    func open<Right: Hashable>(_ right: Right) -> Bool {
      Right.self == ID.self && unsafeBitCast(right, to: ID.self) == left
    }
    return open(right)
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(type)
    id?.hash(into: &hasher)
  }

  /// How to tell apart presentations of `State`, decided once: whether `State` is
  /// `Identifiable` is a dynamic cast, too slow to make on every action.
  static func identifier<State>(for _: State.Type) -> @Sendable (State) -> PresentationID {
    let type = ObjectIdentifier(State.self)
    guard let identifiable = State.self as? any (Identifiable & Sendable).Type else {
      return { _ in PresentationID(type: type, id: nil) }
    }
    return identifier(identifiable, for: State.self)
  }

  private static func identifier<Child: Identifiable & Sendable, State>(
    _: Child.Type, for _: State.Type
  ) -> @Sendable (State) -> PresentationID {
    let type = ObjectIdentifier(State.self)
    precondition(Child.self == State.self)
    // NB: `Child` is `State` (checked above), so this is no conversion at all; a dynamic cast
    // (`as? Child`) would copy the whole child state on every action.
    return { state in
      PresentationID(type: type, id: unsafeBitCast(state, to: Child.self).id)
    }
  }
}
