import ArgumentParser
import Foundation

/// `standups-server` in a child process, on a free port, with its data in a temp folder.
final class ServerProcess {
  let process = Process()
  let port: Int

  init(binary: String) throws {
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID())")
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = [
      "--port", "0", "--data-dir", data.path, "--public-dir", "./public", "--log-level", "info",
      // The load comes from one address, and its drivers send as fast as acks return.
      "--max-connections-per-address", "20000", "--messages-per-second", "100000",
      "--creations-per-minute", "100000",
      // Its clients join by name; sign-in costs nothing per message, only per upgrade.
      "--open",
    ]
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    // The server announces its port on its first log line.
    var text = ""
    let handle = errors.fileHandleForReading
    while !text.contains("\n") {
      let chunk = handle.availableData
      guard !chunk.isEmpty else { break }
      text += String(decoding: chunk, as: UTF8.self)
    }
    guard let range = text.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression),
      let port = Int(text[range].split(separator: ":")[1])
    else { throw ValidationError("The server did not start: \(text)") }
    self.port = port
    // Keep reading, so that a chatty server never blocks on a full pipe.
    handle.readabilityHandler = { _ = $0.availableData }
  }

  var residentBytes: Int { ProcessStats.residentBytes(process.processIdentifier) }
  var cpuSeconds: Double { ProcessStats.cpuSeconds(process.processIdentifier) }
  var systemSeconds: Double { ProcessStats.cpuTimes(process.processIdentifier).system }
  var threadSeconds: [String: Double] { ProcessStats.threadSeconds(process.processIdentifier) }

  func stop() {
    process.interrupt()
    process.waitUntilExit()
  }
}

/// Debian's `libwebsockets-test-server` on a free port.
final class MirrorProcess {
  let process = Process()
  let port: Int

  init() throws {
    port = try Self.freePort()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/libwebsockets-test-server")
    process.arguments = ["--port=\(port)"]
    process.standardError = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    Thread.sleep(forTimeInterval: 0.5)
  }

  static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  var residentBytes: Int { ProcessStats.residentBytes(process.processIdentifier) }
  var cpuSeconds: Double { ProcessStats.cpuSeconds(process.processIdentifier) }
  var systemSeconds: Double { ProcessStats.cpuTimes(process.processIdentifier).system }

  /// The test server stops on SIGINT (it ignores SIGTERM); SIGKILL if it lingers.
  func stop() {
    process.interrupt()
    for _ in 0..<100 where process.isRunning { Thread.sleep(forTimeInterval: 0.02) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
  }
}

/// Resident memory and CPU time of a process, from /proc.
enum ProcessStats {
  static func residentBytes(_ pid: Int32) -> Int {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
  }

  static func cpuSeconds(_ pid: Int32) -> Double {
    let times = cpuTimes(pid)
    return times.user + times.system
  }

  /// Each thread's exact run time so far (`/proc/PID/task/*/schedstat`), in seconds, summed
  /// by thread name (shards are named `shard-N`, the transport's thread `lws-service`).
  static func threadSeconds(_ pid: Int32) -> [String: Double] {
    let tasks = "/proc/\(pid)/task"
    var seconds: [String: Double] = [:]
    for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
      let name = (try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines)
      let stat = try? String(contentsOfFile: "\(tasks)/\(task)/schedstat", encoding: .utf8)
      guard let name, let nanoseconds = stat?.split(separator: " ").first.flatMap({ Double($0) })
      else { continue }
      seconds[name, default: 0] += nanoseconds / 1e9
    }
    return seconds
  }

  /// CPU seconds in user space and in the kernel (on loopback the kernel's part includes the
  /// receiving side's TCP work, which runs in the sender's context).
  static func cpuTimes(_ pid: Int32) -> (user: Double, system: Double) {
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
      return (0, 0)
    }
    let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (user / tick, system / tick)
  }
}

/// The bench's own process, which drives every scenario.
enum BenchProcess {
  /// Waits (up to `limit`) until this process uses less than a tenth of a core over half a
  /// second: work left from the previous scenario (10 000 connections closing, their
  /// recorders freed) competes with the next one's server for the two cores and made the
  /// fan-out after the many-rooms run measure a quarter dearer than alone.
  static func waitUntilQuiet(limit: Duration = .seconds(60)) async throws {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
      let before = ProcessStats.cpuSeconds(getpid())
      try await Task.sleep(for: .milliseconds(500))
      if ProcessStats.cpuSeconds(getpid()) - before < 0.05 { return }
    }
    progress("  (the bench process was still busy after \(limit); going on)")
  }
}
