import Foundation
import StandupsFeatures
import Synchronization

/// Records where every running meeting's clock is, once a second and in one write for all of
/// them, so that after a crash (`kill -9`, a lost machine) a meeting comes back within two
/// seconds of where it was, not at its last speaker change or note.
final class MeetingHeartbeat: Sendable {
  static let interval: Duration = .seconds(1)
  /// The latest clock of each meeting that ticked since the last write.
  private let pending = Mutex<[Standup.ID: MeetingClock]>([:])
  private let task = Mutex<Task<Void, Never>?>(nil)
  private let storage: StorageClient
  private let health: StorageHealth

  init(storage: StorageClient, health: StorageHealth) {
    self.storage = storage
    self.health = health
  }

  /// A meeting ticked (called on its room, cheap: no I/O).
  func note(_ standupID: Standup.ID, _ meeting: RecordMeeting.State) {
    let clock = MeetingClock(
      standupID: standupID, meetingID: meeting.id, secondsElapsed: meeting.secondsElapsed,
      speakerIndex: meeting.speakerIndex, secondsRun: meeting.secondsRun)
    pending.withLock { $0[standupID] = clock }
  }

  func start() {
    task.withLock { task in
      task = Task { [self] in
        while !Task.isCancelled {
          try? await Task.sleep(for: Self.interval)
          await flush()
        }
      }
    }
  }

  /// Writes what ticked since the last write (also on a clean stop).
  func flush() async {
    let clocks = pending.withLock { pending in
      defer { pending.removeAll(keepingCapacity: true) }
      return Array(pending.values)
    }
    guard !clocks.isEmpty else { return }
    try? await health.checking("Saving meeting clocks") {
      try await storage.saveMeetingClocks(clocks)
    }
  }

  func stop() async {
    task.withLock { $0 }?.cancel()
    await flush()
  }
}
