import Alerts
import Baseball
import Foundation
import Hummingbird
import HummingbirdTesting
import Pipeline
import Synchronization
import TestSupport
import Testing

@testable import Server

/// `GET /api/scoreboard` on the replayed 2020-08-25 (the repository's own 2020 season, so it runs
/// on a bare clone), checked against the ground truth's table of that day's games.
@Suite struct ScoreboardTests {
    static func board(_ fixture: APIServerTests.Fixture, query: String = "?date=2020-08-25") async throws -> Scoreboard
    {
        let box = Mutex<Scoreboard?>(nil)
        try await fixture.test { client in
            try await client.execute(uri: "/api/scoreboard\(query)", method: .get) { response throws in
                #expect(response.status == .ok)
                // The product's own type, read back as a client would (snake_case keys, ISO dates).
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                decoder.dateDecodingStrategy = .iso8601
                box.withLock {
                    $0 = try? decoder.decode(Scoreboard.self, from: Data(response.body.readableBytesView))
                }
            }
        }
        return try #require(box.withLock { $0 })
    }

    @Test func theFinalBoardIsTheGroundTruthsDay() async throws {
        let fixture = try await APIServerTests.Fixture()
        defer { fixture.remove() }
        let board = try await Self.board(fixture)
        #expect(board.date == "2020-08-25")
        // The ground truth: a row per defence of each game of the day.
        var truth: [String: (away: Int, home: Int, hits: PerSide<Int>, innings: Int)] = [:]
        for row in try TestData.table("groundtruth/sides_2020.csv") where row["date"] == "2020-08-25" {
            let id = row["game_id"]!
            var entry = truth[id] ?? (Int(row["final_away"]!)!, Int(row["final_home"]!)!, .init(repeating: -1), 0)
            let hits = Int(row["hits_allowed"]!)!
            if row["defense_is_home"] == "1" { entry.hits.away = hits } else { entry.hits.home = hits }
            entry.innings = max(entry.innings, Int(row["max_inning"]!)!)
            truth[id] = entry
        }
        #expect(board.games.count == truth.count)
        #expect(truth.count >= 14)
        for game in board.games {
            let expected = try #require(truth[game.id], "\(game.id) is not in the ground truth")
            #expect(game.status == .final, "\(game.id)")
            #expect((game.away.runs, game.home.runs) == (expected.away, expected.home), "\(game.id)")
            #expect((game.away.hits, game.home.hits) == (expected.hits.away, expected.hits.home), "\(game.id)")
            for team in [game.away, game.home] {
                #expect(team.linescore.compactMap(Int.init).reduce(0, +) == team.runs, "\(game.id) \(team.code)")
                #expect(team.abbreviation == MLBTeam.retrosheet(team.code)?.abbreviation, "\(game.id) \(team.code)")
            }
            #expect(max(game.away.linescore.count, game.home.linescore.count) == expected.innings, "\(game.id)")
            let words = expected.innings == game.scheduledInnings ? "Final" : "F/\(expected.innings)"
            #expect(game.statusText == words, "\(game.id)")
            // A bottom half not batted: only when the home side led after the top.
            if game.home.linescore.last == "x" { #expect(game.home.runs > game.away.runs, "\(game.id)") }
            #expect(game.decisions?.winning != nil && game.decisions?.losing != nil, "\(game.id)")
            #expect(game.matchup == nil && game.bases == [false, false, false], "\(game.id)")
        }
        // Giolito's no-hitter: the Pirates without a hit, MLB's abbreviations, not Retrosheet's.
        let giolito = try #require(board.games.first { $0.id == "CHA202008250" })
        #expect((giolito.away.abbreviation, giolito.home.abbreviation) == ("PIT", "CWS"))
        #expect((giolito.away.runs, giolito.away.hits, giolito.home.runs) == (0, 0, 4))
        #expect(giolito.decisions?.winning?.contains("Giolito") == true, "\(String(describing: giolito.decisions))")
        // A day the server has not followed has no games; a malformed date is refused.
        #expect(try await Self.board(fixture, query: "?date=2020-08-24").games.isEmpty)
        try await fixture.test { client in
            try await client.execute(uri: "/api/scoreboard?date=yesterday", method: .get) { response throws in
                #expect(response.status == .badRequest)
                #expect(try APIServerTests.message(response.body).contains("'yesterday' is not yyyy-mm-dd"))
            }
        }
    }

    /// Mid-game: the half, the runners and who is pitching to whom, as the engine has them.
    @Test func aGameUnderWayShowsItsStateOfPlay() async throws {
        let fixture = try await APIServerTests.Fixture { change in
            guard change.game.info.id == "CHA202008250", let state = change.game.state else { return false }
            let runners = [state.runners.first, state.runners.second, state.runners.third]
            return state.inning >= 4 && state.outs < 3 && runners.contains { !$0.isNone }
        }
        defer { fixture.remove() }
        let board = try await Self.board(fixture)
        let game = try #require(board.games.first { $0.id == "CHA202008250" })
        #expect(game.status == .live)
        let ordinal = [4: "4th", 5: "5th", 6: "6th", 7: "7th", 8: "8th", 9: "9th"][game.inning] ?? "?"
        #expect(game.statusText == "\(game.half == "top" ? "Top" : "Bot") \(ordinal)")
        #expect(game.bases.contains(true), "\(game.bases)")
        #expect(game.matchup.map { !$0.pitcher.isEmpty && !$0.batter.isEmpty } == true)
        #expect(game.decisions == nil)
        // Both sides' lines run to the inning under way; a half still to come is blank.
        #expect(game.away.linescore.count == game.inning && game.home.linescore.count == game.inning)
        #expect(!game.away.linescore.contains(""))
        #expect(game.home.linescore.filter { !$0.isEmpty }.count == game.inning - (game.half == "top" ? 1 : 0))
    }
}
