import Foundation

/// Where the data nohit ships (`Data/`: the bundled 2020 season, the deal rules, the odds table)
/// is found: under the working directory, else beside the executable (an installed nohit run from
/// anywhere, `/opt/nohit/Data`), else in the source tree it was built from (`swift run`).
package enum ShippedData {
    /// The first place `relative` (as `Data/odds/bid-odds.json`) exists; the working directory's
    /// when none does (for the message that says it is missing).
    package static func path(_ relative: String) -> String {
        let places = [
            relative,
            executableDirectory.map { ($0 as NSString).appendingPathComponent(relative) },
            (sourceRoot as NSString).appendingPathComponent(relative),
        ].compactMap { $0 }
        return places.first { FileManager.default.fileExists(atPath: $0) } ?? relative
    }

    /// The directory of the running executable, its symbolic links resolved.
    static let executableDirectory: String? = {
        #if os(Linux)
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
            guard let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() else { return nil }
        #endif
        return executable.deletingLastPathComponent().path
    }()

    /// The package's root, from this file's place in it (Sources/Retrosheet/ShippedData.swift).
    static let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
}
