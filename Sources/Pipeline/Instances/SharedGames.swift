import Baseball
import Foundation
import Storage

/// A live source's view of the games when several instances share them (`nohit serve --source
/// statsapi` on PostgreSQL): the games it says are those this instance holds (``GameLeases``), and
/// what it says goes into the shared game log (``SharedGameLog``), from where every instance's
/// ``GameLogReader`` applies it.
package struct SharedGames: GameClaims, GameFeedSink {
    package let leases: GameLeases
    package let log: SharedGameLog

    package init(leases: GameLeases, log: SharedGameLog) {
        self.leases = leases
        self.log = log
    }

    package func claim(_ gameID: String) async throws -> GameClaim {
        if await leases.holds(gameID) {
            guard await leases.shouldGiveBack(gameID) else { return .held }
            await log.drop(gameID)
            try await leases.giveBack(gameID, over: false)
            return .elsewhere
        }
        guard try await leases.follow(gameID) else { return .elsewhere }
        let said = try await log.adopt(gameID).map(\.item)
        // Over already (another instance said its end): nobody polls a final game again.
        if said.contains(where: { if case .status(let status, _) = $0 { status.phase == .final } else { false } }) {
            await log.drop(gameID)
            try await leases.giveBack(gameID, over: true)
            return .elsewhere
        }
        return .takenUp(said: said)
    }

    package func finished(_ gameID: String) async throws {
        await log.drop(gameID)
        try await leases.giveBack(gameID, over: true)
    }

    /// Says an item of a game this instance holds; dropped when it no longer does (its lease
    /// lapsed and another instance took the game: that one says it, from the log).
    package func receive(_ item: GameFeedItem, gameID: String, at time: Date) async throws {
        if try await !log.say(item, gameID: gameID, at: time) {
            await leases.lost(gameID)
        }
    }
}
