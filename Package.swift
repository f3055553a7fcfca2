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
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        // Pure game engine: plays, game state, bids. Foundation only.
        .target(name: "Baseball"),
        // Retrosheet event, team and roster files → plays and games.
        .target(name: "Retrosheet", dependencies: ["Baseball", "CAllocator"]),
        // One C call: allocator tuning for batch reading (glibc's mallopt is not in the Swift overlay).
        .target(name: "CAllocator"),
        // Moments, preferences, the planner and message text. Pure.
        .target(name: "Alerts", dependencies: ["Baseball"]),
        .executableTarget(
            name: "nohit",
            dependencies: [
                "Alerts",
                "Baseball",
                "Retrosheet",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "NoHitBench",
            dependencies: [
                "Baseball",
                "Retrosheet",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/NoHitBench"
        ),
        // Paths to the shared real data, for tests only.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "BaseballTests", dependencies: ["Baseball", "Retrosheet", "TestSupport"]),
        .testTarget(name: "RetrosheetTests", dependencies: ["Baseball", "Retrosheet", "TestSupport"]),
        .testTarget(name: "AlertsTests", dependencies: ["Alerts", "Baseball", "Retrosheet", "TestSupport"]),
        .testTarget(name: "NoHitCLITests", dependencies: ["nohit", "Retrosheet", "TestSupport"]),
    ]
)
