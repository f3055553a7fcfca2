/// The state of a game between two plays: the situation, both lineups and defences, the runners
/// with the pitcher responsible for each, and what each team's pitchers have allowed.
///
/// A pure value: `apply(_:batter:count:)`, `substitute(_:)` and `startHalfInning(_:battingSide:)`
/// change it and return what happened; nothing here reads a clock or does I/O. Any source of plays
/// drives it the same way.
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
    package internal(set) var lineups = PerSide(repeating: Lineup())
    package internal(set) var defenses = PerSide(repeating: Defense())
    /// Keyed by the team in the field.
    package internal(set) var pitching = PerSide(repeating: PitchingLine())
    /// Plays applied so far (substitution placeholders are not plays).
    package internal(set) var playCount = 0
    /// The batting slot (1-9) due up next for each team.
    package internal(set) var nextBattingSlot = PerSide(repeating: 1)

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
            lineups[starter.side][Int(starter.battingSlot)] = Lineup.Entry(
                player: starter.player, position: starter.position)
            if starter.position >= 1 && starter.position <= 9 {
                defenses[starter.side][Int(starter.position)] = starter.player
                if starter.position == Position.pitcher {
                    pitching[starter.side].pitchers.append(starter.player)
                }
            } else if starter.position == Position.designatedHitter {
                lineups[starter.side].designatedHitterSlot = starter.battingSlot
            }
        }
    }

    /// The team in the field.
    
    package var fieldingSide: Side { battingSide.opponent }

    /// The pitcher now on the mound for the team in the field.
    
    package var pitcher: PlayerID { defenses[battingSide.opponent].pitcher }

    /// Whether `player` is in the batting team's lineup (slot 0 included, for a pitcher batting
    /// while the designated hitter is in use).
    package func isInBattingLineup(_ player: PlayerID) -> Bool {
        lineups[battingSide].slot(of: player) != nil
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
