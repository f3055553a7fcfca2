import Baseball
import Synchronization

/// What each bid's no-hitter would mean from the seasons held ("The White Sox's first no-hitter
/// since Philip Humber's perfect game on April 21, 2012; the 1st of 2020."), looked up while the
/// bid is still going (the history warmer does, from its 4th hitless inning) and read by the game
/// hub: a question asked and not yet answered is waited for before a play that may end the bid,
/// so the completed moment carries it however fast the game goes.
package final class NoHitterMeanings: Sendable {
    private struct Inner {
        var known: [String: PerSide<String?>] = [:]
        /// Questions asked and not answered, by game.
        var open: [String: Int] = [:]
        var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    }

    private let inner = Mutex(Inner())

    package init() {}

    /// What a no-hitter by each side of `gameID` would mean, as far as it is known.
    package func meanings(gameID: String) -> PerSide<String?> {
        inner.withLock { $0.known[gameID] } ?? PerSide(repeating: nil)
    }

    /// A question about `gameID` is being looked up: `set` answers it.
    package func asked(gameID: String) {
        inner.withLock { $0.open[gameID, default: 0] += 1 }
    }

    /// Keeps what a no-hitter by `side` in `gameID` would mean (the answer to a question asked).
    package func set(_ meaning: String?, gameID: String, side: Side) {
        let waiters = inner.withLock { inner -> [CheckedContinuation<Void, Never>] in
            inner.known[gameID, default: PerSide(repeating: nil)][side] = meaning
            guard let open = inner.open[gameID] else { return [] }
            guard open <= 1 else {
                inner.open[gameID] = open - 1
                return []
            }
            inner.open[gameID] = nil
            return inner.waiters.removeValue(forKey: gameID) ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Every question left unanswered is given up (the warmer has stopped): nobody waits for it.
    package func abandon() {
        let waiters = inner.withLock { inner -> [CheckedContinuation<Void, Never>] in
            inner.open.removeAll()
            defer { inner.waiters.removeAll() }
            return inner.waiters.values.flatMap { $0 }
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no question about `gameID` is open (at once when none was asked).
    package func answered(gameID: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = inner.withLock { inner -> Bool in
                guard inner.open[gameID] != nil else { return true }
                inner.waiters[gameID, default: []].append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
