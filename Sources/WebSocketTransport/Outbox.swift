import DequeModule

/// What waits to be written to one WebSocket, in order.
struct Outbox {
  enum Item {
    case message(OutboundMessage)
    case close(CloseCode, reason: String)
  }

  private(set) var items: Deque<Item> = []
  private(set) var queuedBytes = 0
  /// Set once a close is queued: later messages are dropped.
  private(set) var isClosing = false
  /// The peer fell too far behind: what waits for it is dropped, and a close takes its place.
  mutating func overflow(_ code: CloseCode, reason: String) {
    items = [.close(code, reason: reason)]
    queuedBytes = 0
    isClosing = true
  }

  /// The connection is gone: nothing waits, and nothing more is queued.
  mutating func retire() {
    items = []
    queuedBytes = 0
    isClosing = true
  }

  /// What `append` did.
  enum Appended {
    /// Queued behind others (or dropped: the connection is closing).
    case queued
    /// Queued in an idle outbox: the writer must be woken.
    case wake
    /// Not queued: the connection is over its cap and must be closed instead.
    case overLimit
  }

  /// Queues a message. The cap bounds a backlog, not one message: a message bigger than the
  /// cap is queued when nothing waits (a large welcome is always delivered).
  mutating func append(_ message: OutboundMessage, limit: Int) -> Appended {
    guard !isClosing else { return .queued }
    guard queuedBytes == 0 || queuedBytes + message.count <= limit else { return .overLimit }
    let wasIdle = items.isEmpty
    items.append(.message(message))
    queuedBytes += message.count
    return wasIdle ? .wake : .queued
  }

  /// Queues a close after everything already queued; returns whether the writer must be woken.
  mutating func close(_ code: CloseCode, reason: String) -> Bool {
    guard !isClosing else { return false }
    let wasIdle = items.isEmpty
    items.append(.close(code, reason: reason))
    isClosing = true
    return wasIdle
  }

  /// The first item if it is a message (a close stays queued), and whether nothing is left.
  mutating func popMessage() -> (message: OutboundMessage?, isEmpty: Bool) {
    guard case .message(let message)? = items.first else { return (nil, items.isEmpty) }
    items.removeFirst()
    queuedBytes -= message.count
    return (message, items.isEmpty)
  }

  mutating func popFirst() -> Item? {
    guard let item = items.popFirst() else { return nil }
    if case .message(let message) = item { queuedBytes -= message.count }
    return item
  }
}
