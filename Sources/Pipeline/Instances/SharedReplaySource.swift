import Clocks
import Foundation
import Logging
import ServiceLifecycle
import Storage

/// A past day's games said by several instances sharing the store, on a clock they share (the
/// run's): each game by the one instance holding its lease, into the shared game log, from where
/// the game's last holder left it. An instance that takes a game over (its holder stopped) says at
/// once the items that fell due meanwhile; nothing is said twice (each item has its place in the
/// game, and the log keeps one item per place). As a Service: it ends once every game of the day
/// is in the log and `afterDay` returns.
package struct SharedReplaySource: Service {
    package let timeline: ReplayTimeline
    package let leases: GameLeases
    package let log: SharedGameLog
    package let clock: any WallClock
    package let afterDay: @Sendable () async throws -> Void
    package let logger: Logger
    /// How far the day got here (items this instance said).
    package let progress = ReplaySource.Progress()

    package init(
        timeline: ReplayTimeline, leases: GameLeases, log: SharedGameLog, clock: any WallClock,
        afterDay: @escaping @Sendable () async throws -> Void = {}, logger: Logger = Logger(label: "nohit.instances")
    ) {
        self.timeline = timeline
        self.leases = leases
        self.log = log
        self.clock = clock
        self.afterDay = afterDay
        self.logger = logger
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await play() }
        } catch is CancellationError {
            // Stopped: the other instances take this one's games over.
        }
    }

    /// Each game's entries, in the order the timeline says them.
    package var games: [(gameID: String, entries: [ReplayTimeline.Entry])] {
        var order: [String] = []
        var entries: [String: [ReplayTimeline.Entry]] = [:]
        for entry in timeline.entries {
            if entries[entry.gameID] == nil { order.append(entry.gameID) }
            entries[entry.gameID, default: []].append(entry)
        }
        return order.map { ($0, entries[$0]!) }
    }

    private func play() async throws {
        let games = games
        await leases.expect(games.map(\.gameID))
        try await leases.maintain()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (gameID, entries) in games {
                group.addTask { try await follow(gameID, entries) }
            }
            try await group.waitForAll()
        }
        progress.dayIsOver()
        try await afterDay()
        progress.finished()
    }

    /// Says a game's items while this instance holds it; otherwise waits until it can take it or
    /// another instance has said the whole game.
    private func follow(_ gameID: String, _ entries: [ReplayTimeline.Entry]) async throws {
        let scan = Duration.milliseconds(Int64(leases.leaseSeconds * 250))
        while true {
            do {
                if try await say(gameID, entries, scan: scan) { return }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // The database may come back: the game is taken up again from the log.
                try Task.checkCancellation()
                logger.warning(
                    "following the game failed; trying again",
                    metadata: ["game.id": "\(gameID)", "error": "\(PostgresStore.describe(error))"])
                await log.drop(gameID)
                await leases.lost(gameID)
                try await Task.sleep(for: scan)
            }
        }
    }

    /// One turn at a game: said to its end (true), or given back, lost or not taken (false).
    private func say(_ gameID: String, _ entries: [ReplayTimeline.Entry], scan: Duration) async throws -> Bool {
        try Task.checkCancellation()
        guard try await leases.follow(gameID) else {
            if try await log.store.itemCount(run: log.run, gameID: gameID) >= entries.count {
                await leases.markOver(gameID)
                return true
            }
            try await Task.sleep(for: scan)
            return false
        }
        var index = try await log.adopt(gameID).count
        if index > entries.count {
            // More than the game has (a log written wrong): over, rather than followed for ever.
            logger.error(
                "the game log holds more items than the game has; taken as over",
                metadata: ["game.id": "\(gameID)", "items.logged": "\(index)", "items": "\(entries.count)"])
            index = entries.count
        }
        if index > 0 && index < entries.count {
            logger.notice(
                "resuming a game another instance followed",
                metadata: ["game.id": "\(gameID)", "items.said": "\(index)", "items": "\(entries.count)"])
        }
        while index < entries.count {
            let entry = entries[index]
            try await clock.sleep(until: entry.time)
            if await leases.shouldGiveBack(gameID) {
                await log.drop(gameID)
                try await leases.giveBack(gameID, over: false)
                break
            }
            // Not held any more (its lease lapsed and another instance took it): back to waiting.
            // A write that never answers (seen when PostgreSQL went away under it) is given up after
            // a lease and a half, when another instance may hold the game anyway: said again, or not.
            let log = log
            guard
                let said = await Deadline.result(
                    within: .milliseconds(Int64(leases.leaseSeconds * 1500)),
                    { try await log.say(entry.item, gameID: gameID, at: entry.time) })
            else { throw StorageFault(.unreachable, detail: "the game log's write did not answer") }
            guard try said.get() else {
                // Another instance holds it now: not taken for held until a lease says so again.
                await leases.lost(gameID)
                break
            }
            progress.said(entry)
            index += 1
        }
        if index == entries.count {
            try await leases.giveBack(gameID, over: true)
            return true
        }
        return false
    }
}
