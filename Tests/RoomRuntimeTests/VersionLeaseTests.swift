import Foundation
import Logging
import RoomRuntime
import StandupsFeatures
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
}
