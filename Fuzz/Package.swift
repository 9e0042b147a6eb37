// swift-tools-version: 6.1
// libFuzzer targets over the JSON parser and JSON Patch (`make fuzz`). A package of its own,
// so that the sanitizer flags reach only this code: `Sources/JSONPatch` is a link to the
// server's module. Build: `swift build --scratch-path ../.build-fuzz
// -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library` (the Makefile does it).
import PackageDescription

let package = Package(
  name: "standups-fuzz",
  targets: [
    .target(name: "JSONPatch", swiftSettings: [.swiftLanguageMode(.v6)]),
    .target(name: "FuzzDriver"),
    .executableTarget(name: "json-fuzz", dependencies: ["FuzzDriver", "JSONPatch"]),
    .executableTarget(name: "patch-fuzz", dependencies: ["FuzzDriver", "JSONPatch"]),
  ]
)
