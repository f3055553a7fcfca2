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

    /// One step of the day: a game's play (or its end) at its time, and the moments it made.
    package struct Step: Sendable {
        package var time: Date
        package var game: ReplayGame
        package var moments: [Moment]
        /// The game after the play (or at its end) and both sides' bids.
        package var state: GameState
        package var bids: PerSide<NoHitBid>
        package var isFinished: Bool
    }

    /// Walks the day's plays in time order through one monitor per game. Pure: no clock, no I/O.
    package struct Steps: Sendable {
        private enum Kind: Sendable {
            case update(GameUpdate)
            case end
        }

        private let games: [ReplayGame]
        private let timeline: [(time: Date, game: Int, kind: Kind)]
        private var monitors: [GameMonitor]
        private var broken = Set<Int>()
        private var position = 0
        /// Games that stopped replaying (a play the engine refused), by id.
        package private(set) var skippedGames: [String] = []
        package private(set) var updates = 0

        init(games: [ReplayGame]) {
            self.games = games
            var timeline: [(time: Date, game: Int, order: Int, kind: Kind)] = []
            for (index, game) in games.enumerated() {
                for (order, item) in game.updates.enumerated() {
                    timeline.append((item.time, index, order, .update(item.update)))
                }
                timeline.append((game.end, index, game.updates.count, .end))
            }
            timeline.sort { ($0.time, $0.game, $0.order) < ($1.time, $1.game, $1.order) }
            self.timeline = timeline.map { ($0.time, $0.game, $0.kind) }
            monitors = games.map {
                GameMonitor(
                    gameID: $0.record.id, starters: $0.record.startingAppearances,
                    homeBatsFirst: $0.record.homeBatsFirst)
            }
        }

        /// When the next step happens, if any is left.
        package var nextTime: Date? {
            var index = position
            while index < timeline.count && broken.contains(timeline[index].game) { index += 1 }
            return index < timeline.count ? timeline[index].time : nil
        }

        /// Applies the next play; nil when the day is over.
        package mutating func next() -> Step? {
            while position < timeline.count {
                let item = timeline[position]
                position += 1
                guard !broken.contains(item.game) else { continue }
                let game = games[item.game]
                switch item.kind {
                case .update(let update):
                    updates += 1
                    do {
                        let moments = try monitors[item.game].apply(update)
                        return step(item.game, at: item.time, moments: moments)
                    } catch {
                        broken.insert(item.game)
                        skippedGames.append(game.record.id)
                        continue
                    }
                case .end:
                    let moments = monitors[item.game].finish(scheduledInnings: game.record.scheduledInnings)
                    return step(item.game, at: item.time, moments: moments)
                }
            }
            return nil
        }

        private func step(_ index: Int, at time: Date, moments: [Moment]) -> Step {
            let monitor = monitors[index]
            return Step(
                time: time, game: games[index], moments: moments, state: monitor.state, bids: monitor.tracker.bids,
                isFinished: monitor.isFinished)
        }
    }

    package func steps() -> Steps {
        Steps(games: games)
    }

    /// Every moment of the day in order, with its game and time (no clock, nothing published).
    package func moments() -> [(moment: Moment, game: GameInfo, time: Date)] {
        var steps = steps()
        var all: [(moment: Moment, game: GameInfo, time: Date)] = []
        while let step = steps.next() {
            for moment in step.moments { all.append((moment, step.game.info, step.time)) }
        }
        return all
    }

    /// Runs the day. With a manual clock the day runs as fast as possible (the clock jumps to
    /// each play, after `settle` returns for the play before); otherwise
    /// each play waits for its time on `clock`.
    package func run(
        clock: any WallClock, publisher: MomentPublisher, settle: () async throws -> Void = {},
        onMoment: @Sendable (Moment, GameInfo) -> Void = { _, _ in },
        onStep: @Sendable (Step) -> Void = { _ in }
    ) async throws -> Summary {
        var steps = steps()
        var summary = Summary()
        while let time = steps.nextTime {
            try Task.checkCancellation()
            if let manual = clock as? ManualWallClock {
                manual.advance(to: time)
            } else {
                try await clock.sleep(until: time)
            }
            guard let step = steps.next() else { break }
            for moment in step.moments {
                let published = try await publisher.publish(moment, game: step.game.info, at: step.time)
                summary.moments.append(moment)
                if published.isNew { summary.newMoments += 1 }
                summary.deliveries += published.deliveries
                onMoment(moment, step.game.info)
            }
            onStep(step)
            if clock is ManualWallClock { try await settle() }
        }
        summary.updates = steps.updates
        summary.skippedGames = steps.skippedGames
        for game in summary.skippedGames {
            logger.error("game left out: a play could not be applied", metadata: ["game.id": "\(game)"])
        }
        return summary
    }
}
