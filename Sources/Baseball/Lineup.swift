/// A fielding position as Retrosheet numbers it: 1 pitcher ... 9 right field, 10 designated
/// hitter, 11 pinch hitter, 12 pinch runner.
package enum Position {
    package static let pitcher: UInt8 = 1
    package static let catcher: UInt8 = 2
    package static let designatedHitter: UInt8 = 10
    package static let pinchHitter: UInt8 = 11
    package static let pinchRunner: UInt8 = 12
}

/// A player entering the game: a starter or a substitute.
package struct Appearance: Sendable, Hashable {
    package var player: PlayerID
    package var side: Side
    /// Batting order 1-9, or 0 for a pitcher who does not bat (designated hitter in use).
    package var battingSlot: UInt8
    /// See `Position`.
    package var position: UInt8

    package init(player: PlayerID, side: Side, battingSlot: UInt8, position: UInt8) {
        self.player = player
        self.side = side
        self.battingSlot = battingSlot
        self.position = position
    }
}

/// One team's batting order: slots 1-9, and slot 0 for a pitcher who does not bat.
package struct Lineup: Sendable {
    package struct Entry: Sendable, Hashable {
        package var player: PlayerID
        package var position: UInt8
    }

    package var entries: InlineArray<10, Entry> = .init(repeating: Entry(player: .none, position: 0))
    /// The batting slot of the designated hitter, 0 when none.
    package var designatedHitterSlot: UInt8 = 0

    package init() {}

    
    package subscript(slot: Int) -> Entry {
        get { entries[slot] }
        set { entries[slot] = newValue }
    }

    /// The batting slot (0-9) of `player`, or nil when he is not in the lineup.
    
    package func slot(of player: PlayerID) -> Int? {
        for slot in 0..<10 where entries[slot].player == player {
            return slot
        }
        return nil
    }
}

extension Lineup: Equatable {
    package static func == (lhs: Lineup, rhs: Lineup) -> Bool {
        guard lhs.designatedHitterSlot == rhs.designatedHitterSlot else { return false }
        for slot in 0..<10 where lhs.entries[slot] != rhs.entries[slot] {
            return false
        }
        return true
    }
}

/// The players at positions 1-9 of a team in the field.
package struct Defense: Sendable {
    package var players: InlineArray<10, PlayerID> = .init(repeating: .none)

    package init() {}

    
    package subscript(position: Int) -> PlayerID {
        get { players[position] }
        set { players[position] = newValue }
    }

    
    package var pitcher: PlayerID { players[1] }
}

extension Defense: Equatable {
    package static func == (lhs: Defense, rhs: Defense) -> Bool {
        for position in 1..<10 where lhs.players[position] != rhs.players[position] {
            return false
        }
        return true
    }
}
