import Foundation
import Synchronization
import Testing

@testable import WebSocketTransport

/// The outboxes between the threads that send and the service thread, without a socket: what
/// each holds, in what order, and what the service thread is told to write.
@Suite struct OutboundQueuesTests {
  private func items(_ cell: OutboxCell) -> [String] {
    var items: [String] = []
    while let item = cell.outbox.withLock({ $0.popFirst() }) {
      switch item {
      case .message(let message):
        items.append(String(decoding: message.bytes, as: UTF8.self))
      case .close(let code, let reason):
        items.append("close \(code.rawValue) \(reason)")
      }
    }
    return items
  }

  @Test func aBroadcastReachesEveryOutboxAndWakesEachOnce() {
    let queues = OutboundQueues(limit: 1024)
    let cells = (1...3).map { queues.open($0) }
    queues.send(OutboundMessage(text: "one"), to: cells.map(ConnectionID.init))
    queues.send(OutboundMessage(text: "two"), to: [ConnectionID(cells[1])])

    let (wake, fellBehind) = queues.takeWakeList()
    #expect(wake.map(\.id) == [1, 2, 3], "each woken once, in the order they were first sent to")
    #expect(fellBehind.isEmpty)
    #expect(items(cells[0]) == ["one"])
    #expect(items(cells[1]) == ["one", "two"])
    #expect(items(cells[2]) == ["one"])
    #expect(queues.takeWakeList().wake.isEmpty)
  }

  @Test func aCloseComesAfterWhatItsThreadQueuedBeforeIt() async {
    let queues = OutboundQueues(limit: 1024 * 1024)
    let cell = queues.open(7)
    let connection = ConnectionID(cell)
    // A service thread of its own (not the cooperative pool, which it would hold) takes the
    // wake list and empties the outbox as it goes, while another thread sends, then closes.
    let written = Mutex<[String]>([])
    let done = Atomic(false)
    let service = Thread {
      repeat {
        let finished = done.load(ordering: .acquiring)
        for woken in queues.takeWakeList().wake {
          let drained = items(woken)
          written.withLock { $0 += drained }
        }
        if finished { break }
      } while true
    }
    service.start()
    await Task.detached {
      for index in 0..<2_000 { queues.send(OutboundMessage(text: "\(index)"), to: [connection]) }
      queues.close(connection, code: CloseCode(rawValue: 4410), reason: "Deleted")
      queues.send(OutboundMessage(text: "after"), to: [connection])
    }.value
    done.store(true, ordering: .releasing)
    while !service.isFinished { await Task.yield() }
    let all = written.withLock { $0 } + items(cell)

    // NB: compared piecewise: a failure printing two lists of 2 001 items says nothing.
    #expect(all.count == 2_001)
    #expect(all.firstIndex(of: "close 4410 Deleted") == 2_000, "the close went before a message")
    #expect(all.prefix(2_000).elementsEqual((0..<2_000).map { "\($0)" }), "messages in order")
  }

  @Test func aReaderOverItsCapGetsA1008InPlaceOfItsBacklog() {
    let queues = OutboundQueues(limit: 10)
    let slow = queues.open(1)
    let quick = queues.open(2)
    queues.send(OutboundMessage(text: "12345678"), to: [ConnectionID(slow), ConnectionID(quick)])
    _ = queues.takeWakeList()
    #expect(items(quick) == ["12345678"])
    queues.send(OutboundMessage(text: "abcdef"), to: [ConnectionID(slow), ConnectionID(quick)])

    let (_, fellBehind) = queues.takeWakeList()
    #expect(fellBehind == [1])
    #expect(queues.fellBehindCount == 1)
    #expect(items(slow) == ["close 1008 This connection fell too far behind: reconnect."])
    #expect(items(quick) == ["abcdef"])
  }

  @Test func aGoneConnectionGetsNothingQueuedAfterIt() {
    let queues = OutboundQueues(limit: 1024)
    let cell = queues.open(1)
    queues.send(OutboundMessage(text: "late"), to: [ConnectionID(cell)])
    queues.remove(1)
    // NB: the wake list may still name it (the service thread skips a connection it closed);
    // what waited for it is gone.
    _ = queues.takeWakeList()
    #expect(items(cell).isEmpty)
    queues.send(OutboundMessage(text: "by its id"), to: [ConnectionID(cell)])
    queues.send(OutboundMessage(text: "by raw id"), to: [ConnectionID(rawValue: 1)])
    #expect(queues.takeWakeList().wake.isEmpty)
    #expect(items(cell).isEmpty)
  }
}
