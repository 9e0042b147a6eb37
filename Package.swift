// swift-tools-version: 6.1
import PackageDescription

/// `make fuzz` builds with STANDUPS_FUZZ=1 (in .build, beside the rest): the project's own
/// modules are then instrumented for libFuzzer and AddressSanitizer — not the packages they use,
/// nor their macros — and the fuzz targets over the wire protocol and the HTTP path exist
/// (`Fuzz/Targets`). The JSON parser and JSON Patch have a package of their own (`Fuzz/`).
let fuzzing = Context.environment["STANDUPS_FUZZ"] == "1"
let fuzzSettings: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []

/// Settings every target shares.
let swiftSettings: [SwiftSetting] =
  [
    // Swift 6 language mode: strict concurrency checking is an error, not a warning.
    .swiftLanguageMode(.v6),
    // Imports say exactly which module a member comes from.
    .enableUpcomingFeature("MemberImportVisibility"),
    // Release builds specialize the store runtime's generic reducers (`Scope`, `ifLet`,
    // `onChange`, `Effect`) for the features that use them, across module boundaries:
    // without it every tick looked up generic metadata and key paths at run time.
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
  ] + fuzzSettings

let package = Package(
  name: "standups",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "standups-server", targets: ["standups-server"]),
    .executable(name: "standups-bench", targets: ["standups-bench"]),
    .executable(name: "standups-send-floor", targets: ["standups-send-floor"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    // HMAC-SHA256 for sessions and invites, SHA-256 for bot tokens at rest.
    .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    .package(url: "https://github.com/pointfreeco/swift-case-paths", from: "1.5.0"),
    .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.0.5"),
    .package(url: "https://github.com/pointfreeco/swift-concurrency-extras", from: "1.2.0"),
    .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.3.0"),
    // Only the Clocks and Foundation traits: no Combine schedulers on Linux.
    .package(
      url: "https://github.com/pointfreeco/swift-dependencies", from: "1.9.0",
      traits: ["Clocks", "Foundation"]
    ),
    .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.0"),
    .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.4.0"),
    // PostgreSQL for a cluster: storage, room ownership (advisory locks) and notices.
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
    // /metrics: counted through swift-metrics, written by swift-prometheus.
    .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
  ],
  targets: [
    .systemLibrary(
      name: "CLibWebSockets",
      pkgConfig: "libwebsockets",
      providers: [.apt(["libwebsockets-dev", "libssl-dev", "libcap-dev"])]
    ),
    .target(
      name: "WebSocketTransport",
      dependencies: [
        "CLibWebSockets",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "DequeModule", package: "swift-collections"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "StoreRuntime",
      dependencies: [
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "Clocks", package: "swift-clocks"),
        .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
        .product(name: "CustomDump", package: "swift-custom-dump"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "HeapModule", package: "swift-collections"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(name: "JSONPatch", swiftSettings: swiftSettings),
    .target(
      name: "StandupsFeatures",
      dependencies: [
        "StoreRuntime",
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "DependenciesMacros", package: "swift-dependencies"),
        .product(name: "HashTreeCollections", package: "swift-collections"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
      ],
      swiftSettings: swiftSettings
    ),
    // Where standups are kept: SQLite (one node) and PostgreSQL (a cluster), one contract.
    .target(
      name: "Storage",
      dependencies: [
        "StandupsFeatures",
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ],
      swiftSettings: swiftSettings
    ),
    // The wire protocol: messages, errors, action decoding, state encoders; no socket.
    .target(
      name: "StandupsWire",
      dependencies: [
        "JSONPatch", "StandupsFeatures", "StoreRuntime", "WebSocketTransport",
        .product(name: "HashTreeCollections", package: "swift-collections"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
      ],
      swiftSettings: swiftSettings
    ),
    // A room: one actor that owns its store, its versioned document, its peers and the saves
    // it awaits; the server says what a room is (`RoomFeature`) and where frames go (`Outlet`).
    .target(
      name: "RoomRuntime",
      dependencies: [
        "JSONPatch", "StandupsFeatures", "StandupsWire", "StoreRuntime", "WebSocketTransport",
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "DequeModule", package: "swift-collections"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "StandupsServer",
      dependencies: [
        "RoomRuntime",
        "StandupsWire",
        "Storage",
        "JSONPatch",
        "StandupsFeatures",
        "StoreRuntime",
        "WebSocketTransport",
        .product(name: "Clocks", package: "swift-clocks"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "DequeModule", package: "swift-collections"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "HashTreeCollections", package: "swift-collections"),
        .product(name: "HeapModule", package: "swift-collections"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Prometheus", package: "swift-prometheus"),
      ],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "standups-server",
      dependencies: [
        "StandupsServer",
        "StandupsWire",
        "Storage",
        "StoreRuntime",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "standups-bench",
      dependencies: [
        "JSONPatch",
        "StandupsFeatures",
        "StandupsWire",
        "StandupsServer",
        "StoreRuntime",
        "WebSocketTransport",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "HashTreeCollections", package: "swift-collections"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
      ],
      swiftSettings: swiftSettings
    ),
    // The kernel's floor under the many-rooms benchmark: bare sends, in C (docs/BENCHMARKS.md).
    .executableTarget(name: "standups-send-floor"),
    // A bot that posts a note whenever a new speaker starts (docs/BOTS.md).
    .executableTarget(
      name: "speaker-bot",
      dependencies: [
        "JSONPatch",
        "WebSocketTransport",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "examples/SpeakerBot",
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "StoreRuntimeTests",
      dependencies: [
        "StoreRuntime", "Fixtures",
        // NB: without it, TestStore's failures never reach Swift Testing and tests pass.
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "Clocks", package: "swift-clocks"),
        .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
        .product(name: "CasePaths", package: "swift-case-paths"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(name: "JSONPatchTests", dependencies: ["JSONPatch"], swiftSettings: swiftSettings),
    .testTarget(
      name: "StandupsFeaturesTests",
      dependencies: [
        "StandupsFeatures", "StoreRuntime",
        .product(name: "HashTreeCollections", package: "swift-collections"),
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "Clocks", package: "swift-clocks"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "WebSocketTransportTests",
      dependencies: ["WebSocketTransport", "Fixtures"],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "StandupsWireTests",
      dependencies: [
        "StandupsWire", "StandupsFeatures", "StoreRuntime", "JSONPatch", "WebSocketTransport",
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
      ],
      swiftSettings: swiftSettings
    ),
    // What several test targets share (fixtures, a throwaway PostgreSQL database).
    .target(
      name: "Fixtures",
      dependencies: [
        "Storage", "StandupsFeatures",
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ],
      path: "Tests/Fixtures",
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "StorageTests",
      dependencies: [
        "Fixtures", "Storage", "StandupsFeatures",
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "RoomRuntimeTests",
      dependencies: [
        "Fixtures", "RoomRuntime", "StandupsWire", "StandupsFeatures", "StoreRuntime", "JSONPatch",
        "WebSocketTransport",
        // NB: without it, what the store runtime reports never reaches Swift Testing.
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "Clocks", package: "swift-clocks"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "HashTreeCollections", package: "swift-collections"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "StandupsServerTests",
      dependencies: [
        "Fixtures", "RoomRuntime", "StandupsServer", "StandupsWire", "Storage", "StandupsFeatures",
        "JSONPatch",
        "WebSocketTransport",
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "HashTreeCollections", package: "swift-collections"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ],
      swiftSettings: swiftSettings
    ),
  ]
)

/// A libFuzzer target in `Fuzz/Targets/<name>`; its entry point is `<name>_main`
/// (`Fuzz/Sources/FuzzDriver`).
func fuzzTarget(_ name: String, using dependencies: [Target.Dependency]) -> Target {
  .executableTarget(
    name: name, dependencies: ["FuzzDriver"] + dependencies, path: "Fuzz/Targets/\(name)",
    swiftSettings: swiftSettings + [.unsafeFlags(["-parse-as-library"])],
    linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address"])])
}

if fuzzing {
  package.targets += [
    .target(name: "FuzzDriver", path: "Fuzz/Sources/FuzzDriver"),
    fuzzTarget(
      "wire-fuzz",
      using: [
        "JSONPatch", "StandupsFeatures", "StandupsWire", "StoreRuntime", "WebSocketTransport",
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
      ]),
    fuzzTarget("http-fuzz", using: ["WebSocketTransport"]),
  ]
}
