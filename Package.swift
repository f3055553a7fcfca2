// swift-tools-version:6.2
import PackageDescription

/// The engine's small generic value types (`PerBase`, `PerSide`) are used across modules on the
/// replay hot path; full cross-module optimisation lets callers specialise and inline them.
let hotPath: [SwiftSetting] = []

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
        .target(name: "Baseball", swiftSettings: hotPath),
        // Retrosheet event, team and roster files → plays and games.
        .target(name: "Retrosheet", dependencies: ["Baseball"], swiftSettings: hotPath),
        .executableTarget(
            name: "nohit",
            dependencies: [
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
        .testTarget(name: "NoHitCLITests", dependencies: ["nohit", "Retrosheet", "TestSupport"]),
    ]
)
