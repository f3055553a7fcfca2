import Baseball
import Retrosheet
import TestSupport
import Testing

/// The bid followed play by play equals, at every step, the bid recomputed from scratch from
/// the plays so far.
@Suite struct BidPropertyTests {
    /// Every game of `file`: at each play, both incremental bids against `NoHitBid.computed`.
    static func check(file: String) throws -> (steps: Int, mismatches: [String]) {
        var steps = 0
        var mismatches: [String] = []
        for result in try EventFileReader(path: TestData.path(file)).games() {
            let game = try result.get()
            let start = GameState(starters: game.startingAppearances, homeBatsFirst: game.homeBatsFirst)
            var tracker = BidTracker(startingFrom: start)
            var plays: [(result: PlayResult, number: Int)] = []
            var entries = PerSide<[(pitcher: PlayerID, afterPlays: Int)]>(repeating: [])
            let starters = PerSide(
                away: start.pitching(.away).pitchers.first ?? .none, home: start.pitching(.home).pitchers.first ?? .none
            )
            func compare(_ when: String) {
                steps += 1
                for side in Side.allCases {
                    let recomputed = NoHitBid.computed(
                        for: side, startingPitcher: starters[side], plays: plays, entries: entries[side])
                    if recomputed != tracker[side] {
                        mismatches.append("\(game.id) \(side) \(when): \(tracker[side]) vs \(recomputed)")
                    }
                }
            }
            try GameReplay.run(game) { replayed in
                tracker.record(replayed.result, number: replayed.number)
                plays.append((replayed.result, replayed.number))
                compare("after play \(replayed.number)")
            } onSubstitution: { appearance, playsBefore in
                guard appearance.position == Position.pitcher else { return }
                tracker.recordPitcher(appearance.player, side: appearance.side)
                entries[appearance.side].append((appearance.player, playsBefore))
                compare("after \(appearance.player) entered")
            }
        }
        return (steps, mismatches)
    }

    @Test(arguments: [
        // Seasons' worth of games from three parks, including two no-hitters (CHA, MIL) and the
        // extra-inning runner (HOU).
        "retrosheet/2020/2020CHA.EVA", "retrosheet/2020/2020HOU.EVA", "retrosheet/2020/2020MIL.EVN",
    ])
    func incrementalBidEqualsRecomputedBidAtEveryStep(file: String) throws {
        let (steps, mismatches) = try Self.check(file: file)
        #expect(steps > 1_000)
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches: \(mismatches.prefix(3))")
    }
}

extension BidPropertyTests {
    /// Whole seasons of other parks and years, a combined no-hitter (SEA 2012) among them.
    @Suite(.extended, .heavy) struct Extended {
        @Test(arguments: ["retrosheet/2012/2012SEA.EVA", "retrosheet/2019/2019DET.EVA"])
        func incrementalBidEqualsRecomputedBidAtEveryStep(file: String) throws {
            let (steps, mismatches) = try BidPropertyTests.check(file: file)
            #expect(steps > 1_000)
            #expect(mismatches.isEmpty, "\(mismatches.count) mismatches: \(mismatches.prefix(3))")
        }
    }
}
