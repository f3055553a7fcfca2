import Baseball
import Clocks
import Foundation
import Retrosheet
import ServiceLifecycle
import Synchronization

/// A past day's Retrosheet games as a source, as a Service: the timeline said to the game
/// followers on a clock. With a manual clock the day runs as fast as possible: the clock jumps to
/// each entry once `settle` returns for the one before (the pipeline has caught up). After the
/// day, `afterDay` (a replay waits there for every alert to be sent). Graceful shutdown stops it
/// between entries.
package struct ReplaySource: Service {
    package let timeline: ReplayTimeline
    package let sink: any GameFeedSink
    package let clock: any WallClock
    /// With a manual clock, after each entry: returns once what it made has been dealt with.
    package let settle: @Sendable () async throws -> Void
    package let afterDay: @Sendable () async throws -> Void
    /// How far the day got: readable while it runs and after.
    package let progress = Progress()

    package final class Progress: Sendable {
        private struct State {
            var updates = 0
            var dayOver = false
            var done = false
        }

        private let state = Mutex(State())

        /// Updates said so far.
        package var updates: Int { state.withLock { $0.updates } }
        /// Every entry of the day was said.
        package var isDayOver: Bool { state.withLock { $0.dayOver } }
        /// The day is over and `afterDay` returned.
        package var isDone: Bool { state.withLock { $0.done } }

        func said(_ entry: ReplayTimeline.Entry) {
            state.withLock { $0.updates += entry.updates }
        }

        func dayIsOver() { state.withLock { $0.dayOver = true } }
        func finished() { state.withLock { $0.done = true } }
    }

    package init(
        games: [ReplayGame], sink: any GameFeedSink, clock: any WallClock,
        settle: @escaping @Sendable () async throws -> Void = {},
        afterDay: @escaping @Sendable () async throws -> Void = {}
    ) {
        timeline = ReplayTimeline(games: games, announced: clock.now())
        self.sink = sink
        self.clock = clock
        self.settle = settle
        self.afterDay = afterDay
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await play() }
        } catch is CancellationError {
            // Stopped before the day was over: the rest comes with the next run.
        }
    }

    private func play() async throws {
        let manual = clock as? ManualWallClock
        for entry in timeline.entries {
            try Task.checkCancellation()
            if let manual {
                manual.advance(to: entry.time)
            } else {
                try await clock.sleep(until: entry.time)
            }
            try await sink.receive(entry.item, gameID: entry.gameID, at: entry.time)
            progress.said(entry)
            if manual != nil { try await settle() }
        }
        progress.dayIsOver()
        try await afterDay()
        progress.finished()
    }
}
