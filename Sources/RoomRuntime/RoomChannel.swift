import Dependencies
import DequeModule
import Foundation
import JSONPatch
import Logging
import StandupsFeatures
import StandupsWire
import StoreRuntime
import Synchronization
import WebSocketTransport

/// One room: one actor that owns its store, its versioned document, the peers who see it,
/// recent patches, and the saves it awaits before an acknowledgment.
///
/// The actor runs on its shard (its `unownedExecutor`), like its effects: an effect's action,
/// a frame's action and the patch that follows run on one thread, with nothing to lock.
/// Events (joins, frames, leaves, requests) are handled one at a time, in the order they
/// came; one that waits for storage holds the next ones back (`inbox`), but not the effects:
/// a meeting keeps ticking while a save is on its way.
public actor RoomChannel<Feature: RoomFeature> {
  public typealias State = Feature.R.State

  public enum Event: Sendable {
    /// `replacing`: the `key` of the connection this one takes over (the page's previous
    /// one, which the network may have left open); see `Sender.mayReplace`.
    case join(ConnectionID, Sender, since: Int?, replacing: String? = nil)
    case message(ConnectionID, InboundMessage)
    case leave(ConnectionID)
    /// An action from outside a WebSocket (the HTTP API): answered through `reply`.
    case request(ClientMessage, Sender, reply: @Sendable (Result<Answer, WireError>) -> Void)
    /// The current version and state.
    case snapshot(reply: @Sendable (Result<(version: Int, state: JSONValue), WireError>) -> Void)
    /// A change could not be numbered (storage kept failing) or encoded, or the room is no
    /// longer this node's to run: the room restarts, everyone reconnects. `handingOn`: the
    /// room goes to another server in good order (it reduces `RoomFeature.moving()` first).
    case restart(
      why: String, code: CloseCode = .internalError, tell: String? = nil, handingOn: Bool = false)

    var isRestart: Bool {
      if case .restart = self { true } else { false }
    }

    /// Someone arriving (a join, an HTTP request or snapshot), counted until handled.
    var isArrival: Bool {
      switch self {
      case .join, .request, .snapshot: true
      case .message, .leave, .restart: false
      }
    }
  }

  /// What a request from outside is answered with once its change is saved: the version that
  /// published it, and what the feature says of the change besides (`RoomFeature.answer`).
  public struct Answer: Sendable {
    public var version: Int
    public var details: [String: JSONValue]
  }

  /// What the room's inbox holds: the events others send, and the room's own steps, which
  /// only the room posts.
  enum Job: Sendable {
    case event(Event)
    /// The state says the room must close (an effect deleted its standup): once `saves` (the
    /// pieces of work that change queued) are done — or, if they failed, back to `before`.
    case closing(saves: Range<Int>, before: State, after: State)
    /// The room was closed: after what came before, the versions it did not use go back.
    case finish
    /// An effect left the room with nobody in it and nothing running (a bot's meeting whose
    /// time ran out): released, as after a request, if still so.
    case idle
  }

  /// How a room of a cluster opens: it takes the room's lock, and reads the room as saved.
  public struct Opening: Sendable {
    public enum Outcome: Sendable {
      /// The room is this node's: open it with `state` (nil: as given), and call `release`
      /// once it has closed.
      case owned(State?, release: @Sendable () async -> Void)
      /// Not this node's (or gone): every event is refused, joins closed with `code`.
      case refused(code: CloseCode, reason: String, error: WireError)
    }
    public var acquire: @Sendable () async -> Outcome

    public init(acquire: @escaping @Sendable () async -> Outcome) { self.acquire = acquire }
  }

  public nonisolated let feature: Feature
  /// When the room was made (a cluster hands a room on only after it had it a while).
  public nonisolated let openedAt = ContinuousClock.now
  /// The thread the room and its effects run on.
  nonisolated let shard: Shard
  nonisolated let versions: VersionLease
  nonisolated let outlet: Outlet
  nonisolated let logger: Logger
  nonisolated let metrics: RoomMetrics
  let hooks: Hooks
  /// Whether `enqueue` takes events (false once the room was closed).
  private nonisolated let accepting = Atomic<Bool>(true)

  var core: StoreCore<Feature.R>
  var document: Document
  /// Events waiting for the one being handled (it awaits storage, or the room's opening).
  private var inbox: Deque<Job> = []
  private var isHandling = false
  /// Set once the room stopped (`.finish`): it only turns arrivals back to the hub.
  private var isStopping = false
  /// Set once it has also given its versions and its lock back (`closed()` returns).
  private var isFinished = false
  private var finishWaiters: [CheckedContinuation<Void, Never>] = []
  /// What a room that is not this node's answers everything with.
  private var refusal: (code: CloseCode, reason: String, error: WireError)?
  /// Called once the room stopped, if it holds a cluster's lock.
  private var release: (@Sendable () async -> Void)?
  var saves = Saves()
  /// How many `.closing` jobs are queued: a change closed the room (its standup was deleted),
  /// and its `.closing` closes everyone once the change is saved. What is handled before it
  /// must not close the room itself: that would be before storage has the deletion (a room
  /// opened anew meanwhile would read the standup back).
  var closingsQueued = 0

  /// What the room tells its hub.
  struct Hooks: Sendable {
    var onJoined: @Sendable (RoomChannel) -> Void = { _ in }
    var onClosed: @Sendable (RoomChannel) async -> Void = { _ in }
    var onBounced: @Sendable (Event) -> Void = { _ in }
    var onIdle: @Sendable (RoomChannel) async -> Void
  }

  public init(
    feature: Feature, initialState: State, reducer: Feature.R, dependencies: DependencyValues,
    resumeBytes: Int = 256 * 1024, versions: VersionLease, outlet: Outlet,
    metrics: RoomMetrics = RoomMetrics(),
    logger: Logger, opening: Opening? = nil,
    onJoined: @escaping @Sendable (RoomChannel) -> Void = { _ in },
    onClosed: @escaping @Sendable (RoomChannel) async -> Void = { _ in },
    onBounced: @escaping @Sendable (Event) -> Void = { _ in },
    onIdle: @escaping @Sendable (RoomChannel) async -> Void
  ) {
    let shard = Shard.next()
    let owner = WeakOwner<RoomChannel>()
    self.feature = feature
    self.shard = shard
    self.versions = versions
    self.outlet = outlet
    self.metrics = metrics
    self.logger = logger
    self.hooks = Hooks(
      onJoined: onJoined, onClosed: onClosed, onBounced: onBounced, onIdle: onIdle)
    self.core = StoreCore(
      initialState: initialState, reducer: reducer, dependencies: dependencies, shard: shard,
      deliver: { action, effect in await owner.value?.receive(action, fromEffect: effect) },
      deliverOnShard: { action, effect in
        owner.value?.assumeIsolated { $0.receive(action, fromEffect: effect) }
      })
    self.document = Document(
      state: initialState, json: (try? JSONValue(encoding: initialState)) ?? .null,
      versions: versions, outlet: outlet, metrics: metrics, resumeBytes: resumeBytes,
      encode: { try feature.encode($0, previous: $1, json: &$2, after: $3) })
    owner.set(self)
    // NB: the opening is the first job on the room's shard, so every event comes after it.
    Task(executorPreference: shard) { await self.open(opening) }
  }

  public nonisolated var unownedExecutor: UnownedSerialExecutor { shard.asUnownedSerialExecutor() }

  // MARK: Events

  /// Queues an event; safe from any thread (the transport's service thread included).
  ///
  /// An event can still land after `.finish` if `close()` runs between the check and the
  /// post; the room then turns arrivals back to the hub and drops frames and leaves.
  ///
  /// - Returns: false if the room has closed and takes no more events: the caller opens the
  ///   room anew (or refuses) rather than leave someone waiting for an answer.
  @discardableResult
  public nonisolated func enqueue(_ event: Event) -> Bool {
    guard accepting.load(ordering: .acquiring) else { return false }
    post(.event(event))
    return true
  }

  /// Stops taking events (the room was released); what was queued is still handled.
  public nonisolated func close() {
    guard accepting.exchange(false, ordering: .acquiringAndReleasing) else { return }
    post(.finish)
  }

  /// Hands `job` to the room on its shard. Tasks start on a shard in the order they were
  /// made, so jobs are handled in the order they were posted.
  private nonisolated func post(_ job: Job) {
    Task(executorPreference: shard) { await self.arrive(job) }
  }

  /// How many requests from outside wait in the inbox behind the event being handled (tests).
  package var queuedRequests: Int {
    inbox.count {
      if case .event(.request) = $0 { true } else { false }
    }
  }

  /// Waits until every event queued before `close` is handled and the versions are given back.
  public func closed() async {
    guard !isFinished else { return }
    // NB: the body may run after a hop, when the room has finished meanwhile.
    await withCheckedContinuation { waiter in
      if isFinished { waiter.resume() } else { finishWaiters.append(waiter) }
    }
  }

  private func arrive(_ job: Job) async {
    // NB: a page pings to learn that its connection still reaches the room: answered at once
    // even while an event waits (a slow save), so that the page does not take a busy room for
    // a lost connection. Only then is a frame read here before its turn.
    if isHandling, case .event(.message(let connection, let inbound)) = job,
      document.peers[connection] != nil, let ping = try? ClientMessage.parse(inbound), ping.isPing
    {
      outlet.send(ServerMessage.pong(ref: ping.ref), to: connection)
      return
    }
    inbox.append(job)
    await handleInbox()
  }

  private func handleInbox() async {
    guard !isHandling else { return }
    isHandling = true
    while let job = inbox.popFirst() { await handle(job) }
    isHandling = false
  }

  private func open(_ opening: Opening?) async {
    isHandling = true
    switch await opening?.acquire() {
    case .owned(let saved, let releasing)?:
      release = releasing
      if let saved {
        // Opens with what was saved rather than what this node knew (before anything is sent).
        core.restore(saved)
        document.restore(saved, json: (try? JSONValue(encoding: saved)) ?? .null)
      }
    case .refused(let code, let reason, let error)?:
      refusal = (code, reason, error)
      _ = document.closeVersions()
      await hooks.onClosed(self)
      close()
    case nil:
      break
    }
    // NB: a room's store changes only through its events, so nothing is numbered before its
    // first block of versions is reserved here. (The lobby's store also takes the rooms'
    // notices directly; its block is reserved before it opens.)
    if refusal == nil, versions.first == nil { document.begin(at: await versions.start()) }
    isHandling = false
    await handleInbox()
  }

  /// The room stopped (only from its `.finish` event, after everything queued before it):
  /// nothing ticks, no version is issued after, what was reserved past the last one is given
  /// back, and a cluster's lock is released.
  func finish() async {
    guard !isStopping else { return }
    isStopping = true
    // NB: nothing ticks in a room that stopped (one released while a bot's meeting ran).
    core.cancelAllEffects()
    if refusal == nil {
      await versions.finish(next: document.closeVersions())
      await release?()
    }
    isFinished = true
    for waiter in finishWaiters { waiter.resume() }
    finishWaiters = []
  }

  // MARK: The store

  /// Reduces an action that did not come from a peer (the lobby hears from rooms this way).
  @discardableResult
  public func send(_ action: Feature.R.Action) -> Rejection? {
    core.send(action) { action, state, _ in didChange(after: action, state) }
  }

  private func receive(_ action: Feature.R.Action, fromEffect effect: EffectID) {
    // NB: about to restart (a change could not be published): nothing more is (`handle`).
    guard document.publishFailures == 0 else { return }
    // NB: asked only of a room nobody is in (not on a ticking room's every tick).
    let wasIdle = document.peers.isEmpty ? feature.isIdle(core.state) : true
    core.receive(action, fromEffect: effect) { action, state, _ in didChange(after: action, state) }
    // NB: nobody left, request or person, to see that it has nothing to keep it any more.
    if !wasIdle, document.peers.isEmpty, feature.isIdle(core.state) { post(.idle) }
  }

  /// Reads the current state.
  public func read<T: Sendable>(_ body: @Sendable (State) -> T) -> T { body(core.state) }

  /// Stops every effect (a room emptied, moving or draining).
  public func cancelAllEffects() { core.cancelAllEffects() }

  /// Closes everyone in the room now, and stops its effects, even while the event being
  /// handled waits on storage: its node lost the database, so nothing that event awaits can
  /// be trusted, and its people are told at once, not when the write is given up (15 s later).
  /// The `.restart` queued behind that event finishes the closing.
  public func closeEveryoneNow(code: CloseCode, reason: String) {
    guard !document.isClosed, !hasStopped else { return }
    cancelAllEffects()
    for peer in document.removeAllPeers() { outlet.close(peer, code: code, reason: reason) }
  }

  /// After each reduced action: publishes the change and starts the work it needs.
  private func didChange(after action: Feature.R.Action, _ state: State) {
    switch document.publish(state, after: action) {
    case .published(let old):
      let first = saves.count
      var work = RoomWork()
      feature.stateDidChange(from: old, to: state, after: action, work: &work)
      // NB: the closing is posted before its work starts: anything that comes once that work
      // is under way (a request sent when storage began deleting) is queued behind it.
      if feature.closing(old) == nil && feature.closing(state) != nil {
        closingsQueued += 1
        post(.closing(saves: first..<first + work.pieces.count, before: old, after: state))
      }
      start(work)
    case .unchanged: break
    case .outOfVersions where !versions.fenceHolds:
      post(
        .event(
          .restart(
            why: "it is no longer this node's to run", code: .serviceRestart,
            tell: "This server lost its database connection: reconnecting."
          )))
    case .outOfVersions: post(.event(.restart(why: "it ran out of versions")))
    case .encodingFailed(let error):
      post(.event(.restart(why: "its state could not be encoded (\(error))")))
    }
  }

  /// Before the room closes everyone at once: what the feature queues for it.
  func closingEveryone() {
    var work = RoomWork()
    feature.closingEveryone(core.state, work: &work)
    start(work)
  }

  // MARK: Saves

  /// The pieces of work changes queued (saves, and the notices that follow them): run in
  /// order, off the shard, each numbered; the errors of those that failed are kept (the last
  /// 64) until the room asks for them.
  struct Saves {
    /// How many pieces were queued so far: the number the next one gets.
    fileprivate(set) var count = 0
    fileprivate var tail: Task<Void, Never>?
    fileprivate var failures: [Int: any Error] = [:]
  }

  private func start(_ work: RoomWork) {
    guard !work.pieces.isEmpty else { return }
    let first = saves.count
    saves.count += work.pieces.count
    let previous = saves.tail
    // NB: on the global pool, never the room's shard: saves wait on storage.
    saves.tail = Task(executorPreference: globalConcurrentExecutor) {
      await previous?.value
      var failed: [(Int, any Error)] = []
      for (offset, piece) in work.pieces.enumerated() {
        do {
          try await piece()
        } catch {
          failed.append((first + offset, error))
        }
      }
      if !failed.isEmpty { await self.record(failed) }
    }
  }

  private func record(_ failed: [(Int, any Error)]) {
    for (number, error) in failed { saves.failures[number] = error }
    while saves.failures.count > 64, let oldest = saves.failures.keys.min() {
      saves.failures[oldest] = nil
    }
  }

  /// Returns once everything queued so far has run.
  public func savesDone() async {
    await saves.tail?.value
  }

  /// The errors of the pieces numbered in `range` that failed (they are forgotten).
  func takeFailures(in range: Range<Int>) -> [any Error] {
    range.compactMap { saves.failures.removeValue(forKey: $0) }
  }

  var isRefusing: (code: CloseCode, reason: String, error: WireError)? { refusal }
  var hasStopped: Bool { isStopping }
}

extension CloseCode {
  /// A newer connection of the same client took this one's place (`Event.join`'s `replacing`).
  public static let replaced = CloseCode(rawValue: 4409)
}
