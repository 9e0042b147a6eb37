import CasePaths

/// Runs a child reducer on a part of the parent's state, for the child's actions.
///
/// ```swift
/// Scope(state: \.form, action: \.form) { StandupForm() }
/// ```
///
/// The part may also be one case of an enum (a destination), as in TCA:
///
/// ```swift
/// Scope(state: \.edit, action: \.edit) { StandupForm() }
/// ```
///
/// Unlike TCA, which only warns, a child action while the state is in another case is
/// rejected (`invalidAction`): a client can send anything at any time.
public struct Scope<ParentState: Sendable, ParentAction: Sendable, Child: Reducer>: Reducer {
  public typealias Body = Never

  enum StatePath: Sendable {
    case keyPath(WritableKeyPath<ParentState, Child.State> & Sendable)
    case casePath(AnyCasePath<ParentState, Child.State>, absentMessage: String)
  }

  let toChildState: StatePath
  let toChildAction: AnyCasePath<ParentAction, Child.Action>
  /// `child.core`: built once, with the parent's body.
  let child: BuiltReducer<Child.State, Child.Action>

  public init<ChildState, ChildAction>(
    state toChildState: WritableKeyPath<ParentState, ChildState> & Sendable,
    action toChildAction: CaseKeyPath<ParentAction, ChildAction>,
    @ReducerBuilder<ChildState, ChildAction> child: () -> Child
  ) where Child.State == ChildState, Child.Action == ChildAction {
    self.toChildState = .keyPath(toChildState)
    self.toChildAction = AnyCasePath(toChildAction)
    self.child = child().core
  }

  /// A child that lives in one case of the parent's state (an enum of destinations).
  ///
  /// - Parameter absentMessage: why a child action is refused while the state is in
  ///   another case.
  public init<ChildState, ChildAction>(
    state toChildState: CaseKeyPath<ParentState, ChildState>,
    action toChildAction: CaseKeyPath<ParentAction, ChildAction>,
    absentMessage: String = "That is not possible right now.",
    @ReducerBuilder<ChildState, ChildAction> child: () -> Child
  ) where ParentState: CasePathable, Child.State == ChildState, Child.Action == ChildAction {
    self.toChildState = .casePath(AnyCasePath(toChildState), absentMessage: absentMessage)
    self.toChildAction = AnyCasePath(toChildAction)
    self.child = child().core
  }

  public func reduce(into state: inout ParentState, action: ParentAction) -> Effect<ParentAction> {
    guard let childAction = toChildAction.extract(from: action) else { return .none }
    let embed = toChildAction.embed
    switch toChildState {
    case .keyPath(let keyPath):
      return child.reduce(into: &state[keyPath: keyPath], action: childAction).map(embed)
    case .casePath(let casePath, let absentMessage):
      guard var childState = casePath.extract(from: state) else {
        return .reject(.invalidAction(absentMessage))
      }
      let effect = child.reduce(into: &childState, action: childAction)
      if let rejection = effect.rejection { return .reject(rejection) }
      state = casePath.embed(childState)
      return effect.map(embed)
    }
  }
}
