import Baseball

/// Follows one game from its normalised updates: applies them to the engine, follows both
/// no-hit bids, and derives the moments each update produces. The same for every source.
package struct GameMonitor: Sendable {
    package let gameID: String
    package private(set) var state: GameState
    package private(set) var tracker: BidTracker
    package private(set) var isFinished = false

    package init(gameID: String, starters: [Appearance], homeBatsFirst: Bool = false) {
        self.gameID = gameID
        state = GameState(starters: starters, homeBatsFirst: homeBatsFirst)
        tracker = BidTracker(startingFrom: state)
    }

    /// Applies one update and returns the moments it produced. An update that does not fit the
    /// game throws and changes nothing.
    package mutating func apply(_ update: GameUpdate) throws(GameStateError) -> [Moment] {
        let before = tracker
        var next = state
        switch update {
        case .play(let record):
            if let result = try next.apply(record) {
                tracker.record(result, number: next.playCount)
            }
        case .substitution(let appearance):
            try next.apply(appearance)
            if appearance.position == Position.pitcher {
                tracker.recordPitcher(appearance.player, side: appearance.side)
            }
        }
        state = next
        return moments(since: before)
    }

    /// The game is over: settles both bids and returns the final moments.
    package mutating func finish(scheduledInnings: Int) -> [Moment] {
        guard !isFinished else { return [] }
        let before = tracker
        tracker.finish(state, scheduledInnings: scheduledInnings)
        isFinished = true
        return moments(since: before)
    }

    private func moments(since before: BidTracker) -> [Moment] {
        let context = MomentContext(gameID: gameID, after: state)
        return Side.allCases.flatMap { side in
            before[side] == tracker[side]
                ? [] : MomentDetector.moments(from: before[side], to: tracker[side], in: context)
        }
    }

    /// Every moment of a whole game: replays `updates` on a fresh monitor, then finishes it when
    /// `final` (scheduled innings given). Recomputing a game after a scoring change this way and
    /// comparing bids is how revived and newly broken bids are found.
    package static func replay(
        gameID: String, starters: [Appearance], homeBatsFirst: Bool, updates: [GameUpdate], finalInnings: Int?
    ) throws(GameStateError) -> (monitor: GameMonitor, moments: [Moment]) {
        var monitor = GameMonitor(gameID: gameID, starters: starters, homeBatsFirst: homeBatsFirst)
        var moments: [Moment] = []
        for update in updates {
            moments += try monitor.apply(update)
        }
        if let finalInnings { moments += monitor.finish(scheduledInnings: finalInnings) }
        return (monitor, moments)
    }
}
