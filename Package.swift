// swift-tools-version: 6.0
import PackageDescription

/// Storefront: a headless app server that runs a shop's ViewModels and speaks JSON-RPC 2.0 on stdio.
///
/// Layers point one way: the executable -> StorefrontServer -> ViewModelBinding -> JSONRPC -> JSON -> CJansson,
/// the executable -> JSONRPCTransport -> JSONRPC, ViewModelBinding -> ShopFeatures -> Shop <- ShopStore, and
/// Credentials -> CSodium.
let package = Package(
    name: "Storefront",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "storefront", targets: ["StorefrontCLI"]),
        .executable(name: "storefront-bench", targets: ["StorefrontBench"]),
        .executable(name: "storefront-fuzz", targets: ["StorefrontFuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Already dependencies of postgres-nio; named for TLS to the database (`sslmode`), and for running a
        // transaction's statements on its connection's event loop (NIOCore's `EventLoop`).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // C: jansson, with static inline adapters for the macros Swift cannot import.
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        // C: libsodium (Argon2id password hashing, SHA-256, random bytes), with adapters for its macros.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // The main dispatch queue as a pollable descriptor, for the stdio transport's poll() loop.
        .target(name: "CMainQueue"),
        // prctl, which Swift's Glibc module does not import.
        .target(name: "CProcessControl"),
        // SQLite's process-wide settings (the variadic sqlite3_config, which Swift cannot call).
        .target(name: "CSQLiteSettings", linkerSettings: [.linkedLibrary("sqlite3")]),
        // sync_file_range, which Swift's Glibc module does not import: a commit's log pages start for the disk at
        // once, so the sync the output waits for finds them written.
        .target(name: "CFileWriteback"),
        // SQL functions that fill and test a caller's set of rowids (a search's matches) inside SQLite.
        .target(name: "CSQLiteRowSets", linkerSettings: [.linkedLibrary("sqlite3")]),
        // One seeded random generator (SplitMix64) for the demo catalog, fault injection, fuzzing and tests.
        .target(name: "Randomness"),
        // The only module that touches json_t*.
        .target(name: "JSON", dependencies: ["CJansson"]),
        // JSON Schemas derived from Decodable types: the wire contract written once, as Swift types.
        .target(name: "JSONSchema", dependencies: ["JSON"]),
        // Passwords (Argon2id) and session tokens (stored as SHA-256 digests); the only code that calls libsodium.
        .target(name: "Credentials", dependencies: ["CSodium"]),
        // RFC 6902 JSON Patch and RFC 6901 JSON Pointer over JSON values.
        .target(name: "JSONPatch", dependencies: ["JSON"]),
        // JSON-RPC 2.0 messages, errors, dispatch, batches and cancellation; the outbox of framed output.
        // No I/O: the transport hands it message bodies and writes what its outbox holds.
        .target(name: "JSONRPC", dependencies: ["JSON", .product(name: "Logging", package: "swift-log")]),
        // JSON-RPC over a byte stream: the frame decoder, the stdio transport's state machine and its
        // poll() driver.
        .target(
            name: "JSONRPCTransport",
            dependencies: ["JSONRPC", "JSON", "CMainQueue", .product(name: "Logging", package: "swift-log")]
        ),
        // The shop's models, service interfaces and change feed. No I/O.
        // Services run on their caller's executor (the main actor) up to their database call, instead of
        // hopping to the global pool and back around it: each hop is a thread wake-up per request.
        .target(name: "Shop", swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]),
        // Live services over an embedded SQLite database, seeding and fault injection.
        .target(
            name: "ShopStore",
            dependencies: [
                "Shop", "Randomness", "Credentials", "CSQLiteSettings", "CSQLiteRowSets", "CFileWriteback", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
        ),
        // The same services over PostgreSQL, for many server processes on many hosts sharing one store and one
        // change feed (LISTEN/NOTIFY as its wake-up). Shares the engine-neutral parts of ShopStore.
        .target(
            name: "PostgresStore",
            dependencies: [
                "Shop", "ShopStore", "Credentials", "Randomness", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
        ),
        // The five ViewModels. Their async closures run where they are called (the main actor), so that
        // service calls reach the store in the order the actions came. JSON and JSONPatch: the cart's state
        // builds its own JSON form and its own patches (it changes on every cart change).
        .target(
            name: "ShopFeatures", dependencies: ["Shop", "JSON", "JSONPatch"],
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
        ),
        // ViewModels on the wire: open/close, actions, versioned JSON Patch state streaming.
        .target(
            name: "ViewModelBinding",
            dependencies: ["JSONRPC", "JSONPatch", "JSONSchema", "ShopFeatures", "Shop", "JSON"]
        ),
        // The composition root: one connection wired to every ViewModel over one set of services.
        .target(
            name: "StorefrontServer",
            dependencies: ["ViewModelBinding", "JSONRPC", "ShopFeatures", "Shop", "JSON", .product(name: "Logging", package: "swift-log")]
        ),
        // The `storefront` executable: argument parsing, the store and the stdio transport.
        .executableTarget(
            name: "StorefrontCLI",
            dependencies: [
                "StorefrontServer", "ViewModelBinding", "JSONRPC", "JSONRPCTransport", "ShopStore", "PostgresStore", "ShopFeatures", "Shop",
                "CProcessControl",
                "Credentials",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Benchmarks over real pipes; prints figures, asserts nothing.
        .executableTarget(
            name: "StorefrontBench",
            dependencies: [
                "JSON", "JSONPatch", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // GRDB: the storage floor of a durable write, with and without the change log (propagation).
                .product(name: "GRDB", package: "GRDB.swift"),
                // The analytics recorder, measured in process: what `record` costs its caller.
                "Shop", "ShopStore",
            ]
        ),
        // The fuzz harness: arbitrary bytes through framing, parsing and dispatch into the real server,
        // then checks of the output (one response per request, valid JSON-RPC, consistent patches).
        .target(
            name: "FuzzHarness",
            dependencies: [
                "StorefrontServer", "JSONRPC", "JSONRPCTransport", "JSON", "JSONPatch", "ShopStore", "Shop", "CMainQueue", "Randomness",
                "Credentials",
                .product(name: "Logging", package: "swift-log"), .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        // `storefront-fuzz`: the libFuzzer entry point over FuzzHarness when built by scripts/fuzz.sh
        // (-DFUZZING, -sanitize=fuzzer,address); otherwise a replayer of input files.
        .executableTarget(name: "StorefrontFuzz", dependencies: ["FuzzHarness"]),
        // The tests' shared wait for other tasks (a library of the test targets, never of a product).
        .target(name: "TestWaits", dependencies: [.product(name: "Clocks", package: "swift-clocks")], path: "Tests/TestWaits"),
        .testTarget(name: "CredentialsTests", dependencies: ["Credentials"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON", "JSONPatch", "JSONSchema", "Randomness"]),
        .testTarget(
            name: "JSONRPCTests",
            dependencies: ["JSONRPC", "JSON", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "JSONRPCTransportTests",
            dependencies: ["JSONRPCTransport", "JSONRPC", "JSON", "Randomness", "CMainQueue", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "ShopStoreTests",
            dependencies: [
                "ShopStore", "Shop", "Credentials", "Randomness", "TestWaits", "CFileWriteback", .product(name: "Clocks", package: "swift-clocks"),
                // GRDBSQLite: a raw connection that holds the write lock, as another process would.
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Against a throwaway PostgreSQL cluster (STOREFRONT_TEST_POSTGRES_URL; skipped, saying so, without one).
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: [
                "PostgresStore", "ShopStore", "Shop", .product(name: "PostgresNIO", package: "postgres-nio"),
                "TestWaits", .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        .testTarget(
            name: "ShopFeaturesTests",
            dependencies: ["ShopFeatures", "Shop", "Randomness", "TestWaits", .product(name: "Clocks", package: "swift-clocks")]
        ),
        .testTarget(
            name: "ViewModelBindingTests",
            dependencies: [
                "ViewModelBinding", "JSONRPC", "JSON", "JSONPatch", "JSONSchema", "ShopFeatures", "Shop", "Randomness",
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
        // GRDB: the durability tests read the database file the killed servers wrote.
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["JSON", "JSONPatch", "Randomness", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(name: "FuzzHarnessTests", dependencies: ["FuzzHarness", "JSON", "JSONRPC"]),
        // The committed protocol/ folder against what the code derives.
        .testTarget(name: "StorefrontServerTests", dependencies: ["StorefrontServer", "JSON"]),
    ]
)
