import DequeModule
import Foundation
import JSONPatch
import StandupsWire
import StoreRuntime
import Synchronization
import WebSocketTransport

extension RoomChannel {
  /// The versioned document and the peers who see it.
  final class Broadcaster: Sendable {
    private struct Shared {
      var state: State
      var json: JSONValue
      var version: Int
      /// Set when the room closes: no version is issued after.
      var isClosed = false
      var peers: [ConnectionID: Sender] = [:]
      /// The last patches, oldest first, for `since=` resumes, and their size.
      var recent: Deque<(version: Int, message: OutboundMessage)> = []
      var recentBytes = 0
      /// Changes that could not be published (numbered or encoded).
      var publishFailures = 0
      /// Set while a change is unpublished: the state is then more than one action past the
      /// last version, so the next encoding must not go by its action alone.
      var isBehind = false
    }

    static var recentCapacity: Int { 512 }
    /// The most bytes of patches kept for resumes.
    private let resumeBytes: Int
    private let shared: Mutex<Shared>
    private let versions: VersionLease
    private let outlet: Outlet
    private let encode: Encode
    /// `RoomFeature.encode`: the new state, the last version's state and JSON (changed in
    /// place), the action between them; returns the patch.
    typealias Encode =
      @Sendable (State, State, inout JSONValue, Feature.R.Action?) throws
      -> [PatchOperation]

    init(
      state: State, json: JSONValue, versions: VersionLease, outlet: Outlet, resumeBytes: Int,
      encode: @escaping Encode
    ) {
      shared = Mutex(Shared(state: state, json: json, version: versions.first ?? 0))
      self.versions = versions
      self.outlet = outlet
      self.resumeBytes = resumeBytes
      self.encode = encode
    }

    /// Replaces the initial state, before anything is published.
    func restore(_ state: State, json: JSONValue) {
      shared.withLock { shared in
        shared.state = state
        shared.json = json
      }
    }

    /// Numbers the initial state, before anything is published.
    func begin(at first: Int) {
      shared.withLock { $0.version = first }
    }

    /// Stops issuing versions; returns the one after the last issued.
    func closeVersions() -> Int {
      shared.withLock { shared in
        shared.isClosed = true
        return shared.version + 1
      }
    }

    var isClosed: Bool { shared.withLock { $0.isClosed } }

    enum Publication {
      /// Sent as the next version; carries the previous state.
      case published(State)
      case unchanged
      /// The change could not be numbered: nothing was sent.
      case outOfVersions
      /// The state could not be encoded: nothing was sent.
      case encodingFailed(any Error)
    }

    var version: Int { shared.withLock { $0.version } }
    var publishFailures: Int { shared.withLock { $0.publishFailures } }
    var snapshot: (version: Int, state: JSONValue) { shared.withLock { ($0.version, $0.json) } }
    var peerCount: Int { shared.withLock { $0.peers.count } }
    func sender(of connection: ConnectionID) -> Sender? { shared.withLock { $0.peers[connection] } }

    /// Encodes `state` (after `action`) over the last version; if anything changed, numbers
    /// the patch and sends it to every peer.
    func publish(_ state: State, after action: Feature.R.Action) -> Publication {
      shared.withLock { shared in
        let action = shared.isBehind ? nil : action
        guard !shared.isClosed, versions.mayIssue(shared.version + 1) else {
          // Nothing can be sent, so the document stays the last version's: whether anything
          // changed is found on a copy.
          var unsent = shared.json
          do {
            guard !(try encode(state, shared.state, &unsent, action)).isEmpty else {
              return .unchanged
            }
          } catch {
            return failed(&shared, .encodingFailed(error))
          }
          return failed(&shared, .outOfVersions)
        }
        // NB: the last version's JSON becomes the new one in place, under the lock, so that
        // a change to one part of a large state copies nothing else. An encoder that throws
        // leaves it as it was.
        let operations: [PatchOperation]
        do {
          operations = try encode(state, shared.state, &shared.json, action)
        } catch {
          return failed(&shared, .encodingFailed(error))
        }
        guard !operations.isEmpty else { return .unchanged }
        shared.isBehind = false
        shared.version += 1
        let old = shared.state
        shared.state = state
        let message = OutboundMessage(
          ServerMessage.patch(version: shared.version, operations: operations))
        shared.recent.append((shared.version, message))
        shared.recentBytes += message.count
        while shared.recent.count > Self.recentCapacity || shared.recentBytes > resumeBytes,
          let oldest = shared.recent.popFirst()
        {
          shared.recentBytes -= oldest.message.count
        }
        outlet.send(message, to: shared.peers.keys)
        ServerMetrics.shared.sent(message.count, to: shared.peers.count)
        return .published(old)
      }
    }

    /// A change that was not published: counted, and the next one compares whole states.
    private func failed(_ shared: inout Shared, _ publication: Publication) -> Publication {
      shared.publishFailures += 1
      shared.isBehind = true
      return publication
    }

    /// Adds a peer and sends it the state: whole, or as the patches after `since`.
    func addPeer(_ connection: ConnectionID, sender: Sender, since: Int?, room: String) {
      shared.withLock { shared in
        shared.peers[connection] = sender
        // NB: versions never repeat (each opening of a room has its own reserved range), so
        // a version this room holds patches after is one it issued.
        let oldestResumable = (shared.recent.first?.version ?? shared.version + 1) - 1
        if let since, since >= min(oldestResumable, shared.version), since <= shared.version {
          outlet.send(
            ServerMessage.welcome(
              room: room, you: sender.participantID, version: since, state: nil, resumed: true),
            to: connection)
          for patch in shared.recent where patch.version > since {
            outlet.send(patch.message, to: connection)
          }
        } else {
          outlet.send(
            ServerMessage.welcome(
              room: room, you: sender.participantID, version: shared.version, state: shared.json,
              resumed: false),
            to: connection)
        }
      }
    }

    func removeAllPeers() -> [ConnectionID] {
      shared.withLock { shared in
        defer { shared.peers.removeAll() }
        return Array(shared.peers.keys)
      }
    }

    func removePeer(_ connection: ConnectionID) -> Sender? {
      shared.withLock { $0.peers.removeValue(forKey: connection) }
    }
  }
}
