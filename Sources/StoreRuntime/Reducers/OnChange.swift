extension Reducer {
  /// Runs `reducer` after this one whenever the action changed the value `toValue` reads,
  /// given the value before and after (TCA's `onChange(of:_:)`).
  ///
  /// ```swift
  /// .onChange(of: \.destination?.edit?.attendees) { old, new in
  ///   Reduce { state, _ in moveFocus(from: old, to: new, in: &state); return .none }
  /// }
  /// ```
  ///
  /// If this reducer rejects the action, nothing changed and `reducer` does not run.
  public func onChange<Value: Equatable & Sendable>(
    of toValue: @escaping @Sendable (State) -> Value,
    @ReducerBuilder<State, Action> _ reducer:
      @escaping @Sendable (
        _ oldValue: Value, _ newValue: Value
      ) -> some Reducer<State, Action>
  ) -> OnChangeReducer<Self, Value> {
    OnChangeReducer(base: self.core, toValue: toValue) { old, new in reducer(old, new) }
  }
}

/// See `Reducer.onChange(of:_:)`.
public struct OnChangeReducer<Base: Reducer, Value: Equatable>: Reducer {
  public typealias Body = Never
  /// `base.core`: built once, with the parent's body.
  let base: BuiltReducer<Base.State, Base.Action>
  let toValue: @Sendable (Base.State) -> Value
  let reducer: @Sendable (Value, Value) -> any Reducer<Base.State, Base.Action>

  public func reduce(into state: inout Base.State, action: Base.Action) -> Effect<Base.Action> {
    let old = toValue(state)
    let effect = base.reduce(into: &state, action: action)
    guard effect.rejection == nil else { return effect }
    let new = toValue(state)
    guard old != new else { return effect }
    return effect.merge(with: reducer(old, new).reduce(into: &state, action: action))
  }
}
