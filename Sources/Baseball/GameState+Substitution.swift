extension GameState {
    /// Puts a substitute into the game.
    ///
    /// `batter` and `count` describe the plate appearance in progress (the play record the
    /// substitution follows): a reliever who enters with the count in the hitter's favour leaves
    /// the walk charged to the pitcher he replaces, and a pinch hitter who inherits two strikes
    /// leaves the strikeout charged to the batter he replaces.
    package mutating func substitute(
        _ change: Appearance, batter: PlayerID, count: PitchCount?
    ) throws(GameStateError) {
        let side = change.side
        let slot = Int(change.battingSlot)
        let position = change.position
        guard slot >= 0 && slot <= 9 else { throw .invalidSlot(change.player, side: side) }
        guard position >= 1 && position <= Position.pinchRunner else {
            throw .invalidPosition(change.player, side: side)
        }

        let removed = lineups[side][slot].player
        lineups[side][slot] = Lineup.Entry(player: change.player, position: position)

        if let count {
            if position == Position.pitcher && count.chargesWalkToPreviousPitcher {
                walkPitcher = defenses[side].pitcher
            } else if position == Position.pinchHitter && strikeoutBatter.isNone && count.strikes == 2 {
                strikeoutBatter = batter
            }
        }

        if position <= 9 {
            defenses[side][Int(position)] = change.player
            if position == Position.pitcher {
                if !pitching[side].pitchers.contains(change.player) {
                    pitching[side].pitchers.append(change.player)
                }
                if slot > 0 && !lineups[side][0].player.isNone {
                    // The pitcher enters the batting order: the designated hitter is gone.
                    dropDesignatedHitter(side)
                }
            }
        } else if position == Position.pinchRunner {
            for base in 1...3 where runners[base] == removed {
                runners[base] = change.player
                break
            }
        }

        if slot > 0 && lineups[side][0].player == change.player {
            // The pitcher took a batting slot some other way (as a pinch hitter, say).
            dropDesignatedHitter(side)
        }
    }

    private mutating func dropDesignatedHitter(_ side: Side) {
        lineups[side][0] = Lineup.Entry(player: .none, position: 0)
        lineups[side].designatedHitterSlot = 0
    }
}
