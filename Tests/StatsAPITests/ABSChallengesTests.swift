import Alerts
import Baseball
import Clocks
import FakeStatsAPI
import Foundation
import Retrosheet
import Scores
import TestSupport
import Testing

@testable import StatsAPI

/// ABS challenges and the strike zone, from a 2026 feed written from the documented fields
/// (`Tests/Fixtures/statsapi/make.py` says what it holds), its variants, and the fake Stats API's
/// synthetic challenges over a whole replayed day.
@Suite struct ABSChallengesTests {
    static func fixture() throws -> [String: Any] {
        try #require(
            JSONSerialization.jsonObject(with: Data(TestData.bytes("statsapi/abs-2026-live.json"))) as? [String: Any])
    }

    static func feed(_ change: (inout [String: Any]) -> Void = { _ in }) throws -> GameFeed {
        var json = try fixture()
        change(&json)
        return try JSONDecoder().decode(GameFeed.self, from: JSONSerialization.data(withJSONObject: json))
    }

    /// The snapshot a follower gives after hearing what the ledger says of `game`.
    static func snapshot(_ game: GumboGame) -> GameSnapshot {
        var ledger = StatsAPIFeedLedger()
        var follower = GameFollower(gameID: game.gameID)
        for item in ledger.items(for: game, now: Date()) { _ = follower.follow(item) }
        return LiveBoard.snapshot(follower, at: Date())
    }

    @Test func eachChallengedPitchIsReadWithWhoAskedAndTheCallsBeforeAndAfter() throws {
        let game = try GumboGame(Self.feed())
        #expect(game.problems.isEmpty, "\(game.problems)")
        let abs = try #require(game.abs)
        #expect(abs.counters.away == .init(remaining: 1, won: 1, lost: 1))
        #expect(abs.counters.home == .init(remaining: 2, won: 1, lost: 0))
        #expect(abs.challenges.count == 3)
        let (upheld, catcher, onThePlay) = (abs.challenges[0], abs.challenges[1], abs.challenges[2])
        // The batter challenged a called strike: upheld.
        #expect(upheld.role == .batter && upheld.side == .away && upheld.challenger == PlayerID("701001"))
        #expect((upheld.callBefore, upheld.callAfter, upheld.overturned) == (.strike, .strike, false))
        #expect((upheld.pitchNumber, upheld.balls, upheld.strikes) == (2, 1, 1))
        // The home catcher (the eighth batter) challenged a ball: a strike now.
        #expect(catcher.role == .catcher && catcher.side == .home && catcher.challenger == PlayerID("702008"))
        #expect((catcher.callBefore, catcher.callAfter, catcher.overturned) == (.ball, .strike, true))
        // A review on the play names the pitch marked reviewed: a called strike, now a ball.
        #expect(onThePlay.role == .batter && onThePlay.side == .away && onThePlay.pitchNumber == 1)
        #expect((onThePlay.callBefore, onThePlay.callAfter) == (.strike, .ball))
        #expect(game.notices.isEmpty, "the counters agree with the pitches")
        #expect(abs.recorded(.away) == (1, 1) && abs.recorded(.home) == (1, 0))
    }

    @Test func theBoardTheGamePageAndTheWidgetShowTheFeedsCounters() throws {
        let snapshot = Self.snapshot(try GumboGame(Self.feed()))
        let challenges = try #require(snapshot.challenges)
        #expect(challenges.away.team == "NYY" && challenges.away.remaining == 1)
        #expect(challenges.home.team == "BOS" && challenges.home.won == 1)
        #expect(challenges.pitches.map(\.role) == ["batter", "catcher", "batter"])
        #expect(
            challenges.pitches[1].text
                == "Top 1st: Ray Okafor (BOS, catcher) challenged the ball on the 1st pitch to Caleb Marsh: "
                + "overturned, strike (0-1)")
        #expect(
            challenges.pitches[0].text
                == "Top 1st: Rafael Ortiz (NYY, batter) challenged the called strike on the 2nd pitch: upheld (1-1)")
        let widget = Widget.body([snapshot], teams: [], attemptOuts: 12)
        #expect(widget.games.first?.abs == [1, 2])
    }

    @Test func aParkWithoutABSShowsNothing() throws {
        let game = try GumboGame(
            Self.feed { json in
                var data = json["gameData"] as! [String: Any]
                data["absChallenges"] = [String: Any]()
                json["gameData"] = data
            })
        #expect(game.abs == nil)
        let snapshot = Self.snapshot(game)
        #expect(snapshot.challenges == nil)
        #expect(Widget.body([snapshot], teams: [], attemptOuts: 12).games.first?.abs == nil)
        // A feed from before ABS (no key at all) is the same.
        let before = try GumboGame(
            Self.feed { json in
                var data = json["gameData"] as! [String: Any]
                data["absChallenges"] = nil
                json["gameData"] = data
            })
        #expect(before.abs == nil)
    }

    @Test func countersThatDisagreeWithThePitchesAreSaidAndTheFeedsShown() throws {
        let game = try GumboGame(
            Self.feed { json in
                var data = json["gameData"] as! [String: Any]
                data["absChallenges"] = [
                    "hasChallenges": true, "away": ["usedSuccessful": 2, "usedFailed": 1, "remaining": 1],
                    "home": ["usedSuccessful": 1, "usedFailed": 0, "remaining": 2],
                ]
                json["gameData"] = data
            })
        #expect(
            game.notices == [
                "NYY's ABS counters say 2 won and 1 lost; its challenged pitches, 1 won and 1 lost"
            ])
        #expect(Self.snapshot(game).challenges?.away.won == 2)
    }

    @Test func theLedgerSaysTheChallengesOnceAndAgainWhenTheyChange() throws {
        let game = try GumboGame(Self.feed())
        var ledger = StatsAPIFeedLedger()
        let first = ledger.items(for: game, now: Date())
        #expect(first.filter { if case .challenges = $0 { true } else { false } }.count == 1)
        #expect(ledger.items(for: game, now: Date()).isEmpty)
        var changed = game
        changed.abs?.counters.home.remaining = 1
        #expect(ledger.items(for: changed, now: Date()).count == 1)
        // Taken up by another instance from the log: nothing said twice.
        var other = StatsAPIFeedLedger()
        other.takeUp(game.gameID, said: first)
        #expect(other.items(for: game, now: Date()).isEmpty)
    }

    @Test func thePitchesOfThePlateAppearanceArePlacedOnTheZone() throws {
        let game = try GumboGame(Self.feed())
        let atBat = try #require(game.atBat)
        #expect(atBat.marks.map(\.number) == [1, 2, 3])
        #expect(atBat.marks.map(\.code) == ["B", "C", "F"])
        #expect(atBat.marks.map(\.type) == ["Four-Seam Fastball", "Slider", "Changeup"])
        #expect(atBat.marks[0].speed == 96.4 && atBat.marks[0].x == -1.12 && atBat.marks[0].z == 2.21)
        #expect(atBat.marks.allSatisfy { $0.top == 3.41 && $0.bottom == 1.58 })
        let zone = try #require(Self.snapshot(game).matchup?.zone)
        #expect(zone.count == 3)
        // A pitch without tracking is left off, not put at the plate's middle.
        let untracked = try GumboGame(
            Self.feed { json in
                var live = json["liveData"] as! [String: Any]
                var plays = live["plays"] as! [String: Any]
                var all = plays["allPlays"] as! [[String: Any]]
                var events = all[4]["playEvents"] as! [[String: Any]]
                events[1]["pitchData"] = ["startSpeed": 86.2]
                all[4]["playEvents"] = events
                plays["allPlays"] = all
                live["plays"] = plays
                json["liveData"] = live
            })
        #expect(untracked.atBat?.marks.map(\.number) == [1, 3])
        // An AtBat logged before marks existed still reads.
        let old = #"{"batter":"702001","balls":1,"strikes":2,"afterUpdates":4}"#
        #expect(try JSONDecoder().decode(AtBat.self, from: Data(old.utf8)).marks.isEmpty)
    }

    /// `fake-statsapi --abs` over 2020-08-25: about four challenges a game, each on a called pitch
    /// and within the rules, the same for a seed; read back from the fake's feeds every ten
    /// minutes of the day, the counters always agree with the challenged pitches, and at the end
    /// with the plan.
    @Test func theFakesSyntheticChallengesFollowTheRulesAndAgreeWithTheirPitches() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let abs = SyntheticABS(seed: 7)
        let plans = games.map(abs.plan)
        #expect(plans == games.map(SyntheticABS(seed: 7).plan))
        #expect(plans != games.map(SyntheticABS(seed: 8).plan))
        let total = plans.reduce(0) { $0 + $1.challenges.count }
        #expect((2 * games.count)...(8 * games.count) ~= total, "\(total) challenges in \(games.count) games")
        for (game, plan) in zip(games, plans) {
            var remaining = PerSide(repeating: 2)
            for challenge in plan.challenges {
                #expect(remaining[challenge.side] > 0, "\(game.record.id): a challenge with none left")
                if !challenge.overturned { remaining[challenge.side] -= 1 }
                let batting = challenge.role == .batter
                #expect(
                    batting == (challenge.overturned ? challenge.callAfter == .ball : challenge.callAfter == .strike),
                    "the side the first call went against asks")
            }
        }
        let server = FakeStatsAPIServer(
            date: "2020-08-25", games: games, clock: ManualWallClock(games[0].start), abs: abs)
        let first = games.map(\.start).min()!
        let last = games.map(\.end).max()!
        var seen = 0
        for step in stride(from: first, through: last.addingTimeInterval(600), by: 600) {
            for (game, plan) in zip(games, plans) {
                let read = try GumboGame(server.feed(game, at: step))
                guard let challenges = read.abs else {
                    Issue.record("\(game.record.id): no ABS at \(step)")
                    continue
                }
                #expect(read.notices.isEmpty, "\(game.record.id) at \(step): \(read.notices)")
                #expect(challenges.challenges.count == plan.challenges.filter { $0.time <= step }.count)
                seen += challenges.challenges.count
            }
        }
        #expect(seen > total, "the challenges were seen as the day went on")
        for (game, plan) in zip(games, plans) {
            let final = try GumboGame(server.feed(game, at: last.addingTimeInterval(3600)))
            #expect(final.abs?.counters == plan.counters(at: .distantFuture))
            #expect(final.abs?.challenges.count == plan.challenges.count)
        }
    }
}

extension ABSChallengesTests {
    /// The counters over a plan: a team given one back in an extra inning begun with none left
    /// has one, and the grant comes before that inning's challenges.
    @Test func anExtraInningGivesOneBackToATeamWithNoneLeft() {
        let start = Date(timeIntervalSince1970: 1_598_397_000)
        func challenge(_ update: Int, _ side: Side, overturned: Bool) -> SyntheticABS.Planned {
            .init(
                time: start.addingTimeInterval(Double(update)), update: update, pitchNumber: 1, callAfter: .ball,
                overturned: overturned, side: side, role: .batter, challenger: .none, balls: 1, strikes: 0, outs: 0)
        }
        var plan = SyntheticABS.Plan()
        plan.challenges = [
            challenge(10, .home, overturned: false), challenge(20, .home, overturned: false),
            challenge(30, .away, overturned: true), challenge(90, .home, overturned: true),
        ]
        plan.grants = [.init(time: start.addingTimeInterval(80), update: 80, side: .home)]
        #expect(plan.counters(at: start.addingTimeInterval(25)).home == .init(remaining: 0, won: 0, lost: 2))
        #expect(plan.counters(at: start.addingTimeInterval(85)).home == .init(remaining: 1, won: 0, lost: 2))
        #expect(plan.counters(at: start.addingTimeInterval(95)).home == .init(remaining: 1, won: 1, lost: 2))
        #expect(plan.counters(at: start.addingTimeInterval(95)).away == .init(remaining: 2, won: 1, lost: 0))
    }

    /// The side the umpire's call went against asks, when the feed names neither team nor player.
    @Test func aChallengeNamingNoTeamIsTheSideTheCallWentAgainst() throws {
        let game = try GumboGame(
            Self.feed { json in
                var live = json["liveData"] as! [String: Any]
                var plays = live["plays"] as! [String: Any]
                var all = plays["allPlays"] as! [[String: Any]]
                var events = all[1]["playEvents"] as! [[String: Any]]
                events[0]["reviewDetails"] = ["isOverturned": true, "reviewType": "MJ"]
                all[1]["playEvents"] = events
                plays["allPlays"] = all
                live["plays"] = plays
                json["liveData"] = live
            })
        // A ball overturned to a strike: the fielders asked.
        let challenge = try #require(game.abs?.challenges[1])
        #expect(challenge.side == .home && challenge.role == .catcher && challenge.callBefore == .ball)
    }
}

extension ABSChallengesTests {
    /// Real feeds: 2024's have no ABS; a real plate appearance under way is placed on the zone
    /// pitch by pitch from its tracking.
    @Suite(.extended) struct Extended {
        @Test func realFeedsBeforeABSHaveNoneAndARealPlateAppearanceIsPlaced() throws {
            for name in ["gumbo-744914-final.json", "gumbo-746139-snapshot-a.json", "gumbo-776792-live.json"] {
                let feed = try JSONDecoder().decode(GameFeed.self, from: Data(TestData.bytes("statsapi/\(name)")))
                #expect(try GumboGame(feed).abs == nil, "\(name)")
            }
            let feed = try JSONDecoder().decode(
                GameFeed.self, from: Data(TestData.bytes("statsapi/gumbo-746139-snapshot-a.json")))
            let atBat = try #require(try GumboGame(feed).atBat)
            #expect(atBat.marks.count == atBat.pitches)
            #expect(atBat.marks.map(\.type) == ["Slider", "Sinker"])
            #expect(atBat.marks.map(\.code) == ["F", "C"])
            #expect(atBat.marks.allSatisfy { $0.top == 3.319 && abs($0.x) < 2 })
        }
    }
}
