/// One batter's line in a game so far: what a box score prints beside his name and in the lines
/// below the table.
package struct BattingLine: Sendable, Hashable, Codable {
    package var plateAppearances = 0
    package var atBats = 0
    package var runs = 0
    package var hits = 0
    package var doubles = 0
    package var triples = 0
    package var homeRuns = 0
    package var runsBattedIn = 0
    package var walks = 0
    package var intentionalWalks = 0
    package var strikeouts = 0
    package var groundedIntoDoublePlays = 0
    package var hitByPitch = 0
    package var sacrificeHits = 0
    package var sacrificeFlies = 0
    package var stolenBases = 0
    package var caughtStealing = 0
    /// Errors charged to him in the field.
    package var errors = 0

    package init() {}
}

/// Every batter's line in a game, in batting order with each slot's substitutes after the player
/// they replaced, built from the lineups and the plays as they are applied.
///
/// Credits follow the official scoring rules as Chadwick's `cwbox` applies them to Retrosheet's
/// files: the batter charged with a strikeout he inherited with two strikes
/// (`PlayResult.responsibleBatter`), a run to whoever crossed the plate, runs batted in on a
/// plate appearance to its batter; team runners left on base are the side's plate appearances
/// and placed runners less its outs and runs. Pure: no clock, no I/O.
package struct BattingLines: Sendable, Hashable {
    /// One player's place in the batting order.
    package struct Entry: Sendable, Hashable, Codable {
        package var player: PlayerID
        package var side: Side
        /// Batting order 1-9, or 0 for a pitcher who does not bat.
        package var slot: Int
        /// 1 for the starter of the slot, 2 for the first to replace him ...
        package var sequence: Int
        /// Every position he played, in order (see `Position`: 10 designated hitter, 11 pinch
        /// hitter, 12 pinch runner).
        package var positions: [UInt8]
        /// The inning he came in as a pinch hitter or runner.
        package var pinchHitInning: Int?
        package var pinchRunInning: Int?
        package var line = BattingLine()
    }

    /// What a side did at the plate as a team, beyond the sum of its batters' lines.
    package struct Team: Sendable, Hashable, Codable {
        package var plateAppearances = 0
        /// Runners placed on base without batting (the extra-inning runner).
        package var placedRunners = 0
        package var outs = 0
        package var runs = 0
        /// At bats and hits with a runner on second or third.
        package var scoringPositionAtBats = 0
        package var scoringPositionHits = 0

        /// Runners left on base: every batter or placed runner who neither scored nor was put out.
        package var leftOnBase: Int { plateAppearances + placedRunners - outs - runs }
    }

    /// Every entry, in order of entry.
    package private(set) var entries: [Entry] = []
    package private(set) var teams = PerSide(repeating: Team())
    /// The entries of each slot (`side * 10 + slot`), the one in the game last.
    private var slots = [[Int]](repeating: [], count: 20)

    package init() {}

    /// `side`'s batters in batting order, each slot's substitutes after the player they replaced.
    package func batters(of side: Side) -> [Entry] {
        (0...9).flatMap { slot in slots[side.rawValue * 10 + slot].map { entries[$0] } }.sorted {
            ($0.slot == 0 ? 10 : $0.slot, $0.sequence) < ($1.slot == 0 ? 10 : $1.slot, $1.sequence)
        }
    }

    /// `player`'s line so far for `side` (his entry in the batting order); nil when he has none.
    package func line(of player: PlayerID, side: Side) -> BattingLine? {
        batting(player, side: side).map { entries[$0].line }
    }

    /// The starters of both sides.
    package mutating func start(_ starters: [Appearance]) {
        for starter in starters { add(starter.player, side: starter.side, slot: Int(starter.battingSlot)) }
        for starter in starters {
            guard let index = current(side: starter.side, slot: Int(starter.battingSlot)) else { continue }
            entries[index].positions.append(starter.position)
        }
    }

    /// A player entering in `inning`; `designatedHitterSlot` is his side's before he enters.
    package mutating func enter(_ appearance: Appearance, inning: Int, designatedHitterSlot: Int) {
        let side = appearance.side
        let slot = Int(appearance.battingSlot)
        guard slot <= 9 else { return }
        if let index = current(side: side, slot: slot), entries[index].player == appearance.player {
            // A player changing position in his own slot.
        } else if slot != 0, let pitcher = current(side: side, slot: 0), entries[pitcher].player == appearance.player {
            // The pitcher who did not bat takes a place in the order: the side loses the
            // designated hitter, and he moves from slot 0 to it.
            slots[side.rawValue * 10].removeLast()
            entries[pitcher].slot = slot
            entries[pitcher].sequence = slots[side.rawValue * 10 + slot].count + 1
            slots[side.rawValue * 10 + slot].append(pitcher)
        } else {
            add(appearance.player, side: side, slot: slot)
            let index = entries.count - 1
            if appearance.position == Position.pinchHitter { entries[index].pinchHitInning = inning }
            if appearance.position == Position.pinchRunner { entries[index].pinchRunInning = inning }
        }
        guard let index = current(side: side, slot: slot) else { return }
        entries[index].positions.append(appearance.position)
        // A pinch hitter or runner for the designated hitter becomes the designated hitter.
        if appearance.position >= Position.pinchHitter, slot != 0, slot == designatedHitterSlot {
            entries[index].positions.append(Position.designatedHitter)
        }
    }

    /// A runner placed on base before a play (the extra-inning runner on second).
    package mutating func placeRunner(side: Side) {
        teams[side].placedRunners += 1
    }

    /// Credits one play; `fielders` names the fielding side's players by position (1-9).
    package mutating func record(_ result: PlayResult, fielders: (Int) -> PlayerID) {
        let side = result.battingSide
        let play = result.play
        teams[side].outs += play.outs
        teams[side].runs += play.runs
        let scoringPosition = !result.runnersBefore.second.isNone || !result.runnersBefore.third.isNone
        if let batter = batting(result.responsibleBatter, side: side) {
            var line = entries[batter].line
            if play.eventType.endsPlateAppearance {
                line.plateAppearances += 1
                teams[side].plateAppearances += 1
                line.runsBattedIn += play.runsBattedIn
            }
            if play.isAtBat {
                line.atBats += 1
                if scoringPosition { teams[side].scoringPositionAtBats += 1 }
                if play.eventType.isHit {
                    line.hits += 1
                    if scoringPosition { teams[side].scoringPositionHits += 1 }
                    switch play.eventType {
                    case .double: line.doubles += 1
                    case .triple: line.triples += 1
                    case .homeRun: line.homeRuns += 1
                    default: break
                    }
                } else if play.eventType == .strikeout {
                    line.strikeouts += 1
                } else if play.modifiers.contains(.groundedIntoDoublePlay) {
                    line.groundedIntoDoublePlays += 1
                }
            } else if play.eventType.isWalk {
                line.walks += 1
                if play.eventType == .intentionalWalk { line.intentionalWalks += 1 }
            } else if play.eventType == .hitByPitch {
                line.hitByPitch += 1
            }
            if play.modifiers.contains(.sacrificeHit) { line.sacrificeHits += 1 }
            if play.modifiers.contains(.sacrificeFly) { line.sacrificeFlies += 1 }
            if play.advances.batter.scored { line.runs += 1 }
            entries[batter].line = line
        } else if play.eventType.endsPlateAppearance {
            teams[side].plateAppearances += 1
        }
        for base in 1...3 {
            let runner = result.runnersBefore[base]
            guard !runner.isNone, let index = batting(runner, side: side) else { continue }
            if play.advances[base].scored { entries[index].line.runs += 1 }
            if play.stolenBases[base] { entries[index].line.stolenBases += 1 }
            if play.caughtStealing[base] { entries[index].line.caughtStealing += 1 }
        }
        for error in 0..<play.errors.count {
            let position = Int(play.errors[error])
            guard (1...9).contains(position) else { continue }
            let fielder = fielders(position)
            if let index = entries.lastIndex(where: { $0.player == fielder && $0.side == side.opponent }) {
                entries[index].line.errors += 1
            }
        }
    }

    private mutating func add(_ player: PlayerID, side: Side, slot: Int) {
        guard slot >= 0 && slot <= 9 else { return }
        let key = side.rawValue * 10 + slot
        entries.append(
            Entry(player: player, side: side, slot: slot, sequence: slots[key].count + 1, positions: []))
        slots[key].append(entries.count - 1)
    }

    private func current(side: Side, slot: Int) -> Int? {
        slots[side.rawValue * 10 + slot].last
    }

    /// The entry of `player` in `side`'s batting order (slots 1-9): the one in the game, or the
    /// latest he had.
    private func batting(_ player: PlayerID, side: Side) -> Int? {
        for slot in 1...9 {
            if let index = current(side: side, slot: slot), entries[index].player == player { return index }
        }
        return entries.lastIndex { $0.player == player && $0.side == side && $0.slot != 0 }
    }
}
