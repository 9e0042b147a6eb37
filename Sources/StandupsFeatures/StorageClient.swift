import Dependencies
import DependenciesMacros
import Foundation
import Synchronization

/// Where standups live between runs. The live value is chosen by the server; tests use
/// `.inMemory()` or override single endpoints.
@DependencyClient
public struct StorageClient: Sendable {
  /// Every standup, in creation order.
  public var load: @Sendable () async throws -> [Standup]
  /// Creates or replaces a standup (with its meeting history).
  public var save: @Sendable (_ standup: Standup) async throws -> Void
  /// Deletes a standup and its history; deleting one that is gone is not an error.
  public var delete: @Sendable (_ id: Standup.ID) async throws -> Void
}

extension StorageClient: TestDependencyKey {
  public static let testValue = StorageClient()

  /// Standups kept in memory for the life of the value.
  public static func inMemory(_ standups: [Standup] = []) -> StorageClient {
    let storage = Mutex(standups)
    return StorageClient(
      load: { storage.withLock { $0 } },
      save: { standup in
        storage.withLock { standups in
          if let index = standups.firstIndex(where: { $0.id == standup.id }) {
            standups[index] = standup
          } else {
            standups.append(standup)
          }
        }
      },
      delete: { id in storage.withLock { $0.removeAll { $0.id == id } } }
    )
  }
}

extension DependencyValues {
  public var storage: StorageClient {
    get { self[StorageClient.self] }
    set { self[StorageClient.self] = newValue }
  }
}
