import Dependencies
import IssueReporting

/// Lets a presented feature end its own presentation from an effect:
///
/// ```swift
/// @Dependency(\.dismiss) var dismiss
/// return .run { _ in await dismiss() }
/// ```
public struct DismissEffect: Sendable {
  let dismiss: (@Sendable () async -> Void)?

  init(_ dismiss: (@Sendable () async -> Void)?) { self.dismiss = dismiss }

  public func callAsFunction(fileID: StaticString = #fileID, line: UInt = #line) async {
    guard let dismiss else {
      reportIssue(
        "'dismiss' was called at \(fileID):\(line) outside a presented feature: present it with 'ifLet'."
      )
      return
    }
    await dismiss()
  }
}

extension DependencyValues {
  /// Dismisses the presented feature whose effect calls it.
  public var dismiss: DismissEffect {
    get { self[DismissKey.self] }
    set { self[DismissKey.self] = newValue }
  }
}

private enum DismissKey: DependencyKey {
  static let liveValue = DismissEffect(nil)
  static let testValue = DismissEffect(nil)
}
