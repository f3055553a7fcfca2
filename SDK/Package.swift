// swift-tools-version:6.0
import PackageDescription

// NoHitterKit: the No-Hitter Alerts client for apps (devices, preferences, deals) and a metrics
// recorder that speaks Keen's event API to a `nohit serve` or to Keen itself. Foundation only.
let package = Package(
    name: "NoHitterKit",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [.library(name: "NoHitterKit", targets: ["NoHitterKit"])],
    targets: [
        .target(name: "NoHitterKit"),
        .testTarget(name: "NoHitterKitTests", dependencies: ["NoHitterKit"]),
    ]
)
