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
