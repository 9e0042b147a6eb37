import Foundation
import Logging
import StandupsFeatures
import Synchronization

/// A room's version numbers, from blocks reserved in storage before any of them is issued.
///
/// No version of a room is ever issued twice — across restarts and crashes too — and they
/// stay small: a room that closes gives back what it did not use, so its next opening goes
/// on from there; after a crash the next opening starts past the whole reservation.
public final class VersionLease: Sendable {
  public struct Sizes: Sendable {
    /// Versions reserved at a time.
    public var block: Int
    /// When fewer are left than this, the next block is reserved.
    public var lowWater: Int

    public init(block: Int = 10_000, lowWater: Int = 5_000) {
      self.block = block
      self.lowWater = lowWater
    }

    /// One block for all the versions an opening will issue (2^36: 2 000 years at one a
    /// second), never extended: for rooms open on several nodes at once (a cluster's
    /// lobbies), whose blocks from one counter would not follow on. Numbers stay exact in
    /// JavaScript (below 2^53) for 100 000 openings.
    public static let wholeOpening = Sizes(block: 1 << 36, lowWater: 0)
  }

  private struct State {
    /// The version the room starts at; nil until the first block is reserved.
    var first: Int?
    /// Versions below this one are reserved for this opening.
    var end = 0
    /// The reservation of the next block, while it runs.
    var extending: Task<Void, Never>?
    /// An extension did not continue the reservation: no more are asked for.
    var extensionFailed = false
    /// Extensions that failed in a row (storage errors): the next waits until `retryAt`.
    var failures = 0
    var retryAt: Date?
    /// When a failure was last logged: once a minute while it lasts, not once per version.
    var loggedAt: Date?
    /// Storage failed at the start: versions come from the clock, nothing is reserved.
    var fromClock = false
    var finished = false
    /// Whether this node may still act for the room (a cluster's ownership); nil: always.
    var fence: (@Sendable () -> Bool)?
  }

  public let room: String
  private let storage: StorageClient
  private let sizes: Sizes
  private let logger: Logger
  /// What time it is, for the clock-numbered fallback.
  private let now: @Sendable () -> Date
  private let state = Mutex(State())

  public init(
    room: String, storage: StorageClient, sizes: Sizes = Sizes(), logger: Logger,
    now: @escaping @Sendable () -> Date = Date.init
  ) {
    self.room = room
    self.storage = storage
    self.sizes = sizes
    self.logger = logger
    self.now = now
  }

  /// The room's first version, once `start` has reserved it.
  public var first: Int? { state.withLock { $0.first } }

  /// Reserves the first block (once) and returns the room's first version.
  ///
  /// If storage fails, the versions come from the clock instead: microseconds since 1970,
  /// past any reserved version by about 10^15, so the two never meet.
  @discardableResult
  public func start() async -> Int {
    if let first = self.first { return first }
    do {
      let first = try await storage.reserveVersions(room, sizes.block)
      state.withLock {
        $0.first = first
        $0.end = first + sizes.block
      }
      return first
    } catch {
      let first = Int(now().timeIntervalSince1970 * 1_000_000)
      logger.error(
        "Reserving versions for room \(room) failed: \(error). Numbering from the clock.")
      state.withLock {
        $0.first = first
        $0.end = .max
        $0.fromClock = true
      }
      return first
    }
  }

  /// From now on a version is issued only while `holds` says the room is still this node's.
  public func fence(by holds: @escaping @Sendable () -> Bool) {
    state.withLock { $0.fence = holds }
  }

  /// Whether the room is still this node's (true outside a cluster).
  public var fenceHolds: Bool { (state.withLock { $0.fence })?() ?? true }

  /// Whether `version` is reserved for this opening, so it may be issued. Reserves the next
  /// block, in the background, once few are left.
  public func mayIssue(_ version: Int) -> Bool {
    state.withLock { state in
      if let fence = state.fence, !fence() { return false }
      guard !state.fromClock else { return !state.finished }
      if state.end - version < sizes.lowWater, state.extending == nil, !state.extensionFailed,
        !state.finished, state.retryAt.map({ now() >= $0 }) ?? true
      {
        let end = state.end
        state.extending = Task { await self.extend(from: end) }
      }
      return version < state.end && !state.finished
    }
  }

  /// Waits for the reservation of the next block, if one is under way.
  public func settle() async {
    await state.withLock { $0.extending }?.value
  }

  private func extend(from end: Int) async {
    // NB: last, once what this reservation had to say is said: `settle()` waits for the task
    // it finds here, and a test reads the log right after.
    defer { state.withLock { $0.extending = nil } }
    do {
      let first = try await storage.reserveVersions(room, sizes.block)
      let recovered = state.withLock { state in
        defer { (state.failures, state.retryAt, state.loggedAt) = (0, nil, nil) }
        return state.loggedAt != nil
      }
      if recovered { logger.notice("Reserving more versions for room \(room) works again.") }
      state.withLock { state in
        guard !state.finished else { return }
        if first == end {
          state.end = end + sizes.block
        } else {
          // NB: only possible if this room was reserved for elsewhere meanwhile.
          state.extensionFailed = true
        }
      }
      if first != end {
        logger.error(
          "The versions reserved for room \(room) do not follow on (\(first), not \(end)).")
      }
    } catch {
      // NB: not again for every version the room issues meanwhile: 1 s, then twice as long
      // each time, up to 30 s; said once a minute.
      let now = now()
      let (wait, says) = state.withLock { state in
        state.failures += 1
        let wait = min(30, 1 << min(state.failures - 1, 5))
        state.retryAt = now.addingTimeInterval(TimeInterval(wait))
        let says = state.loggedAt.map { now.timeIntervalSince($0) >= 60 } ?? true
        if says { state.loggedAt = now }
        return (wait, says)
      }
      if says {
        logger.error(
          """
          Reserving more versions for room \(room) failed: \(error). Trying again in \(wait) s \
          (and less often while it fails; said once a minute).
          """)
      }
    }
  }

  /// The room is closing after issuing versions below `next`: nothing more is issued, and
  /// what was reserved past it is given back — by a node that still holds the room: one whose
  /// session ended writes nothing for it (its pooled connections may be dead, and the room's
  /// next opening would wait on the write until storage's deadline).
  public func finish(next: Int) async {
    let end = state.withLock { state -> Int? in
      guard !state.finished else { return nil }
      state.finished = true
      if let fence = state.fence, !fence() { return nil }
      return state.fromClock || state.first == nil ? nil : state.end
    }
    guard let end, next < end else { return }
    do {
      try await storage.returnVersions(room, next, end)
    } catch {
      logger.warning("Giving back the unused versions of room \(room) failed: \(error)")
    }
  }
}
