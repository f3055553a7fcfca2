import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `deploy/install.sh` lays nohit out as production runs it (and as the container recipe,
/// `deploy/container/Containerfile`, copies it): the installed copy, started in its own folder far
/// from the source tree, serves the web app, the bundled day and the shipped deal rules.
@Suite(.ownThreads) struct InstallTests {
    @Test func theInstalledCopyRunsOnItsOwn() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-install-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let prefix = scratch.appendingPathComponent("opt/nohit")
        let script = TestData.packageRoot.appendingPathComponent("deploy/install.sh").path
        let installed = try Executable.run(
            "/bin/sh", [script, "--from", Executable.productsDirectory.path, prefix.path])
        #expect(installed.status == 0, "\(installed.standardError)")
        #expect(installed.standardOutput.contains("installed nohit"), "\(installed.standardOutput)")
        // Every resource bundle the build made is beside the installed binary (the binary would
        // otherwise fall back to the build folder's, which a container or server does not have).
        let files = FileManager.default
        let built = Set(
            try files.contentsOfDirectory(atPath: Executable.productsDirectory.path).filter {
                $0.hasSuffix(".resources")
            })
        #expect(!built.isEmpty)
        #expect(Set(try files.contentsOfDirectory(atPath: prefix.path).filter { $0.hasSuffix(".resources") }) == built)
        #expect(files.fileExists(atPath: prefix.appendingPathComponent("Data/deals/rules.json").path))
        #expect(files.fileExists(atPath: prefix.appendingPathComponent("Data/retrosheet/2020").path))

        // A bad call says what is wrong.
        let missing = try Executable.run("/bin/sh", [script, "--from", scratch.path, prefix.path])
        #expect(missing.status == 1 && missing.standardError.contains("no nohit in"), "\(missing.standardError)")

        let (output, server) = try Executable.startCollecting(
            prefix.appendingPathComponent("nohit").path,
            [
                "serve", "--date", "2020-08-25", "--speed", "0", "--port", "0", "--data-dir",
                scratch.appendingPathComponent("data").path,
            ],
            until: "in a browser", keepRunning: true, in: prefix)
        let process = try #require(server, "\(output)")
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let address = try #require(output.firstMatch(of: /http:\/\/127\.0\.0\.1:\d+/).map { String($0.output) })
        func get(_ path: String) async throws -> (Int, String) {
            let (data, response) = try await URLSession.shared.data(from: URL(string: address + path)!)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }
        let (page, html) = try await get("/")
        #expect(page == 200 && html.contains("<html"), "\(html.prefix(200))")
        let (deals, rules) = try await get("/api/deals/today")
        #expect(deals == 200 && rules.contains("\"rule\""), "\(rules.prefix(300))")
        // The bundled day: its games come in as the replay runs.
        var games = ""
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(60) {
            games = try await get("/api/games").1
            if games.contains("CHA202008250") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(games.contains("CHA202008250"), "\(games.prefix(300))")
    }
}
