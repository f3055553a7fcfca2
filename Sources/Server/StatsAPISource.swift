import Alerts
import Foundation
import Logging
import Pipeline
import ServiceLifecycle
import StatsAPI
import Storage
import Synchronization

/// The Stats API as the live source, as a Service: the poller's games go through the engine
/// (one follower per game), their moments through the alert pipeline, and the games and moments
/// onto the live board and the live stream — as the replay source does for Retrosheet days.
package struct StatsAPISource: Service {
    package var poller: StatsAPIPoller
    package var pipeline: AlertPipeline
    package var clock: any WallClock
    package var board: LiveBoard
    package var feed: LiveFeed
    package var logger: Logger
    private let followers = Followers()

    package init(
        poller: StatsAPIPoller, pipeline: AlertPipeline, clock: any WallClock, board: LiveBoard, feed: LiveFeed,
        logger: Logger
    ) {
        self.poller = poller
        self.pipeline = pipeline
        self.clock = clock
        self.board = board
        self.feed = feed
        self.logger = logger
    }

    final class Followers: Sendable {
        let games = Mutex<[String: GameFollower]>([:])
    }

    package func run() async throws {
        let stop = StopSignal()
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await pipeline.runDispatchers(stop: stop) }
                group.addTask {
                    try await poller.run { game in await handle(game) }
                }
                // Either ending (stopped, or failed) ends the other.
                _ = try await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            stop.request()
            feed.finishAll()
        }
    }

    /// A game whose feed changed: its new moments go out, then its state.
    package func handle(_ game: GumboGame) async {
        guard !game.starters.isEmpty, game.status.phase != .notStarted || !game.updates.isEmpty else {
            board.add(game.info, start: game.start ?? clock.now())
            return
        }
        let (moments, rescored, monitor) = followers.games.withLock { games in
            var follower =
                games[game.gameID] ?? GameFollower(gameID: game.gameID, starters: game.starters)
            let (moments, rescored) = follower.follow(
                starters: game.starters, updates: game.updates, finalInnings: game.isFinal ? game.scheduledInnings : nil
            )
            games[game.gameID] = follower
            return (moments, rescored, follower.monitor)
        }
        if rescored {
            logger.notice(
                "play re-scored; bids recomputed",
                metadata: ["game": "\(game.gameID)", "timecode": "\(game.timeStamp)"])
        }
        let now = clock.now()
        for moment in moments {
            do {
                _ = try await pipeline.publisher.publish(moment, game: game.info, at: now)
            } catch {
                logger.error("moment not stored", metadata: ["moment": "\(moment.id)", "error": "\(error)"])
                continue
            }
            feed.publish(moment, game: game.info, at: now)
        }
        feed.publish(
            board.apply(
                info: game.info, start: game.start ?? now, state: monitor.state, bids: monitor.tracker.bids,
                isFinished: monitor.isFinished, at: now))
    }
}
