import Fixtures
import Foundation
import Logging
import RoomRuntime
import StandupsFeatures
import Synchronization
import Testing

@Suite struct VersionLeaseTests {
  let logger = Logger(label: "test")

  @Test func reservesTheNextBlockBeforeTheFirstRunsOut() async throws {
    let storage = StorageClient.inMemory()
    let lease = VersionLease(
      room: "r", storage: storage, sizes: .init(block: 4, lowWater: 2), logger: logger)
    #expect(await lease.start() == 1)
    #expect(lease.mayIssue(2))
    #expect(lease.mayIssue(3))
    #expect(lease.mayIssue(4))  // one left: the next block is asked for
    await lease.settle()
    #expect(lease.mayIssue(5))
    #expect(lease.mayIssue(8))
    await lease.settle()
    #expect(try await storage.reserveVersions("r", 1) == 13)
  }

  @Test func closingGivesBackWhatWasNotIssuedAndIssuesNoMore() async throws {
    let storage = StorageClient.inMemory()
    let lease = VersionLease(
      room: "r", storage: storage, sizes: .init(block: 100, lowWater: 10), logger: logger)
    #expect(await lease.start() == 1)
    #expect(lease.mayIssue(2))
    await lease.finish(next: 3)
    #expect(!lease.mayIssue(3))
    #expect(try await storage.reserveVersions("r", 1) == 3)
  }

  /// A room that closes because its node lost the room's lock (its database session ended)
  /// writes nothing for it: the next opening goes on past the whole reservation.
  @Test func closingWithoutTheRoomGivesNothingBack() async throws {
    let inMemory = StorageClient.inMemory()
    var storage = inMemory
    storage.returnVersions = { _, _, _ in Issue.record("a version was given back") }
    let holds = Mutex(true)
    let lease = VersionLease(
      room: "r", storage: storage, sizes: .init(block: 100, lowWater: 10), logger: logger)
    lease.fence { holds.withLock { $0 } }
    #expect(await lease.start() == 1)
    #expect(lease.mayIssue(2))
    holds.withLock { $0 = false }
    await lease.finish(next: 3)
    #expect(!lease.mayIssue(3))
    #expect(try await inMemory.reserveVersions("r", 1) == 101)
  }

  @Test func withoutStorageItNumbersFromTheClockPastEveryReservation() async throws {
    var storage = StorageClient.inMemory()
    storage.reserveVersions = { _, _ in throw DiskFull() }
    let lease = VersionLease(
      room: "r", storage: storage, sizes: .init(block: 4, lowWater: 2), logger: logger,
      now: { Date(timeIntervalSince1970: 1_795_338_000) })
    let first = await lease.start()
    #expect(first == 1_795_338_000_000_000)
    #expect(lease.mayIssue(first + 1_000))
  }

  /// Storage that fails while a room issues versions is asked again after 1 s, then less
  /// often, not for every version; the log says so once a minute, and when it works again.
  @Test func aFailingReservationIsRetriedLessOftenAndLoggedOnceAMinute() async throws {
    let calls = Mutex(0)
    let failing = Mutex(false)
    let clock = Mutex(Date(timeIntervalSince1970: 1_795_338_000))
    let inMemory = StorageClient.inMemory()
    var storage = inMemory
    storage.reserveVersions = { room, count in
      calls.withLock { $0 += 1 }
      if failing.withLock({ $0 }) { throw DiskFull() }
      return try await inMemory.reserveVersions(room, count)
    }
    let log = LogLines()
    let lease = VersionLease(
      room: "r", storage: storage, sizes: .init(block: 1_000, lowWater: 990), logger: log.logger,
      now: { clock.withLock { $0 } })
    #expect(await lease.start() == 1)
    failing.withLock { $0 = true }
    func issue(_ versions: ClosedRange<Int>) async {
      for version in versions { #expect(lease.mayIssue(version)) }
      await lease.settle()
    }
    func advance(_ seconds: TimeInterval) { clock.withLock { $0.addTimeInterval(seconds) } }

    await issue(20...200)
    #expect(calls.withLock { $0 } == 2)  // the first block, then one failed extension
    advance(1)
    await issue(201...300)
    advance(1)  // the next wait is 2 s
    await issue(301...400)
    #expect(calls.withLock { $0 } == 3)
    advance(60)
    await issue(401...500)
    #expect(calls.withLock { $0 } == 4)
    #expect(log.all.count == 2)
    #expect(log.all.allSatisfy { $0.hasPrefix("Reserving more versions for room r failed: ") })

    failing.withLock { $0 = false }
    advance(30)
    await issue(501...600)
    #expect(calls.withLock { $0 } == 5)
    #expect(log.all.last == "Reserving more versions for room r works again.")
    // The new block follows on: versions past the first block may be issued.
    #expect(lease.mayIssue(1_500))
  }
}
