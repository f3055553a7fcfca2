import Alerts
import Baseball
import Foundation
import Retrosheet
import Scores
import TestSupport
import Testing

/// The state at the plate on the board, true at every moment of a replayed day (2020-08-25, the
/// shipped season): before each play record the batter shown is that record's batter (the one
/// due up, not the one who just finished), and between halves (`Mid`, `End`) there is no batter,
/// no pitcher, no runner, and the three due up begin with the next half's first batter.
@Suite struct AtThePlateTests {
    @Test func theBatterShownIsTheNextOneUpAndBetweenHalvesNone() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        #expect(games.count == 16)
        var checked = 0
        var between = 0
        var wrong: [String] = []
        for game in games {
            var follower = GameFollower(gameID: game.record.id)
            _ = follower.follow(.scheduled(game.info, start: game.start))
            _ = follower.follow(.lineups(game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst))
            _ = follower.follow(.status(GameStatus(.live), result: nil))
            for (index, timed) in game.updates.enumerated() {
                if case .play(let record) = timed.update, index > 0 {
                    let board = LiveBoard.snapshot(follower, at: timed.time)
                    let batter = game.info.name(of: record.batter)
                    let place = "\(game.record.id) before update \(index) (\(board.statusText))"
                    if board.statusText.hasPrefix("Mid") || board.statusText.hasPrefix("End") {
                        between += 1
                        if board.matchup != nil || board.bases != [false, false, false] {
                            wrong.append("\(place): a matchup or runners between halves")
                        }
                        if board.dueUp?.batters.first != batter || board.dueUp?.batters.count != 3 {
                            wrong.append("\(place): due up \(board.dueUp?.batters ?? []), the next batter is \(batter)")
                        }
                    } else if let matchup = board.matchup {
                        checked += 1
                        if matchup.batter != batter { wrong.append("\(place): AB \(matchup.batter), not \(batter)") }
                        if board.dueUp != nil { wrong.append("\(place): due up during a half") }
                    } else {
                        wrong.append("\(place): no matchup")
                    }
                }
                _ = follower.follow(.updates([timed.update]))
            }
        }
        #expect(checked > 1000)
        #expect(between > 200)
        #expect(wrong.isEmpty, "\(wrong.count) wrong: \(wrong.prefix(10))")
    }
}
