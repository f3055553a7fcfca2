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

        let index = side.rawValue * 10 + slot
        let removed = battingOrder[index]
        battingOrder[index] = change.player
        battingPositions[index] = position

        if let count {
            if position == Position.pitcher && count.chargesWalkToPreviousPitcher {
                walkPitcher = fielders[side.rawValue * 10 + 1]
            } else if position == Position.pinchHitter && strikeoutBatter.isNone && count.strikes == 2 {
                strikeoutBatter = batter
            }
        }

        if position <= 9 {
            fielders[side.rawValue * 10 + Int(position)] = change.player
            if position == Position.pitcher {
                if !pitchingLines[side.rawValue].pitchers.contains(change.player) {
                    pitchingLines[side.rawValue].pitchers.append(change.player)
                }
                if slot > 0 && !battingOrder[side.rawValue * 10].isNone {
                    // The pitcher enters the batting order: the designated hitter is gone.
                    dropDesignatedHitter(side)
                }
            }
        } else if position == Position.pinchRunner {
            for base in 1...3 where !removed.isNone && runners[base] == removed {
                runners[base] = change.player
                break
            }
        }

        if slot > 0 && battingOrder[side.rawValue * 10] == change.player {
            // The pitcher took a batting slot some other way (as a pinch hitter, say).
            dropDesignatedHitter(side)
        }
    }

    private mutating func dropDesignatedHitter(_ side: Side) {
        battingOrder[side.rawValue * 10] = .none
        battingPositions[side.rawValue * 10] = 0
        designatedHitterSlots[side] = 0
    }
}
