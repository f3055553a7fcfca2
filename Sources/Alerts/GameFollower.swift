import Baseball

/// Follows a game from a source that sends its whole list of updates every time (the Stats API's
/// live feed): the updates that extend what was seen are applied as they come; a list that no
/// longer starts with what was seen — a play re-scored from hit to error, a play removed — is
/// replayed from the start, and the moments are the difference between the bids before and after
/// (a revived bid, a bid now broken up). Pure.
package struct GameFollower: Sendable {
    package private(set) var monitor: GameMonitor
    package private(set) var starters: [Appearance]
    package private(set) var applied: [GameUpdate] = []
    package let homeBatsFirst: Bool

    package init(gameID: String, starters: [Appearance], homeBatsFirst: Bool = false) {
        self.starters = starters
        self.homeBatsFirst = homeBatsFirst
        monitor = GameMonitor(gameID: gameID, starters: starters, homeBatsFirst: homeBatsFirst)
    }

    /// What a new list of updates changes. `finalInnings` is the scheduled length once the game is
    /// over. An update the engine refuses ends the list there; the game keeps what came before.
    package mutating func follow(
        starters: [Appearance], updates: [GameUpdate], finalInnings: Int?
    ) -> (moments: [Moment], rescored: Bool) {
        var moments: [Moment] = []
        var rescored = false
        if starters == self.starters && updates.count >= applied.count
            && Array(updates.prefix(applied.count)) == applied
        {
            for update in updates.dropFirst(applied.count) {
                guard let made = try? monitor.apply(update) else { break }
                moments += made
                applied.append(update)
            }
        } else {
            rescored = true
            var replayed = GameMonitor(gameID: monitor.gameID, starters: starters, homeBatsFirst: homeBatsFirst)
            var kept: [GameUpdate] = []
            for update in updates {
                guard (try? replayed.apply(update)) != nil else { break }
                kept.append(update)
            }
            // A game already settled is settled again before the bids are compared.
            if monitor.isFinished { _ = replayed.finish(scheduledInnings: finalInnings ?? 9) }
            let context = MomentContext(gameID: monitor.gameID, after: replayed.state)
            for side in Side.allCases where monitor.tracker[side] != replayed.tracker[side] {
                moments += MomentDetector.moments(from: monitor.tracker[side], to: replayed.tracker[side], in: context)
            }
            monitor = replayed
            self.starters = starters
            applied = kept
        }
        if let finalInnings, !monitor.isFinished {
            moments += monitor.finish(scheduledInnings: finalInnings)
        }
        return (moments, rescored)
    }
}
