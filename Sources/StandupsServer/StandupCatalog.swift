import Dependencies
import Foundation
import IdentifiedCollections
import JSONPatch
import Logging
import RoomRuntime
import StandupsFeatures
import StoreRuntime
import Synchronization
import WebSocketTransport

/// Every standup the server knows, readable from the transport's thread (404s, new rooms).
final class StandupCatalog: Sendable {
  private let standups: Mutex<IdentifiedArrayOf<Standup>>
  /// Standups this node made whose save has not landed yet (not in the database).
  private let unsaved = Mutex<Set<UUID>>([])
  /// Standups deleted (ids are never used again): a reading of one that began before it went
  /// does not bring it back. Taken before `standups` where both are.
  private let deleted = Mutex<Set<UUID>>([])

  init(_ standups: IdentifiedArrayOf<Standup>) {
    self.standups = Mutex(standups)
  }

  /// A standup saved (or created): rooms open with it from now on. False for one deleted.
  @discardableResult
  func update(_ standup: Standup) -> Bool {
    deleted.withLock { deleted in
      guard !deleted.contains(standup.id) else { return false }
      standups.withLock { $0[id: standup.id] = standup }
      return true
    }
  }

  /// Whether standup `id` was deleted.
  func wasDeleted(_ id: UUID) -> Bool { deleted.withLock { $0.contains(id) } }

  /// A standup this node made: known at once, in the database once `saved`.
  func made(_ standup: Standup) {
    unsaved.withLock { _ = $0.insert(standup.id) }
    update(standup)
  }

  func saved(_ id: Standup.ID) {
    unsaved.withLock { _ = $0.remove(id) }
  }

  /// Whether standup `id` was made here and its save has not landed yet: its room waits (its
  /// draft or a meeting saved for it would have no standup to go with).
  func isUnsaved(_ id: Standup.ID) -> Bool { unsaved.withLock { $0.contains(id) } }

  /// A standup this node made whose save failed: gone from here, but not taken for deleted —
  /// a save given up that landed after all (the database answered too late) is shown once it
  /// is read (a notice of it, a catch-up).
  func unmade(_ id: Standup.ID) {
    _ = standups.withLock { $0.remove(id: id) }
    saved(id)
  }

  func remove(_ id: Standup.ID) {
    deleted.withLock { deleted in
      deleted.insert(id)
      _ = standups.withLock { $0.remove(id: id) }
    }
    saved(id)
  }

  /// The standups known to be in the database (all but those whose save has not landed).
  var savedIDs: Set<UUID> {
    let unsaved = unsaved.withLock { $0 }
    return Set(standups.withLock { $0.ids }).subtracting(unsaved)
  }
  subscript(id: UUID) -> Standup? { standups.withLock { $0[id: id] } }
}

/// Lets rooms tell the lobby what changed, once the lobby exists — and, in a cluster, every
/// other node's lobby too.
final class LobbyNotifier: Sendable {
  private let lobby = Mutex<RoomChannel<LobbyFeature>?>(nil)
  // NB: the closure sits in a class: a closure read out of a generic `Mutex` comes back
  // behind two more reabstraction thunks on every read (the `inout` is reabstracted both
  // ways and written back), so each relay would cost more than the last.
  private final class Relay: Sendable {
    let send: @Sendable (Lobby.Action) -> Void
    init(send: @escaping @Sendable (Lobby.Action) -> Void) { self.send = send }
  }
  private let relay = Mutex<Relay?>(nil)
  func attach(_ lobby: RoomChannel<LobbyFeature>) { self.lobby.withLock { $0 = lobby } }
  /// Also tells the other nodes what this node's rooms change.
  func relay(to relay: @escaping @Sendable (Lobby.Action) -> Void) {
    self.relay.withLock { $0 = Relay(send: relay) }
  }

  /// This node's lobby, and the other nodes'.
  func send(_ action: Lobby.Action) async {
    await receive(action)
    tellOthers(action)
  }

  /// Only this node's lobby (what another node said).
  func receive(_ action: Lobby.Action) async { await lobby.withLock { $0 }?.send(action) }

  /// Only the other nodes (a change this node's lobby made itself).
  func tellOthers(_ action: Lobby.Action) { relay.withLock { $0 }?.send(action) }
}
