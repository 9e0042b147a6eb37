/// Keepalive for every WebSocket of a server at O(1) per connection: pings a connection
/// that has been quiet for `pingAfter` seconds and drops one that has not answered by
/// `hangUpAfter`.
///
/// A timer wheel of slots of one tick (a second, or a fraction of one): each connection sits
/// in exactly one slot, the tick it must be looked at next. Hearing from a connection only
/// notes the tick; the wheel looks again when its slot comes round and moves it on (lazily)
/// if it was heard meanwhile. The server turns it ten times a second, so that the pings due
/// in one second go out in ten small batches, as their connections fell quiet, rather than
/// in one that holds up every other frame on the service thread.
/// Nothing walks a list of every connection, and nothing is re-sorted on a ping or a pong
/// (libwebsockets' own validity timers insert into one sorted list: O(connections) each).
///
/// A pure value, driven by the service thread's ticker, and tested alone.
struct KeepaliveWheel {
  enum Decision: Equatable {
    case ping(UInt64)
    case drop(UInt64)
  }

  private struct Entry {
    var lastHeard: UInt32
    /// When the unanswered ping went out; nil once anything was heard since.
    var pingSent: UInt32?
    /// The tick it is to be looked at next: its slot holds it then (another slot may still
    /// hold it from before an answer moved it sooner, and is passed over).
    var due: UInt32
  }

  /// In ticks.
  let pingAfter: UInt32
  /// In ticks.
  let hangUpAfter: UInt32
  /// Ticks since the wheel started.
  private(set) var now: UInt32 = 0
  private var slots: [[UInt64]]
  private var entries: [UInt64: Entry] = [:]

  /// `pingAfter` and `hangUpAfter` in seconds; the wheel turns `ticksPerSecond` times a second.
  init(pingAfter: UInt16, hangUpAfter: UInt16, ticksPerSecond: UInt32 = 1) {
    let ticksPerSecond = max(1, ticksPerSecond)
    self.pingAfter = max(1, UInt32(pingAfter)) * ticksPerSecond
    self.hangUpAfter = max(self.pingAfter + ticksPerSecond, UInt32(hangUpAfter) * ticksPerSecond)
    slots = Array(repeating: [], count: Int(max(self.pingAfter, self.hangUpAfter)) + 2)
  }

  var count: Int { entries.count }

  mutating func opened(_ id: UInt64) {
    var entry = Entry(lastHeard: now, due: 0)
    schedule(id, &entry, at: now + pingAfter)
    entries[id] = entry
  }

  /// Anything from the peer — a message, a pong — shows it is there.
  ///
  /// An answer to a ping moves the next look to `pingAfter` from now: it sat at the ping's
  /// deadline, which may be later. Otherwise the wheel moves it on lazily when it comes round
  /// (it sits at most `pingAfter` after the last thing heard before this).
  mutating func heard(_ id: UInt64) {
    guard var entry = entries[id] else { return }
    entry.lastHeard = now
    if entry.pingSent != nil {
      entry.pingSent = nil
      if now + pingAfter < entry.due { schedule(id, &entry, at: now + pingAfter) }
    }
    entries[id] = entry
  }

  mutating func closed(_ id: UInt64) { entries[id] = nil }

  /// Advances one tick; says which connections to ping and which to drop.
  /// `mayPing` is false for one that cannot take a frame right now (it is looked at again
  /// at the next tick).
  mutating func tick(mayPing: (UInt64) -> Bool) -> [Decision] {
    now += 1
    let slot = Int(now % UInt32(slots.count))
    let due = slots[slot]
    slots[slot] = []
    var decisions: [Decision] = []
    for id in due {
      guard var entry = entries[id], entry.due == now else { continue }
      if let sent = entry.pingSent {
        if now >= sent + hangUpAfter - pingAfter {
          entries[id] = nil
          decisions.append(.drop(id))
          continue
        }
        schedule(id, &entry, at: sent + hangUpAfter - pingAfter)
      } else if now >= entry.lastHeard + hangUpAfter {
        // Silent all along and never pingable (its socket full, or a close stuck behind
        // what it does not read): it is gone all the same.
        entries[id] = nil
        decisions.append(.drop(id))
        continue
      } else if now >= entry.lastHeard + pingAfter {
        if mayPing(id) {
          entry.pingSent = now
          decisions.append(.ping(id))
          schedule(id, &entry, at: now + hangUpAfter - pingAfter)
        } else {
          schedule(id, &entry, at: now + 1)
        }
      } else {
        schedule(id, &entry, at: entry.lastHeard + pingAfter)
      }
      entries[id] = entry
    }
    return decisions
  }

  private mutating func schedule(_ id: UInt64, _ entry: inout Entry, at tick: UInt32) {
    entry.due = tick
    slots[Int(tick % UInt32(slots.count))].append(id)
  }
}

/// Pings waiting to go out behind the next frame to their connection (one write, one
/// segment, instead of a send of their own), each for `turns` turns of the wheel at most:
/// then it goes alone. A connection sent to every second never costs a ping its own send.
///
/// Only the ids: whether a ping is still wanted (it may have gone out behind a frame since)
/// is the connection's own flag, read when its wait is over.
struct WaitingPings {
  private var slots: [[UInt64]]
  private var turn = 0

  init(turns: Int) { slots = Array(repeating: [], count: max(1, turns)) }

  /// `id`'s ping waits from this turn on; it comes due `turns` turns from now.
  mutating func add(_ id: UInt64) { slots[turn].append(id) }

  /// Advances one turn; returns the ids whose wait is over.
  mutating func advance() -> [UInt64] {
    turn = (turn + 1) % slots.count
    defer { slots[turn] = [] }
    return slots[turn]
  }
}
