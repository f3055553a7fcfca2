import Baseball
import Foundation

/// What instances sharing one store agree through it (PostgreSQL): which instances are alive,
/// the run they follow together, which instance follows each game — a lease by the database's
/// clock, one holder at a time —, what the followed games' sources said (the shared game log, in
/// one order that every instance applies), and wake-ups when the log or the outbox moves.
package protocol CoordinationStore: Sendable {
    /// This instance's name in leases, the log and the outbox.
    var instanceID: String { get }
    /// How long a lease (a game followed, a delivery being sent) lasts without a renewal.
    var leaseSeconds: Double { get }

    /// Records this instance as alive (`about` says what it is: host, process, command); returns the
    /// instances alive now (a heartbeat within the lease), this one included.
    func heartbeat(about: String) async throws -> [String]
    /// A graceful stop: gives up this instance's game leases and forgets its heartbeat.
    func leave() async throws

    /// The latest run keyed `key` (a replayed day on a shared clock, the Stats API) started at or
    /// after `notBefore`, or with another instance in it alive; else a new one whose clock starts
    /// at `epoch`. Instances starting together join one run; this instance is in it from now on.
    func joinRun(key: String, epoch: Double, notBefore: Date) async throws -> SharedRun

    /// Takes the game for this instance unless another holds a lease on it that has not run out;
    /// true when this instance holds it now.
    func acquireGame(run: String, gameID: String) async throws -> Bool
    /// Extends every game lease this instance holds; the games it holds.
    func renewGames(run: String) async throws -> Set<String>
    /// Gives up a game (another instance may take it at once).
    func releaseGame(run: String, gameID: String) async throws
    /// Games with a lease that has not run out, and their holders.
    func gameOwners(run: String) async throws -> [String: String]

    /// Appends item number `index` of a game to the log, if this instance holds the game's lease.
    func append(run: String, gameID: String, index: Int, time: Date, item: GameFeedItem) async throws
        -> GameLogAppend
    /// Items after `sequence`, in order (at most `limit`).
    func items(run: String, after sequence: Int64, limit: Int) async throws -> [LoggedGameItem]
    /// Every item of one game, in order.
    func items(run: String, gameID: String) async throws -> [LoggedGameItem]
    /// How many items of a game the log holds.
    func itemCount(run: String, gameID: String) async throws -> Int
    /// The number of the log's last item (0 before any).
    func lastSequence(run: String) async throws -> Int64
    /// The number just before the first item said at or after `since` (where an instance starting
    /// now begins reading: the games of the last day and a half), or the log's last number when
    /// nothing was said since.
    func startSequence(run: String, since: Date) async throws -> Int64

    /// Calls `onAppend` whenever an item is appended to the run's log, by any instance, until the
    /// task is cancelled (`LISTEN`).
    func watchItems(run: String, _ onAppend: @escaping @Sendable () -> Void) async throws
    /// Calls `onDue` with a channel whenever deliveries of it become due (recorded, or taken back
    /// in doubt) by any instance, until the task is cancelled.
    func watchOutbox(_ onDue: @escaping @Sendable (String) -> Void) async throws

    /// Every lease taken in the run, in order (who followed which game when).
    func gameFollows(run: String) async throws -> [GameFollow]
}

/// A run instances follow together, and its clock's start.
package struct SharedRun: Sendable, Hashable {
    package var id: String
    /// Seconds since 1970 at which the run's clock started (a replay's first moment).
    package var epoch: Double

    package init(id: String, epoch: Double) {
        self.id = id
        self.epoch = epoch
    }
}

/// What appending an item to the game log did.
package enum GameLogAppend: Sendable, Hashable {
    /// Appended under this number.
    case appended(Int64)
    /// The game already has an item with that index (said before a takeover): nothing written.
    case present
    /// This instance does not hold the game's lease (any more): nothing written.
    case notHeld
}

/// An item of the shared game log.
package struct LoggedGameItem: Sendable, Hashable {
    package var sequence: Int64
    package var gameID: String
    package var index: Int
    package var time: Date
    package var item: GameFeedItem
    /// The instance that said it.
    package var instance: String

    package init(sequence: Int64, gameID: String, index: Int, time: Date, item: GameFeedItem, instance: String) {
        self.sequence = sequence
        self.gameID = gameID
        self.index = index
        self.time = time
        self.item = item
        self.instance = instance
    }
}

/// A lease taken on a game: by whom, from when, last renewed, and when given up (nil: held, or its
/// instance stopped renewing).
package struct GameFollow: Sendable, Hashable {
    package var gameID: String
    package var owner: String
    package var acquiredAt: Date
    package var renewedAt: Date
    package var releasedAt: Date?

    package init(gameID: String, owner: String, acquiredAt: Date, renewedAt: Date, releasedAt: Date?) {
        self.gameID = gameID
        self.owner = owner
        self.acquiredAt = acquiredAt
        self.renewedAt = renewedAt
        self.releasedAt = releasedAt
    }
}
