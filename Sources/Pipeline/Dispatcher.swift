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
        case sent(DeliveryResult, latency: Double?)
        case claimed([ClaimedDelivery])
        case recorded
    }

    /// Delivers until `stop` is requested (then finishes what is in flight, records it, and
    /// returns) or the task is cancelled (then returns at once; what was in flight is left in
    /// doubt for the next start).
    ///
    /// The database never holds up sending: the next claim and the last batch of outcomes are
    /// written by child tasks of their own (one of each at a time) while requests keep going out.
    package func run(stop: StopSignal = StopSignal()) async throws {
        let kind = channel.kind
        try await withThrowingTaskGroup(of: Event.self) { group in
            var queue: [ClaimedDelivery] = []
            var head = 0
            var inFlight = 0
            var results: [DeliveryResult] = []
            var claiming = false
            var recording = false
            var exhausted = false
            var lastRecord = ContinuousClock.now
            func take(_ event: Event) {
                switch event {
                case .sent(let result, let latency):
                    inFlight -= 1
                    results.append(result)
                    if let latency { statistics.recordLatency(kind, latency) }
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
                }
            }
            while !Task.isCancelled && !stop.isRequested {
                if !claiming && !exhausted && queue.count - head < concurrency {
                    claiming = true
                    let now = clock.now()
                    let limit = concurrency * 2
                    group.addTask { .claimed(try await outbox.claim(channel: kind, now: now, limit: limit)) }
                }
                while inFlight < concurrency && head < queue.count {
                    let delivery = queue[head]
                    head += 1
                    inFlight += 1
                    group.addTask {
                        let (result, latency) = await attempt(delivery)
                        return .sent(result, latency: latency)
                    }
                }
                if !recording && !results.isEmpty
                    && (results.count >= flushEvery || inFlight == 0
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
                if inFlight == 0 && !claiming && !recording && results.isEmpty && head == queue.count {
                    // Idle: everything sent is recorded. Sleep until the next due row or a wake.
                    let due = try await outbox.nextDue(channel: kind)
                    exhausted = false
                    if let due, due <= clock.now() { continue }
                    if stop.isRequested { break }
                    logger.debug(
                        "idle",
                        metadata: ["channel": "\(kind.rawValue)", "next.due": "\(due.map { "\($0)" } ?? "none")"])
                    await wake.wait(until: due, clock: clock)
                    continue
                }
                guard let event = try await group.next() else { continue }
                take(event)
            }
            guard !Task.isCancelled else { return }
            // Stopping: in-flight sends finish and are recorded; claimed but unsent deliveries
            // (including those of a claim still running) go back untouched.
            while let event = try await group.next() { take(event) }
            try await outbox.complete(results)
            try await outbox.release(queue[head...].map(\.id))
        }
    }

    /// One delivery: send, and send again at once after a token refresh; returns what to record
    /// and, when delivered, the seconds from the moment to the acknowledgement.
    private func attempt(_ claimed: ClaimedDelivery) async -> (DeliveryResult, Double?) {
        var state = DeliveryRetryState(
            attempts: claimed.attempts, tokenRefreshed: claimed.tokenRefreshed, createdAt: claimed.createdAt,
            registeredAt: claimed.deviceRegisteredAt)
        let delivery = OutboundDelivery(
            id: claimed.id, deviceID: claimed.deviceID, channel: claimed.channel, payload: claimed.payload,
            collapseKey: claimed.bidKey, createdAt: claimed.createdAt, expiresAt: claimed.expiresAt)
        while true {
            let outcome = await channel.deliver(delivery)
            let now = clock.now()
            let action = state.next(after: outcome, policy: policy, now: now, random: Double.random(in: 0..<1))
            switch action {
            case .markDelivered:
                statistics.record(channel.kind) { $0.delivered += 1 }
                let latency = acknowledgementClock.now().timeIntervalSince(claimed.createdAt)
                return (.delivered(id: claimed.id, at: now), latency)
            case .refreshTokenAndRetry:
                statistics.record(channel.kind) { $0.tokenRefreshes += 1 }
                await channel.refreshCredentials()
                continue
            case .retry(let at, let reason):
                statistics.record(channel.kind) { $0.retried += 1 }
                logger.debug("retrying", metadata: ["delivery.id": "\(claimed.id)", "reason": "\(reason)"])
                return (.retry(id: claimed.id, at: at, reason: reason, tokenRefreshed: state.tokenRefreshed), nil)
            case .pruneDevice(let reason):
                statistics.record(channel.kind) { $0.pruned += 1 }
                logger.info("pruning device", metadata: ["device.id": "\(claimed.deviceID)", "reason": "\(reason)"])
                return (.pruned(id: claimed.id, deviceID: claimed.deviceID, reason: reason, at: now), nil)
            case .fail(let reason):
                statistics.record(channel.kind) { $0.failed += 1 }
                logger.info("delivery failed", metadata: ["delivery.id": "\(claimed.id)", "reason": "\(reason)"])
                return (.failed(id: claimed.id, reason: reason, at: now), nil)
            }
        }
    }
}
