import Baseball
import Retrosheet
import Testing

/// The engine on hand-built situations. Plays are written in Retrosheet notation for
/// readability; the oracle tests cover the engine on every real play of two seasons.
@Suite struct GameStateTests {
    static func id(_ text: String) -> PlayerID { PlayerID(text)! }

    /// Visitors with a designated hitter (pitcher `awayp001` not batting), home without one.
    static func newGame() -> GameState {
        var starters: [Appearance] = []
        for slot in 1...9 {
            starters.append(
                Appearance(
                    player: id("away\(String(format: "%03d", slot))"), side: .away, battingSlot: UInt8(slot),
                    position: UInt8(slot == 9 ? 10 : slot + 1 > 9 ? 9 : slot + 1)))
        }
        starters.append(Appearance(player: id("awayp001"), side: .away, battingSlot: 0, position: 1))
        for slot in 1...9 {
            starters.append(
                Appearance(
                    player: id("home\(String(format: "%03d", slot))"), side: .home, battingSlot: UInt8(slot),
                    position: UInt8(slot)))
        }
        return GameState(starters: starters)
    }

    @discardableResult
    static func play(_ state: inout GameState, _ text: String, by batter: String) throws -> PlayResult {
        try state.apply(EventTextParser.parse(text), batter: id(batter))
    }

    @Test func startersAreInPlace() {
        let state = Self.newGame()
        #expect(state.battingSide == .away)
        #expect(state.pitcher == Self.id("home001"))
        #expect(state.fielder(1, of: .away) == Self.id("awayp001"))
        #expect(state.lineup(.away).designatedHitterSlot == 9)
        #expect(state.pitching(.home).pitchers == [Self.id("home001")])
        #expect(state.pitching(.away).pitchers == [Self.id("awayp001")])
    }

    @Test func walkIsChargedToTheRelievedPitcherWhenTheCountFavouredTheHitter() throws {
        var state = Self.newGame()
        try state.substitute(
            Appearance(player: Self.id("relie001"), side: .home, battingSlot: 1, position: 1),
            batter: Self.id("away001"),
            count: PitchCount(balls: 3, strikes: 1))
        let walk = try Self.play(&state, "W", by: "away001")
        #expect(walk.pitcher == Self.id("relie001"))
        #expect(walk.responsiblePitcher == Self.id("home001"))
        #expect(state.responsiblePitchers.first == Self.id("home001"))

        // The next reliever comes in at 1-1: the walk is his.
        try state.substitute(
            Appearance(player: Self.id("relie002"), side: .home, battingSlot: 1, position: 1),
            batter: Self.id("away002"),
            count: PitchCount(balls: 1, strikes: 1))
        let second = try Self.play(&state, "W.1-2", by: "away002")
        #expect(second.responsiblePitcher == Self.id("relie002"))
        #expect(state.pitching(.home).pitchers.map(\.description) == ["home001", "relie001", "relie002"])
    }

    @Test func pinchHitterStrikeoutWithTwoStrikesInheritedIsChargedToTheReplacedBatter() throws {
        var state = Self.newGame()
        try state.substitute(
            Appearance(player: Self.id("pinch001"), side: .away, battingSlot: 1, position: 11),
            batter: Self.id("away001"),
            count: PitchCount(balls: 1, strikes: 2))
        let strikeout = try Self.play(&state, "K", by: "pinch001")
        #expect(strikeout.batter == Self.id("pinch001"))
        #expect(strikeout.responsibleBatter == Self.id("away001"))

        // With fewer than two strikes, or any other result, it is the pinch hitter's.
        try state.substitute(
            Appearance(player: Self.id("pinch002"), side: .away, battingSlot: 2, position: 11),
            batter: Self.id("away002"),
            count: PitchCount(balls: 0, strikes: 1))
        #expect(try Self.play(&state, "K", by: "pinch002").responsibleBatter == Self.id("pinch002"))
    }

    @Test func forceOutPassesTheRetiredRunnersPitcherToTheBatter() throws {
        var state = Self.newGame()
        try Self.play(&state, "S8", by: "away001")
        try state.substitute(
            Appearance(player: Self.id("relie001"), side: .home, battingSlot: 1, position: 1),
            batter: Self.id("away002"),
            count: PitchCount(balls: 0, strikes: 0))
        let force = try Self.play(&state, "64(1)/FO.B-1", by: "away002")
        #expect(force.outs == 1)
        #expect(state.runners.first == Self.id("away002"))
        // The runner on first now is charged to the starter, whose runner was retired.
        #expect(state.responsiblePitchers.first == Self.id("home001"))
    }

    @Test func runnersNotMentionedStayAndTheRunnerAheadIsForced() throws {
        var state = Self.newGame()
        try Self.play(&state, "D7", by: "away001")
        let single = try Self.play(&state, "S8", by: "away002")
        #expect(single.play.advances.second == .second)
        #expect(state.runners.second == Self.id("away001"))
        #expect(state.runners.first == Self.id("away002"))
    }

    @Test func runsBattedInDependOnTheSituation() throws {
        var state = Self.newGame()
        try Self.play(&state, "T8", by: "away001")
        try Self.play(&state, "K", by: "away002")
        try Self.play(&state, "K", by: "away003")
        // Two out: a run on an error is not batted in.
        let error = try Self.play(&state, "E6.3-H", by: "away004")
        #expect(error.runs == 1)
        #expect(error.runsBattedIn == 0)

        var walkState = Self.newGame()
        try Self.play(&walkState, "T8", by: "away001")
        // A walk that does not force the runner home bats nothing in.
        let walk = try Self.play(&walkState, "W.3-H", by: "away002")
        #expect(walk.runsBattedIn == 0)
        try Self.play(&walkState, "W", by: "away003")
        try Self.play(&walkState, "W.1-2", by: "away004")
        try Self.play(&walkState, "W.1-2", by: "away005")
        let forced = try Self.play(&walkState, "W.3-H;2-3;1-2", by: "away006")
        #expect(forced.runsBattedIn == 1)
    }

    @Test func pitchingLineCountsWhatTheDefenceAllowed() throws {
        var state = Self.newGame()
        try Self.play(&state, "W", by: "away001")
        try Self.play(&state, "HP.1-2", by: "away002")
        try Self.play(&state, "E6.2-3;1-2", by: "away003")
        try Self.play(&state, "64(1)3/GDP", by: "away004")
        try Self.play(&state, "S8.3-H;2-H", by: "away005")
        let line = state.pitching(.home)
        #expect(line.walks == 1)
        #expect(line.hitBatsmen == 1)
        #expect(line.errors == 1)
        #expect(line.hits == 1)
        #expect(line.outs == 2)
        #expect(line.battersFaced == 5)
        #expect(line.battersReached == 4)
        #expect(line.runs == 2)
        #expect(state.score.away == 2)
    }

    @Test func placedRunnerIsChargedToThePitcherButIsNotABatterWhoReached() throws {
        var state = Self.newGame()
        state.startHalfInning(10, battingSide: .away)
        try state.placeRunner(Self.id("away009"), on: 2)
        #expect(state.runners.second == Self.id("away009"))
        #expect(state.responsiblePitchers.second == Self.id("home001"))
        #expect(state.pitching(.home).battersReached == 0)
        #expect(throws: GameStateError.self) { try state.placeRunner(Self.id("nobod001"), on: 2) }
        #expect(throws: GameStateError.self) { try state.placeRunner(Self.id("away001"), on: 4) }
    }

    @Test func newHalfInningClearsTheBasesAndMakesThePinchHitterForTheDHTheDH() throws {
        var state = Self.newGame()
        try Self.play(&state, "S8", by: "away001")
        try state.substitute(
            Appearance(player: Self.id("pinch009"), side: .away, battingSlot: 9, position: 11),
            batter: Self.id("away009"),
            count: nil)
        state.startHalfInning(1, battingSide: .home)
        #expect(state.outs == 0)
        #expect(state.occupiedBases.isEmpty)
        #expect(state.pitcher == Self.id("awayp001"))
        #expect(state.lineup(.away).entries[9].position == 10)
    }

    @Test func pitcherTakingABattingSlotEndsTheDesignatedHitter() throws {
        var state = Self.newGame()
        try state.substitute(
            Appearance(player: Self.id("awayp001"), side: .away, battingSlot: 9, position: 1), batter: .none, count: nil
        )
        let lineup = state.lineup(.away)
        #expect(lineup.designatedHitterSlot == 0)
        #expect(lineup.entries[0].player == .none)
        #expect(lineup.entries[9].player == Self.id("awayp001"))
        #expect(state.pitching(.away).pitchers == [Self.id("awayp001")])
    }

    @Test func aPlayByAPlayerNotInTheLineupIsRejectedAndChangesNothing() throws {
        var state = Self.newGame()
        let before = state
        #expect(throws: GameStateError.batterNotInLineup(Self.id("nobod001"), side: .away)) {
            try Self.play(&state, "S8", by: "nobod001")
        }
        #expect(state == before)
        #expect(throws: GameStateError.self) {
            try state.substitute(
                Appearance(player: Self.id("x0000001"), side: .home, battingSlot: 12, position: 1), batter: .none,
                count: nil)
        }
    }
}
