import CasePaths
import ConcurrencyExtras
import CustomDump
import Dependencies
import IssueReporting
import Synchronization

/// Drives a reducer in tests and insists every state change, every action effects feed
/// back, and the end of every effect be accounted for.
///
/// ```swift
/// let clock = TestClock()
/// let store = TestStore(initialState: RecordMeeting.State(...)) {
///   RecordMeeting()
/// } withDependencies: {
///   $0.continuousClock = clock
/// }
/// await store.send(.started)
/// await clock.advance(by: .seconds(1))
/// await store.receive(\.timerTick) { $0.secondsElapsed = 1 }
/// ```
///
/// Exhaustive by default: a test fails if it leaves an action it received unasserted, gets
/// a state wrong, or ends while an effect still runs. With `exhaustivity = .off` it checks
/// only what the test asserts.
@MainActor
public final class TestStore<R: Reducer> where R.State: Equatable {
  public enum Exhaustivity: Sendable { case on, off }

  /// The state as the test has asserted it so far.
  public private(set) var state: R.State
  public var exhaustivity: Exhaustivity {
    get { recorder.isExhaustive ? .on : .off }
    set { recorder.isExhaustive = newValue == .on }
  }
  /// How long `receive` and `finish` wait for effects (real time, not the test clock).
  public var timeout: Duration = .seconds(2)

  private let store: Store<R>
  private let recorder: Recorder

  public init(
    initialState: R.State,
    reducer: () -> R,
    withDependencies prepare: (inout DependencyValues) -> Void = { _ in },
    fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) {
    var dependencies = DependencyValues._current
    prepare(&dependencies)
    let reducer = withDependencies {
      $0 = dependencies
    } operation: {
      reducer()
    }
    let recorder = Recorder(location: (fileID, filePath, line, column))
    self.recorder = recorder
    self.state = initialState
    self.store = Store(
      initialState: initialState, reducer: reducer, dependencies: dependencies, on: nil,
      observer: { action, state, origin in recorder.append(action, state, origin) })
  }

  deinit {
    recorder.checkCompleted(runningEffects: store.runningEffectOrigins)
  }

  /// Sends `action`; `assert` turns the previous state into the expected one.
  public func send(
    _ action: R.Action,
    assert updateState: ((inout R.State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) async {
    let location = (fileID, filePath, line, column)
    if recorder.isExhaustive, recorder.pendingCount > 0 {
      fail(
        "Must handle \(recorder.pendingCount) received action(s) before sending an action:\n"
          + recorder.pendingDescription, location)
    }
    if let rejection = await store.send(action) {
      fail("The action was rejected (\(rejection)); expected it to be accepted.", location)
      return
    }
    guard let record = recorder.takeExternal() else {
      fail("The store did not reduce the action.", location)
      return
    }
    expect(record.state, updateState, location)
    await Task.megaYield()
  }

  /// Sends an action the reducer must refuse with `expected`; the state must not change.
  public func send(
    _ action: R.Action, rejectedWith expected: Rejection,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) async {
    let location = (fileID, filePath, line, column)
    let rejection = await store.send(action)
    if rejection != expected {
      fail(
        "Expected the action to be rejected with \(expected), but it was "
          + (rejection.map { "rejected with \($0)" } ?? "accepted") + ".", location)
    }
    let actual = await store.state
    if actual != state, let difference = diff(state, actual, format: .proportional) {
      fail("A rejected action changed the state: (−expected, +actual)\n\(difference)", location)
      state = actual
    }
  }

  /// Waits for an action an effect sent that matches `actionCase`.
  public func receive<Value>(
    _ actionCase: CaseKeyPath<R.Action, Value>,
    assert updateState: ((inout R.State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) async where R.Action: CasePathable {
    await receive(
      matching: { $0[case: actionCase] != nil }, description: "\(actionCase)",
      updateState, (fileID, filePath, line, column))
  }

  /// Waits for exactly `action` from an effect.
  public func receive(
    _ action: R.Action,
    assert updateState: ((inout R.State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) async where R.Action: Equatable {
    await receive(
      matching: { $0 == action }, description: String(customDumping: action),
      updateState, (fileID, filePath, line, column))
  }

  /// Waits for every effect to end; fails if one is still running after `timeout`.
  public func finish(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
  ) async {
    let deadline = ContinuousClock.now + timeout
    while store.runningEffectCount > 0 && ContinuousClock.now < deadline {
      await Task.yield()
    }
    if store.runningEffectCount > 0 {
      fail(
        "\(store.runningEffectCount) effect(s) still running, started at: "
          + store.runningEffectOrigins.joined(separator: ", "),
        (fileID, filePath, line, column))
    }
  }

  /// Cancels everything still running (for tests that end on purpose mid-effect).
  public func skipInFlightEffects() async {
    await store.cancelAllEffects()
  }

  /// Drops received actions the test chose not to assert.
  public func skipReceivedActions() async {
    await Task.megaYield()
    while let record = recorder.takeNext() { state = record.state }
  }

  private func receive(
    matching matches: (R.Action) -> Bool, description: String,
    _ updateState: ((inout R.State) throws -> Void)?,
    _ location: Location
  ) async {
    let deadline = ContinuousClock.now + timeout
    while true {
      while let record = recorder.takeNext() {
        if matches(record.action) {
          expect(record.state, updateState, location)
          await Task.megaYield()
          return
        }
        if recorder.isExhaustive {
          fail(
            "Received an unexpected action while waiting for \(description):\n"
              + String(customDumping: record.action), location)
        }
        state = record.state
      }
      guard ContinuousClock.now < deadline else { break }
      await Task.yield()
    }
    fail("Expected to receive an action matching \(description), but none arrived.", location)
  }

  private func expect(
    _ actual: R.State, _ updateState: ((inout R.State) throws -> Void)?, _ location: Location
  ) {
    var expected = recorder.isExhaustive ? state : actual
    do {
      try updateState?(&expected)
    } catch {
      fail("The assertion threw: \(error)", location)
    }
    if expected != actual {
      let difference = diff(expected, actual, format: .proportional) ?? "(no visible difference)"
      fail(
        "A state change does not match expectation: (−expected, +actual)\n\(difference)", location)
    }
    state = actual
  }

  typealias Location = (fileID: StaticString, filePath: StaticString, line: UInt, column: UInt)

  private func fail(_ message: String, _ location: Location) {
    reportIssue(
      message, fileID: location.fileID, filePath: location.filePath, line: location.line,
      column: location.column)
  }

  /// The actions the store reduced, in order, with the state after each.
  final class Recorder: Sendable {
    struct Record: @unchecked Sendable {
      // NB: State and Action are Sendable (Reducer requires it); the generic wrapper is not
      // inferred as such across this nested type.
      let action: R.Action
      let state: R.State
      let origin: ActionOrigin
    }
    private struct Storage {
      var records: [Record] = []
      var isExhaustive = true
    }
    private let storage = Mutex(Storage())
    let location: (fileID: StaticString, filePath: StaticString, line: UInt, column: UInt)

    init(location: (fileID: StaticString, filePath: StaticString, line: UInt, column: UInt)) {
      self.location = location
    }

    var isExhaustive: Bool {
      get { storage.withLock { $0.isExhaustive } }
      set { storage.withLock { $0.isExhaustive = newValue } }
    }

    func append(_ action: R.Action, _ state: R.State, _ origin: ActionOrigin) {
      storage.withLock { $0.records.append(Record(action: action, state: state, origin: origin)) }
    }

    /// The record of the last action sent from outside; effect actions around it stay queued.
    func takeExternal() -> Record? {
      storage.withLock { storage in
        guard let index = storage.records.lastIndex(where: { $0.origin == .external }) else {
          return nil
        }
        return storage.records.remove(at: index)
      }
    }

    func takeNext() -> Record? {
      storage.withLock { $0.records.isEmpty ? nil : $0.records.removeFirst() }
    }

    var pendingCount: Int { storage.withLock { $0.records.count } }

    var pendingDescription: String {
      storage.withLock {
        $0.records.map { "  " + String(customDumping: $0.action) }.joined(separator: "\n")
      }
    }

    func checkCompleted(runningEffects: [String]) {
      let (exhaustive, pending) = storage.withLock { ($0.isExhaustive, $0.records.count) }
      guard exhaustive else { return }
      if pending > 0 {
        reportIssue(
          "The store received \(pending) action(s) the test did not assert:\n\(pendingDescription)",
          fileID: location.fileID, filePath: location.filePath, line: location.line,
          column: location.column)
      }
      if !runningEffects.isEmpty {
        reportIssue(
          "An effect is still running at the end of the test (started at "
            + runningEffects.joined(separator: ", ")
            + "). Assert its actions with 'receive', cancel it, or end it before the test ends.",
          fileID: location.fileID, filePath: location.filePath, line: location.line,
          column: location.column)
      }
    }
  }
}
