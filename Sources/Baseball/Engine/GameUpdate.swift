/// One normalised update of a game, as every source (Retrosheet replay, the Stats API) produces
/// them, so that the engine and everything after it do not care where a game came from.
package enum GameUpdate: Sendable, Hashable, Codable {
    /// A plate appearance record: a play, or a placeholder before substitutions (`play == nil`).
    case play(PlayUpdate)
    /// A player entering the game; the plate appearance in progress is the last `.play`'s.
    case substitution(Appearance)
    /// A player entering whose batting slot the source does not give (the Stats API's
    /// substitutions often do not): the engine takes it from the lineup as it stands.
    case lineupChange(LineupChange)
}

/// A player entering the game, his batting slot to be found in the lineup: a pitcher takes the
/// slot of the pitcher he replaces (none while the designated hitter is in use); anyone else the
/// slot of the player he replaces, or his own when he only changes position.
package struct LineupChange: Sendable, Hashable, Codable {
    package var player: PlayerID
    package var side: Side
    /// See `Position`.
    package var position: UInt8
    /// The player he replaces, when the source names him.
    package var replacing: PlayerID?

    package init(player: PlayerID, side: Side, position: UInt8, replacing: PlayerID?) {
        self.player = player
        self.side = side
        self.position = position
        self.replacing = replacing
    }
}

/// A play record with what the scorer noted before it.
package struct PlayUpdate: Sendable, Hashable, Codable {
    package var inning: Int
    package var battingSide: Side
    package var batter: PlayerID
    /// The count when the play happened (or the substitution that follows a placeholder).
    package var count: PitchCount?
    /// nil for a placeholder: nothing happened on the field.
    package var play: Play?
    /// Pitches thrown in the plate appearance so far, this record's included (a plate
    /// appearance written over several records repeats its earlier pitches in each); nil when
    /// the source does not say.
    package var pitches: UInt8?
    /// A runner put on base before the play (the extra-inning runner), and the base.
    package var placedRunner: (runner: PlayerID, base: Int)? {
        get { placedRunnerBase > 0 ? (placedRunnerID, Int(placedRunnerBase)) : nil }
        set {
            placedRunnerID = newValue?.runner ?? .none
            placedRunnerBase = UInt8(newValue?.base ?? 0)
        }
    }
    /// A correction of the pitcher charged with the runner on a base.
    package var responsiblePitcher: (pitcher: PlayerID, base: Int)? {
        get { responsiblePitcherBase > 0 ? (responsiblePitcherID, Int(responsiblePitcherBase)) : nil }
        set {
            responsiblePitcherID = newValue?.pitcher ?? .none
            responsiblePitcherBase = UInt8(newValue?.base ?? 0)
        }
    }
    /// The batting slot due up (a batting-out-of-order correction), 0 when none.
    package var nextBattingSlot: UInt8 = 0

    private var placedRunnerID = PlayerID.none
    private var placedRunnerBase: UInt8 = 0
    private var responsiblePitcherID = PlayerID.none
    private var responsiblePitcherBase: UInt8 = 0

    package init(inning: Int, battingSide: Side, batter: PlayerID, count: PitchCount?, play: Play?) {
        self.inning = inning
        self.battingSide = battingSide
        self.batter = batter
        self.count = count
        self.play = play
    }
}

extension GameState {
    /// Applies one update and returns the play's result, if it was a play.
    ///
    /// A play record from a new half-inning starts it; then the adjustments noted before the play
    /// (batting slot, placed runner, responsibility) apply; then the play. A substitution applies
    /// in the context of the last play record (its batter and count).
    @discardableResult
    package mutating func apply(_ update: GameUpdate) throws(GameStateError) -> PlayResult? {
        switch update {
        case .play(let record): return try apply(record)
        case .substitution(let appearance):
            try apply(appearance)
            return nil
        case .lineupChange(let change):
            try apply(appearance(for: change))
            return nil
        }
    }

    /// The appearance `change` makes in the lineup as it stands: its batting slot found.
    package func appearance(for change: LineupChange) -> Appearance {
        let slot: Int
        if change.position == Position.pitcher {
            slot =
                lineup(change.side).designatedHitterSlot != 0
                ? 0 : battingSlot(of: fielder(1, of: change.side), side: change.side) ?? 0
        } else if let replaced = change.replacing {
            slot = battingSlot(of: replaced, side: change.side) ?? 0
        } else {
            slot = battingSlot(of: change.player, side: change.side) ?? 0
        }
        return Appearance(
            player: change.player, side: change.side, battingSlot: UInt8(slot), position: change.position)
    }

    /// Applies a play record (see `apply(_:)`).
    @discardableResult
    package mutating func apply(_ record: PlayUpdate) throws(GameStateError) -> PlayResult? {
        try begin(record)
        guard let play = record.play else { return nil }
        return try apply(play, batter: record.batter)
    }

    /// Everything of a play record but the play: a new half-inning, the adjustments noted before
    /// the play, the count. The hot replay path calls this and then `apply(_:batter:)`, which
    /// saves wrapping each result in an optional.
    package mutating func begin(_ record: PlayUpdate) throws(GameStateError) {
        if record.inning != inning || record.battingSide != battingSide {
            startHalfInning(record.inning, battingSide: record.battingSide)
        }
        if record.nextBattingSlot != 0 { setNextBattingSlot(Int(record.nextBattingSlot)) }
        if let placed = record.placedRunner { try placeRunner(placed.runner, on: placed.base) }
        if let charge = record.responsiblePitcher { setResponsiblePitcher(charge.pitcher, on: charge.base) }
        setCount(record.count)
        currentBatter = record.batter
    }

    /// Applies a substitution in the plate appearance of the latest play record.
    package mutating func apply(_ appearance: Appearance) throws(GameStateError) {
        try substitute(appearance, batter: currentBatter, count: count)
    }
}
