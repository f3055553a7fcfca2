/// One pitcher's line in a game so far: what a box score prints beside his name.
package struct PitcherLine: Sendable, Hashable, Codable {
    package var pitcher: PlayerID
    /// The team he pitches for.
    package var side: Side
    /// Outs recorded while he was on the mound (innings pitched are `outs / 3` and `outs % 3`).
    package var outs = 0
    package var hits = 0
    /// Runs charged to him: the runners he put on base who scored, whoever was pitching then.
    package var runs = 0
    /// Of those, the runs the scorer did not make unearned (`(UR)`; `(TUR)` is earned to him).
    package var earnedRuns = 0
    package var walks = 0
    package var strikeouts = 0
    package var homeRuns = 0
    package var battersFaced = 0
    /// Pitches thrown; nil when the source did not say for some of his plate appearances.
    package var pitches: Int? = 0

    package init(pitcher: PlayerID, side: Side) {
        self.pitcher = pitcher
        self.side = side
    }

    /// Innings pitched as a box score writes them: `6.2` is six innings and two outs.
    package var inningsPitched: String { Words.inningsPitched(outs: outs) }
}

/// Every pitcher's line in a game, in order of entry, built from the plays as they are applied.
///
/// Charges follow the official scoring rules the engine already keeps: a hit, a strikeout and an
/// out to the pitcher on the mound; a walk to the relieved pitcher when he had the count
/// (`PlayResult.responsiblePitcher`); a run to the pitcher responsible for the runner who scored
/// (`PlayResult.responsiblePitchersBefore`). Pure: no clock, no I/O.
package struct PitcherLines: Sendable, Hashable {
    package private(set) var lines: [PitcherLine] = []
    /// Pitches of the plate appearance in progress already counted (a plate appearance written
    /// over several records repeats its earlier pitches).
    private var pitchesCounted = 0

    package init() {}

    /// `side`'s pitchers' lines, in order of entry.
    package func lines(of side: Side) -> [PitcherLine] { lines.filter { $0.side == side } }

    package func line(of pitcher: PlayerID) -> PitcherLine? { lines.first { $0.pitcher == pitcher } }

    /// Pitches `side`'s pitchers have thrown; nil when one line's are not known.
    package func pitches(of side: Side) -> Int? {
        var total = 0
        for line in lines where line.side == side {
            guard let pitches = line.pitches else { return nil }
            total += pitches
        }
        return total
    }

    /// A pitcher took the mound (the starter, or a reliever).
    package mutating func enter(_ pitcher: PlayerID, side: Side) {
        _ = index(pitcher, side: side)
    }

    /// A half-inning began: a batter at the plate when the last one ended starts a new count.
    package mutating func startHalfInning() {
        pitchesCounted = 0
    }

    /// A plate appearance record without a play, thrown to `pitcher` with `pitches` (cumulative in
    /// the plate appearance) thrown so far.
    package mutating func placeholder(pitcher: PlayerID, side: Side, pitches: UInt8?) {
        count(pitches, to: index(pitcher, side: side))
    }

    /// Charges one play.
    package mutating func record(_ result: borrowing PlayResult, pitches: UInt8?) {
        let side = result.pitchingSide
        let mound = index(result.pitcher, side: side)
        let charged = index(result.responsiblePitcher, side: side)
        count(pitches, to: mound)
        let play = result.play
        lines[mound].outs += play.outs
        if play.eventType.isHit { lines[charged].hits += 1 }
        if play.eventType == .homeRun { lines[charged].homeRuns += 1 }
        if play.eventType.isWalk { lines[charged].walks += 1 }
        if play.eventType == .strikeout { lines[mound].strikeouts += 1 }
        if play.eventType.endsPlateAppearance {
            lines[charged].battersFaced += 1
            pitchesCounted = 0
        }
        for base in 0...3 where play.advances[base].scored {
            let runner = base == 0 ? result.responsiblePitcher : result.responsiblePitchersBefore[base]
            let line = runner.isNone ? charged : index(runner, side: side)
            lines[line].runs += 1
            if play.advances[base] != .homeUnearned { lines[line].earnedRuns += 1 }
        }
    }

    /// Adds the pitches of a record beyond those already counted for its plate appearance.
    private mutating func count(_ pitches: UInt8?, to line: Int) {
        guard let pitches else {
            lines[line].pitches = nil
            return
        }
        // Fewer than counted: a new sequence (the batter of an inning that ended with him at bat).
        if Int(pitches) < pitchesCounted { pitchesCounted = 0 }
        let new = Int(pitches) - pitchesCounted
        pitchesCounted = Int(pitches)
        lines[line].pitches? += new
    }

    private mutating func index(_ pitcher: PlayerID, side: Side) -> Int {
        if let found = lines.lastIndex(where: { $0.pitcher == pitcher }) { return found }
        lines.append(PitcherLine(pitcher: pitcher, side: side))
        return lines.count - 1
    }
}
