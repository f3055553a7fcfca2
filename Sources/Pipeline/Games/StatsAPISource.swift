import Baseball
import Foundation
import ServiceLifecycle
import StatsAPI
import Synchronization

/// MLB's Stats API as a source of games, as a Service: what the poller reads — the schedule and
/// each game's live feed — said to the game followers once per change (`StatsAPIFeedLedger`).
/// Stops on graceful shutdown; a failure downstream (a moment that could not be stored) ends it
/// with that error.
package struct StatsAPISource: Service {
    package let poller: StatsAPIPoller
    package let sink: any GameFeedSink
    private let ledger = Ledger()

    /// What has been said, shared by the poller's two callbacks.
    private final class Ledger: Sendable {
        private let state = Mutex(StatsAPIFeedLedger())

        func withLock<Result>(_ body: (inout StatsAPIFeedLedger) -> Result) -> Result {
            state.withLock { body(&$0) }
        }
    }

    /// When several instances share the games: which ones this instance says (nil: all of them).
    package let claims: (any GameClaims)?
    /// Where each game's latest play time is noted (the play-to-send latency), if anywhere.
    package let playTimes: PlayTimes?

    package init(
        poller: StatsAPIPoller, sink: any GameFeedSink, claims: (any GameClaims)? = nil, playTimes: PlayTimes? = nil
    ) {
        self.poller = poller
        self.sink = sink
        self.claims = claims
        self.playTimes = playTimes
    }

    package func run() async throws {
        let poller = claims == nil ? poller : poller.asking { gameID in try await claimed(gameID) }
        do {
            try await cancelWhenGracefulShutdown { [poller] in
                try await poller.run(
                    onSchedule: { game in try await say(game) },
                    onGame: { game in try await say(game) })
            }
        } catch is CancellationError {
            // Graceful shutdown.
        }
    }

    /// Whether this instance says what happens in the game now; a game just taken up goes on from
    /// what was said of it before.
    func claimed(_ gameID: String) async throws -> Bool {
        guard let claims else { return true }
        switch try await claims.claim(gameID) {
        case .held: return true
        case .elsewhere: return false
        case .takenUp(let said):
            ledger.withLock { $0.takeUp(gameID, said: said) }
            return true
        }
    }

    /// A schedule entry: what it says that is new.
    package func say(_ game: ScheduleGame) async throws {
        let now = poller.clock.now()
        guard let gameID = game.gameID, try await claimed(gameID) else { return }
        guard let (gameID, items) = ledger.withLock({ $0.items(for: game, now: now) }) else { return }
        for item in items { try await sink.receive(item, gameID: gameID, at: now) }
        if [.postponed, .cancelled].contains(game.status.phase) { try await claims?.finished(gameID) }
    }

    /// A feed that changed: what it says that is new.
    package func say(_ game: GumboGame) async throws {
        let now = poller.clock.now()
        let items = ledger.withLock { $0.items(for: game, now: now) }
        if let playTimes, !items.isEmpty {
            // A re-scoring is not a play of the feed's latest time: what it brings is not measured.
            let revised = items.contains { if case .revised = $0 { true } else { false } }
            playTimes.played(gameID: game.gameID, at: revised ? nil : game.playedAt)
        }
        for item in items { try await sink.receive(item, gameID: game.gameID, at: now) }
        if game.isFinal { try await claims?.finished(game.gameID) }
    }
}
