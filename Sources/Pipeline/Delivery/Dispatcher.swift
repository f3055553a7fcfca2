import Alerts
import Clocks
import Delivery
import Foundation
import Logging
import Storage
import Synchronization

/// Drains the outbox for one channel: claims due deliveries, sends up to `concurrency` at once
/// (each with the channel's deadline), lets the retry policy decide what each outcome means,
/// and records outcomes in small batches. Runs until cancelled.
package struct Dispatcher: Sendable {
    package let channel: any DeliveryChannel
    package let outbox: any OutboxStore
    package let clock: any WallClock
    package let wake: WakeSignal
    package let statistics: DeliveryStatistics
    /// Deliveries in flight at most, how results are batched, the retry policy.
    package let settings: DispatchMachine.Settings
    package let logger: Logger
    /// When the latency of an acknowledgement is measured: wall time (the benchmark) or the
    /// pipeline's clock (replays).
    package let acknowledgementClock: any WallClock
    /// Whether the database takes writes: a claim or an outcome it refuses for a fault of the
    /// machine (a full disk) is tried again until it is stored, never dropped.
    package let storage: StorageHealth

    /// `acknowledgementClock` defaults to `clock`.
    package init(
        channel: any DeliveryChannel, outbox: any OutboxStore, clock: any WallClock, wake: WakeSignal,
        statistics: DeliveryStatistics, settings: DispatchMachine.Settings = DispatchMachine.Settings(),
        acknowledgementClock: (any WallClock)? = nil, storage: StorageHealth = StorageHealth(),
        logger: Logger = Logger(label: "nohit.dispatcher")
    ) {
        self.channel = channel
        self.outbox = outbox
        self.clock = clock
        self.wake = wake
        self.statistics = statistics
        self.settings = settings
        self.acknowledgementClock = acknowledgementClock ?? clock
        self.storage = storage
        self.logger = logger
    }

    /// What the dispatcher's child tasks report back.
    private enum Event: Sendable {
        case claimed([ClaimedDelivery])
        case recorded
        /// Outcomes have arrived in the inbox.
        case answered
        /// A batch's send (or a release) returned: its requests are on their way (or answered).
        case sent
    }

    /// Where outcomes land as the provider's answers arrive (on the transport's threads), for
    /// the dispatcher to take in batches.
    private final class Inbox: Sendable {
        private let outcomes = Mutex<[(slot: Int, outcome: ProviderOutcome)]>([])
        let arrived = WakeSignal()

        func post(_ slot: Int, _ outcome: ProviderOutcome) {
            outcomes.withLock { $0.append((slot, outcome)) }
            arrived.signal()
        }

        func take() -> [(slot: Int, outcome: ProviderOutcome)] {
            outcomes.withLock { outcomes in
                defer { outcomes.removeAll(keepingCapacity: true) }
                return outcomes
            }
        }
    }

    /// Delivers until `stop` is requested (then finishes what is in flight, records it, and
    /// returns) or the task is cancelled (then returns at once; what was in flight is left in
    /// doubt for the next start).
    ///
    /// Deliveries go to the channel in batches (`DeliveryChannel.send`, each in a child task), and
    /// their outcomes come back through an inbox the dispatcher empties whenever it wakes — no task
    /// per delivery on the lean HTTP/2 paths. The
    /// database never holds up sending: the next claim and the last batch of outcomes are written
    /// by child tasks of their own (one of each at a time) while requests keep going out.
    package func run(stop: StopSignal = StopSignal()) async throws {
        let kind = channel.kind
        let inbox = Inbox()
        let storage = storage
        let logger = logger
        /// A write through the storage's waits. Stopping while the database takes nothing, it is
        /// left undone and `undone` stands for its answer, so the dispatcher finishes: what was sent
        /// and not recorded is in doubt, sent again at the next start with the same ids.
        @Sendable func write<T: Sendable>(
            _ what: String, isWrite: Bool = true, undone: T, _ body: @escaping @Sendable () async throws -> T
        ) async throws -> T {
            do {
                return try await storage.persist(what, isWrite: isWrite, stopping: { stop.isRequested }, body)
            } catch let fault as StorageFault {
                logger.error(
                    "stopping with \(what) not written: \(fault); deliveries not recorded are sent again at the next start, with the same ids",
                    metadata: ["channel": "\(kind.rawValue)"])
                return undone
            }
        }
        var machine = DispatchMachine(settings: settings, start: .now)
        try await withThrowingTaskGroup(of: Event.self) { group in
            /// Carries out the machine's actions; returns false when it finished.
            func perform(_ actions: [DispatchMachine.Action]) async throws -> Bool {
                for action in actions {
                    switch action {
                    case .claim(let limit):
                        let now = clock.now()
                        group.addTask {
                            .claimed(
                                try await write("a claim of deliveries", undone: []) {
                                    try await outbox.claim(channel: kind, now: now, limit: limit)
                                })
                        }
                    case .send(let first, let claimed):
                        // Each carries its lease's deadline to the wire: held up past it, this
                        // process has lost the claim, and the request is not written.
                        let deliveries = claimed.map {
                            OutboundDelivery(
                                id: $0.id, deviceID: $0.deviceID, channel: $0.channel, payload: $0.payload,
                                collapseKey: $0.bidKey, createdAt: $0.createdAt, expiresAt: $0.expiresAt,
                                sendBy: outbox.sendDeadline($0))
                        }
                        group.addTask {
                            await channel.send(deliveries) { index, outcome in inbox.post(first + index, outcome) }
                            return .sent
                        }
                    case .release(let ids):
                        logger.warning(
                            "delivery leases may have lapsed (renewals late or failing); giving the deliveries back",
                            metadata: ["channel": "\(kind)", "deliveries": "\(ids.count)"])
                        group.addTask {
                            try await write("deliveries given back", undone: ()) { try await outbox.release(ids) }
                            return .sent
                        }
                    case .listen:
                        group.addTask {
                            await inbox.arrived.wait()
                            return .answered
                        }
                    case .record(let results):
                        group.addTask {
                            try await write("delivery outcomes", undone: ()) { try await outbox.complete(results) }
                            return .recorded
                        }
                    case .idle:
                        // Everything sent is recorded. Sleep until the next due row or a wake.
                        let due = try await write("the next due time", isWrite: false, undone: nil) {
                            try await outbox.nextDue(channel: kind)
                        }
                        machine.woke()
                        if let due, due <= clock.now() { return true }
                        if stop.isRequested { return true }
                        do {
                            try await outbox.deliveriesSettled(now: clock.now())
                        } catch {
                            // Housekeeping: the next idle moment tries again; delivery goes on.
                            logger.warning(
                                "outbox housekeeping failed", metadata: ["error": "\(PostgresStore.describe(error))"])
                        }
                        logger.debug(
                            "idle",
                            metadata: ["channel": "\(kind.rawValue)", "next.due": "\(due.map { "\($0)" } ?? "none")"])
                        await wake.wait(until: due, clock: clock)
                    case .awaitEvent:
                        guard let event = try await group.next() else { return true }
                        try await take(event)
                    case .finish(let results, let release):
                        try await write("delivery outcomes", undone: ()) { try await outbox.complete(results) }
                        try await write("deliveries given back", undone: ()) { try await outbox.release(release) }
                        return false
                    }
                }
                return true
            }

            func take(_ event: Event) async throws {
                switch event {
                case .claimed(let claimed): machine.claimed(claimed)
                case .recorded: machine.recorded()
                case .sent: machine.sent()
                case .answered:
                    let (decisions, resend) = machine.answered(
                        inbox.take(), now: clock.now(), random: { Double.random(in: 0..<1) })
                    for decision in decisions { note(decision) }
                    // Once per refused credential, however many deliveries and batches it failed
                    // (the channel keeps count).
                    if !resend.isEmpty, await channel.refreshCredentials() {
                        statistics.record(kind, .tokenRefresh)
                    }
                    _ = try await perform(machine.resend(resend, mayStillSend: outbox.mayStillSend))
                }
            }

            while !Task.isCancelled {
                if stop.isRequested && !machine.isStopping { machine.stop() }
                let actions = machine.next(now: .now, mayStillSend: outbox.mayStillSend)
                guard try await perform(actions) else { return }
            }
        }
    }

    /// The app a delivery goes through, as the operator names it: its topic and environment.
    static func provider(of channel: DeviceChannel) -> String {
        if let app = channel.apnsApp {
            "\(app.topic) (\(app.environment.rawValue))"
        } else {
            "the \(channel.kind.rawValue) provider"
        }
    }

    /// An answer's decision in the statistics and the log.
    private func note(_ decision: DispatchMachine.Decision) {
        let kind = channel.kind
        let claimed = decision.delivery
        switch decision.action {
        case .markDelivered:
            statistics.record(kind, .delivered)
            let acknowledged = acknowledgementClock.now()
            statistics.recordLatency(kind, acknowledged.timeIntervalSince(claimed.createdAt))
            statistics.recordPlayToSend(kind, bidKey: claimed.bidKey, createdAt: claimed.createdAt, now: acknowledged)
        case .refreshTokenAndRetry:
            break
        case .retry(_, let reason):
            statistics.record(kind, .retried)
            logger.debug("retrying", metadata: ["delivery.id": "\(claimed.id)", "reason": "\(reason)"])
        case .pruneDevice(let reason):
            statistics.record(kind, .pruned)
            statistics.recordFailure(kind, reason: "pruned")
            logger.info("pruning device", metadata: ["device.id": "\(claimed.deviceID)", "reason": "\(reason)"])
        case .fail(let reason):
            statistics.record(kind, .failed)
            statistics.recordFailure(kind, reason: "failed")
            logger.info("delivery failed", metadata: ["delivery.id": "\(claimed.id)", "reason": "\(reason)"])
        case .hold(let reason):
            statistics.record(kind, .held)
            statistics.recordFailure(kind, reason: reason)
            let provider = Self.provider(of: claimed.channel)
            // Once per provider and cause, at the default level: the operator must hear of it.
            if statistics.faults.held(channel: kind.rawValue, provider: provider, reason: reason) {
                logger.error(
                    Logger.Message(
                        stringLiteral:
                            "\(kind.rawValue) refuses this server's pushes for \(provider): \(reason); "
                            + "\(ProviderOutcome.configurationFix(for: reason)). Its deliveries are held, not failed, "
                            + "and sent at the next start"),
                    metadata: ["channel": "\(kind.rawValue)", "provider": "\(provider)", "reason": "\(reason)"])
            }
        }
    }
}
