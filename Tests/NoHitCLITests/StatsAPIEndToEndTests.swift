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
        var expected = ReplayTimeline(games: day).moments().map(\.moment.id)
        // A pitching change's id ends with the pitcher, named as the fake Stats API names him.
        expected = expected.map(GumboWriter.People(games: day).statsAPIMomentID)
        #expect(ids.count == expected.count, "a moment missing or repeated")
        #expect(Set(ids) == Set(expected))
        #expect(ids.contains("CHA202008250-home-completed-27"))
    }
}
