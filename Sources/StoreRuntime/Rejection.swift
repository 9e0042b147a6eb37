/// Why a reducer refused an action. The store then keeps the state exactly as it was and
/// starts none of the action's effects; the server turns it into an `error` message.
public struct Rejection: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: String, Hashable, Sendable {
    /// A field's value breaks a rule (a title too long, a duration off the grid).
    case invalidValue
    /// The action is not possible in the current state (no meeting is running).
    case invalidAction
    /// The action was meant for a state that has since moved on (`from` no longer holds).
    case stale
    /// The action would pass one of the documented quotas (`limit`).
    case quotaExceeded
  }

  public var kind: Kind
  /// A sentence a person can act on.
  public var message: String
  /// The quota, for `quotaExceeded`.
  public var limit: Int?
  /// The field of a form the refusal is about, named as the client names it, so that it can
  /// take the person there (a standup's draft: `title`, `attendee:<id>`).
  public var field: String?

  public init(_ kind: Kind, _ message: String, limit: Int? = nil, field: String? = nil) {
    self.kind = kind
    self.message = message
    self.limit = limit
    self.field = field
  }

  public static func quotaExceeded(_ message: String, limit: Int) -> Self {
    Self(.quotaExceeded, message, limit: limit)
  }

  public static func invalidValue(_ message: String, field: String? = nil) -> Self {
    Self(.invalidValue, message, field: field)
  }
  public static func invalidAction(_ message: String) -> Self { Self(.invalidAction, message) }
  public static func stale(_ message: String) -> Self { Self(.stale, message) }

  public var description: String { "\(kind.rawValue): \(message)" }
}
