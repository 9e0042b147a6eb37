import CasePaths

/// Marks a state field as settable by a `BindingAction`; other fields cannot be bound.
///
/// ```swift
/// struct State { @BindingState var title = "" }
/// ```
@propertyWrapper
public struct BindingState<Value> {
  public var wrappedValue: Value
  public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
  public var projectedValue: Self {
    get { self }
    set { self = newValue }
  }
}

extension BindingState: Equatable where Value: Equatable {}
extension BindingState: Hashable where Value: Hashable {}
extension BindingState: Sendable where Value: Sendable {}
extension BindingState: Encodable where Value: Encodable {
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(wrappedValue)
  }
}
extension BindingState: Decodable where Value: Decodable {
  public init(from decoder: any Decoder) throws {
    wrappedValue = try decoder.singleValueContainer().decode(Value.self)
  }
}

/// "Set this bindable field to this value", as an action.
public struct BindingAction<Root>: Sendable, Equatable, CustomStringConvertible {
  /// The `@BindingState` field this binding sets (or sets a part of).
  public let keyPath: PartialKeyPath<Root> & Sendable
  /// Applies the value; false if the part it addresses no longer exists.
  let set: @Sendable (inout Root) -> Bool
  let value: any Sendable
  let isEqual: @Sendable (BindingAction<Root>) -> Bool

  /// Sets the `@BindingState` field at `keyPath` (its projected value, `\.$title`).
  public static func set<Value: Equatable & Sendable>(
    _ keyPath: WritableKeyPath<Root, BindingState<Value>> & Sendable, _ value: Value
  ) -> Self {
    Self(
      keyPath: keyPath,
      set: {
        $0[keyPath: keyPath].wrappedValue = value
        return true
      },
      value: value,
      isEqual: { other in
        (other.keyPath as PartialKeyPath<Root>) == (keyPath as PartialKeyPath<Root>)
          && (other.value as? Value) == value
      })
  }

  /// Sets one optional part of a `@BindingState` field, e.g. one attendee's name by id:
  /// `.set(\.$attendees, \.[nameOf: id], "Blob")`. If the part is gone, the binding
  /// changes nothing and `BindingReducer` rejects it.
  public static func set<Field, Value: Equatable & Sendable>(
    _ keyPath: WritableKeyPath<Root, BindingState<Field>> & Sendable,
    _ part: WritableKeyPath<Field, Value?> & Sendable, _ value: Value
  ) -> Self {
    Self(
      keyPath: keyPath,
      set: { root in
        guard root[keyPath: keyPath].wrappedValue[keyPath: part] != nil else { return false }
        root[keyPath: keyPath].wrappedValue[keyPath: part] = value
        return true
      },
      value: value,
      isEqual: { other in
        (other.keyPath as PartialKeyPath<Root>) == (keyPath as PartialKeyPath<Root>)
          && other.part.map { $0 as AnyKeyPath } == (part as AnyKeyPath)
          && (other.value as? Value) == value
      },
      part: part)
  }

  /// The part of the field a sub-path binding addresses.
  let part: (AnyKeyPath & Sendable)?

  init(
    keyPath: PartialKeyPath<Root> & Sendable, set: @escaping @Sendable (inout Root) -> Bool,
    value: any Sendable, isEqual: @escaping @Sendable (BindingAction<Root>) -> Bool,
    part: (AnyKeyPath & Sendable)? = nil
  ) {
    self.keyPath = keyPath
    self.set = set
    self.value = value
    self.isEqual = isEqual
    self.part = part
  }

  /// The value being set, if it is of type `Value`.
  public func value<Value>(as type: Value.Type = Value.self) -> Value? { value as? Value }

  public static func == (lhs: Self, rhs: Self) -> Bool { lhs.isEqual(rhs) }

  /// Matches a binding to a field: `case .binding(\.$title)`.
  public static func ~= <Value>(
    keyPath: WritableKeyPath<Root, BindingState<Value>>, binding: Self
  ) -> Bool {
    (binding.keyPath as PartialKeyPath<Root>) == (keyPath as PartialKeyPath<Root>)
  }

  public var description: String { "set \(keyPath) to \(value)" }
}

/// Applies binding actions to state. Put it first in `body`; the reducers after it see the
/// new value and may validate it (and reject the action, which undoes the binding).
public struct BindingReducer<State: Sendable, Action: Sendable>: Reducer {
  public typealias Body = Never
  let toBindingAction: AnyCasePath<Action, BindingAction<State>>

  public init(action toBindingAction: CaseKeyPath<Action, BindingAction<State>>) {
    self.toBindingAction = AnyCasePath(toBindingAction)
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    guard let binding = toBindingAction.extract(from: action) else { return .none }
    guard binding.set(&state) else {
      return .reject(.invalidValue("That field is not in the form: it was removed, or never was."))
    }
    return .none
  }
}
