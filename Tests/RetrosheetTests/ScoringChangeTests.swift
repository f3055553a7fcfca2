import Baseball
import TestSupport
import Testing

/// Bids are computed from the plays, so re-scoring one play revives or kills them.
@Suite struct ScoringChangeTests {
    typealias RealGame = UnofficialNoHitterTests.RealGame

    @Test func hitRescoredAsAnErrorRevivesTheBid() throws {
        // Colorado at Seattle, 2020-08-08: J.P. Crawford's single in the 6th was the only hit.
        var game = try RealGame("retrosheet/2020/2020SEA.EVA", "SEA202008080")
        let before = try game.bids().tracker[.away]
        #expect(before.status == .brokenUp)
        #expect(before.outs == 17)
        #expect(before.firstHit?.batter == PlayerID("crawj002"))

        game.rescore("S8/L8", as: "E8/L8", batter: "crawj002")
        let after = try game.bids().tracker[.away]
        #expect(after.isHitless)
        #expect(after.outs == 27)
        #expect(after.status == .official)
        #expect(after.isCombined)
        #expect(!after.isPerfect)
    }

    @Test func walkRescoredAsAHitKillsTheBid() throws {
        // Giolito, 2020-08-25: Erik Gonzalez's walk in the 4th was the only batter to reach.
        var game = try RealGame("retrosheet/2020/2020CHA.EVA", "CHA202008250")
        #expect(try game.bids().tracker[.home].status == .official)

        game.rescore("W", as: "S8/G", batter: "gonze004")
        let after = try game.bids().tracker[.home]
        #expect(after.status == .brokenUp)
        #expect(after.firstHit?.inning == 4)
        #expect(after.firstHit?.batter == PlayerID("gonze004"))
        #expect(after.outs == 9)
    }
}

extension ScoringChangeTests {
    /// The same on 2012 games: Verlander's near no-hitter and Bailey's no-hitter.
    @Suite(.extended, .heavy) struct Extended {
        @Test func hitRescoredAsAnErrorRevivesTheBid() throws {
            // Verlander, 2012-05-18: the only hit was a one-out single in the 9th.
            var game = try RealGame("retrosheet/2012/2012DET.EVA", "DET201205180")
            let before = try game.bids().tracker[.home]
            #expect(before.status == .brokenUp)
            #expect(before.outs == 25)
            #expect(before.firstHit?.batter == PlayerID("harrj002"))

            game.rescore("S8/G", as: "E8/G")
            let after = try game.bids().tracker[.home]
            #expect(after.isHitless)
            #expect(after.outs == 27)
            #expect(after.status == .official)
            #expect(!after.isPerfect)
        }

        @Test func errorRescoredAsAHitKillsTheBid() throws {
            // Bailey, 2012-09-28: Barmes reached on an error in the 3rd.
            var game = try RealGame("retrosheet/2012/2012PIT.EVN", "PIT201209280")
            #expect(try game.bids().tracker[.away].status == .official)

            game.rescore("E5/G.B-1", as: "S5/G.B-1")
            let after = try game.bids().tracker[.away]
            #expect(after.status == .brokenUp)
            #expect(after.firstHit?.inning == 3)
            #expect(after.firstHit?.batter == PlayerID("barmc001"))
            #expect(after.outs == 6)
        }
    }
}
