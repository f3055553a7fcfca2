import Alerts
import Baseball
import Foundation
import TestSupport
import Testing

@testable import StatsAPI

/// Real finished feeds read into the engine: every play fits, and the engine's totals are the
/// feed's own (runs, hits by side, outs, pitchers in order).
@Suite(.extended, .heavy) struct GumboGameTests {
    @Test(arguments: ["gumbo-744914-final.json", "gumbo-746215-final.json", "gumbo-747175-final.json"])
    func finishedGamesReplayInTheEngineToTheFeedsTotals(name: String) throws {
        let feed = try RecordedResponseTests.decode(GameFeed.self, name)
        let game = try GumboGame(feed)
        #expect(game.problems.isEmpty)
        #expect(game.isFinal)
        let (follower, _) = GameFollower.moments(
            gameID: game.gameID, starters: game.starters, updates: game.updates, result: game.result)
        #expect(follower.problem == nil)
        let monitor = try #require(follower.engine)
        let line = try #require(feed.liveData.linescore?.teams)
        #expect(monitor.state.score.away == line.away.runs)
        #expect(monitor.state.score.home == line.home.runs)
        // Hits allowed by each side's pitchers are the other side's hits.
        #expect(monitor.state.pitching(.home).hits == line.away.hits)
        #expect(monitor.state.pitching(.away).hits == line.home.hits)
        // The pitchers, in order, are the boxscore's.
        let box = try #require(feed.liveData.boxscore)
        #expect(monitor.state.pitching(.home).pitchers.map { "\($0)" } == box.teams.home.pitchers.map(String.init))
        #expect(monitor.state.pitching(.away).pitchers.map { "\($0)" } == box.teams.away.pitchers.map(String.init))
        // Bids: broken up exactly when the side allowed a hit.
        #expect((monitor.tracker[.home].firstHit != nil) == ((line.away.hits ?? 0) > 0))
        #expect(game.gameID.count == 12)
    }
}

/// Each pitcher's line, built from the feed's plays, against the feed's own box score.
@Suite(.extended, .heavy) struct PitcherLineFeedTests {
    @Test(arguments: ["gumbo-744914-final.json", "gumbo-746215-final.json", "gumbo-747175-final.json"])
    func everyPitcherLineIsTheBoxScores(name: String) throws {
        let feed = try RecordedResponseTests.decode(GameFeed.self, name)
        let game = try GumboGame(feed)
        let (follower, _) = GameFollower.moments(
            gameID: game.gameID, starters: game.starters, updates: game.updates, result: game.result)
        // The box score's pitching stats, read as plain JSON.
        let json = try JSONSerialization.jsonObject(with: Data(TestData.bytes("statsapi/\(name)"))) as? [String: Any]
        let teams = try #require(
            ((json?["liveData"] as? [String: Any])?["boxscore"] as? [String: Any])?["teams"] as? [String: Any])
        var checked = 0
        for side in Side.allCases {
            let team = try #require(teams[side == .away ? "away" : "home"] as? [String: Any])
            let players = try #require(team["players"] as? [String: Any])
            let lines = follower.pitcherLines.lines(of: side)
            #expect(lines.map { "\($0.pitcher)" } == (team["pitchers"] as? [Int] ?? []).map(String.init))
            for line in lines {
                let player = try #require(players["ID\(line.pitcher)"] as? [String: Any])
                let stats = try #require((player["stats"] as? [String: Any])?["pitching"] as? [String: Any])
                func stat(_ key: String) -> Int { stats[key] as? Int ?? -1 }
                let mine = [
                    line.outs, line.hits, line.runs, line.earnedRuns, line.walks, line.strikeouts, line.homeRuns,
                    line.battersFaced, line.pitches ?? -1,
                ]
                let theirs = [
                    stat("outs"), stat("hits"), stat("runs"), stat("earnedRuns"), stat("baseOnBalls"),
                    stat("strikeOuts"), stat("homeRuns"), stat("battersFaced"), stat("numberOfPitches"),
                ]
                #expect(
                    mine == theirs,
                    "\(name) \(line.pitcher): outs H R ER BB K HR BF P \(mine) ≠ the box score's \(theirs)")
                #expect(line.inningsPitched == stats["inningsPitched"] as? String)
                checked += 1
            }
        }
        #expect(checked >= 6)
    }
}

/// Bad input inside a feed: the game keeps what came before it, and the problem names the play.
@Suite(.extended, .heavy) struct GumboProblemTests {
    @Test func anUnknownEventTypeStopsTheGameAtItsLastGoodPlay() throws {
        var feed = try RecordedResponseTests.decode(GameFeed.self, "gumbo-747175-final.json")
        let clean = try GumboGame(feed)
        let index = 40
        feed.liveData.plays.allPlays[index].result.eventType = "space_invasion"
        let game = try GumboGame(feed)
        #expect(game.problems.count == 1)
        #expect(game.problems.first?.hasPrefix("play \(index) (inning ") == true)
        #expect(game.problems.first?.contains("'space_invasion'") == true)
        // Everything before that play, nothing from it on.
        #expect(game.updates.count < clean.updates.count)
        #expect(Array(clean.updates.prefix(game.updates.count)) == game.updates)
        // And no moment the clean game would not have made.
        let moments = GameFollower.moments(
            gameID: game.gameID, starters: game.starters, updates: game.updates, result: nil
        ).moments
        let all = GameFollower.moments(
            gameID: clean.gameID, starters: clean.starters, updates: clean.updates, result: clean.result
        ).moments
        #expect(Set(moments.map(\.id)).isSubset(of: Set(all.map(\.id))))
    }

    @Test func aRunnerOnABaseThatDoesNotExistIsAProblemNotACrash() throws {
        var feed = try RecordedResponseTests.decode(GameFeed.self, "gumbo-744914-final.json")
        feed.liveData.plays.allPlays[10].runners[0].movement.start = "5B"
        let game = try GumboGame(feed)
        #expect(game.problems.first?.contains("'5B' is not a base") == true)
    }

    /// Found by the gumbo fuzz target (CI, a 30-second run): a play in inning 0 stopped the server
    /// on the line score's precondition. It is a problem of that play now.
    @Test func aPlayInAnInningThatDoesNotExistIsAProblemNotACrash() throws {
        for inning in [0, -3, 100, Int.max] {
            var feed = try RecordedResponseTests.decode(GameFeed.self, "gumbo-744914-final.json")
            feed.liveData.plays.allPlays[10].about.inning = inning
            let game = try GumboGame(feed)
            #expect(game.problems.first?.contains("inning \(inning) is not from 1 to 99") == true, "\(game.problems)")
            var follower = GameFollower(gameID: game.gameID)
            _ = follower.follow(.lineups(game.starters, homeBatsFirst: false))
            _ = follower.follow(.updates(game.updates))
            #expect(follower.linescore.innings <= 99)
        }
    }

    @Test func aFeedWithoutItsBoxscoreHasNoLineupsYet() throws {
        var feed = try RecordedResponseTests.decode(GameFeed.self, "gumbo-744914-final.json")
        feed.liveData.boxscore = nil
        let game = try GumboGame(feed)
        #expect(game.starters.isEmpty && game.updates.isEmpty)
        var foreign = try RecordedResponseTests.decode(GameFeed.self, "gumbo-744914-final.json")
        foreign.gameData.teams.home.id = 999
        #expect(throws: StatsAPIError.self) { try GumboGame(foreign) }
    }
}
