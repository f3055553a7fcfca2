import Alerts
import Baseball
import Foundation
import Hummingbird
import HummingbirdTesting
import Scores
import StatsAPI
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
                box.withLock {
                    $0 = try? APIServerTests.reader.decode(Scoreboard.self, from: Data(response.body.readableBytesView))
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
            // The game id starts with the home club's Retrosheet code; the board shows MLB's.
            let home = try #require(TeamDirectory.club(String(game.id.prefix(3)), on: game.date))
            #expect(game.home.abbreviation == home.abbreviation, "\(game.id)")
            #expect(game.home.name == home.name, "\(game.id)")
            for team in [game.away, game.home] {
                #expect(
                    team.linescore.compactMap(Int.init).reduce(0, +) == team.runs, "\(game.id) \(team.abbreviation)")
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

    /// `GET /api/games/{id}` for Giolito's no-hitter: his line as MLB's box score gives it, and a
    /// play-by-play in words that agrees with it.
    @Test func theGamePageHasEveryPitchersLineAndThePlayByPlayInWords() async throws {
        let fixture = try await APIServerTests.Fixture()
        defer { fixture.remove() }
        let box = Mutex<GameTimeline?>(nil)
        try await fixture.test { client in
            try await client.execute(uri: "/api/games/CHA202008250", method: .get) { response throws in
                #expect(response.status == .ok)
                box.withLock {
                    $0 = try? APIServerTests.reader.decode(
                        GameTimeline.self, from: Data(response.body.readableBytesView))
                }
            }
            try await client.execute(uri: "/api/games/XYZ202008250", method: .get) { response throws in
                #expect(response.status == .notFound)
            }
        }
        let page = try #require(box.withLock { $0 })
        let giolito = try #require(page.pitchers.home.first)
        #expect(page.pitchers.home.count == 1)
        #expect(giolito.name == "Lucas Giolito")
        #expect(
            [
                giolito.inningsPitched, "\(giolito.hits)", "\(giolito.runs)", "\(giolito.walks)",
                "\(giolito.strikeouts)",
                "\(giolito.pitches ?? -1)",
            ] == ["9.0", "0", "0", "1", "13", "101"])
        #expect(page.pitchers.away.reduce(0) { $0 + $1.runs } == 4)
        // Every plate appearance in words: no Retrosheet code (a letter and a digit together,
        // a slash), each a sentence.
        let top = page.plays.filter { $0.half == "top" }
        #expect(top.filter { $0.text.contains("strikes out") }.count == 13)
        #expect(top.filter { $0.text.contains(" walks") }.count == 1)
        #expect(
            !top.contains {
                $0.text.contains(" singles") || $0.text.contains(" doubles") || $0.text.contains(" homers")
            })
        for play in page.plays {
            #expect(play.text.wholeMatch(of: /[A-Z].*\./) != nil, "\(play.text)")
            #expect(play.text.firstMatch(of: /[A-Z][0-9]|\/|\$/) == nil, "\(play.text)")
        }
        let last = try #require(page.plays.last)
        #expect(last.inning == 9 && last.half == "top" && last.outs == 3, "\(last)")
        #expect((last.awayScore, last.homeScore) == (0, 4))
        #expect(page.plays.filter(\.scoring).reduce(0) { _, play in play.homeScore } == 4)
        print(
            "CHA202008250 play-by-play, first and last:", page.plays.first?.text ?? "", "…", page.plays.last?.text ?? ""
        )
    }
    /// The stream's `score` events: one before a game's `game` event whenever what a scoreboard
    /// shows of it changed, and only then.
    @Test func everyChangeOfAScoreLineIsAScoreEvent() async throws {
        let fixture = try await APIServerTests.Fixture()
        defer { fixture.remove() }
        let last = fixture.feed.lastID
        var events: [LiveEvent] = []
        for event in fixture.feed.keptEvents(after: 0) {
            events.append(event)
            if event.id >= last { break }
        }
        #expect(events.count == last)
        let decoder = APIServerTests.reader
        var shown: [String: ScoreLine] = [:]
        var pending: ScoreLine?
        var scores = 0
        for event in events {
            switch event.kind {
            case .score:
                let line = try decoder.decode(ScoreLine.self, from: Data(event.data.utf8))
                #expect(shown[line.id] != line, "a score event that changes nothing: \(line)")
                pending = line
                scores += 1
            case .game:
                let game = try decoder.decode(GameSnapshot.self, from: Data(event.data.utf8))
                let line = ScoreLine(game)
                if shown[game.id] != line {
                    #expect(pending == line, "\(game.id): its score line changed without a score event")
                }
                shown[game.id] = line
                pending = nil
            default: break
            }
        }
        let giolito = try #require(shown["CHA202008250"])
        #expect((giolito.away.runs, giolito.away.hits, giolito.home.runs, giolito.statusText) == (0, 0, 4, "Final"))
        // At least one a half-inning (each begins with a new half), far fewer than the plays.
        let halves = fixture.board.all.reduce(0) {
            $0 + $1.away.linescore.count + $1.home.linescore.filter { $0 != "x" }.count
        }
        #expect(
            scores >= halves && scores < events.count / 2, "\(scores) score events of \(events.count), \(halves) halves"
        )
    }
    /// The default board keeps last night's late games: still under way until they end, finished
    /// for `keepFinished`; a date asked for gets its own games only.
    @Test func lastNightsLateGamesStayOnTheDefaultBoardForAWhile() throws {
        let now = Date(timeIntervalSince1970: 1_598_421_600)  // 2020-08-26 06:00 UTC
        func game(_ id: String, date: String, status: GameSnapshot.Status, updated: TimeInterval) -> GameSnapshot {
            let team = GameSnapshot.Team(
                abbreviation: "CWS", franchise: "CHA", name: "Chicago White Sox", nickname: "White Sox",
                runs: 0, hits: 0, errors: 0, linescore: [])
            return GameSnapshot(
                id: id, date: date, gameNumber: nil, startTime: now, status: status, away: team, home: team, inning: 1,
                half: "top", outs: 0, statusText: "", situation: "", scheduledInnings: 9, bases: [false, false, false],
                matchup: nil,
                starters: nil, decisions: nil, bids: [], broadcasts: [], updatedAt: now.addingTimeInterval(-updated))
        }
        let games = [
            game("SEA202008250", date: "2020-08-25", status: .live, updated: 60),
            game("LAN202008250", date: "2020-08-25", status: .final, updated: 3600),
            game("SDN202008250", date: "2020-08-25", status: .final, updated: 4 * 3600),
            game("CHA202008260", date: "2020-08-26", status: .scheduled, updated: 0),
            game("CHA202008240", date: "2020-08-24", status: .live, updated: 60),
        ]
        let board = Scoreboard.games(games, day: "2020-08-26", asked: false, now: now, keepFinished: 3 * 3600)
        #expect(board.map(\.id) == ["SEA202008250", "LAN202008250", "CHA202008260"])
        #expect(
            Scoreboard.games(games, day: "2020-08-26", asked: false, now: now, keepFinished: 0).map(\.id) == [
                "SEA202008250", "CHA202008260",
            ])
        #expect(
            Scoreboard.games(games, day: "2020-08-26", asked: true, now: now, keepFinished: 3 * 3600).map(\.id) == [
                "CHA202008260"
            ])
    }
}

/// MLB's own finished feeds on the board: the line score, R/H/E and pitchers of record are the
/// feed's.
@Suite(.extended, .heavy) struct ScoreboardFeedTests {
    @Test(arguments: ["gumbo-744914-final.json", "gumbo-746215-final.json", "gumbo-747175-final.json"])
    func aFinishedFeedGivesItsOwnLineScoreAndDecisions(name: String) throws {
        let data = Data(try TestData.bytes("statsapi/\(name)"))
        let game = try GumboGame(try JSONDecoder().decode(GameFeed.self, from: data))
        var follower = GameFollower(gameID: game.gameID)
        _ = follower.follow(.scheduled(game.info, start: game.start ?? Date()))
        _ = follower.follow(.lineups(game.starters, homeBatsFirst: false))
        _ = follower.follow(.updates(game.updates))
        _ = follower.follow(.status(GameStatus(.final), result: game.result))
        let snapshot = LiveBoard.snapshot(follower, at: Date())
        // The feed's own line score and decisions, read as plain JSON.
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let live = try #require(json["liveData"] as? [String: Any])
        let linescore = try #require(live["linescore"] as? [String: Any])
        let innings = try #require(linescore["innings"] as? [[String: Any]])
        let teams = try #require(linescore["teams"] as? [String: [String: Any]])
        for (side, team) in [("away", snapshot.away), ("home", snapshot.home)] {
            let cells = innings.map { inning -> String in
                guard let runs = (inning[side] as? [String: Any])?["runs"] as? Int else { return "x" }
                return "\(runs)"
            }
            #expect(team.linescore == cells, "\(name) \(side)")
            let totals = try #require(teams[side])
            #expect(
                [team.runs, team.hits, team.errors]
                    == [totals["runs"], totals["hits"], totals["errors"]].map { $0 as? Int ?? -1 },
                "\(name) \(side) R/H/E")
        }
        let decisions = try #require(live["decisions"] as? [String: [String: Any]])
        #expect(snapshot.decisions?.winning == decisions["winner"]?["fullName"] as? String)
        #expect(snapshot.decisions?.losing == decisions["loser"]?["fullName"] as? String)
        #expect(snapshot.decisions?.save == decisions["save"]?["fullName"] as? String)
        #expect(snapshot.statusText == (innings.count == 9 ? "Final" : "F/\(innings.count)"))
    }
}
