import Foundation
import TestSupport
import Testing

/// The web UI in a real browser: headless Chromium (Debian's `chromium`) loads the page of
/// `nohit serve` during a fast replay of 2020-08-25, and Giolito's attempt card appears and then
/// advances through the live stream. Screenshots go to `.build/test-output/browser/`.
@Suite(.serialized) struct BrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    @Test(.enabled(if: chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func attemptCardAppearsAndAdvancesThroughTheLiveStream() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // The server, at 600 times real speed (Giolito's 4th inning comes about 15 s in).
        let server = Process()
        server.executableURL = Executable.productsDirectory.appendingPathComponent("nohit")
        server.arguments = [
            "serve", "--replay", "2020-08-25", "--speed", "600", "--port", "0", "--data",
            SharedData.path("retrosheet"), "--data-dir", directory.path,
        ]
        let errors = Pipe()
        server.standardError = errors
        server.standardOutput = FileHandle.nullDevice
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        // "nohit: serving 2020-08-25 (16 games) at speed 600.0 on http://127.0.0.1:PORT (...)"
        var banner = ""
        while !banner.contains(" on http://") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        // Keep draining the server's log so it never blocks on a full pipe.
        errors.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        let address = try #require(
            banner.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init), "no address in \(banner)")

        let output = SharedData.packageRoot.appendingPathComponent(".build/test-output/browser")
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = [
            "python3", SharedData.packageRoot.appendingPathComponent("Tests/Browser/live_page.py").path, address + "/",
            "CHA202008250-CHA", output.path, "150",
        ]
        let report = Pipe()
        probe.standardOutput = report
        try probe.run()
        let text = String(decoding: report.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        print(text)
        #expect(probe.terminationStatus == 0, "\(text)")
        #expect(text.contains("card advanced through the stream"))
        #expect(
            FileManager.default.fileExists(atPath: output.appendingPathComponent("live-card-advanced.png").path))
    }
}
