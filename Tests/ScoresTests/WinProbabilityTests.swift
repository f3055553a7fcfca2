import Alerts
import Baseball
import Foundation
import Retrosheet
import Scores
import TestSupport
import Testing

/// History's win probability on the board: the cards' chance in a game under way and the
/// play-by-play's after each play, for Giolito's no-hitter (Pittsburgh at Chicago, Aug 25 2020)
/// followed record by record as a replay follows it.
@Suite struct WinProbabilityTests {
    @Test func theChanceOnTheCardAndAfterEveryPlay() throws {
        let table = try WinExpectancyCount.shipped().get()
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "CHA202008250" })
        let board = LiveBoard(winExpectancy: table)
        var follower = GameFollower(gameID: game.record.id)
        _ = follower.follow(.scheduled(game.info, start: game.start))
        _ = follower.follow(.lineups(game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst))
        let scheduled = try #require(board.record(follower, at: game.start)?.snapshot)
        #expect(scheduled.homeWin == nil)
        _ = follower.follow(.status(GameStatus(.live), result: nil))
        var chances: [Double] = []
        for (time, update) in game.updates {
            _ = follower.follow(.updates([update]))
            let snapshot = try #require(board.record(follower, at: time)?.snapshot)
            // The last out ends it: final, with no chance to give.
            guard snapshot.status == .live else {
                #expect(snapshot.status == .final && snapshot.homeWin == nil)
                continue
            }
            let chance = try #require(snapshot.homeWin)
            #expect(chance >= 0 && chance <= 1)
            chances.append(chance)
        }
        // Up 4-0 after the 3rd, the White Sox's chance only rose from there: over 95% by the 9th.
        #expect(chances.last! > 0.95)
        _ = follower.follow(.status(GameStatus(.final), result: game.record.result))
        let final = try #require(board.record(follower, at: game.end)?.snapshot)
        #expect(final.homeWin == nil)

        let plays = try #require(board.detail(id: game.record.id)?.plays)
        let made = plays.enumerated().filter { $0.offset == 0 || $0.element.number != plays[$0.offset - 1].number }
        #expect(made.count > 60)
        #expect(made.allSatisfy { $0.element.homeWin != nil && $0.element.leverage != nil })
        #expect(
            plays.filter { $0.text.contains("replaces") || $0.text.contains("enters") }.allSatisfy { $0.homeWin == nil }
        )
        // The last out: the game won.
        #expect(made.last?.element.homeWin == 1)
        // The first play, Gonzalez's walk or out in the top of the 1st, is near the start's .54.
        let first = try #require(made.first?.element.homeWin)
        #expect(first > 0.45 && first < 0.65)
        // McCann's sacrifice fly in the 3rd, 4-0: over 80% with six innings to play.
        let scoring = made.filter { $0.element.scoring }.map(\.element)
        #expect(scoring.count == 4)
        #expect(scoring.last!.homeScore == 4 && scoring.last!.homeWin! > 0.8)
        #expect(scoring.first!.homeWin! > 0.6)
    }

    /// A walk-off, the last half not needed, and a lead the last half cannot change.
    @Test func theEndOfTheGame() throws {
        let table = try WinExpectancyCount.shipped().get()
        #expect(
            table.homeWin(afterInning: 9, battingSide: .home, outs: 1, bases: 0, homeLead: 1, scheduledInnings: 9) == 1)
        #expect(
            table.homeWin(afterInning: 9, battingSide: .away, outs: 3, bases: 0, homeLead: 2, scheduledInnings: 9) == 1)
        #expect(
            table.homeWin(afterInning: 10, battingSide: .home, outs: 3, bases: 0, homeLead: -1, scheduledInnings: 9)
                == 0)
        // A 7-inning game's 7th is the table's 9th.
        let seventh = table.homeWin(
            afterInning: 7, battingSide: .away, outs: 3, bases: 0, homeLead: 0, scheduledInnings: 7)
        let ninth = table.homeWin(WinExpectancy.State(inning: 9, battingSide: .home, outs: 0, bases: 0, homeLead: 0))
        #expect(seventh == ninth)
        // After the top of the 1st, tied: the bottom of the 1st's start.
        let afterTop = table.homeWin(
            afterInning: 1, battingSide: .away, outs: 3, bases: 5, homeLead: 0, scheduledInnings: 9)
        #expect(
            afterTop
                == table.homeWin(WinExpectancy.State(inning: 1, battingSide: .home, outs: 0, bases: 0, homeLead: 0)))
    }
}
