import Alerts
import Delivery
import Foundation
import Logging
import Storage
import Synchronization

/// What the dispatchers have done, for reports, metrics and benchmarks.
package final class DeliveryStatistics: Sendable {
    /// Seconds from the moment to the provider's acknowledgement, in fixed buckets (Prometheus
    /// style: each count is of latencies at most its bound), so memory stays flat however long the
    /// service runs.
    package struct LatencyHistogram: Sendable, Equatable {
        package static let bounds: [Double] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
        /// Per bound, cumulative; the last entry is everything (+Inf).
        package var cumulative = [Int](repeating: 0, count: bounds.count + 1)
        package var sum = 0.0
        package var count: Int { cumulative[cumulative.count - 1] }

        mutating func add(_ seconds: Double) {
            for (index, bound) in Self.bounds.enumerated() where seconds <= bound { cumulative[index] += 1 }
            cumulative[cumulative.count - 1] += 1
            sum += seconds
        }
    }

    /// One channel's outcomes since start.
    package struct Counts: Sendable, Equatable {
        package var delivered = 0
        package var retried = 0
        package var failed = 0
        package var pruned = 0
        package var tokenRefreshes = 0
        package var latency = LatencyHistogram()
    }

    package struct Snapshot: Sendable {
        package var byChannel: [ChannelKind: Counts] = [:]
        /// Every latency, in order, when the statistics keep them (benchmarks); empty otherwise.
        package var latencies: [Double] = []

        package var delivered: Int { byChannel.values.reduce(0) { $0 + $1.delivered } }
        package var retried: Int { byChannel.values.reduce(0) { $0 + $1.retried } }
        package var failed: Int { byChannel.values.reduce(0) { $0 + $1.failed } }
        package var pruned: Int { byChannel.values.reduce(0) { $0 + $1.pruned } }
        package var tokenRefreshes: Int { byChannel.values.reduce(0) { $0 + $1.tokenRefreshes } }
    }

    private let state = Mutex(Snapshot())
    private let keepsLatencies: Bool

    /// `keepsLatencies` keeps every latency too (for exact percentiles in a benchmark).
    package init(keepsLatencies: Bool = false) {
        self.keepsLatencies = keepsLatencies
    }

    package var snapshot: Snapshot { state.withLock { $0 } }

    func record(_ channel: ChannelKind, _ change: (inout Counts) -> Void) {
        state.withLock { change(&$0.byChannel[channel, default: Counts()]) }
    }

    func recordLatency(_ channel: ChannelKind, _ seconds: Double) {
        state.withLock { state in
            state.byChannel[channel, default: Counts()].latency.add(seconds)
            if keepsLatencies { state.latencies.append(seconds) }
        }
    }

    package func reset() {
        state.withLock { $0 = Snapshot() }
    }
}

/// Drains the outbox for one channel: claims due deliveries, sends up to `concurrency` at once
/// (each with the channel's deadline), lets the retry policy decide what each outcome means,
/// and records outcomes in small batches. Runs until cancelled.
package struct Dispatcher: Sendable {
    package let channel: any DeliveryChannel
    package let outbox: any OutboxStore
    package let clock: any WallClock
    package let wake: WakeSignal
    package let statistics: DeliveryStatistics
    package var policy = RetryPolicy()
    package var concurrency = 256
    /// Outcomes are written after this many, after `flushInterval`, or when nothing else is in
    /// flight: the bound on acknowledgements a crash can leave unrecorded.
    package var flushEvery = 256
    package var flushInterval = Duration.milliseconds(5)
    package var logger = Logger(label: "nohit.dispatcher")
    /// When the latency of an acknowledgement is measured: wall time (the benchmark) or the
    /// pipeline's clock (replays).
    package var acknowledgementClock: any WallClock

    package init(
        channel: any DeliveryChannel, outbox: any OutboxStore, clock: any WallClock, wake: WakeSignal,
        statistics: DeliveryStatistics
    ) {
        self.channel = channel
        self.outbox = outbox
        self.clock = clock
        self.wake = wake
        self.statistics = statistics
        self.acknowledgementClock = clock
    }

    /// What the dispatcher's child tasks report back.
    private enum Event: Sendable {
        case claimed([ClaimedDelivery])
        case recorded
        /// Outcomes have arrived in the inbox.
        case answered
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

    /// A delivery on its way: what was claimed and where it stands in its retries.
    private struct InFlight {
        var claimed: ClaimedDelivery
        var retry: DeliveryRetryState
    }

    /// Delivers until `stop` is requested (then finishes what is in flight, records it, and
    /// returns) or the task is cancelled (then returns at once; what was in flight is left in
    /// doubt for the next start).
    ///
    /// Deliveries go to the channel in batches (`DeliveryChannel.send`), and their outcomes come
    /// back through an inbox the dispatcher empties whenever it wakes — no task per delivery. The
    /// database never holds up sending: the next claim and the last batch of outcomes are written
    /// by child tasks of their own (one of each at a time) while requests keep going out.
    package func run(stop: StopSignal = StopSignal()) async throws {
        let kind = channel.kind
        let inbox = Inbox()
        try await withThrowingTaskGroup(of: Event.self) { group in
            var queue: [ClaimedDelivery] = []
            var head = 0
            var inFlight: [Int: InFlight] = [:]
            var nextSlot = 0
            var results: [DeliveryResult] = []
            var claiming = false
            var recording = false
            var listening = false
            var exhausted = false
            var lastRecord = ContinuousClock.now

            func launch(_ entries: [InFlight]) async {
                guard !entries.isEmpty else { return }
                let first = nextSlot
                nextSlot += entries.count
                var deliveries: [OutboundDelivery] = []
                deliveries.reserveCapacity(entries.count)
                for (offset, entry) in entries.enumerated() {
                    inFlight[first + offset] = entry
                    let claimed = entry.claimed
                    deliveries.append(
                        OutboundDelivery(
                            id: claimed.id, deviceID: claimed.deviceID, channel: claimed.channel,
                            payload: claimed.payload, collapseKey: claimed.bidKey, createdAt: claimed.createdAt,
                            expiresAt: claimed.expiresAt))
                }
                await channel.send(deliveries) { index, outcome in inbox.post(first + index, outcome) }
            }

            /// Lets the retry policy decide what each answer means; deliveries whose credentials
            /// were refused go out again after the channel refreshes them (once per refused
            /// credential, however many deliveries and batches it failed — the channel keeps count).
            func settle(_ answers: [(slot: Int, outcome: ProviderOutcome)]) async {
                var resend: [InFlight] = []
                for (slot, outcome) in answers {
                    guard var entry = inFlight.removeValue(forKey: slot) else { continue }
                    let claimed = entry.claimed
                    let now = clock.now()
                    switch entry.retry.next(
                        after: outcome, policy: policy, now: now, random: Double.random(in: 0..<1))
                    {
                    case .markDelivered:
                        statistics.record(kind) { $0.delivered += 1 }
                        statistics.recordLatency(
                            kind, acknowledgementClock.now().timeIntervalSince(claimed.createdAt))
                        results.append(.delivered(id: claimed.id, at: now))
                    case .refreshTokenAndRetry:
                        resend.append(entry)
                    case .retry(let at, let reason):
                        statistics.record(kind) { $0.retried += 1 }
                        logger.debug("retrying", metadata: ["delivery.id": "\(claimed.id)", "reason": "\(reason)"])
                        results.append(
                            .retry(id: claimed.id, at: at, reason: reason, tokenRefreshed: entry.retry.tokenRefreshed))
                    case .pruneDevice(let reason):
                        statistics.record(kind) { $0.pruned += 1 }
                        logger.info(
                            "pruning device", metadata: ["device.id": "\(claimed.deviceID)", "reason": "\(reason)"])
                        results.append(.pruned(id: claimed.id, deviceID: claimed.deviceID, reason: reason, at: now))
                    case .fail(let reason):
                        statistics.record(kind) { $0.failed += 1 }
                        logger.info(
                            "delivery failed", metadata: ["delivery.id": "\(claimed.id)", "reason": "\(reason)"])
                        results.append(.failed(id: claimed.id, reason: reason, at: now))
                    }
                }
                if !resend.isEmpty, await channel.refreshCredentials() {
                    statistics.record(kind) { $0.tokenRefreshes += 1 }
                }
                await launch(resend)
            }

            func take(_ event: Event) async {
                switch event {
                case .claimed(let claimed):
                    claiming = false
                    if head > 0 {
                        queue.removeFirst(head)
                        head = 0
                    }
                    queue += claimed
                    exhausted = claimed.isEmpty
                case .recorded:
                    recording = false
                    // A recorded retry or a newly published moment may have made rows due.
                    exhausted = false
                case .answered:
                    listening = false
                    await settle(inbox.take())
                }
            }

            /// Keeps one child task waiting for answers while any are outstanding.
            func listen() {
                guard !listening && !inFlight.isEmpty else { return }
                listening = true
                group.addTask {
                    await inbox.arrived.wait()
                    return .answered
                }
            }

            while !Task.isCancelled && !stop.isRequested {
                if !claiming && !exhausted && queue.count - head < concurrency {
                    claiming = true
                    let now = clock.now()
                    let limit = concurrency * 2
                    group.addTask { .claimed(try await outbox.claim(channel: kind, now: now, limit: limit)) }
                }
                let room = min(concurrency - inFlight.count, queue.count - head)
                if room > 0 {
                    let batch = queue[head..<head + room].map {
                        InFlight(
                            claimed: $0,
                            retry: DeliveryRetryState(
                                attempts: $0.attempts, tokenRefreshed: $0.tokenRefreshed, createdAt: $0.createdAt,
                                registeredAt: $0.deviceRegisteredAt))
                    }
                    head += room
                    await launch(batch)
                }
                listen()
                if !recording && !results.isEmpty
                    && (results.count >= flushEvery || inFlight.isEmpty
                        || ContinuousClock.now - lastRecord > flushInterval)
                {
                    recording = true
                    lastRecord = .now
                    let batch = results
                    results.removeAll(keepingCapacity: true)
                    group.addTask {
                        try await outbox.complete(batch)
                        return .recorded
                    }
                }
                if inFlight.isEmpty && !claiming && !recording && !listening && results.isEmpty
                    && head == queue.count
                {
                    // Idle: everything sent is recorded. Sleep until the next due row or a wake.
                    let due = try await outbox.nextDue(channel: kind)
                    exhausted = false
                    if let due, due <= clock.now() { continue }
                    if stop.isRequested { break }
                    do {
                        try await outbox.deliveriesSettled(now: clock.now())
                    } catch {
                        // Housekeeping: the next idle moment tries again; delivery goes on.
                        logger.warning("outbox housekeeping failed", metadata: ["error": "\(error)"])
                    }
                    logger.debug(
                        "idle",
                        metadata: ["channel": "\(kind.rawValue)", "next.due": "\(due.map { "\($0)" } ?? "none")"])
                    await wake.wait(until: due, clock: clock)
                    continue
                }
                guard let event = try await group.next() else { continue }
                await take(event)
            }
            guard !Task.isCancelled else { return }
            // Stopping: in-flight sends finish and are recorded; claimed but unsent deliveries
            // (including those of a claim still running) go back untouched.
            while true {
                listen()
                guard let event = try await group.next() else { break }
                await take(event)
            }
            try await outbox.complete(results)
            try await outbox.release(queue[head...].map(\.id))
        }
    }
}
