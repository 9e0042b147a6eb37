import CasePaths
import StoreRuntime

extension Room {
  /// What the room shows on top of the detail, one at a time: the shared edit form, or the
  /// alert that asks before deleting (TCA's `@Reducer enum Destination`, written out).
  public struct Destination: Reducer {
    @CasePathable @dynamicMemberLookup
    public enum State: Equatable, Sendable, Encodable {
      case edit(StandupForm.State)
      case alert(Alert)

      private enum CodingKeys: String, CodingKey { case edit, alert }
      private enum EditKeys: String, CodingKey { case draft }

      public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .edit(let form):
          var edit = container.nestedContainer(keyedBy: EditKeys.self, forKey: .edit)
          try edit.encode(form, forKey: .draft)
        case .alert(let alert):
          try container.encode(alert, forKey: .alert)
        }
      }
    }

    public enum Alert: String, Equatable, Sendable, Encodable { case confirmDeletion }

    @CasePathable
    public enum Action: Equatable, Sendable {
      case edit(StandupForm.Action)
      case alert(AlertAction)
    }

    @CasePathable
    public enum AlertAction: Equatable, Sendable {
      case confirmDeletion
      case dismissed
    }

    public init() {}

    public var body: some ReducerOf<Self> {
      // NB: the alert has no logic of its own: the room acts on its buttons.
      Scope(state: \.edit, action: \.edit, absentMessage: Self.nothingEdited) {
        StandupForm()
      }
    }

    static let nothingEdited = "Nothing is being edited: tap Edit first."

    /// Why an action for a destination that is not showing is refused.
    @Sendable static func absentMessage(_ action: Action) -> String {
      switch action {
      case .edit: nothingEdited
      case .alert: "No alert is showing."
      }
    }
  }
}
