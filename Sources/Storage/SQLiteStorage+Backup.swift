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
    let target = URL(fileURLWithPath: path)
    // NB: where it really is (a data directory reached through a link, say): the database's
    // own files must never be written over.
    guard let folder = realpath(target.deletingLastPathComponent().path, nil) else {
      throw StorageError(
        "Cannot write in \(target.deletingLastPathComponent().path): \(Self.reason(errno)).")
    }
    let resolved = URL(fileURLWithPath: String(cString: folder))
      .appendingPathComponent(target.lastPathComponent)
    free(folder)
    let database = realpath(self.path, nil).map { pointer in
      defer { free(pointer) }
      return String(cString: pointer)
    }
    let own = Self.ownFileSuffixes.compactMap { suffix in database.map { $0 + suffix } }
    guard !own.contains(resolved.path), !Self.sameFile(resolved.path, asAnyOf: own) else {
      throw StorageError(
        "\(path) is the database itself (or its log): back it up to another file.")
    }
    // NB: an earlier backup is replaced (a nightly job writes to one name); nothing else is.
    guard
      !FileManager.default.fileExists(atPath: resolved.path) || Self.isEarlierBackup(resolved.path)
    else {
      throw StorageError(
        "\(path) is already there and is not an earlier backup (a database of standups no "
          + "server is using), or cannot be read: choose another file, or remove it first.")
    }
    let partial = resolved.deletingLastPathComponent()
      .appendingPathComponent(".\(resolved.lastPathComponent).partial-\(getpid())")
    func removePartial() {
      for suffix in Self.ownFileSuffixes { unlink(partial.path + suffix) }
    }
    removePartial()
    do {
      // NB: 0600 before a byte is written in it.
      let descriptor = open(partial.path, O_CREAT | O_EXCL | O_WRONLY, 0o600)
      guard descriptor >= 0 else {
        throw StorageError(
          "Cannot write in \(resolved.deletingLastPathComponent().path): \(Self.reason(errno)).")
      }
      closeDescriptor(descriptor)
      let copy = try DatabaseQueue(path: partial.path)
      try self.database.backup(to: copy)
      try copy.close()
      guard rename(partial.path, resolved.path) == 0 else {
        throw StorageError("Cannot put the backup at \(path): \(Self.reason(errno)).")
      }
    } catch let error as DatabaseError {
      removePartial()
      throw StorageError("The backup failed: \(error.message ?? "\(error)").")
    } catch {
      removePartial()
      throw error
    }
  }

  /// Moves everything in the write-ahead log into the file and closes the database, so that
  /// the file alone holds everything (a plain copy of a stopped server's is whole). For a
  /// server that stops: nothing may use the storage after.
  public func close() throws {
    // NB: emptied here: GRDB closes the writer before the readers, and the last connection to
    // close, a reader, cannot move the log into the file (its empty file stays beside it).
    try database.writeWithoutTransaction { try $0.checkpoint(.truncate) }
    try database.close()
  }

  /// A database's file and the ones SQLite keeps beside it: its log, its shared memory, its
  /// rollback journal.
  private static let ownFileSuffixes = ["", "-wal", "-shm", "-journal"]

  /// Whether a backup may take the place of `path`: an earlier backup — a database of
  /// standups with no log beside it (a server's own database has one while it runs, and
  /// another application's has no `standup` table). Not an empty file: the server's lock is one.
  private static func isEarlierBackup(_ path: String) -> Bool {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 else {
      return false
    }
    guard !FileManager.default.fileExists(atPath: path + "-wal") else { return false }
    // NB: not read-only: a backup is in WAL mode (as the database it copies), and a read-only
    // connection would leave its `-shm` beside it; this one takes it away as it closes.
    guard let database = try? DatabaseQueue(path: path) else { return false }
    defer { try? database.close() }
    return (try? database.read { try $0.tableExists("standup") }) ?? false
  }

  /// Whether `path` is one of `files` under another name (a hard link).
  private static func sameFile(_ path: String, asAnyOf files: [String]) -> Bool {
    var target = stat()
    guard stat(path, &target) == 0 else { return false }
    return files.contains { file in
      var other = stat()
      return stat(file, &other) == 0 && other.st_dev == target.st_dev
        && other.st_ino == target.st_ino
    }
  }

  private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// The C library's `close`, which `SQLiteStorage.close()` hides inside the type.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
