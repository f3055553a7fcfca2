// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "NoHitterAlerts",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "nohit", targets: ["nohit"]),
        .executable(name: "nohit-bench", targets: ["NoHitBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // NoHitterKit, the apps' SDK (its own package; its tests run with `swift test` inside SDK/).
        .package(path: "SDK"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // Pure game engine: plays, game state, bids, what a source says about a game, the clubs by
        // season (Retrosheet's franchise history and MLB's ids, as data). Foundation only.
        .target(
            name: "Baseball",
            resources: [
                .copy("Teams/CurrentNames.csv"), .copy("Teams/Changes.csv"), .copy("Teams/MLBClubs.csv"),
            ]),
        // Wall-clock time, injected wherever code waits or reads the time (replays, tests).
        .target(name: "Clocks"),
        // Retrosheet event, team and roster files → plays and games; a past day's schedule.
        .target(name: "Retrosheet", dependencies: ["Baseball", "CZlib"]),
        // zlib, which Retrosheet's zip files need (inflate); the system's (zlib1g-dev).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // One C call for the fan-out benchmark: freed memory back to the system (glibc's
        // malloc_trim is not in the Swift overlay).
        .target(name: "CAllocator"),
        // Linux's epoll, for the SSE benchmark's clients.
        .target(name: "CEpoll", path: "Benchmarks/CEpoll"),
        // The game follower and its events, moments, preferences, the planner and message text. Pure.
        .target(name: "Alerts", dependencies: ["Baseball"]),
        // Sports-triggered deals: rules as data, their evaluation over final games (from the one
        // game follower), triggers, histories, and a Retrosheet season's deal games. Pure.
        .target(name: "Deals", dependencies: ["Alerts", "Baseball", "Retrosheet"]),
        // The scoreboard as pure values built from the game follower: the board, each game's
        // snapshot (line score, matchup, bids, pitcher lines), the game page and the widget's view.
        .target(name: "Scores", dependencies: ["Alerts", "Baseball"]),
        // Channels (APNs, Web Push, webhooks, console), their cryptography, and the retry policy.
        .target(
            name: "Delivery",
            dependencies: [
                "Baseball",
                "Alerts", "Clocks",
                .product(name: "NoHitterActivity", package: "SDK"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ]
        ),
        // `nohit fake-apns`: a local APNs and Web Push provider for tests, benchmarks and the demo.
        .target(
            name: "FakeProviders",
            dependencies: [
                "Alerts", "Clocks", .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                "Delivery",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The runtime: the game hub (one follower per game, its consumers), the replay source, the
        // publisher (planner fan-out into the outbox) and the dispatchers, as services.
        .target(
            name: "Pipeline",
            dependencies: [
                "Alerts", "Baseball", "Clocks", "Deals", "Delivery", "Retrosheet", "StatsAPI", "Storage",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The service's one JSON value: objects' members in order, a strict and bounded parser, a
        // compact writer. Keen's analytics and the Stats API's live feed both read and write it. Pure.
        .target(name: "JSON"),
        // Keen-compatible analytics: events checked and flattened as Keen's rules say, their compact
        // binary form, queries read from Keen's parameters, planned and run over any event source. Pure.
        .target(name: "Analytics", dependencies: ["JSON"]),
        // Store protocols and their implementations: SQLite (the default: migrations, WAL) and
        // PostgreSQL (several instances: leases, the shared game log, LISTEN/NOTIFY).
        .target(
            name: "Storage",
            dependencies: [
                "JSON", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                "Alerts", "Analytics", "Baseball", "Clocks", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // PostgresNIO's pool refusing new connections (its circuit breaker) is a fault waited out.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MLB's Stats API: wire types, JSON Patch, GUMBO → game updates, the poller and its source
        // service.
        .target(
            name: "StatsAPI",
            dependencies: [
                "JSON", "Baseball", "Clocks",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // `nohit fake-statsapi`: Retrosheet games served as the Stats API would show them.
        .target(
            name: "FakeStatsAPI",
            dependencies: [
                "JSON", "Baseball", "Clocks", "Retrosheet", "StatsAPI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // `nohit serve`: the JSON API, the live stream and the live board, on Hummingbird.
        .target(
            name: "Server",
            dependencies: [
                "JSON", .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                "Alerts", "Analytics", "Baseball", "Clocks", "Deals", "Delivery", "Pipeline", "Retrosheet",
                "Scores", "Storage",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The web UI: HTML, CSS and plain JavaScript, served as they are.
            resources: [.copy("Public"), .copy("OpenAPI")]
        ),
        // The composition root: the whole service built from one settings value (the store, the
        // source, the hub and its consumers, delivery, the HTTP API, the services beside them), as
        // `nohit serve`, `nohit replay`, the tests and the benchmarks start it.
        .target(
            name: "Assembly",
            dependencies: [
                "JSON", "Alerts", "Baseball", "Clocks", "Deals", "Delivery", "Pipeline", "Retrosheet", "Scores",
                "Server", "StatsAPI", "Storage",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // `nohit`: the command line (serve, replay, devices, analytics, the Retrosheet tools, the fakes):
        // each command reads and checks its settings, and the service commands call the assembly.
        .executableTarget(
            name: "nohit",
            dependencies: [
                "Analytics",
                "Assembly",
                "Server",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                "Alerts",
                "Clocks",
                "Baseball",
                "Deals",
                "Delivery",
                "FakeProviders",
                "FakeStatsAPI",
                "JSON",
                "Pipeline",
                "Retrosheet",
                "Scores",
                "StatsAPI",
                "Storage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // `nohit-bench`: the benchmarks (`Benchmarks/run`), the service's built by the assembly.
        .executableTarget(
            name: "NoHitBench",
            dependencies: [
                "JSON", "Alerts", "Analytics",
                "Assembly",
                "Deals",
                "Clocks",
                "FakeStatsAPI",
                "StatsAPI",
                "CAllocator",
                "CEpoll",
                "FakeProviders",
                "Baseball",
                "Delivery",
                "Pipeline",
                "Retrosheet",
                "Storage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "Server",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Benchmarks/NoHitBench"
        ),
        // Paths to the shared real data, for tests only.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "AnalyticsTests", dependencies: ["JSON", "Analytics", "TestSupport"]),
        .testTarget(name: "BaseballTests", dependencies: ["Baseball", "Retrosheet", "TestSupport"]),
        .testTarget(name: "RetrosheetTests", dependencies: ["Baseball", "Retrosheet", "TestSupport"]),
        .testTarget(name: "AlertsTests", dependencies: ["Alerts", "Baseball", "Retrosheet", "TestSupport"]),
        .testTarget(
            name: "ScoresTests",
            dependencies: ["Scores", "Alerts", "Baseball", "Pipeline", "Retrosheet", "TestSupport"]),
        .testTarget(name: "DealsTests", dependencies: ["Deals", "Alerts", "Baseball", "Retrosheet", "TestSupport"]),
        .testTarget(
            name: "DeliveryTests",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "NIOCore", package: "swift-nio"),
                "Delivery", "Alerts", "Clocks", "FakeProviders", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "StatsAPITests",
            dependencies: [
                "JSON", "StatsAPI", "FakeStatsAPI", "Alerts", "Baseball", "Clocks", "Delivery", "Pipeline",
                "Retrosheet", "Scores",
                "Storage", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "JSON", "Analytics", "Clocks",
                "Storage", "Alerts", "Baseball", "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
            ]
        ),
        .testTarget(
            name: "PipelineTests",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                "Pipeline", "Alerts", "Baseball", "Clocks", "Deals", "Delivery", "FakeProviders", "Retrosheet",
                "Storage", "TestSupport",
                .product(name: "NoHitterActivity", package: "SDK"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "JSON", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                "Server", "Alerts", "Analytics", "Baseball", "Clocks", "Deals", "Delivery", "Pipeline", "Retrosheet",
                "Scores", "StatsAPI", "Storage",
                "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NoHitterActivity", package: "SDK"),
            ]
        ),
        .testTarget(
            name: "AssemblyTests",
            dependencies: [
                "Assembly", "Alerts", "Baseball", "Clocks", "Deals", "Pipeline", "Scores", "Storage", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "NoHitCLITests",
            dependencies: [
                "Assembly",
                "Delivery", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "nohit", "Alerts", "Baseball", "Clocks", "FakeProviders", "FakeStatsAPI", "Pipeline", "Retrosheet",
                "Storage",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NoHitterKit", package: "SDK"), .product(name: "NoHitterActivity", package: "SDK"),
            ]
        ),
    ]
)
