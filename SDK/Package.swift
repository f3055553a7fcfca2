// swift-tools-version:6.0
import PackageDescription

// NoHitterKit: the No-Hitter Alerts client for apps (devices, preferences, deals) and a metrics
// recorder that speaks Keen's event API to a `nohit serve` or to Keen itself. Foundation only.
let package = Package(
    name: "NoHitterKit",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NoHitterKit", targets: ["NoHitterKit"]),
        // The bid's Live Activity types, shared with the server (Foundation only).
        .library(name: "NoHitterActivity", targets: ["NoHitterActivity"]),
    ],
    targets: [
        .target(name: "NoHitterActivity"),
        .target(name: "NoHitterKit", dependencies: ["NoHitterActivity"]),
        .testTarget(name: "NoHitterKitTests", dependencies: ["NoHitterKit", "NoHitterActivity"]),
    ]
)
