import Alerts
import Delivery
import Foundation
import Logging
import Storage

/// The alert pipeline after the engine: the publisher writing moments and outbox rows, and one
/// dispatcher per channel draining them.
package struct AlertPipeline: Sendable {
    package let store: SQLiteStore
    package let directory: DeviceDirectory
    package let publisher: MomentPublisher
    package let dispatchers: [Dispatcher]
    package let statistics: DeliveryStatistics
    package let clock: any WallClock

    package init(
        store: SQLiteStore, channels: [any DeliveryChannel], clock: any WallClock, concurrency: Int = 256,
        acknowledgementClock: (any WallClock)? = nil, logger: Logger = Logger(label: "nohit.pipeline")
    ) {
        self.store = store
        self.clock = clock
        directory = DeviceDirectory(store: store)
        statistics = DeliveryStatistics()
        var wakes: [ChannelKind: WakeSignal] = [:]
        var dispatchers: [Dispatcher] = []
        for channel in channels {
            let wake = WakeSignal()
            wakes[channel.kind] = wake
            var dispatcher = Dispatcher(
                channel: channel, outbox: store, clock: clock, wake: wake, statistics: statistics)
            dispatcher.concurrency = concurrency
            dispatcher.logger = logger
            if let acknowledgementClock { dispatcher.acknowledgementClock = acknowledgementClock }
            dispatchers.append(dispatcher)
        }
        self.dispatchers = dispatchers
        publisher = MomentPublisher(outbox: store, directory: directory, wake: wakes)
    }

    /// Runs every dispatcher until cancelled.
    package func runDispatchers() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for dispatcher in dispatchers {
                group.addTask { try await dispatcher.run() }
            }
            try await group.waitForAll()
        }
    }

    /// Returns once nothing is pending or being sent. With a manual clock, moves it to the next
    /// retry or delayed alert whenever the dispatchers are idle.
    package func waitUntilDrained(manual: ManualWallClock?) async throws {
        while true {
            try Task.checkCancellation()
            let counts = try await store.outboxCounts()
            if counts.pending == 0 && counts.sending == 0 { return }
            if let manual, counts.sending == 0 {
                var next: Date?
                for dispatcher in dispatchers {
                    if let due = try await store.nextDue(channel: dispatcher.channel.kind) {
                        next = min(next ?? due, due)
                    }
                }
                if let next, next > manual.now() { manual.advance(to: next) }
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
