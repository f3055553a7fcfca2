import Baseball
import Foundation
import Storage

/// Where this instance's sources say what happens in the games it follows, when several instances
/// share the store: the shared game log, item by item under the game's lease. Every instance
/// (this one too) applies the log through its ``GameLogReader``, so the followers, moments, board
/// and stream are the same everywhere.
package actor SharedGameLog {
    package nonisolated let store: any CoordinationStore
    package nonisolated let run: String
    /// The index of each adopted game's next item.
    private var next: [String: Int] = [:]
    /// Each adopted game's turn: a new one at every adoption, so that a say from an earlier turn
    /// is known as such even where the new turn starts at the same index.
    private var turn: [String: Int] = [:]
    private var turns = 0

    package init(store: any CoordinationStore, run: String) {
        self.store = store
        self.run = run
    }

    /// Takes up a game this instance now follows: its items so far (a source resumes after them;
    /// the Stats API source learns from them what was said).
    package func adopt(_ gameID: String) async throws -> [LoggedGameItem] {
        let items = try await store.items(run: run, gameID: gameID)
        next[gameID] = items.count
        turns += 1
        turn[gameID] = turns
        return items
    }

    /// Says a game's next item; false when this instance no longer holds the game (its source
    /// stops saying it, and adopts it again if it takes it again).
    ///
    /// The write is awaited outside the actor: a say its caller gave up on (its deadline passed, the
    /// database away) may answer after the game was dropped and adopted again (the new turn may
    /// start at the same index, the old write not yet committed when the log was read), and must
    /// not move the game's next index then. (It did: the index fell behind the source's, and the source's
    /// next items were taken for present or written one place off, so the log held an item twice
    /// and more items than the game, and the instance that took the game next never saw it end.)
    package func say(_ item: GameFeedItem, gameID: String, at time: Date) async throws -> Bool {
        guard let index = next[gameID], let saying = turn[gameID] else { throw NotAdopted(gameID: gameID) }
        let appended = try await store.append(run: run, gameID: gameID, index: index, time: time, item: item)
        // Still the say this game waits for (not dropped, nor adopted again, meanwhile).
        let current = turn[gameID] == saying && next[gameID] == index
        switch appended {
        case .appended, .present:
            if current { next[gameID] = index + 1 }
            return current
        case .notHeld:
            if current { (next[gameID], turn[gameID]) = (nil, nil) }
            return false
        }
    }

    /// A source said an item of a game it had not adopted (a mistake in the source).
    package struct NotAdopted: Error, CustomStringConvertible {
        package var gameID: String
        package var description: String { "\(gameID): an item said before the game was adopted" }
    }

    /// Forgets a game given back.
    package func drop(_ gameID: String) {
        next[gameID] = nil
        turn[gameID] = nil
    }
}
