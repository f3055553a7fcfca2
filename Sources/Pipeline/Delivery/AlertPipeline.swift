import Alerts
import Clocks
import Delivery
import Foundation
import Logging
import Storage

/// The alert pipeline after the engine: the publisher writing moments and outbox rows, and one
/// dispatcher per channel draining them, over any store.
package struct AlertPipeline: Sendable {
    package typealias Store = any DeviceStore & OutboxStore
    package let store: Store
    package let directory: DeviceDirectory
    package let publisher: MomentPublisher
    package let dispatchers: [Dispatcher]
    package let statistics: DeliveryStatistics
    package let clock: any WallClock
    /// Each channel's wake signal (what the publisher signals when it queues deliveries).
    package let wakes: [ChannelKind: WakeSignal]
    /// Whether the database takes writes, as the publisher and the dispatchers find it.
    package let storage: StorageHealth

    package init(
        store: Store, channels: [any DeliveryChannel], clock: any WallClock,
        concurrency: Int = DispatchMachine.Settings().concurrency,
        staleAfter: TimeInterval = ProviderSettings.defaultStaleAfter, acknowledgementClock: (any WallClock)? = nil,
        statistics: DeliveryStatistics = DeliveryStatistics(), storage: StorageHealth = StorageHealth(),
        startBudget: StartBudget = StartBudget(), logger: Logger = Logger(label: "nohit.pipeline")
    ) {
        self.store = store
        self.storage = storage
        self.clock = clock
        self.statistics = statistics
        directory = DeviceDirectory(store: store)
        var wakes: [ChannelKind: WakeSignal] = [:]
        var dispatchers: [Dispatcher] = []
        var settings = DispatchMachine.Settings()
        settings.concurrency = concurrency
        settings.policy.staleAfter = staleAfter
        for channel in channels {
            let wake = WakeSignal()
            wakes[channel.kind] = wake
            dispatchers.append(
                Dispatcher(
                    channel: channel, outbox: store, clock: clock, wake: wake, statistics: statistics,
                    settings: settings, acknowledgementClock: acknowledgementClock, storage: storage, logger: logger))
        }
        self.dispatchers = dispatchers
        self.wakes = wakes
        publisher = MomentPublisher(
            outbox: store, directory: directory, wake: wakes, lifetime: staleAfter, playTimes: statistics.playTimes,
            startBudget: startBudget)
    }

    /// One Service per channel's dispatcher: each delivers until graceful shutdown, then finishes
    /// the requests in flight and records them.
    package var services: [DispatcherService] { dispatchers.map(DispatcherService.init) }

    /// Runs every dispatcher until `stop` is requested (they finish and record what is in
    /// flight) or the task is cancelled. For tests and benchmarks that drive a pipeline without a
    /// service group.
    package func runDispatchers(stop: StopSignal = StopSignal()) async throws {
        stop.wakes(Array(wakes.values))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for dispatcher in dispatchers {
                group.addTask { try await dispatcher.run(stop: stop) }
            }
            try await group.waitForAll()
        }
    }

    /// Returns once nothing due by now is pending or being sent. A replay at full speed waits for
    /// this after each play with alerts, so its clock never runs ahead of the deliveries.
    package func waitUntilIdle() async throws {
        let kinds = dispatchers.map(\.channel.kind)
        while true {
            try Task.checkCancellation()
            if try await !store.hasUnfinished(channels: kinds, dueBy: clock.now()) { return }
            // A dispatcher asleep until a due time that the clock has reached only to within the
            // precision of a stored time would never wake: nudge them all.
            for wake in wakes.values { wake.signal() }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Returns once nothing is pending or being sent. With a manual clock, moves it to the next
    /// retry or delayed alert whenever the dispatchers are idle. Deliveries for channels without a
    /// dispatcher (e.g. APNs with no key) are not waited for.
    package func waitUntilDrained(manual: ManualWallClock?) async throws {
        let kinds = dispatchers.map(\.channel.kind)
        while true {
            try Task.checkCancellation()
            if try await !store.hasUnfinished(channels: kinds, dueBy: nil) { return }
            if let manual, try await store.outboxCounts().sending == 0 {
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
