import Alerts
import FakeStatsAPI
import Foundation
import Pipeline
import Retrosheet
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `nohit fake-statsapi --replay 2020-08-25` and `nohit serve --source statsapi` against it, as two
/// processes over HTTP: the server ends the day with exactly the moments the Retrosheet replay of
/// the same day produces.
@Suite(.serialized, .ownThreads) struct StatsAPIEndToEndTests {
    static func get(_ url: String) async throws -> Any {
        let (data, _) = try await URLSession.shared.data(from: URL(string: url)!)
        return try JSONSerialization.jsonObject(with: data)
    }

    /// GET `url`: its status and JSON object.
    static func status(_ url: String) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: url)!)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let (data, response) = try await URLSession.shared.data(for: request)
        return (
            (response as? HTTPURLResponse)?.statusCode ?? 0,
            try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        )
    }

    static func send(_ method: String, _ url: String, body: String? = nil) async throws -> Int {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// `/readyz` follows the Stats API: ready while it answers, degraded (503, the source named
    /// with its reason) once a round of requests fails, ready again when it answers once more;
    /// `/healthz` stays ok throughout. The fake's feeds ask for a poll every second.
    @Test func readinessFollowsTheStatsAPI() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readyz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = TestData.path("retrosheet")
        let (fake, fakeAddress) = try Executable.start(
            "nohit",
            ["fake-statsapi", "--date", "2020-08-25", "--speed", "60", "--wait", "1", "--port", "0", "--data", data])
        defer {
            fake.terminate()
            fake.waitUntilExit()
        }
        let (server, address) = try Executable.start(
            "nohit",
            [
                "serve", "--source", "statsapi", "--statsapi-url", fakeAddress + "/", "--statsapi-date", "2020-08-25",
                "--port", "0", "--data-dir", directory.path, "--data", data,
            ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        /// Asks `/readyz` until `wanted` (each answer must be 200 ready or 503 degraded), for up to
        /// two minutes (the poller's backoff after failures starts at 10 s, with jitter).
        func readiness(until wanted: Int) async throws -> (answer: [String: Any], seconds: Double) {
            let started = ContinuousClock.now
            while ContinuousClock.now - started < .seconds(120) {
                let (status, answer) = try await Self.status(address + "/readyz")
                #expect(
                    [200, 503].contains(status) && answer["status"] as? String == (status == 200 ? "ready" : "degraded")
                )
                if status == wanted {
                    let elapsed = ContinuousClock.now - started
                    return (answer, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("/readyz never answered \(wanted)")
            return ([:], .infinity)
        }
        let ready = try await readiness(until: 200)
        let source = try #require((ready.answer["checks"] as? [String: Any])?["source"] as? [String: Any])
        #expect(source["kind"] as? String == "statsapi")
        #expect(((source["requests"] as? [String: Int])?["ok"] ?? 0) > 0)
        // Every request fails until the faults are dropped.
        #expect(
            try await Self.send(
                "POST", fakeAddress.replacing("/api", with: "") + "/faults",
                body: #"{"kind": "server-error", "count": 100000}"#)
                == 202)
        let degraded = try await readiness(until: 503)
        print("readyz: degraded \(String(format: "%.1f", degraded.seconds)) s after the fake stopped answering")
        #expect(degraded.answer["degraded"] as? [String] == ["source"])
        let reason =
            ((degraded.answer["checks"] as? [String: Any])?["source"] as? [String: Any])?["reason"] as? String ?? ""
        #expect(reason.contains("the Stats API did not answer the last"), "\(reason)")
        #expect(reason.contains("HTTP 500 on v1"), "\(reason)")
        let (health, _) = try await Self.status(address + "/healthz")
        #expect(health == 200)
        #expect(try await Self.send("DELETE", fakeAddress.replacing("/api", with: "") + "/faults") == 204)
        let again = try await readiness(until: 200)
        print("readyz: ready again \(String(format: "%.1f", again.seconds)) s after the fake answered again")
        let metrics = try await Self.text(address + "/metrics")
        #expect(metrics.contains("nohit_source_ready 1"))
        #expect(metrics.firstMatch(of: /nohit_source_requests\{outcome="http"\} [1-9]/) != nil)
        // Each game's requests: the day's games were followed, and those asked while the fake
        // failed counted failures.
        let games = metrics.matches(of: /nohit_source_game_requests\{game_pk="\d+",game="([A-Z]{3}\d{9})"\} [1-9]/)
        #expect(games.count >= 1, "\(metrics.split(separator: "\n").filter { $0.contains("source_game") })")
        #expect(metrics.firstMatch(of: /nohit_source_game_failures\{game_pk="\d+",game="[A-Z0-9]*"\} [1-9]/) != nil)
        #expect(
            metrics.firstMatch(
                of: /nohit_source_game_feed_timestamp_seconds\{game_pk="\d+",game="[A-Z0-9]+"\} 159\d{7}/) != nil)
    }

    static func text(_ url: String) async throws -> String {
        let (data, _) = try await URLSession.shared.data(from: URL(string: url)!)
        return String(decoding: data, as: UTF8.self)
    }

    @Test func statsAPISourceGivesTheRetrosheetDaysMoments() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("statsapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = TestData.path("retrosheet")

        // The day at 1,500 times real speed (about 20 s), feeds asking for a poll every second.
        let (fake, fakeAddress) = try Executable.start(
            "nohit",
            [
                "fake-statsapi", "--replay", "2020-08-25", "--speed", "1500", "--wait", "1", "--port", "0", "--data",
                data,
            ])
        defer {
            fake.terminate()
            fake.waitUntilExit()
        }
        #expect(fakeAddress.hasSuffix("/api"), "\(fakeAddress)")
        let (server, address) = try Executable.start(
            "nohit",
            [
                "serve", "--source", "statsapi", "--statsapi-url", fakeAddress + "/", "--statsapi-date", "2020-08-25",
                "--port", "0", "--data-dir", directory.path, "--data", data,
            ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }

        // Until every game is over on the server's board.
        var games: [[String: Any]] = []
        for _ in 0..<180 {
            games = try await Self.get(address + "/api/games") as? [[String: Any]] ?? []
            if games.count == 16 && games.allSatisfy({ $0["status"] as? String == "final" }) { break }
            try await Task.sleep(for: .seconds(1))
        }
        #expect(games.count == 16)
        #expect(games.allSatisfy { $0["status"] as? String == "final" })
        let moments = try await Self.get(address + "/api/moments?limit=200") as? [[String: Any]] ?? []
        let ids = moments.compactMap { $0["id"] as? String }

        let day = try ReplaySchedule.games(on: "2020-08-25", data: [data])
        var expected = ReplayTimeline(games: day).moments(everyOut: true).map(\.moment.id)
        // A pitching change's id ends with the pitcher, named as the fake Stats API names him.
        expected = expected.map(GumboWriter.People(games: day).statsAPIMomentID)
        #expect(ids.count == expected.count, "a moment missing or repeated")
        #expect(Set(ids) == Set(expected))
        #expect(ids.contains("CHA202008250-home-completed-27"))
    }
}
