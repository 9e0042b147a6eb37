import CasePaths

/// Runs a child reducer on a part of the parent's state, for the child's actions.
///
/// ```swift
/// Scope(state: \.form, action: \.form) { StandupForm() }
/// ```
public struct Scope<ParentState: Sendable, ParentAction: Sendable, Child: Reducer>: Reducer {
  public typealias Body = Never
  let toChildState: WritableKeyPath<ParentState, Child.State> & Sendable
  let toChildAction: AnyCasePath<ParentAction, Child.Action>
  /// `child.core`: built once, with the parent's body.
  let child: any Reducer<Child.State, Child.Action>

  public init<ChildState, ChildAction>(
    state toChildState: WritableKeyPath<ParentState, ChildState> & Sendable,
    action toChildAction: CaseKeyPath<ParentAction, ChildAction>,
    @ReducerBuilder<ChildState, ChildAction> child: () -> Child
  ) where Child.State == ChildState, Child.Action == ChildAction {
    self.toChildState = toChildState
    self.toChildAction = AnyCasePath(toChildAction)
    self.child = child().core
  }

  public func reduce(into state: inout ParentState, action: ParentAction) -> Effect<ParentAction> {
    guard let childAction = toChildAction.extract(from: action) else { return .none }
    let embed = toChildAction.embed
    return child.reduce(into: &state[keyPath: toChildState], action: childAction).map(embed)
  }
}
