import Baseball
import Foundation
import Logging
import Storage

/// A live source's view of the games when several instances share them (`nohit serve --source
/// statsapi` on PostgreSQL): the games it says are those this instance holds (``GameLeases``), and
/// what it says goes into the shared game log (``SharedGameLog``), from where every instance's
/// ``GameLogReader`` applies it.
package struct SharedGames: GameClaims, GameFeedSink {
    package let leases: GameLeases
    package let log: SharedGameLog

    package let logger: Logger

    package init(leases: GameLeases, log: SharedGameLog, logger: Logger = Logger(label: "nohit.instances")) {
        self.leases = leases
        self.log = log
        self.logger = logger
    }

    /// A failure to reach the database leaves the game where it was: held games stay held (their
    /// lease is renewed or lapses), others are asked about again at the next poll.
    package func claim(_ gameID: String) async throws -> GameClaim {
        do {
            return try await claimOrThrow(gameID)
        } catch {
            logger.warning(
                "asking for a game failed",
                metadata: ["game.id": "\(gameID)", "error": "\(PostgresStore.describe(error))"])
            await log.drop(gameID)
            await leases.lost(gameID)
            return .elsewhere
        }
    }

    private func claimOrThrow(_ gameID: String) async throws -> GameClaim {
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
        // Over only if its end was said under this instance's lease. A lease lost meanwhile (a
        // late renewal on a loaded machine) dropped what the feed said: marked over here, the game
        // would stay where the log left it, followed by nobody. Not held, it is asked for again at
        // the next poll and taken up from the log, and what the log lacks is said then.
        guard await leases.holds(gameID) else { return }
        do {
            try await leases.giveBack(gameID, over: true)
        } catch {
            // Its lease lapses instead.
            logger.warning(
                "giving back a game failed",
                metadata: ["game.id": "\(gameID)", "error": "\(PostgresStore.describe(error))"])
        }
    }

    /// Says an item of a game this instance holds; dropped when it no longer does (its lease
    /// lapsed and another instance took the game: that one says it, from the log).
    /// A failure to reach the database drops the game here too: taken up again, its source says
    /// again what the log does not have.
    package func receive(_ item: GameFeedItem, gameID: String, at time: Date) async throws {
        do {
            if try await !log.say(item, gameID: gameID, at: time) {
                await leases.lost(gameID)
            }
        } catch {
            logger.warning(
                "saying a game's item failed",
                metadata: ["game.id": "\(gameID)", "error": "\(PostgresStore.describe(error))"])
            await log.drop(gameID)
            await leases.lost(gameID)
        }
    }
}
