import Foundation
import GRDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension SQLiteStorage {
  /// Copies the whole database to `path` as it is at one moment, while a server may be writing
  /// it (SQLite's online backup): a file a server opens as its `standups.sqlite`.
  ///
  /// It is written beside `path` and then moved there, so a backup that fails leaves the one
  /// before it in place; it is readable by its owner only (it holds the team's secret).
  public func backUp(to path: String) throws {
    let target = URL(fileURLWithPath: path).standardizedFileURL
    guard target.path != URL(fileURLWithPath: self.path).standardizedFileURL.path else {
      throw StorageError("\(path) is the database itself: back it up to another file.")
    }
    let partial = target.deletingLastPathComponent()
      .appendingPathComponent(".\(target.lastPathComponent).partial-\(getpid())")
    let files = FileManager.default
    func removePartial() {
      for suffix in ["", "-wal", "-shm", "-journal"] { unlink(partial.path + suffix) }
    }
    removePartial()
    do {
      // NB: 0600 before a byte is written in it.
      guard
        files.createFile(
          atPath: partial.path, contents: nil, attributes: [.posixPermissions: 0o600])
      else {
        throw StorageError("Cannot write a file in \(target.deletingLastPathComponent().path).")
      }
      let copy = try DatabaseQueue(path: partial.path)
      try database.backup(to: copy)
      try copy.close()
      guard rename(partial.path, target.path) == 0 else {
        throw StorageError("Cannot put the backup at \(path): \(String(cString: strerror(errno))).")
      }
    } catch let error as DatabaseError {
      removePartial()
      throw StorageError("The backup failed: \(error.message ?? "\(error)").")
    } catch {
      removePartial()
      throw error
    }
  }
}
