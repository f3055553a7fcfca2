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
        /// A batch's send returned: its requests are on their way (or answered).
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

    /// A delivery on its way: what was claimed and where it stands in its retries.
    private struct InFlight {
        var claimed: ClaimedDelivery
        var retry: DeliveryRetryState
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

            /// Hands a batch to the channel in a child task of its own (the loop goes on while it
            /// sends); its answers come back through the inbox.
            func launch(_ entries: [InFlight]) {
                // A row whose lease this instance may have lost (it could not renew in time) is
                // given back, not sent beside the instance that takes it over.
                let lapsed = entries.filter { !outbox.mayStillSend($0.claimed) }.map(\.claimed.id)
                var entries = entries
                if !lapsed.isEmpty {
                    let gone = Set(lapsed)
                    entries.removeAll { gone.contains($0.claimed.id) }
                    logger.warning(
                        "delivery leases may have lapsed (renewals late or failing); giving the deliveries back",
                        metadata: ["channel": "\(kind)", "deliveries": "\(lapsed.count)"])
                    group.addTask {
                        try await outbox.release(lapsed)
                        return .sent
                    }
                }
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
                group.addTask {
                    await channel.send(deliveries) { index, outcome in inbox.post(first + index, outcome) }
                    return .sent
                }
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
                        statistics.record(kind, .delivered)
                        statistics.recordLatency(
                            kind, acknowledgementClock.now().timeIntervalSince(claimed.createdAt))
                        results.append(.delivered(id: claimed.id, at: now))
                    case .refreshTokenAndRetry:
                        resend.append(entry)
                    case .retry(let at, let reason):
                        statistics.record(kind, .retried)
                        logger.debug("retrying", metadata: ["delivery.id": "\(claimed.id)", "reason": "\(reason)"])
                        results.append(
                            .retry(id: claimed.id, at: at, reason: reason, tokenRefreshed: entry.retry.tokenRefreshed))
                    case .pruneDevice(let reason):
                        statistics.record(kind, .pruned)
                        logger.info(
                            "pruning device", metadata: ["device.id": "\(claimed.deviceID)", "reason": "\(reason)"])
                        results.append(.pruned(id: claimed.id, deviceID: claimed.deviceID, reason: reason, at: now))
                    case .fail(let reason):
                        statistics.record(kind, .failed)
                        logger.info(
                            "delivery failed", metadata: ["delivery.id": "\(claimed.id)", "reason": "\(reason)"])
                        results.append(.failed(id: claimed.id, reason: reason, at: now))
                    }
                }
                if !resend.isEmpty, await channel.refreshCredentials() {
                    statistics.record(kind, .tokenRefresh)
                }
                launch(resend)
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
                case .sent:
                    break
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
                    launch(batch)
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
