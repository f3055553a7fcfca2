import Foundation
import TestSupport
import Testing

/// The web UI in a real browser: headless Chromium (Debian's `chromium`) loads the page of
/// `nohit serve` during a fast replay of 2020-08-25, through the scripts in `Tests/Browser`.
/// Screenshots go to `.build/test-output/browser/`. Each test case starts a server and a browser of
/// its own; at most two browsers run at once, whichever of this suite and `BrowserPagesTests` their
/// tests are in (``Testing/Trait/ownThreadsAndABrowser``): as two serialized chains, one a suite,
/// the longer chain was the run's tail, each of its cases waiting 280-400 s for a turn of its own.
@Suite(.ownThreadsAndABrowser) struct BrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    static let output = TestData.packageRoot.appendingPathComponent(".build/test-output/browser")

    /// axe-core's script, unpacked from PyPI by `Tests/Browser/get-axe` (`.ci/run` calls it).
    static let axe: String? = {
        let path = TestData.packageRoot.appendingPathComponent(".build/axe/axe.min.js").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    /// The longest a browser script may run (the longest takes about 5 minutes on a loaded machine).
    static let watchdogSeconds: Double = 900

    /// Starts `nohit serve` replaying 2020-08-25 at `speed`, runs `Tests/Browser/<script>` with the
    /// page's address first, then `arguments`, and returns its exit status and what it printed.
    /// `statsAPI`: the day comes from `nohit fake-statsapi` replaying it at `speed`, followed by
    /// `serve --source statsapi` (MLB's live feed, pitch by pitch), not from `serve --replay`.
    static func probe(
        _ script: String, speed: Int, day: String = "2020-08-25", arguments: [String], serveArguments: [String] = [],
        statsAPI: Bool = false, fakeArguments: [String] = []
    ) throws -> (status: Int32, text: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var fake: Process?
        defer {
            fake?.terminate()
            fake?.waitUntilExit()
        }
        var source = ["--replay", day, "--speed", "\(speed)"]
        if statsAPI {
            let (process, address) = try Executable.start(
                "nohit",
                [
                    "fake-statsapi", "--replay", day, "--speed", "\(speed)", "--wait", "1", "--port", "0", "--data",
                    TestData.path("retrosheet"),
                ] + fakeArguments)
            fake = process
            source = ["--source", "statsapi", "--statsapi-url", address + "/", "--statsapi-date", day]
        }
        let serve =
            ["serve"] + source + [
                "--port", "0", "--data", TestData.path("retrosheet"), "--data-dir", directory.path,
            ] + serveArguments
        let (server, address) = try Executable.start("nohit", serve)
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        try #require(address.hasPrefix("http://"), "no address in the server's banner")
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments =
            ["python3", TestData.packageRoot.appendingPathComponent("Tests/Browser/\(script)").path, address + "/"]
            + arguments
        // A script that takes the server down and up again (app_shell.py) finds it here: its pid,
        // and its command with the port it got.
        let port = address.split(separator: ":").last.map(String.init) ?? "0"
        var environment = ProcessInfo.processInfo.environment
        environment["NOHIT_SERVER_PID"] = "\(server.processIdentifier)"
        environment["NOHIT_SERVER_COMMAND"] = String(
            decoding: try JSONSerialization.data(
                withJSONObject: [Executable.productsDirectory.appendingPathComponent("nohit").path]
                    + serve.map { $0 == "0" ? port : $0 }), as: UTF8.self)
        // Each line as it is printed: a script stopped from outside still says how far it got.
        environment["PYTHONUNBUFFERED"] = "1"
        probe.environment = environment
        let report = Pipe()
        probe.standardOutput = report
        try probe.run()
        // No script runs for ever: each DevTools command has its own bound (`Tests/Browser/cdp.py`),
        // and past `watchdog` seconds the script is stopped (SIGTERM: it closes its browser and says
        // so), so that a hang fails this test, not the whole run at CI's limit.
        let watchdog = DispatchWorkItem { [probe] in
            if probe.isRunning {
                print("\(script): still running after \(Int(Self.watchdogSeconds)) s; stopping it")
                probe.terminate()
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.watchdogSeconds, execute: watchdog)
        let text = String(decoding: report.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        watchdog.cancel()
        print(text)
        return (probe.terminationStatus, text)
    }

    /// The page as an installable app with the right data notice, and honest about a lost
    /// connection: cut off, then live again with its games reloaded (`Tests/Browser/app_shell.py`).
    @Test(.enabled(if: chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func theAppIsInstallableAndTellsTheTruthWhenCutOff() async throws {
        let (status, text) = try await Executable.onThread {
            try Self.probe("app_shell.py", speed: 300, arguments: [Self.output.path, "60"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("app shell: every check held"))
    }

    /// Live updates change only what changed: with Live open during a replay, a focused link keeps
    /// focus through 30 s of updates, Tab moves through the page in order, and the screen-reader
    /// live region announces the no-hitter when it completes (`Tests/Browser/keyboard_focus.py`).
    @Test(.enabled(if: chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func focusSurvivesLiveUpdatesAndTheNoHitterIsAnnounced() async throws {
        let (status, text) = try await Executable.onThread {
            try Self.probe("keyboard_focus.py", speed: 300, arguments: [Self.output.path, "150"])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("keyboard focus: every check held"))
        for name in ["keyboard-focus-kept.png", "keyboard-focus-announced.png"] {
            #expect(FileManager.default.fileExists(atPath: Self.output.appendingPathComponent(name).path), "\(name)")
        }
    }

    /// The page records its own views, taps and an alert opened from a push into its analytics
    /// project, and the operator's Metrics page charts them (`Tests/Browser/metrics_page.py`).
    @Test(.enabled(if: chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func thePageCountsItsOwnUseAndTheMetricsPageChartsIt() async throws {
        let token = "metrics-test-\(UUID().uuidString)"
        let (status, text) = try await Executable.onThread {
            try Self.probe(
                "metrics_page.py", speed: 60, arguments: [Self.output.path, token, "60", Self.axe ?? ""],
                serveArguments: ["--admin-token", token])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("metrics page: every check held"))
    }

    /// Giolito's attempt card appears and then advances through the live stream, and becomes the
    /// celebration card (200 times real speed: his 4th inning comes about 45 s in, his last out
    /// about 100 s in: room for a browser slow to start on a loaded machine, which at 300 times
    /// met the card already at its 27th out; it may be among the first browsers of the run).
    @Test(.enabled(if: chromium != nil, "needs chromium (apt-get install -y chromium); .ci/run installs it"))
    func attemptCardAppearsAndAdvancesThroughTheLiveStream() async throws {
        // With Retrosheet's seasons beside the checkout (the folders of 2012, 2015, 2019 and 2020:
        // four seasons read from the first bid of the night, in a debug build on a loaded machine,
        // before Giolito's last out at 200 times real speed, about 100 s in: a completed alert waits
        // at most 15 s for its history), the celebration card names the White Sox's previous
        // no-hitter; with the bundled 2020 season alone, only its place in 2020.
        let folders = TestData.sharedRoot.appendingPathComponent("retrosheet").path
        let shared = TestData.isSharedAvailable
        let meaning =
            shared
            ? "The White Sox's previous no-hitter in the seasons known was Philip Humber's perfect game on April 21, 2012; the 1st of 2020."
            : "The White Sox's first no-hitter in the seasons known (in 2020); the 1st of 2020."
        let (status, text) = try await Executable.onThread {
            try Self.probe(
                "live_page.py", speed: 200, arguments: ["CHA202008250-home", Self.output.path, "220", meaning],
                serveArguments: shared ? ["--data", folders] : [])
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("card advanced through the stream"))
        #expect(
            FileManager.default.fileExists(atPath: Self.output.appendingPathComponent("live-card-advanced.png").path))
    }
}
