import Synchronization

/// One game's engine: the state and both teams' no-hit bids, driven by normalised updates. The one
/// place an update is applied — a Retrosheet file's games, a replayed day and the Stats API all
/// come through here, each update once.
///
/// Pure: no clock, no I/O. An update that does not fit the game throws and leaves the engine
/// `failed` (it may have changed the state part-way, and is not to be driven further: a follower
/// keeps the game as it was before, or starts again from the lineups when the source corrects
/// itself).
package struct GameEngine: Sendable {
    package private(set) var state: GameState
    package private(set) var tracker: BidTracker
    package private(set) var isFinished = false
    /// Whether both bids are followed (a `cwevent` export needs the plays alone).
    package let followsBids: Bool
    /// Updates applied so far: what tests count to check each update is applied once.
    package private(set) var applications = 0
    /// Set by an update that did not fit.
    package private(set) var failure: GameStateError?

    package init(starters: [Appearance], homeBatsFirst: Bool = false, followsBids: Bool = true) {
        Self.constructions?.count()
        state = GameState(starters: starters, homeBatsFirst: homeBatsFirst)
        tracker = BidTracker(startingFrom: state)
        self.followsBids = followsBids
    }

    /// What one update did.
    package enum Applied: Sendable {
        /// A play: its result; its number in the game is `state.playCount`.
        case play(PlayResult)
        /// A plate appearance record without a play (a placeholder before substitutions).
        case placeholder
        /// A player entered, in this slot and position.
        case substitution(Appearance)
    }

    /// Applies one update. Throws when it does not fit the game (see the type's note).
    @discardableResult
    package mutating func apply(_ update: GameUpdate) throws(GameStateError) -> Applied {
        precondition(failure == nil, "a failed engine is not driven further")
        let appearance: Appearance
        switch update {
        case .play(let record):
            var applied = Applied.placeholder
            try apply(play: record) { result, _ in applied = .play(copy result) }
            return applied
        case .substitution(let entering):
            appearance = entering
        case .lineupChange(let change):
            appearance = state.appearance(for: change)
        }
        applications += 1
        do {
            try state.apply(appearance)
        } catch {
            failure = error
            throw error
        }
        if followsBids && appearance.position == Position.pitcher {
            tracker.recordPitcher(appearance.player, side: appearance.side)
        }
        return .substitution(appearance)
    }

    /// Applies a plate appearance record (`GameUpdate.play`), calling `played` with the play's
    /// result and its number in the game (not for a placeholder). The same as
    /// `apply(.play(record))`, on the path every play of a season takes: the record and the result
    /// are lent, not wrapped, returned and copied out again (which cost a sixth of a season's bids).
    package mutating func apply(
        play record: borrowing PlayUpdate, _ played: (borrowing PlayResult, _ number: Int) -> Void
    ) throws(GameStateError) {
        precondition(failure == nil, "a failed engine is not driven further")
        applications += 1
        do {
            try state.begin(record)
            guard let play = record.play else { return }
            let result = try state.apply(play, batter: record.batter)
            if followsBids { tracker.record(result, number: state.playCount) }
            played(result, state.playCount)
        } catch {
            failure = error
            throw error
        }
    }

    /// The game is over: settles both bids (official or not, by MLB's rules).
    package mutating func finish(scheduledInnings: Int) {
        guard !isFinished else { return }
        tracker.finish(state, scheduledInnings: scheduledInnings)
        isFinished = true
    }
}

extension GameEngine {
    /// Counts the engines made by a task and its children, while a test holds one: that a game is
    /// applied once, by its follower, and never again to answer a request.
    @TaskLocal package static var constructions: Counter?

    package final class Counter: Sendable {
        private let value = Atomic(0)

        package init() {}

        package var total: Int { value.load(ordering: .relaxed) }

        func count() { value.add(1, ordering: .relaxed) }
    }
}
