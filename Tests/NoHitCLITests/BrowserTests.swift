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
        let (server, address) = try Executable.start(
            "nohit",
            [
                "serve", "--replay", "2020-08-25", "--speed", "600", "--port", "0", "--data",
                TestData.path("retrosheet"), "--data-dir", directory.path,
            ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        try #require(address.hasPrefix("http://"), "no address in the server's banner")

        let output = TestData.packageRoot.appendingPathComponent(".build/test-output/browser")
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = [
            "python3", TestData.packageRoot.appendingPathComponent("Tests/Browser/live_page.py").path, address + "/",
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

    /// The Scores page and a game page during a fast replay (300 times real speed: Giolito's game
    /// is under way with its no-hitter mark for about 20 seconds), desktop light and phone dark
    /// (`Tests/Browser/scores_page.py` says what it checks); screenshots in
    /// `.build/test-output/browser/`.
    @Test(.enabled(if: chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func scoresPageAndGamePageDuringAReplay() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (server, address) = try Executable.start(
            "nohit",
            [
                "serve", "--replay", "2020-08-25", "--speed", "300", "--port", "0", "--data",
                TestData.path("retrosheet"), "--data-dir", directory.path,
            ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        try #require(address.hasPrefix("http://"), "no address in the server's banner")
        let output = TestData.packageRoot.appendingPathComponent(".build/test-output/browser")
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = [
            "python3", TestData.packageRoot.appendingPathComponent("Tests/Browser/scores_page.py").path, address + "/",
            output.path, "150",
        ]
        let report = Pipe()
        probe.standardOutput = report
        try probe.run()
        let text = String(decoding: report.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        print(text)
        #expect(probe.terminationStatus == 0, "\(text)")
        #expect(text.contains("scores page: every check held"))
        for name in ["scores-desktop-light-live.png", "game-page-final.png", "scores-phone-dark-final.png"] {
            #expect(FileManager.default.fileExists(atPath: output.appendingPathComponent(name).path), "\(name)")
        }
    }
}
