import Alerts
import Baseball
import Foundation
import TestSupport
import Testing

@testable import StatsAPI

/// Real finished feeds read into the engine: every play fits, and the engine's totals are the
/// feed's own (runs, hits by side, outs, pitchers in order).
@Suite struct GumboGameTests {
    @Test(arguments: ["gumbo-744914-final.json", "gumbo-746215-final.json", "gumbo-747175-final.json"])
    func finishedGamesReplayInTheEngineToTheFeedsTotals(name: String) throws {
        let feed = try RecordedResponseTests.decode(GameFeed.self, name)
        let game = try GumboGame(feed)
        #expect(game.problems.isEmpty)
        #expect(game.isFinal)
        let (monitor, _) = try GameMonitor.replay(
            gameID: game.gameID, starters: game.starters, homeBatsFirst: false, updates: game.updates,
            finalInnings: game.scheduledInnings)
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
