import Alerts
import Baseball
import FakeStatsAPI
import Foundation
import Pipeline
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `nohit fake-statsapi --replay 2020-08-25` and `nohit serve --source statsapi` against it, as two
/// processes over HTTP: the server ends the day with exactly the moments the Retrosheet replay of
/// the same day produces.
@Suite(.serialized) struct StatsAPIEndToEndTests {
    /// Starts `nohit arguments...` and returns it with the address its banner names.
    static func start(_ arguments: [String]) throws -> (Process, String) {
        let process = Process()
        process.executableURL = Executable.productsDirectory.appendingPathComponent("nohit")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var banner = ""
        while !banner.contains(" on http://") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        errors.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        // "... on http://127.0.0.1:PORT (...)": the address after " on ".
        let after = banner.range(of: " on http://").map { banner[banner.index($0.lowerBound, offsetBy: 4)...] } ?? ""
        let address = after.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
        return (process, address.hasSuffix("/") ? String(address.dropLast()) : address)
    }

    static func get(_ url: String) async throws -> Any {
        let (data, _) = try await URLSession.shared.data(from: URL(string: url)!)
        return try JSONSerialization.jsonObject(with: data)
    }

    @Test func statsAPISourceGivesTheRetrosheetDaysMoments() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("statsapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = SharedData.path("retrosheet")

        // The day at 1,500 times real speed (about 20 s), feeds asking for a poll every second.
        let (fake, fakeAddress) = try Self.start([
            "fake-statsapi", "--replay", "2020-08-25", "--speed", "1500", "--wait", "1", "--port", "0", "--data", data,
        ])
        defer {
            fake.terminate()
            fake.waitUntilExit()
        }
        #expect(fakeAddress.hasSuffix("/api"), "\(fakeAddress)")
        let (server, address) = try Self.start([
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
        var steps = DayReplay(games: day).steps()
        var expected: [String] = []
        while let step = steps.next() { expected += step.moments.map(\.id) }
        // A pitching change's id ends with the pitcher, named as the fake Stats API names him.
        let people = GumboWriter.People(games: day)
        expected = expected.map { id in
            guard let last = id.split(separator: "-").last, let player = PlayerID(String(last)), people.id(player) != 0
            else { return id }
            return String(id.dropLast(last.count)) + "\(people.statsAPIPlayer(player))"
        }
        #expect(ids.count == expected.count, "a moment missing or repeated")
        #expect(Set(ids) == Set(expected))
        #expect(ids.contains("CHA202008250-home-completed-27"))
    }
}
