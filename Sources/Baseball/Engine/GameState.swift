/// The state of a game between two plays: the situation, both lineups and defences, the runners
/// with the pitcher responsible for each, and what each team's pitchers have allowed.
///
/// A pure value: `apply(_:batter:)`, `substitute(_:batter:count:)` and
/// `startHalfInning(_:battingSide:)` change it and return what happened; nothing here reads a
/// clock or does I/O. Any source of plays drives it the same way.
///
/// Lineups and defences live in flat arrays indexed by `side * 10 + slot` (or position): reading
/// them is a plain load, and a copy of the state shares them until one side changes.
package struct GameState: Sendable, Equatable {
    package internal(set) var inning = 1
    package internal(set) var battingSide: Side
    package internal(set) var outs = 0
    /// The count written with the latest play or substitution placeholder.
    package internal(set) var count: PitchCount?
    package internal(set) var score = PerSide(repeating: 0)
    /// Runner on each base (index 1-3); index 0 is always `.none`.
    package internal(set) var runners = PerBase(repeating: PlayerID.none)
    /// The pitcher charged with each runner (index 1-3) should he score.
    package internal(set) var responsiblePitchers = PerBase(repeating: PlayerID.none)
    /// Plays applied so far (substitution placeholders are not plays).
    package internal(set) var playCount = 0
    /// The batting slot (1-9) due up next for each team.
    package internal(set) var nextBattingSlot = PerSide(repeating: 1)
    /// The batter of the latest play record (the plate appearance a substitution happens in).
    package internal(set) var currentBatter = PlayerID.none

    /// Batting orders: `side * 10 + slot`, slot 0 the pitcher who does not bat.
    var battingOrder = [PlayerID](repeating: .none, count: 20)
    var battingPositions = [UInt8](repeating: 0, count: 20)
    var designatedHitterSlots = PerSide<UInt8>(repeating: 0)
    /// Defences: `side * 10 + position` (1-9).
    var fielders = [PlayerID](repeating: .none, count: 20)
    /// Keyed by the pitching side's raw value.
    var pitchingLines = [PitchingLine(), PitchingLine()]

    /// A pitcher relieved in the middle of a plate appearance with the count in the hitter's
    /// favour, who is charged with the walk should the batter walk.
    package internal(set) var walkPitcher = PlayerID.none
    /// A batter replaced with two strikes, who is charged with the strikeout should the pinch
    /// hitter strike out.
    package internal(set) var strikeoutBatter = PlayerID.none

    /// A game about to start, with the starters (`slot` 0 for a pitcher who does not bat).
    package init(starters: [Appearance], homeBatsFirst: Bool = false) {
        battingSide = homeBatsFirst ? .home : .away
        for starter in starters {
            let index = starter.side.rawValue * 10 + Int(starter.battingSlot)
            battingOrder[index] = starter.player
            battingPositions[index] = starter.position
            if starter.position >= 1 && starter.position <= 9 {
                fielders[starter.side.rawValue * 10 + Int(starter.position)] = starter.player
                if starter.position == Position.pitcher {
                    pitchingLines[starter.side.rawValue].pitchers.append(starter.player)
                }
            } else if starter.position == Position.designatedHitter {
                designatedHitterSlots[starter.side] = starter.battingSlot
            }
        }
    }

    /// The team in the field.
    package var fieldingSide: Side { battingSide.opponent }

    /// The pitcher now on the mound for the team in the field.
    package var pitcher: PlayerID { fielders[battingSide.opponent.rawValue * 10 + 1] }

    /// The player at `position` (1-9) for `side`.
    package func fielder(_ position: Int, of side: Side) -> PlayerID {
        fielders[side.rawValue * 10 + position]
    }

    /// What `side`'s pitchers have allowed so far.
    package func pitching(_ side: Side) -> PitchingLine {
        pitchingLines[side.rawValue]
    }

    /// `side`'s batting order as it stands.
    package func lineup(_ side: Side) -> Lineup {
        let base = side.rawValue * 10
        return Lineup(
            entries: (0..<10).map {
                Lineup.Entry(player: battingOrder[base + $0], position: battingPositions[base + $0])
            },
            designatedHitterSlot: designatedHitterSlots[side])
    }

    /// The batting slot (0-9) of `player` in `side`'s lineup, or nil.
    package func battingSlot(of player: PlayerID, side: Side) -> Int? {
        let base = side.rawValue * 10
        for slot in 0..<10 where battingOrder[base + slot] == player {
            return slot
        }
        return nil
    }

    /// Whether `player` is in the batting team's lineup (slot 0 included, for a pitcher batting
    /// while the designated hitter is in use).
    package func isInBattingLineup(_ player: PlayerID) -> Bool {
        battingSlot(of: player, side: battingSide) != nil
    }

    /// Bases occupied, as flags 1...3.
    package var occupiedBases: BaseFlags {
        var flags: BaseFlags = []
        for base in 1...3 where !runners[base].isNone {
            flags.insert(.at(base))
        }
        return flags
    }
}
