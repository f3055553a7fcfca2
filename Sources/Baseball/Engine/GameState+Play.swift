extension GameState {
    /// Starts a half-inning: no outs, bases empty. A pinch hitter or runner for the designated
    /// hitter becomes the designated hitter without a substitution record.
    package mutating func startHalfInning(_ inning: Int, battingSide: Side) {
        self.inning = inning
        self.battingSide = battingSide
        outs = 0
        runners = PerBase(repeating: .none)
        responsiblePitchers = PerBase(repeating: .none)
        for side in Side.allCases {
            let slot = Int(designatedHitterSlots[side])
            if slot > 0 && battingPositions[side.rawValue * 10 + slot] > Position.designatedHitter {
                battingPositions[side.rawValue * 10 + slot] = Position.designatedHitter
            }
        }
    }

    /// Records the count written with a play or substitution placeholder.
    package mutating func setCount(_ count: PitchCount?) {
        self.count = count
    }

    /// Puts `runner` on `base` before a play without a plate appearance: the automatic runner of
    /// an extra inning. He is charged to the pitcher now on the mound.
    package mutating func placeRunner(_ runner: PlayerID, on base: Int) throws(GameStateError) {
        guard (1...3).contains(base) else { throw .invalidBase(runner, side: battingSide) }
        guard isInBattingLineup(runner) else { throw .runnerNotInLineup(runner, side: battingSide) }
        runners[base] = runner
        responsiblePitchers[base] = pitcher
    }

    /// Charges the runner on `base` to `pitcher` (a scorer's correction of responsibility).
    package mutating func setResponsiblePitcher(_ pitcher: PlayerID, on base: Int) {
        guard (1...3).contains(base) else { return }
        responsiblePitchers[base] = pitcher
    }

    /// The batting team's next batter is the one in `slot` (a correction for batting out of order).
    package mutating func setNextBattingSlot(_ slot: Int) {
        guard (1...9).contains(slot) else { return }
        nextBattingSlot[battingSide] = slot
    }

    /// Applies one play by `batter` and returns what it did.
    ///
    /// Runners the play does not mention stay on their base. Two run-batted-in rules that need
    /// the situation are applied here: no RBI on an error with two out for the runner from third
    /// (unless marked explicitly), and none on a walk that does not force the runner home.
    package mutating func apply(_ play: Play, batter: PlayerID) throws(GameStateError) -> PlayResult {
        guard let batterSlot = battingSlot(of: batter, side: battingSide) else {
            throw .batterNotInLineup(batter, side: battingSide)
        }
        var play = play
        for base in 1...3
        where play.advances[base] == .none && !runners[base].isNone && !play.putOuts[base] {
            play.advances[base] = .base(base)
        }
        if play.eventType == .error && outs == 2 && play.rbi.third == .credited {
            play.rbi.third = .none
        } else if play.eventType.isWalk && (runners.second.isNone || runners.first.isNone) {
            play.rbi.third = .none
        }

        let fielding = fieldingSide.rawValue
        let pitcher = self.pitcher
        let walkCharged = play.eventType.isWalk && !walkPitcher.isNone
        let result = PlayResult(
            play: play,
            inning: inning,
            battingSide: battingSide,
            batter: batter,
            responsibleBatter: play.eventType == .strikeout && !strikeoutBatter.isNone ? strikeoutBatter : batter,
            pitcher: pitcher,
            responsiblePitcher: walkCharged ? walkPitcher : pitcher,
            outsBefore: outs,
            countBefore: count,
            scoreBefore: score,
            runnersBefore: runners,
            responsiblePitchersBefore: responsiblePitchers
        )

        playCount += 1
        let runs = play.runs
        score[battingSide] += runs
        outs += play.outs
        pitchingLines[fielding].runs += runs
        pitchingLines[fielding].outs += play.outs
        pitchingLines[fielding].errors += play.errors.count
        if play.eventType.isHit { pitchingLines[fielding].hits += 1 }

        moveRunners(play, batter: batter, batterCharge: walkCharged ? walkPitcher : pitcher)

        if play.eventType.endsPlateAppearance {
            pitchingLines[fielding].battersFaced += 1
            if play.batterReachedBase { pitchingLines[fielding].battersReached += 1 }
            if play.eventType.isWalk { pitchingLines[fielding].walks += 1 }
            if play.eventType == .hitByPitch { pitchingLines[fielding].hitBatsmen += 1 }
            nextBattingSlot[battingSide] = batterSlot >= 9 ? 1 : batterSlot + 1
            walkPitcher = .none
            strikeoutBatter = .none
        }
        return result
    }

    /// Moves runners and the batter to where the play sent them, keeping the pitcher responsible
    /// for each. When a runner is retired on a force or fielder's choice, the runner who takes his
    /// place inherits his pitcher (the official rule on relief pitchers), so responsibilities
    /// shift back towards the batter.
    private mutating func moveRunners(_ play: Play, batter: PlayerID, batterCharge: PlayerID) {
        let advances = play.advances
        responsiblePitchers[0] = batterCharge

        if advances.third.scored || play.putOuts.contains(.third) {
            if play.fieldersChoiceOuts.contains(.third) && play.putOuts.contains(.third) {
                passResponsibilityBack(from: 3)
            }
            clearBase(3)
        }
        if advances.second == .third { moveRunner(from: 2, to: 3) }
        if advances.second.rawValue >= 3 || play.putOuts.contains(.second) {
            if play.fieldersChoiceOuts.contains(.second) && play.putOuts.contains(.second) {
                passResponsibilityBack(from: 2)
            }
            clearBase(2)
        }
        if advances.first == .second {
            moveRunner(from: 1, to: 2)
        } else if advances.first == .third {
            moveRunner(from: 1, to: 3)
        }
        if advances.first.rawValue >= 2 || play.putOuts.contains(.first) {
            if play.fieldersChoiceOuts.contains(.first) && play.putOuts.contains(.first) {
                responsiblePitchers[0] = responsiblePitchers[1]
            }
            clearBase(1)
        }
        // Runners sent back a base (rare: a runner who passed a base he must retouch) move after
        // the forward moves so they do not overwrite them.
        if advances.third == .second {
            moveRunner(from: 3, to: 2)
            clearBase(3)
        } else if advances.third == .first {
            moveRunner(from: 3, to: 1)
            clearBase(3)
        }
        if advances.second == .first {
            moveRunner(from: 2, to: 1)
            clearBase(2)
        }
        if let base = advances.batter.base {
            runners[base] = batter
            responsiblePitchers[base] = responsiblePitchers[0]
        }
        responsiblePitchers[0] = .none
    }

    private mutating func passResponsibilityBack(from base: Int) {
        var lower = base - 1
        while lower > 0 {
            if !runners[lower].isNone {
                passResponsibilityBack(from: lower)
                responsiblePitchers[lower] = responsiblePitchers[base]
                return
            }
            lower -= 1
        }
        responsiblePitchers[0] = responsiblePitchers[base]
    }

    private mutating func moveRunner(from: Int, to: Int) {
        runners[to] = runners[from]
        responsiblePitchers[to] = responsiblePitchers[from]
    }

    private mutating func clearBase(_ base: Int) {
        runners[base] = .none
        responsiblePitchers[base] = .none
    }
}
