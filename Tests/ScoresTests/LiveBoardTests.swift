import Alerts
import Baseball
import Foundation
import Retrosheet
import Scores
import TestSupport
import Testing

/// The scoreboard's values from the game follower alone, without a server, a store or a clock:
/// Kansas City at Cleveland, Sep 10 2020 (Brady Singer's one-hitter, broken up by Austin Hedges in
/// the 8th), followed record by record from the shipped event file as a replay follows it.
@Suite struct LiveBoardTests {
    @Test func aGameFollowedRecordByRecordIsTrueAtEveryStep() throws {
        let cleveland = try ClevelandGame()
        defer { cleveland.remove() }
        let record = try #require(try EventFileReader(path: cleveland.path("2020")).games().first?.get())
        let updates = try record.updates()
        let game = ReplaySchedule.schedule(record, updates: updates, teams: [:], year: 2020, month: 9, day: 10)
        let board = LiveBoard()
        let start = try #require(game.start)
        var follower = GameFollower(gameID: record.id)
        var scoreLines: [ScoreLine] = []
        func say(_ update: GameFeedItem, at time: Date) -> GameSnapshot? {
            _ = follower.follow(update)
            guard let recorded = board.record(follower, at: time) else { return nil }
            if let score = recorded.score { scoreLines.append(score) }
            return recorded.snapshot
        }

        // Before the first pitch: scheduled, the starters from the lineups.
        _ = say(.scheduled(game.info, start: start), at: start)
        let lineups = try #require(
            say(.lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst), at: start))
        #expect(lineups.status == .scheduled && lineups.statusText == "Scheduled")
        #expect(lineups.starters?.confirmed == true)
        #expect(lineups.starters?.away == "Brady Singer")
        #expect(lineups.away.name == "Kansas City Royals" && lineups.home.name == "Cleveland Indians")
        #expect(lineups.matchup == nil && lineups.bases == [false, false, false])

        // Under way: the runs a side has are the runs of its line score, record after record.
        let versionBefore = board.version
        for (index, update) in updates.enumerated() {
            let snapshot = try #require(say(.updates([update]), at: start.addingTimeInterval(Double(index) * 20)))
            for team in [snapshot.away, snapshot.home] {
                #expect(team.runs == team.linescore.compactMap { Int($0) }.reduce(0, +), "\(snapshot.situation)")
            }
            #expect(snapshot.outs >= 0 && snapshot.outs <= 3)
        }
        #expect(board.version == versionBefore + UInt64(updates.count))

        // Final: 11-1, Cleveland's three hits (S9 in the 8th; D89 and S7 in the 9th, in the event
        // file), Singer's bid broken up by Hedges in the 8th; the home side, behind, batted in the 9th.
        let final = try #require(
            say(.status(GameStatus(.final), result: record.result), at: start.addingTimeInterval(10_800)))
        #expect(final.status == .final && final.statusText == "Final")
        #expect((final.away.runs, final.home.runs) == (11, 1))
        #expect(final.home.hits == 3)
        #expect(final.home.linescore == ["0", "0", "0", "0", "0", "0", "0", "0", "1"])
        let bid = try #require(final.bids.first { $0.side == "away" })
        #expect(bid.status == "broken-up" && !bid.hitless)
        #expect(bid.brokenUpBy?.batter == "Austin Hedges")
        #expect(bid.brokenUpBy?.inning == 8)
        #expect(bid.brokenUpBy?.text.hasPrefix("Austin Hedges singles") == true, "\(bid.brokenUpBy?.text ?? "")")
        #expect(final.decisions?.winning == "Brady Singer")
        // A score line each time the runs, hits, errors, half-inning or status changed; the last one is final.
        #expect(scoreLines.last == ScoreLine(final))
        #expect(Set(scoreLines).count == scoreLines.count)

        // The board and the game page from the same values.
        #expect(board.all == [final])
        let detail = try #require(board.detail(id: record.id))
        #expect(detail.pitchers.away.first?.name == "Brady Singer")
        #expect(detail.pitchers.away.map(\.hits).reduce(0, +) == 3)
        #expect(!detail.plays.isEmpty)

        // The widget's view: the final game, nothing more to wait for today.
        let widget = Widget.body(board.all, teams: ["CLE"], attemptOuts: 12)
        #expect(widget.date == "2020-09-10")
        #expect(widget.games.map(\.status) == ["Final"])
        #expect(widget.games.first?.away.team == "KC" && widget.games.first?.home.team == "CLE")
        #expect(widget.games.first?.noHitter == nil)
        #expect(widget.next == 3600)
        #expect(Widget.body(board.all, teams: ["NYA"], attemptOuts: 12).games.isEmpty)
    }
}
