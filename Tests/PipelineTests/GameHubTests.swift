import Alerts
import Baseball
import Foundation
import Pipeline
import Retrosheet
import TestSupport
import Testing

/// The game hub over a replayed day: every update applied once, by one follower per game, and the
/// changes handed on in order.
@Suite struct GameHubTests {
    @Test func aReplayedDayAppliesEachUpdateOnce() async throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let collected = MomentCollector()
        let hub = GameHub(consumers: [collected])
        let timeline = ReplayTimeline(games: games)
        for entry in timeline.entries {
            try await hub.receive(entry.item, gameID: entry.gameID, at: entry.time)
        }
        let updates = games.reduce(0) { $0 + $1.updates.count }
        #expect(updates == 1_568)
        #expect(await hub.updatesReceived == updates)
        #expect(await hub.applications == updates)
        #expect(await hub.problems.isEmpty)
        #expect(await hub.games.allSatisfy { $0.isFinal })
        let bids = collected.moments.filter { !$0.kind.isScore }
        #expect(bids.map(\.id) == timeline.moments().map(\.moment.id))
        #expect(bids.count == 10)
        // And the score alerts: a first pitch and a final score a game.
        #expect(collected.moments.filter { $0.kind == .finalScore }.count == 16)
        #expect(collected.moments.filter { $0.kind == .gameStart }.count == 16)
    }

    /// A play re-scored after the game moved on: the follower follows the game again from its
    /// lineups, says what changed, and derives what the new bids say.
    @Test func aRevisionFollowsTheGameAgainAndSaysWhatChanged() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "CHA202008250" })
        var follower = GameFollower(gameID: game.record.id)
        _ = follower.follow(.scheduled(game.info, start: game.start))
        _ = follower.follow(.lineups(game.record.startingAppearances, homeBatsFirst: false))
        let updates = game.updates.map(\.update)
        _ = follower.follow(.updates(updates))
        #expect(follower.applications == updates.count)
        // Erik González's walk in the 4th becomes a single.
        let revised = updates.map { update -> GameUpdate in
            guard case .play(var record) = update, record.batter == PlayerID("gonze004"),
                record.play?.eventType == .walk
            else { return update }
            record.play = try! EventTextParser.parse("S8/G")
            return .play(record)
        }
        let events = follower.follow(.revised(revised))
        guard case .revision(let revision)? = events.first else {
            Issue.record("no revision: \(events)")
            return
        }
        #expect(revision.bidsBefore.home.isHitless)
        #expect(!revision.bidsAfter.home.isHitless)
        #expect(revision.updatesBefore == updates.count && revision.updatesAfter == updates.count)
        let moments = events.compactMap { if case .moment(let moment) = $0 { moment } else { nil } }
        #expect(moments.map(\.kind) == [.brokenUp])
        #expect(moments.first?.outs == 9)
        #expect(follower.applications == 2 * updates.count)
        // The end of the game settles the new bid: not a no-hitter.
        let end = follower.follow(.status(GameStatus(.final), result: game.result))
        #expect(!end.contains { if case .moment(let moment) = $0 { moment.kind == .completed } else { false } })
        guard case .final(let line)? = end.last else {
            Issue.record("no final line: \(end)")
            return
        }
        #expect(line.runs == PerSide(away: 0, home: 4))
        #expect(line.hits == PerSide(away: 1, home: 9))
    }
}
