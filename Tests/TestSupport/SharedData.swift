import Foundation

/// Where the real data beside the project lives: `../shared/data` from the package root, or
/// `$NOHIT_SHARED_DATA`.
package enum SharedData {
    package static let packageRoot: URL = {
        // Tests/TestSupport/SharedData.swift → the package root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    package static let root: URL = {
        if let override = ProcessInfo.processInfo.environment["NOHIT_SHARED_DATA"] {
            return URL(fileURLWithPath: override)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
    }()

    /// A path under the shared data directory.
    package static func path(_ relative: String) -> String {
        root.appendingPathComponent(relative).path
    }

    /// The bytes of a shared file, decompressing `.gz` with `gzip -dc`.
    package static func bytes(_ relative: String) throws -> [UInt8] {
        let path = path(relative)
        guard path.hasSuffix(".gz") else {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path])
        }
        return Array(data)
    }

    /// The lines of a shared text file (decompressed if needed), without line terminators.
    package static func lines(_ relative: String) throws -> [Substring] {
        let text = String(decoding: try bytes(relative), as: UTF8.self)
        return text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)
    }
}
