import Foundation
import Testing
import WebSocketTransport

/// Autobahn|Testsuite's fuzzing cases, driven by `kosoku` (PyPI), against an echo endpoint
/// that exists only in this test build.
@Suite("Autobahn conformance", .serialized)
struct AutobahnTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
  static var kosoku: String { root.appendingPathComponent(".venv/bin/kosoku").path }
  /// `make test` installs kosoku and sets this, so there the run is never skipped.
  static var required: Bool {
    ProcessInfo.processInfo.environment["STANDUPS_REQUIRE_AUTOBAHN"] == "1"
  }

  @Test(
    .enabled(
      if: required || FileManager.default.fileExists(atPath: kosoku),
      "kosoku is not installed: run make test"))
  func fuzzingCasesPass() throws {
    let (server, _) = try startEchoServer(echoBinary: true)
    defer { server.shutdown() }
    let reports = FileManager.default.temporaryDirectory.appendingPathComponent(
      "autobahn-\(UUID())")
    let run = Process()
    run.executableURL = URL(fileURLWithPath: Self.kosoku)
    // NB: 2.10 and 2.11 (several pings in flight) are excluded by libwebsockets by design.
    run.arguments = [
      "-m", "fuzzingclient", "-i", "1.*", "-i", "2.*", "-i", "5.*", "-i", "6.*", "-i", "7.*",
      "-i", "9.1.1", "-x", "2.10", "-x", "2.11", "-o", reports.path, "127.0.0.1:\(server.port)",
    ]
    let output = Pipe()
    run.standardOutput = output
    run.standardError = output
    try run.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    run.waitUntilExit()
    #expect(run.terminationStatus == 0, "kosoku reported failures:\n\(text.suffix(4000))")

    // The report's summary: each case's behavior, counted.
    var behaviors: [String: Int] = [:]
    let files = try FileManager.default.contentsOfDirectory(atPath: reports.path)
    for file in files where file.contains("_case_") && file.hasSuffix(".json") {
      let data = try Data(contentsOf: reports.appendingPathComponent(file))
      let report = try JSONSerialization.jsonObject(with: data) as? [String: Any]
      behaviors[report?["behavior"] as? String ?? "missing", default: 0] += 1
    }
    let summary = behaviors.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
    print(
      "Autobahn: \(summary.joined(separator: ", ")) (of \(behaviors.values.reduce(0, +)) cases)")
    #expect(behaviors.values.reduce(0, +) == 228)
    #expect(
      Set(behaviors.keys).isSubset(of: ["OK", "NON-STRICT", "INFORMATIONAL"]), "\(behaviors)")
  }
}
