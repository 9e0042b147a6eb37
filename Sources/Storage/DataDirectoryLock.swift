import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// One server at a time on a data directory: two on one SQLite file would each serve its own
/// copy of every room, and overwrite the other's acknowledged changes. A server holds an
/// exclusive `flock` on `<directory>/server.lock` while it runs; the commands that write
/// beside it (`bots`, `invite`) do not take it. The kernel lets it go with the process,
/// however that ends (a crash, `kill -9`), so a stale file never keeps a server out.
public final class DataDirectoryLock: Sendable {
  private let descriptor = Mutex<Int32?>(nil)
  /// The lock file.
  public let path: String

  /// Takes the directory's lock, or throws saying that another server holds it.
  public init(directory: String) throws {
    path = URL(fileURLWithPath: directory).appendingPathComponent("server.lock").path
    let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard opened >= 0 else {
      throw StorageError("Cannot open \(path): \(String(cString: strerror(errno))).")
    }
    guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
      let why = errno
      close(opened)
      guard why == EWOULDBLOCK else {
        throw StorageError("Cannot lock \(path): \(String(cString: strerror(why))).")
      }
      throw StorageError(
        "Another Standups server is running on the data directory \(directory) (it holds "
          + "\(path)): two would overwrite each other's changes. Stop that one first, or give "
          + "this one its own --data-dir.")
    }
    descriptor.withLock { $0 = opened }
  }

  /// Lets the directory go (the server stopped); a second call does nothing.
  public func release() {
    descriptor.withLock { descriptor in
      guard let open = descriptor else { return }
      // NB: closing the file lets the lock go.
      close(open)
      descriptor = nil
    }
  }

  deinit { release() }
}
