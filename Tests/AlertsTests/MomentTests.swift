import Alerts
import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// Moments derived from real games replayed as normalised updates.
@Suite struct MomentTests {
    static func game(_ file: String, _ id: String) throws -> GameRecord {
        let games = try EventFileReader(path: TestData.path(file)).games()
        return games.lazy.compactMap { try? $0.get() }.first { $0.id == id }!
    }

    /// The game followed to its end (as the service follows every game), and its moments.
    static func moments(of game: GameRecord, updates: [GameUpdate]? = nil) throws -> (GameEngine, [Moment]) {
        let (follower, moments) = GameFollower.moments(
            gameID: game.id, starters: game.startingAppearances, homeBatsFirst: game.homeBatsFirst,
            updates: try updates ?? game.updates(), result: GameResult(scheduledInnings: game.scheduledInnings))
        #expect(follower.problem == nil)
        return (try #require(follower.engine), moments)
    }

    static func describe(_ moments: [Moment]) -> [String] {
        moments.map { "\($0.pitchingSide == .home ? "home" : "away") \($0.kind.rawValue) \($0.outs)" }
    }

    @Test func noHitterBuildsInningByInningAndCompletes() throws {
        let giolito = try Self.game("retrosheet/2020/2020CHA.EVA", "CHA202008250")
        let (monitor, moments) = try Self.moments(of: giolito)
        #expect(
            Self.describe(moments) == [
                "home hitless-innings 12", "home hitless-innings 15", "home hitless-innings 18",
                "home hitless-innings 21", "home hitless-innings 24", "home ninth-inning-out 25",
                "home ninth-inning-out 26", "home completed 27",
            ])
        #expect(monitor.tracker[.home].status == .official)
        #expect(moments.last?.pitchers == [PlayerID("gioll001")!])
        #expect(moments.last?.score == PerSide(away: 0, home: 4))
        #expect(moments.first?.id == "CHA202008250-home-hitless-innings-12")
    }

    @Test func nearNoHitterIsBrokenUpInTheNinth() throws {
        let maeda = try Self.game("retrosheet/2020/2020MIN.EVA", "MIN202008180")
        let (monitor, moments) = try Self.moments(of: maeda)
        let home = moments.filter { $0.pitchingSide == .home }
        #expect(Self.describe(home).suffix(2) == ["home hitless-innings 24", "home broken-up 24"])
        let broken = try #require(home.last)
        #expect(broken.batter == PlayerID("sogae001"))
        #expect(broken.eventType == .single)
        #expect(broken.inning == 9)
        #expect(monitor.tracker[.home].status == .brokenUp)
        #expect(!moments.contains { $0.kind == .completed })
    }

    @Test func roadNoHitterCompletes() throws {
        let mills = try Self.game("retrosheet/2020/2020MIL.EVN", "MIL202009130")
        let (monitor, moments) = try Self.moments(of: mills)
        #expect(monitor.tracker[.away].status == .official)
        #expect(moments.last?.kind == .completed)
        #expect(moments.last?.pitchers == [PlayerID("milla003")!])
        #expect(moments.last?.score == PerSide(away: 12, home: 0))
    }

    @Test func derivingAgainGivesTheSameMomentsWithUniqueIDs() throws {
        for (file, id) in [
            ("retrosheet/2020/2020CHA.EVA", "CHA202008250"), ("retrosheet/2020/2020MIN.EVA", "MIN202008180"),
            ("retrosheet/2020/2020MIL.EVN", "MIL202009130"),
        ] {
            let game = try Self.game(file, id)
            let first = try Self.moments(of: game).1
            let second = try Self.moments(of: game).1
            #expect(first == second)
            #expect(Set(first.map(\.id)).count == first.count)
        }
    }

    @Test func rescoredHitRevivesTheBidUntilTheNextHit() throws {
        let maeda = try Self.game("retrosheet/2020/2020MIN.EVA", "MIN202008180")
        let original = try maeda.updates()
        let (brokenMonitor, brokenMoments) = try Self.moments(of: maeda, updates: original)
        // The scorer changes the ninth-inning single to an error; the double that follows breaks
        // the bid up again, off the reliever.
        let corrected = original.map { update -> GameUpdate in
            guard case .play(var record) = update, record.batter == PlayerID("sogae001"),
                record.play?.eventType == .single, record.inning == 9
            else { return update }
            record.play = try! EventTextParser.parse("E8/L8")
            return .play(record)
        }
        let (revivedMonitor, revivedMoments) = try Self.moments(of: maeda, updates: corrected)
        let home = revivedMoments.filter { $0.pitchingSide == .home }
        #expect(
            Self.describe(home).suffix(3) == [
                "home hitless-innings 24", "home pitching-change 24", "home broken-up 24",
            ])
        #expect(home.last?.batter == PlayerID("garca003"))
        #expect(home.last?.eventType == .double)
        #expect(brokenMonitor.tracker[.home].firstHit?.batter == PlayerID("sogae001"))
        #expect(revivedMonitor.tracker[.home].firstHit?.batter == PlayerID("garca003"))
        // Moments derived before the change keep their ids; the new one is what is new.
        let new = Set(revivedMoments.map(\.id)).subtracting(brokenMoments.map(\.id))
        #expect(new == ["MIN202008180-home-pitching-change-24-roget001"])
    }
}

extension MomentTests {
    /// The same on 2012 games: a perfect game, a near no-hitter, a combined no-hitter.
    @Suite(.extended, .heavy) struct Extended {
        @Test func perfectGameStaysPerfectToTheEnd() throws {
            let humber = try MomentTests.game("retrosheet/2012/2012SEA.EVA", "SEA201204210")
            let (_, moments) = try MomentTests.moments(of: humber)
            #expect(moments.allSatisfy { $0.pitchingSide == .away && $0.perfect })
            #expect(moments.last?.kind == .completed)
        }

        @Test func nearNoHitterIsBrokenUpWithOneOutInTheNinth() throws {
            let verlander = try MomentTests.game("retrosheet/2012/2012DET.EVA", "DET201205180")
            let (_, moments) = try MomentTests.moments(of: verlander)
            let home = moments.filter { $0.pitchingSide == .home }
            #expect(
                MomentTests.describe(home).suffix(3) == [
                    "home hitless-innings 24", "home ninth-inning-out 25", "home broken-up 25",
                ])
            let broken = try #require(home.last)
            #expect(broken.batter == PlayerID("harrj002"))
            #expect(broken.eventType == .single)
            #expect(broken.inning == 9)
            #expect(!moments.contains { $0.kind == .completed })
        }

        @Test func combinedNoHitterAnnouncesEachPitcherAfterTheFourth() throws {
            let seattle = try MomentTests.game("retrosheet/2012/2012SEA.EVA", "SEA201206080")
            let (monitor, moments) = try MomentTests.moments(of: seattle)
            let changes = moments.filter { $0.kind == .pitchingChange }
            #expect(monitor.tracker[.home].pitchers.count == 6)
            #expect(monitor.tracker[.home].isCombined)
            #expect(changes.count == 5)
            #expect(changes.allSatisfy { $0.outs >= Moment.notableOuts })
            #expect(moments.last?.kind == .completed)
            #expect(moments.last?.pitchers.count == 6)
        }

        /// Every combined no-hitter of the ground truth is followed through each change of pitcher
        /// to its last out: a moment at each inning from the fourth, and "No-hitter!" naming them all.
        @Test func everyCombinedNoHitterOfTheGroundTruthIsAlertedToItsEnd() throws {
            let rows = try TestData.lines("groundtruth/nohitters_official.csv")
            let header = rows[0].split(separator: ",").map(String.init)
            var checked = 0
            for line in rows.dropFirst() {
                let row = Dictionary(
                    uniqueKeysWithValues: zip(
                        header, line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
                guard row["combined"] == "1", let id = row["game_id"], let date = row["date"] else { continue }
                let year = String(date.prefix(4))
                let file = try #require(
                    try EventFiles.expand([TestData.path("retrosheet/\(year)")]).first {
                        $0.hasSuffix("\(year)\(id.prefix(3)).EVA") || $0.hasSuffix("\(year)\(id.prefix(3)).EVN")
                    })
                let games = try EventFileReader(path: file).games()
                let game = try #require(games.lazy.compactMap { try? $0.get() }.first { $0.id == id })
                let (_, moments) = try MomentTests.moments(of: game)
                let side: Side = row["defense_is_home"] == "1" ? .home : .away
                let bid = moments.filter { $0.pitchingSide == side }
                let pitchers = (row["pitchers"] ?? "").split(separator: "+").map { PlayerID(String($0))! }
                #expect(bid.last?.kind == .completed, "\(id): \(MomentTests.describe(bid))")
                #expect(bid.last?.pitchers == pitchers, "\(id)")
                let innings = Set(bid.filter { $0.kind == .hitlessInnings }.map(\.outs))
                #expect(
                    innings.isSuperset(of: [12, 15, 18, 21, 24]) && bid.last?.outs == 27,
                    "\(id): \(MomentTests.describe(bid))")
                #expect(!bid.contains { $0.kind == .brokenUp }, "\(id)")
                checked += 1
            }
            #expect(checked == 3)
        }

        @Test func derivingAgainGivesTheSameMomentsWithUniqueIDs2012() throws {
            for (file, id) in [
                ("retrosheet/2020/2020CHA.EVA", "CHA202008250"), ("retrosheet/2012/2012SEA.EVA", "SEA201206080"),
                ("retrosheet/2012/2012DET.EVA", "DET201205180"),
            ] {
                let game = try MomentTests.game(file, id)
                let first = try MomentTests.moments(of: game).1
                let second = try MomentTests.moments(of: game).1
                #expect(first == second)
                #expect(Set(first.map(\.id)).count == first.count)
            }
        }

        @Test func rescoredHitRevivesTheBid() throws {
            let verlander = try MomentTests.game("retrosheet/2012/2012DET.EVA", "DET201205180")
            let original = try verlander.updates()
            let (brokenMonitor, brokenMoments) = try MomentTests.moments(of: verlander, updates: original)
            // The scorer changes the ninth-inning single to an error.
            let corrected = original.map { update -> GameUpdate in
                guard case .play(var record) = update, record.batter == PlayerID("harrj002"),
                    record.play?.eventType == .single, record.inning == 9
                else { return update }
                record.play = try! EventTextParser.parse("E8/G")
                return .play(record)
            }
            let (revivedMonitor, revivedMoments) = try MomentTests.moments(of: verlander, updates: corrected)
            let context = MomentContext(gameID: verlander.id, after: revivedMonitor.state)
            let change = MomentDetector.moments(
                from: brokenMonitor.tracker[.home], to: revivedMonitor.tracker[.home], in: context)
            #expect(MomentTests.describe(change).first == "home revived 27")
            #expect(change.contains { $0.kind == .completed })
            // Moments derived before the change keep their ids; the new ones are what is new.
            let new = Set(revivedMoments.map(\.id)).subtracting(brokenMoments.map(\.id))
            #expect(
                new == [
                    "DET201205180-home-ninth-inning-out-26", "DET201205180-home-completed-27",
                ])
        }
    }
}

/// A moment is whole where it is made: the follower finishes it with what its context gives (the
/// odds of history, what the no-hitter would mean) and the last out it saw, with no I/O.
@Suite struct FollowerMomentTests {
    @Test func theFollowerFinishesEachMomentFromItsContext() throws {
        let giolito = try MomentTests.game("retrosheet/2020/2020CHA.EVA", "CHA202008250")
        let odds = try JSONDecoder().decode(
            BidOdds.self,
            from: Data(contentsOf: TestData.packageRoot.appendingPathComponent("Data/odds/bid-odds.json")))
        let context = FollowContext(
            odds: odds, meanings: PerSide(away: nil, home: "The White Sox's first no-hitter since 2012."))
        var follower = GameFollower(gameID: giolito.id)
        var moments: [Moment] = []
        func take(_ events: [GameEvent]) {
            for case .moment(let moment) in events where moment.kind.isBid { moments.append(moment) }
        }
        take(follower.follow(.lineups(giolito.startingAppearances, homeBatsFirst: false), context: context))
        for update in try giolito.updates() { take(follower.follow(.updates([update]), context: context)) }
        take(follower.follow(.status(GameStatus(.final), result: giolito.result), context: context))

        // With the odds known, every out of the bid from the 13th is a moment, each alive one with
        // its one chance (by his pitches at the 4th, where 2020's pitch counts rest on enough bids).
        #expect(moments.filter { $0.kind == .hitlessOut }.map(\.outs) == [13, 14, 16, 17, 19, 20, 22, 23])
        for moment in moments where moment.kind.bidStillAlive {
            #expect(moment.odds?.outs == min(moment.outs, 27), "\(moment.id)")
            #expect(moment.odds?.basis != nil, "\(moment.id)")
        }
        #expect(moments.first?.odds?.basis == "through 4 innings on fewer than 60 pitches")
        let completed = try #require(moments.last)
        #expect(completed.kind == .completed && completed.odds == nil)
        #expect(completed.meaning == "The White Sox's first no-hitter since 2012.")
        // The last out, from the play itself (no names here: Retrosheet's ids).
        #expect(completed.lastPlay == "gonze004 lines out to right field")
        // Without a context: no odds, no meaning, no moment at every out.
        let (_, plain) = try MomentTests.moments(of: giolito)
        #expect(plain.allSatisfy { $0.odds == nil && $0.meaning == nil && $0.kind != .hitlessOut })
    }
}
