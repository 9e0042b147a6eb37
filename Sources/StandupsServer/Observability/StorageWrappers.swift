import StandupsFeatures
import Storage

/// Something done around each call of a storage client (`StorageClient.around`), named by
/// its operation.
protocol StorageCallWrapper: Sendable {
  func call<T>(_ operation: String, _ body: () async throws -> T) async throws -> T
}

extension StorageClient {
  /// The same storage, each operation timed into `standups_storage_seconds{operation}`.
  func timed(_ metrics: ServerMetrics = .shared) -> StorageClient {
    around(Timed(metrics: metrics))
  }

  /// The same storage, refusing every call at once while `cutOff` says why (a cluster node
  /// that lost its session with the database): what a person asks for then is answered
  /// `storage_unavailable` in a moment, with nothing sent to the database, instead of once
  /// the database's deadline has passed — and a write refused so is known not to have landed.
  func refused(whileCutOff cutOff: @escaping @Sendable () -> String?) -> StorageClient {
    var refused = around(RefusedWhileCutOff(cutOff: cutOff))
    // NB: the meetings' clocks, no one's request, are skipped without a session already, and
    // silently (`PostgresStorage.fenceClocks`): refused, each outage would read as failed saves.
    refused.saveMeetingClocks = saveMeetingClocks
    return refused
  }

  /// The same storage with `wrapper` around each call.
  func around(_ wrapper: some StorageCallWrapper) -> StorageClient {
    let base = self
    return StorageClient(
      load: { try await wrapper.call("load") { try await base.load() } },
      loadStandup: { id in try await wrapper.call("load_standup") { try await base.loadStandup(id) }
      },
      save: { standup in try await wrapper.call("save") { try await base.save(standup) } },
      saveKeepingDraft: { standup, draft in
        try await wrapper.call("save") { try await base.saveKeepingDraft(standup, draft) }
      },
      saveMeetingNotes: { id, meeting in
        try await wrapper.call("save_meeting_notes") {
          try await base.saveMeetingNotes(id, meeting)
        }
      },
      loadMeetings: { id, offset, limit in
        try await wrapper.call("load_meetings") { try await base.loadMeetings(id, offset, limit) }
      },
      delete: { id in try await wrapper.call("delete") { try await base.delete(id) } },
      loadCheckpoints: {
        try await wrapper.call("load_checkpoints") { try await base.loadCheckpoints() }
      },
      loadCheckpoint: { id in
        try await wrapper.call("load_checkpoint") { try await base.loadCheckpoint(id) }
      },
      saveCheckpoint: { id, checkpoint in
        try await wrapper.call("save_checkpoint") { try await base.saveCheckpoint(id, checkpoint) }
      },
      loadDraft: { id in try await wrapper.call("load_draft") { try await base.loadDraft(id) } },
      saveDraft: { id, draft in
        try await wrapper.call("save_draft") { try await base.saveDraft(id, draft) }
      },
      reserveVersions: { room, count in
        try await wrapper.call("reserve_versions") { try await base.reserveVersions(room, count) }
      },
      returnVersions: { room, next, end in
        try await wrapper.call("return_versions") { try await base.returnVersions(room, next, end) }
      },
      saveMeetingClocks: { clocks in
        try await wrapper.call("save_meeting_clocks") { try await base.saveMeetingClocks(clocks) }
      },
      probe: { try await wrapper.call("probe") { try await base.probe() } })
  }
}

private struct Timed: StorageCallWrapper {
  let metrics: ServerMetrics
  func call<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
    try await metrics.timeStorage(operation, body)
  }
}

private struct RefusedWhileCutOff: StorageCallWrapper {
  let cutOff: @Sendable () -> String?
  func call<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
    if let why = cutOff() { throw StorageError(why) }
    return try await body()
  }
}
