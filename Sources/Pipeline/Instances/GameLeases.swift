import Foundation
import Logging
import Storage

/// The games this instance follows, among the instances sharing the store: one instance per game
/// at a time, by a lease on the database's clock that ``InstanceService`` renews. An instance
/// takes a free or lapsed game while it holds fewer than its share (the games not over, divided
/// by the instances alive), and gives back what it holds beyond its share, so a second instance
/// started later gets games too and the games of an instance that died are taken over once its
/// heartbeat and leases lapse (within ``leaseSeconds`` and a round of renewals).
package actor GameLeases {
    package nonisolated let store: any CoordinationStore
    package nonisolated let run: String
    private let about: String
    private let logger: Logger
    /// Games this instance holds (as of the last renewal, plus those taken since).
    private var held: Set<String> = []
    /// Games the sources asked about, and those known to be over.
    private var known: Set<String> = []
    private var over: Set<String> = []
    private var alive = 1
    /// Held games to give back at the next item (beyond the share).
    private var surplus: Set<String> = []

    package init(store: any CoordinationStore, run: String, about: String, logger: Logger) {
        self.store = store
        self.run = run
        self.about = about
        self.logger = logger
    }

    /// How long a lease lasts without renewal.
    package nonisolated var leaseSeconds: Double { store.leaseSeconds }

    /// Games each instance should follow: those not over, shared among the instances alive.
    private var share: Int {
        let open = known.subtracting(over).count
        return max(1, (open + alive - 1) / alive)
    }

    /// The games the sources will ask about (the day's), so the share counts them all from the start.
    package func expect(_ gameIDs: [String]) { known.formUnion(gameIDs) }

    /// Whether this instance follows `gameID` now: it held it, or took it (free or lapsed) within
    /// its share.
    package func follow(_ gameID: String) async throws -> Bool {
        known.insert(gameID)
        if held.contains(gameID) { return true }
        guard !over.contains(gameID), held.count < share else { return false }
        guard try await store.acquireGame(run: run, gameID: gameID) else { return false }
        held.insert(gameID)
        logger.info("following the game", metadata: ["game.id": "\(gameID)", "instance": "\(store.instanceID)"])
        return true
    }

    /// Whether the instance still holds `gameID` (its lease was renewed, or just taken).
    package func holds(_ gameID: String) -> Bool { held.contains(gameID) }

    /// Whether this instance holds more games than its share and should give `gameID` back (its
    /// source does, between two items).
    package func shouldGiveBack(_ gameID: String) -> Bool { surplus.contains(gameID) }

    /// Gives a game back: it is over (nobody need follow it), or beyond this instance's share.
    package func giveBack(_ gameID: String, over isOver: Bool) async throws {
        if isOver { over.insert(gameID) }
        surplus.remove(gameID)
        guard held.remove(gameID) != nil else { return }
        try await store.releaseGame(run: run, gameID: gameID)
        logger.info(
            isOver ? "game over; released" : "game given back to even out the instances",
            metadata: ["game.id": "\(gameID)", "instance": "\(store.instanceID)"])
    }

    /// A game whose item could not be said under its lease (another instance holds it now).
    package func lost(_ gameID: String) { held.remove(gameID) }

    /// A game known to be over (another instance said its end): no share is kept for it.
    package func markOver(_ gameID: String) { over.insert(gameID) }

    /// One round: this instance's heartbeat, its leases renewed (a game another instance took in
    /// the meantime is no longer held), and what it holds beyond its share marked to give back.
    package func maintain() async throws {
        let instances = try await store.heartbeat(about: about)
        alive = max(1, instances.count)
        let renewed = try await store.renewGames(run: run)
        for lost in held.subtracting(renewed) {
            logger.warning(
                "a game's lease was lost (taken over after this instance did not renew it in time)",
                metadata: ["game.id": "\(lost)", "instance": "\(store.instanceID)"])
        }
        held = renewed
        let excess = held.count - share
        surplus = excess > 0 ? Set(held.sorted().suffix(excess)) : []
    }

    /// Games held now (tests, logs).
    package var games: Set<String> { held }
}
