import Alerts
import Baseball
import Deals
import Foundation
import Pipeline
import Retrosheet
import Storage
import TestSupport
import Testing

/// The deal desk over a real game: WAS202008230, Nationals 9, Marlins 3 on Aug 23 2020.
@Suite struct DealDeskTests {
    static func follower(_ game: ReplayGame, updates: [GameUpdate]) -> GameFollower {
        var follower = GameFollower(gameID: game.record.id)
        _ = follower.follow(.scheduled(game.info, start: game.start))
        _ = follower.follow(.lineups(game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst))
        _ = follower.follow(.updates(updates))
        _ = follower.follow(.status(GameStatus(.final), result: game.record.result))
        return follower
    }

    /// The game triggers Papa John's once (seen again, nothing new); the same game ending again
    /// with the Nationals under 7 runs (as a scoring change that took runs away would make it)
    /// keeps the trigger and records the revision; the history keeps the day.
    @Test func aScoringChangeAfterTheTriggerKeepsItAndRecordsTheRevision() async throws {
        let games = try ReplaySchedule.games(on: "2020-08-23", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "WAS202008230" })
        let store = try SQLiteStore(inMemory: ())
        let desk = DealDesk(rules: try DealRuleFile.load([DealRuleFile.shippedPath]), store: store, publisher: nil)
        let updates = game.updates.map(\.1)
        let first = try await desk.gameEnded(Self.follower(game, updates: updates), at: game.end)
        #expect(first.triggers.map(\.ruleID) == ["papa-johns-dc-nationals"])
        #expect(first.new == 1)
        let again = try await desk.gameEnded(Self.follower(game, updates: updates), at: game.end)
        #expect(again.triggers.map(\.id) == first.triggers.map(\.id))
        #expect(again.new == 0)

        // The longest run of the game's updates after which the Nationals have fewer than 7.
        var cut = updates.count
        while cut > 0, (Self.follower(game, updates: Array(updates.prefix(cut))).state?.score.home ?? 0) >= 7 {
            cut -= 1
        }
        let revised = Self.follower(game, updates: Array(updates.prefix(cut)))
        #expect((revised.state?.score.home ?? 99) < 7)
        let after = try await desk.gameEnded(revised, at: game.end.addingTimeInterval(3600))
        #expect(after.triggers.isEmpty)
        let stored = try await store.dealTriggers(
            ruleID: "papa-johns-dc-nationals", from: "2020-08-23", through: "2020-08-23")
        #expect(stored.map(\.id) == first.triggers.map(\.id))
        #expect(stored.first?.revisions.count == 1)
        let revision = try #require(stored.first?.revisions.first)
        #expect(String(decoding: revision, as: UTF8.self).contains("the trigger stands"))
        let history = try await desk.history(
            season: 2020, rule: "papa-johns-dc-nationals", at: game.end.addingTimeInterval(86_400))
        #expect(history.days.map(\.date) == ["2020-08-24"])
    }
}
