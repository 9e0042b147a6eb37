import Foundation

/// The many-rooms and keepalive scenarios again from a client that shares no code with this
/// bench (Python's `websockets`, `Tests/Bench/*.py`).
struct IndependentResult {
  /// Each script's Markdown table.
  var manyRooms: String
  var idle: String

  /// The server's CPU in % of one core, and the client-side p99 lateness in ms.
  var manyRoomsCPU: Double? { Self.cells(manyRooms)?[3].leadingNumber }
  var manyRoomsP99: Double? {
    Self.cells(manyRooms)?[5].split(separator: "/").last?.trimmingCharacters(in: .whitespaces)
      .leadingNumber
  }
  /// The cells of a table's last row.
  static func cells(_ table: String) -> [String]? {
    guard let row = table.split(separator: "\n").last(where: { $0.hasPrefix("| ") }) else {
      return nil
    }
    let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
    return cells.count >= 6 ? cells : nil
  }
}

enum Independent {
  static let python = ".venv/bin/python"

  /// Runs the two scripts one after the other; nil without the project's Python (`make
  /// .venv/bin/kosoku` installs it), or if one fails.
  static func run(
    binary: String, rooms: Int, peers: Int, manyRoomsSeconds: Int, idle sizes: [Int],
    keepaliveSeconds: Int
  ) -> IndependentResult? {
    guard FileManager.default.isExecutableFile(atPath: python) else {
      progress("independent client: no \(python) here; skipped")
      return nil
    }
    let scale = ["--rooms", "\(rooms)", "--peers", "\(peers)"]
    progress("independent client: \(rooms) × \(peers) ticking for \(manyRoomsSeconds) s")
    guard
      let manyRooms = script(
        "Tests/Bench/many_rooms.py",
        scale + ["--seconds", "\(manyRoomsSeconds)", "--server", binary])
    else { return nil }
    // NB: Python's client holds one descriptor per connection beside the server's: at most
    // 10 000 of the machine's 20 000.
    let idleSizes = sizes.map { min($0, 10_000) }
    progress("independent client: \(idleSizes) idle connections for \(keepaliveSeconds) s")
    guard
      let idle = script(
        "Tests/Bench/idle_keepalive.py",
        idleSizes.map(String.init) + ["--seconds", "\(keepaliveSeconds)", "--server", binary])
    else { return nil }
    return IndependentResult(manyRooms: manyRooms, idle: idle)
  }

  /// A script's standard output, or nil if it failed.
  private static func script(_ path: String, _ arguments: [String]) -> String? {
    output(of: python, [path] + arguments)
  }

  /// A program's standard output, trimmed, or nil if it failed.
  static func output(of executable: String, _ arguments: [String]) -> String? {
    let command = ([executable] + arguments).joined(separator: " ")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    do {
      try process.run()
    } catch {
      progress("  \(command) did not start: \(error)")
      return nil
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      progress("  \(command) failed with status \(process.terminationStatus)")
      return nil
    }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }

  static func report(_ result: IndependentResult?) -> String {
    guard let result else {
      return """
        ## The same, from an independent client

        Not run: the project's Python (`.venv/bin/python`, made by `make .venv/bin/kosoku`)
        was not there.

        """
    }
    return """
      ## The same, from an independent client

      Python's `websockets` (`Tests/Bench/many_rooms.py`, `Tests/Bench/idle_keepalive.py`),
      which shares no code with the bench, against the same release server; its lateness is
      read by one Python process and is the client's own.

      \(result.manyRooms)

      \(result.idle)

      """
  }
}

extension String {
  /// The number this text starts with ("15.7 %" → 15.7).
  var leadingNumber: Double? {
    Double(String(prefix { $0.isNumber || $0 == "." }))
  }
}
