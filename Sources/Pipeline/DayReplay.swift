import Alerts
import Baseball
import Foundation
import Logging

/// Plays a day's games through the engine on a clock and publishes every moment: the offline
/// source of the whole pipeline (tests, the crash test, the benchmark, the demo).
package struct DayReplay: Sendable {
    package let games: [ReplayGame]
    package var logger = Logger(label: "nohit.replay")

    package init(games: [ReplayGame]) {
        self.games = games
    }

    package struct Summary: Sendable {
        package var updates = 0
        package var moments: [Moment] = []
        package var newMoments = 0
        package var deliveries = 0
        package var skippedGames: [String] = []
    }

    private enum Step {
        case update(GameUpdate)
        case end
    }

    /// Runs the day. With a manual clock the day runs as fast as possible (the clock jumps to
    /// each play); otherwise each play waits for its time on `clock`.
    package func run(
        clock: any WallClock, publisher: MomentPublisher, onMoment: @Sendable (Moment, GameInfo) -> Void = { _, _ in }
    ) async throws -> Summary {
        var timeline: [(time: Date, game: Int, order: Int, step: Step)] = []
        for (index, game) in games.enumerated() {
            for (order, item) in game.updates.enumerated() {
                timeline.append((item.time, index, order, .update(item.update)))
            }
            timeline.append((game.end, index, game.updates.count, .end))
        }
        timeline.sort { ($0.time, $0.game, $0.order) < ($1.time, $1.game, $1.order) }

        var monitors = games.map {
            GameMonitor(
                gameID: $0.record.id, starters: $0.record.startingAppearances, homeBatsFirst: $0.record.homeBatsFirst)
        }
        var broken = Set<Int>()
        var summary = Summary()
        for item in timeline {
            try Task.checkCancellation()
            if let manual = clock as? ManualWallClock {
                manual.advance(to: item.time)
            } else {
                try await clock.sleep(until: item.time)
            }
            guard !broken.contains(item.game) else { continue }
            let game = games[item.game]
            let moments: [Moment]
            switch item.step {
            case .update(let update):
                summary.updates += 1
                do {
                    moments = try monitors[item.game].apply(update)
                } catch {
                    logger.error("game left out", metadata: ["game.pk": "\(game.record.id)", "error": "\(error)"])
                    broken.insert(item.game)
                    summary.skippedGames.append(game.record.id)
                    continue
                }
            case .end:
                moments = monitors[item.game].finish(scheduledInnings: game.record.scheduledInnings)
            }
            for moment in moments {
                let published = try await publisher.publish(moment, game: game.info, at: item.time)
                summary.moments.append(moment)
                if published.isNew { summary.newMoments += 1 }
                summary.deliveries += published.deliveries
                onMoment(moment, game.info)
            }
        }
        return summary
    }
}
