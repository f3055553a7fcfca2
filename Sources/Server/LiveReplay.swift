import Alerts
import Foundation
import Logging
import Pipeline
import ServiceLifecycle
import Storage

/// The replay source as a Service: plays the day on its clock through the alert pipeline, and
/// puts each play's game state and moments on the live board and the live stream. The
/// dispatchers keep running after the day is over, until shutdown; shutdown lets the requests in
/// flight finish and records them.
package struct LiveReplay: Service {
    package var games: [ReplayGame]
    package var pipeline: AlertPipeline
    package var clock: any WallClock
    package var board: LiveBoard
    package var feed: LiveFeed
    package var logger: Logger

    package init(
        games: [ReplayGame], pipeline: AlertPipeline, clock: any WallClock, board: LiveBoard, feed: LiveFeed,
        logger: Logger
    ) {
        self.games = games
        self.pipeline = pipeline
        self.clock = clock
        self.board = board
        self.feed = feed
        self.logger = logger
    }

    package func run() async throws {
        let stop = StopSignal()
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Part.self) { group in
                group.addTask {
                    try await pipeline.runDispatchers(stop: stop)
                    return .dispatchers
                }
                group.addTask {
                    do {
                        let summary = try await DayReplay(games: games).run(
                            clock: clock, publisher: pipeline.publisher,
                            settle: { try await pipeline.waitUntilIdle(stop: stop) },
                            onStep: { step in publish(step) })
                        logger.notice(
                            "the replayed day is over",
                            metadata: [
                                "plays": "\(summary.updates)", "moments": "\(summary.moments.count)",
                                "alerts": "\(summary.deliveries)",
                            ])
                    } catch is CancellationError {
                    }
                    return .replay
                }
                // The day may end long before the service does; the dispatchers end it (stopped,
                // or failed), and then the replay stops too.
                while let part = try await group.next() {
                    if part == .dispatchers { group.cancelAll() }
                }
            }
        } onGracefulShutdown: {
            stop.request()
            // Streams never end by themselves; the server waits for open responses on shutdown.
            feed.finishAll()
        }
    }

    private enum Part: Sendable {
        case dispatchers
        case replay
    }

    /// Moments first, then the game as it stands after them.
    package func publish(_ step: DayReplay.Step) {
        for moment in step.moments { feed.publish(moment, game: step.game.info, at: step.time) }
        feed.publish(board.apply(step))
    }
}

extension LiveFeed {
    /// A moment as the stream's `moment` event.
    package func publish(_ moment: Moment, game: GameInfo, at time: Date) {
        let view = MomentView(StoredMoment(moment: moment, game: game, occurredAt: time))
        if let data = try? APIServer.encoder.encode(view) {
            publish(.moment, data: String(decoding: data, as: UTF8.self))
        }
    }

    /// A game as it stands, as the stream's `game` event.
    package func publish(_ snapshot: GameSnapshot) {
        if let data = try? APIServer.encoder.encode(snapshot) {
            publish(.game, data: String(decoding: data, as: UTF8.self))
        }
    }
}
