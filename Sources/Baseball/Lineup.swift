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
package struct Appearance: Sendable, Hashable, Codable {
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

/// One team's batting order at a moment: slots 1-9, and slot 0 for a pitcher who does not bat.
package struct Lineup: Sendable, Hashable {
    package struct Entry: Sendable, Hashable {
        package var player: PlayerID
        package var position: UInt8
    }

    /// Indexed by batting slot 0-9.
    package var entries: [Entry]
    /// The batting slot of the designated hitter, 0 when none.
    package var designatedHitterSlot: UInt8

    /// The batting slot (0-9) of `player`, or nil when he is not in the lineup.
    package func slot(of player: PlayerID) -> Int? {
        entries.firstIndex { $0.player == player }
    }
}
