import Baseball
import Clocks
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// MLB's Stats API as a source of games, as a Service: what the poller reads — the schedule and
/// each game's live feed — said to the game followers once per change (`StatsAPIFeedLedger`).
/// Stops on graceful shutdown; a failure downstream (a moment that could not be stored) ends it
/// with that error.
package struct StatsAPISource: Service {
    package var poller: StatsAPIPoller
    package var sink: any GameFeedSink
    private let ledger = Ledger()

    /// What has been said, shared by the poller's two callbacks.
    private final class Ledger: Sendable {
        private let state = Mutex(StatsAPIFeedLedger())

        func withLock<Result>(_ body: (inout StatsAPIFeedLedger) -> Result) -> Result {
            state.withLock { body(&$0) }
        }
    }

    package init(poller: StatsAPIPoller, sink: any GameFeedSink) {
        self.poller = poller
        self.sink = sink
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await poller.run(
                    onSchedule: { game in try await say(game) },
                    onGame: { game in try await say(game) })
            }
        } catch is CancellationError {
            // Graceful shutdown.
        }
    }

    /// A schedule entry: what it says that is new.
    package func say(_ game: ScheduleGame) async throws {
        let now = poller.clock.now()
        guard let (gameID, items) = ledger.withLock({ $0.items(for: game, now: now) }) else { return }
        for item in items { try await sink.receive(item, gameID: gameID, at: now) }
    }

    /// A feed that changed: what it says that is new.
    package func say(_ game: GumboGame) async throws {
        let now = poller.clock.now()
        let items = ledger.withLock { $0.items(for: game, now: now) }
        for item in items { try await sink.receive(item, gameID: game.gameID, at: now) }
    }
}
