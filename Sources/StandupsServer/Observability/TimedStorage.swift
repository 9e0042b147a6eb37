import StandupsFeatures

extension StorageClient {
  /// The same storage, each operation timed into `standups_storage_seconds{operation}`.
  func timed(_ metrics: ServerMetrics = .shared) -> StorageClient {
    let base = self
    return StorageClient(
      load: { try await metrics.timeStorage("load") { try await base.load() } },
      loadStandup: { id in
        try await metrics.timeStorage("load_standup") { try await base.loadStandup(id) }
      },
      save: { standup in try await metrics.timeStorage("save") { try await base.save(standup) } },
      saveKeepingDraft: { standup, draft in
        try await metrics.timeStorage("save") { try await base.saveKeepingDraft(standup, draft) }
      },
      saveMeetingNotes: { id, meeting in
        try await metrics.timeStorage("save_meeting_notes") {
          try await base.saveMeetingNotes(id, meeting)
        }
      },
      loadMeetings: { id, offset, limit in
        try await metrics.timeStorage("load_meetings") {
          try await base.loadMeetings(id, offset, limit)
        }
      },
      delete: { id in try await metrics.timeStorage("delete") { try await base.delete(id) } },
      loadCheckpoints: {
        try await metrics.timeStorage("load_checkpoints") { try await base.loadCheckpoints() }
      },
      loadCheckpoint: { id in
        try await metrics.timeStorage("load_checkpoint") { try await base.loadCheckpoint(id) }
      },
      saveCheckpoint: { id, checkpoint in
        try await metrics.timeStorage("save_checkpoint") {
          try await base.saveCheckpoint(id, checkpoint)
        }
      },
      loadDraft: { id in
        try await metrics.timeStorage("load_draft") { try await base.loadDraft(id) }
      },
      saveDraft: { id, draft in
        try await metrics.timeStorage("save_draft") { try await base.saveDraft(id, draft) }
      },
      reserveVersions: { room, count in
        try await metrics.timeStorage("reserve_versions") {
          try await base.reserveVersions(room, count)
        }
      },
      returnVersions: { room, next, end in
        try await metrics.timeStorage("return_versions") {
          try await base.returnVersions(room, next, end)
        }
      },
      saveMeetingClocks: { clocks in
        try await metrics.timeStorage("save_meeting_clocks") {
          try await base.saveMeetingClocks(clocks)
        }
      },
      probe: { try await metrics.timeStorage("probe") { try await base.probe() } })
  }
}
