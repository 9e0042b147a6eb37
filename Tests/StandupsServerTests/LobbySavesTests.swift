import Fixtures
import Foundation
import IdentifiedCollections
import RoomRuntime
import StandupsFeatures
import Synchronization
import Testing

@testable import StandupsServer

/// What the lobby writes: only the standups it makes. In a cluster every node's lobby hears of
/// the standups the others make and their rooms change; writing those again would undo what a
/// room saved since (and drop its open draft), or bring back one deleted meanwhile.
struct LobbySavesTests {
  let storage = DraftTests.FailingStorage()
  let catalog = StandupCatalog([.design])

  var feature: LobbyFeature {
    LobbyFeature(
      storage: storage.client, catalog: catalog,
      health: StorageHealth(logger: LogLines().logger), notifier: LobbyNotifier(),
      creations: FailedAttempts())
  }

  func work(
    from old: Lobby.State, to new: Lobby.State, after action: Lobby.Action
  ) async throws -> Int {
    var work = RoomWork()
    feature.stateDidChange(from: old, to: new, after: action, work: &work)
    for piece in work.pieces { try await piece() }
    return work.pieces.count
  }

  @Test func aStandupHeardOfIsShownNotSavedAgain() async throws {
    let old = Lobby.State(standups: [.design])
    let elsewhere = Standup(id: UUID(), title: "Made on another node")
    var new = old
    new.standups.append(elsewhere)
    #expect(try await work(from: old, to: new, after: .standupChanged(elsewhere)) == 0)
    var renamed = new
    renamed.standups[id: Standup.design.id]?.title = "Renamed in its room"
    #expect(
      try await work(from: new, to: renamed, after: .standupChanged(renamed.standups[0])) == 0)
    #expect(try await work(from: renamed, to: old, after: .standupDeleted(elsewhere.id)) == 0)
    #expect(storage.standupSaves.withLock { $0 } == 0)
  }

  @Test func aStandupMadeHereIsSavedAndTakenBackIfThatFails() async throws {
    let old = Lobby.State(standups: [.design])
    let made = Standup(id: UUID(), title: "Made here")
    var new = old
    new.standups.append(made)
    let submitted = Lobby.NewStandup(
      title: "Made here", durationSeconds: 300, theme: "teal", attendeeNames: ["Ana"])
    #expect(try await work(from: old, to: new, after: .addStandupSubmitted(submitted)) == 1)
    #expect(storage.standupSaves.withLock { $0 } == 1)
    #expect(catalog[made.id] != nil)
    // Refused: only what the action added goes, from the lobby and the catalog, not a
    // standup heard of while its save was on its way.
    let heard = Standup(id: UUID(), title: "Heard of meanwhile")
    catalog.update(heard)
    let rollback = feature.rollback(to: old, from: new)
    #expect(rollback == .saveFailed(added: [made.id]))
    var after = new
    after.standups.append(heard)
    var back = after
    back.standups.remove(id: made.id)
    _ = try await work(from: after, to: back, after: rollback)
    #expect(catalog[made.id] == nil)
    #expect(catalog[heard.id] != nil)
    // Not taken for deleted: a save given up that landed after all is listed once read.
    #expect(!catalog.wasDeleted(made.id))
  }
}
