import Testing

/// Checks every 5 ms until `check` holds; records `failure` and throws after `timeout`. The
/// one way tests wait for something that happens on another thread: never a bare sleep.
public func eventually(
  _ failure: String, timeout: Duration = .seconds(5),
  sourceLocation: SourceLocation = #_sourceLocation, _ check: () async throws -> Bool
) async throws {
  let deadline = ContinuousClock.now + timeout
  while ContinuousClock.now < deadline {
    if try await check() { return }
    try await Task.sleep(for: .milliseconds(5))
  }
  Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation)
  throw CancellationError()
}

/// Checks every 5 ms, for `duration`, that `check` still holds; records `failure` and throws
/// the moment it does not. How tests say that something does not happen (a deletion undone
/// is not carried out): a bounded watch, never a bare sleep.
public func holds(
  _ failure: String, for duration: Duration,
  sourceLocation: SourceLocation = #_sourceLocation, _ check: () async throws -> Bool
) async throws {
  let end = ContinuousClock.now + duration
  while ContinuousClock.now < end {
    guard try await check() else {
      Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation)
      throw CancellationError()
    }
    try await Task.sleep(for: .milliseconds(5))
  }
}
