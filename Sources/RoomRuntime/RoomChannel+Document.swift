import DequeModule
import Foundation
import JSONPatch
import StandupsWire
import StoreRuntime
import WebSocketTransport

extension RoomChannel {
  /// The versioned document and the peers who see it: the last version's state and JSON, its
  /// number, and the recent patches kept for resumes. A plain value that the room's actor
  /// owns: nothing else reads or writes it.
  struct Document {
    private(set) var state: State
    private(set) var json: JSONValue
    private(set) var version: Int
    /// Set when the room closes: no version is issued after.
    private(set) var isClosed = false
    private(set) var peers: [ConnectionID: Sender] = [:]
    /// The peers that answer to each key (`Sender.answers(to:)`), so that a reconnect finds
    /// what it replaces without looking at every peer: a lobby that thousands of pages
    /// reconnect to at once would otherwise cost the square of its size.
    private var peersByKey: [String: [ConnectionID]] = [:]
    /// `peers`' connections as the outlet takes them, kept while nobody comes or goes: a
    /// ticking room does not make the list again on every tick.
    private var recipients: [ConnectionID]?
    /// The last patches, oldest first, for `since=` resumes, and their size.
    private var recent: Deque<(version: Int, message: OutboundMessage)> = []
    private var recentBytes = 0
    /// Changes that could not be published (numbered or encoded).
    private(set) var publishFailures = 0
    /// Set while a change is unpublished: the state is then more than one action past the
    /// last version, so the next encoding must not go by its action alone.
    private var isBehind = false

    static var recentCapacity: Int { 512 }
    /// The most bytes of patches kept for resumes.
    private let resumeBytes: Int
    private let versions: VersionLease
    private let outlet: Outlet
    private let metrics: RoomMetrics
    private let encode: Encode
    /// `RoomFeature.encode`: the new state, the last version's state and JSON (changed in
    /// place), the action between them; returns the patch.
    typealias Encode =
      @Sendable (State, State, inout JSONValue, Feature.R.Action?) throws
      -> [PatchOperation]

    init(
      state: State, json: JSONValue, versions: VersionLease, outlet: Outlet,
      metrics: RoomMetrics = RoomMetrics(), resumeBytes: Int, encode: @escaping Encode
    ) {
      self.state = state
      self.json = json
      self.version = versions.first ?? 0
      self.versions = versions
      self.outlet = outlet
      self.metrics = metrics
      self.resumeBytes = resumeBytes
      self.encode = encode
    }

    /// Replaces the initial state, before anything is published.
    mutating func restore(_ state: State, json: JSONValue) {
      self.state = state
      self.json = json
    }

    /// Numbers the initial state, before anything is published.
    mutating func begin(at first: Int) { version = first }

    /// Stops issuing versions; returns the one after the last issued.
    mutating func closeVersions() -> Int {
      isClosed = true
      return version + 1
    }

    enum Publication {
      /// Sent as the next version; carries the previous state.
      case published(State)
      case unchanged
      /// The change could not be numbered: nothing was sent.
      case outOfVersions
      /// The state could not be encoded: nothing was sent.
      case encodingFailed(any Error)
    }

    var snapshot: (version: Int, state: JSONValue) { (version, json) }

    /// Encodes `state` (after `action`) over the last version; if anything changed, numbers
    /// the patch and sends it to every peer.
    mutating func publish(_ state: State, after action: Feature.R.Action) -> Publication {
      let action = isBehind ? nil : action
      guard !isClosed, versions.mayIssue(version + 1) else {
        // Nothing can be sent, so the document stays the last version's: whether anything
        // changed is found on a copy.
        var unsent = json
        do {
          guard !(try encode(state, self.state, &unsent, action)).isEmpty else {
            return .unchanged
          }
        } catch {
          return failed(.encodingFailed(error))
        }
        return failed(.outOfVersions)
      }
      // NB: the last version's JSON becomes the new one in place, so that a change to one
      // part of a large state copies nothing else. An encoder that throws leaves it as it was.
      let operations: [PatchOperation]
      do {
        operations = try encode(state, self.state, &json, action)
      } catch {
        return failed(.encodingFailed(error))
      }
      guard !operations.isEmpty else { return .unchanged }
      isBehind = false
      version += 1
      let old = self.state
      self.state = state
      let message = OutboundMessage(ServerMessage.patch(version: version, operations: operations))
      recent.append((version, message))
      recentBytes += message.count
      while recent.count > Self.recentCapacity || recentBytes > resumeBytes,
        let oldest = recent.popFirst()
      {
        recentBytes -= oldest.message.count
      }
      let recipients = self.recipients ?? Array(peers.keys)
      self.recipients = recipients
      outlet.send(message, to: recipients)
      if !peers.isEmpty { metrics.patchSent(message.count, peers.count) }
      return .published(old)
    }

    /// A change that was not published: counted, and the next one compares whole states.
    private mutating func failed(_ publication: Publication) -> Publication {
      publishFailures += 1
      isBehind = true
      return publication
    }

    /// Adds a peer and sends it the state: whole, or as the patches after `since`.
    mutating func addPeer(_ connection: ConnectionID, sender: Sender, since: Int?, room: String) {
      if let old = peers.updateValue(sender, forKey: connection) { unindex(connection, old) }
      recipients = nil
      for key in Self.keys(of: sender) { peersByKey[key, default: []].append(connection) }
      // NB: versions never repeat (each opening of a room has its own reserved range), so a
      // version this room holds patches after is one it issued.
      let oldestResumable = (recent.first?.version ?? version + 1) - 1
      if let since, since >= min(oldestResumable, version), since <= version {
        outlet.send(
          ServerMessage.welcome(
            room: room, you: sender.participantID, key: sender.key, version: since, state: nil,
            resumed: true, latest: version),
          to: connection)
        for patch in recent where patch.version > since {
          outlet.send(patch.message, to: connection)
        }
      } else {
        outlet.send(
          ServerMessage.welcome(
            room: room, you: sender.participantID, key: sender.key, version: version,
            state: json, resumed: false),
          to: connection)
      }
    }

    mutating func removeAllPeers() -> [ConnectionID] {
      defer {
        peers.removeAll()
        peersByKey.removeAll()
        recipients = nil
      }
      return Array(peers.keys)
    }

    /// The connection `sender` may take the place of, naming `key` (`Sender.mayReplace`).
    func peer(replacedBy sender: Sender, naming key: String)
      -> (connection: ConnectionID, sender: Sender)?
    {
      for connection in peersByKey[key] ?? [] {
        guard let peer = peers[connection] else { continue }
        if sender.mayReplace(peer, naming: key) { return (connection, peer) }
      }
      return nil
    }

    mutating func removePeer(_ connection: ConnectionID) -> Sender? {
      guard let sender = peers.removeValue(forKey: connection) else { return nil }
      recipients = nil
      unindex(connection, sender)
      return sender
    }

    /// The keys `sender` answers to (`Sender.answers(to:)`), each once.
    private static func keys(of sender: Sender) -> Set<String> {
      Set([sender.key, sender.formerKey].compactMap { $0 })
    }

    private mutating func unindex(_ connection: ConnectionID, _ sender: Sender) {
      for key in Self.keys(of: sender) {
        peersByKey[key]?.removeAll { $0 == connection }
        if peersByKey[key]?.isEmpty == true { peersByKey[key] = nil }
      }
    }
  }
}
