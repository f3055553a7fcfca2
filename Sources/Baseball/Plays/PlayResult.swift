/// What a play did, with the situation it happened in.
package struct PlayResult: Sendable, Hashable {
    /// The play as the engine applied it: runners it did not mention are shown staying on their
    /// base, and the run-batted-in rules that depend on the situation are applied.
    package var play: Play
    package var inning: Int
    package var battingSide: Side
    package var batter: PlayerID
    /// The batter charged with the result (the replaced batter on a pinch hitter's strikeout
    /// with two strikes inherited).
    package var responsibleBatter: PlayerID
    package var pitcher: PlayerID
    /// The pitcher charged with the result (a relieved pitcher on a walk he had the count for).
    package var responsiblePitcher: PlayerID
    package var outsBefore: Int
    package var countBefore: PitchCount?
    package var scoreBefore: PerSide<Int>
    /// Runners on base before the play (index 1-3).
    package var runnersBefore: PerBase<PlayerID>
    /// The pitcher charged with each runner before the play (index 1-3), should he score.
    package var responsiblePitchersBefore: PerBase<PlayerID>

    package var outs: Int { play.outs }
    package var runs: Int { play.runs }
    package var runsBattedIn: Int { play.runsBattedIn }
    package var hitValue: Int { play.eventType.hitValue }
    package var eventType: EventType { play.eventType }
    package var pitchingSide: Side { battingSide.opponent }
}

/// A play or lineup change that does not fit the game it is applied to.
package struct GameStateError: Error, Hashable, CustomStringConvertible {
    private enum Code: Hashable {
        case batterNotInLineup
        case runnerNotInLineup
        case invalidSlot
        case invalidPosition
        case invalidBase
    }

    private let code: Code
    package let player: PlayerID
    package let side: Side

    private init(_ code: Code, player: PlayerID, side: Side) {
        self.code = code
        self.player = player
        self.side = side
    }

    package static func batterNotInLineup(_ player: PlayerID, side: Side) -> Self {
        Self(.batterNotInLineup, player: player, side: side)
    }
    package static func runnerNotInLineup(_ player: PlayerID, side: Side) -> Self {
        Self(.runnerNotInLineup, player: player, side: side)
    }
    package static func invalidSlot(_ player: PlayerID, side: Side) -> Self {
        Self(.invalidSlot, player: player, side: side)
    }
    package static func invalidPosition(_ player: PlayerID, side: Side) -> Self {
        Self(.invalidPosition, player: player, side: side)
    }
    package static func invalidBase(_ player: PlayerID, side: Side) -> Self {
        Self(.invalidBase, player: player, side: side)
    }

    /// Whether the error is about a runner put on base before a play (Retrosheet's `radj`).
    package var concernsPlacedRunner: Bool { code == .runnerNotInLineup || code == .invalidBase }

    package var description: String {
        let team = side == .away ? "the visiting team" : "the home team"
        switch code {
        case .batterNotInLineup: return "batter \(player) is not in the lineup of \(team)"
        case .runnerNotInLineup: return "runner \(player) is not in the lineup of \(team)"
        case .invalidSlot: return "\(player) enters \(team) at a batting slot outside 0-9"
        case .invalidPosition: return "\(player) enters \(team) at a position outside 1-12"
        case .invalidBase: return "\(player) of \(team) is placed on a base outside 1-3"
        }
    }
}
