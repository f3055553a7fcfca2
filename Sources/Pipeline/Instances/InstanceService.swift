import Alerts
import Clocks
import Foundation
import Logging
import ServiceLifecycle
import Storage

/// This instance's part in the set sharing the store, as a Service: every quarter lease, its
/// heartbeat, its game leases renewed (and the share rebalanced), its leases on deliveries being
/// sent renewed and the lapsed ones of stopped instances taken back in doubt; and, listening,
/// the dispatchers woken when another instance queues deliveries. On graceful shutdown it gives
/// up its games at once (others take them over without waiting for the lease).
package struct InstanceService: Service {
    package let leases: GameLeases
    package let outbox: any OutboxStore
    package let clock: any WallClock
    /// The dispatchers' wake signals, by channel.
    package let wakes: [ChannelKind: WakeSignal]
    package let logger: Logger

    package init(
        leases: GameLeases, outbox: any OutboxStore, clock: any WallClock, wakes: [ChannelKind: WakeSignal],
        logger: Logger = Logger(label: "nohit.instances")
    ) {
        self.leases = leases
        self.outbox = outbox
        self.clock = clock
        self.wakes = wakes
        self.logger = logger
    }

    package func run() async throws {
        let interval = Duration.milliseconds(Int64(leases.leaseSeconds * 250))
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await listen() }
                    group.addTask {
                        while true {
                            await round()
                            try await Task.sleep(for: interval)
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch is CancellationError {
            // Shutdown.
        }
        do {
            try await leases.store.leave()
        } catch {
            logger.warning(
                "could not give up the games; other instances take them once the leases lapse",
                metadata: ["error": "\(PostgresStore.describe(error))"])
        }
    }

    private func round() async {
        do {
            try await leases.maintain()
        } catch {
            logger.warning(
                "heartbeat or game lease renewal failed", metadata: ["error": "\(PostgresStore.describe(error))"])
        }
        do {
            let report = try await outbox.maintainLeases(now: clock.now())
            if !report.requeued.isEmpty || !report.superseded.isEmpty {
                let from = report.takenFrom.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
                logger.notice(
                    "deliveries in flight at an instance that stopped renewing its leases taken back",
                    metadata: [
                        "from": "\(from.joined(separator: ", "))", "requeued": "\(report.requeued.count)",
                        "superseded": "\(report.superseded.count)",
                    ])
            }
        } catch {
            logger.warning("delivery lease renewal failed", metadata: ["error": "\(PostgresStore.describe(error))"])
        }
        // A retry another instance scheduled, or rows taken back: an idle dispatcher looks again.
        for wake in wakes.values { wake.signal() }
    }

    private func listen() async {
        while !Task.isCancelled {
            do {
                try await leases.store.watchOutbox { channel in
                    if let kind = ChannelKind(rawValue: channel) { wakes[kind]?.signal() }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning(
                    "listening for deliveries failed; listening again",
                    metadata: ["error": "\(PostgresStore.describe(error))"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
