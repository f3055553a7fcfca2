import Alerts
import Delivery
import Foundation
import Storage

/// The dispatcher's decisions, without I/O: what to claim, send, record and give back, and what
/// each provider answer means, given what has happened so far (AsyncHTTPClient's
/// `HTTPConnectionPool.StateMachine` is the model). ``Dispatcher`` feeds it the results of its
/// child tasks and carries out the actions it returns; the machine never waits, reads a clock or
/// touches a socket or a database (times are given to it), so each rule has a test of its own.
package struct DispatchMachine: Sendable {
    package struct Settings: Sendable {
        /// Deliveries in flight at most.
        package var concurrency = 256
        /// Results are recorded after this many, after `flushInterval`, or when nothing else is in
        /// flight: the bound on acknowledgements a crash can leave unrecorded.
        package var flushEvery = 256
        package var flushInterval = Duration.milliseconds(5)
        package var policy = RetryPolicy()

        package init() {}
    }

    /// A delivery on its way: what was claimed and where it stands in its retries.
    package struct InFlight: Sendable {
        package var claimed: ClaimedDelivery
        package var retry: DeliveryRetryState
    }

    /// What the dispatcher is to do. Each action but `idle`, `awaitEvent` and `finish` starts a
    /// child task whose end is told back (`claimed`, `sent`, `answered`, `recorded`).
    package enum Action: Sendable, Equatable {
        /// Claim up to `limit` due deliveries.
        case claim(limit: Int)
        /// Send these through the channel; their answers come back as slots `first...`.
        case send(first: Int, [ClaimedDelivery])
        /// Give these back untouched: their leases may have lapsed (or the dispatcher stopped).
        case release([UUID])
        /// Wait for answers to arrive.
        case listen
        /// Record these results.
        case record([DeliveryResult])
        /// Nothing in flight and everything recorded: sleep until the next due row or a wake.
        case idle
        /// Wait for the next child task to end.
        case awaitEvent
        /// Stopped: record these results, give these deliveries back, and return.
        case finish(record: [DeliveryResult], release: [UUID])
    }

    /// What an answer meant for its delivery, for the dispatcher's statistics and log.
    package struct Decision: Sendable {
        package var delivery: ClaimedDelivery
        package var action: DeliveryAction
    }

    package let settings: Settings
    private var queue: [ClaimedDelivery] = []
    private var head = 0
    private(set) var inFlight: [Int: InFlight] = [:]
    private var nextSlot = 0
    private(set) var results: [DeliveryResult] = []
    private var claiming = false
    private var recording = false
    private var listening = false
    private var exhausted = false
    private var stopping = false
    /// Child tasks started and not yet told back.
    private(set) var outstanding = 0
    private var lastRecord: ContinuousClock.Instant

    /// `start`: when the dispatcher started (the first results wait `flushInterval` from it).
    package init(settings: Settings = Settings(), start: ContinuousClock.Instant) {
        self.settings = settings
        self.lastRecord = start
    }

    /// Claimed deliveries waiting to be sent.
    package var waiting: Int { queue.count - head }
    package var isStopping: Bool { stopping }

    // MARK: Deciding

    /// From when a delivery's staleness counts: its moment, or for a push-to-start held back by
    /// its device's budget, the time it was due (a lifetime before it expires).
    static func worthFrom(_ delivery: ClaimedDelivery, staleAfter: TimeInterval) -> Date {
        guard delivery.channel.kind == .liveActivityStart else { return delivery.createdAt }
        return max(delivery.createdAt, delivery.expiresAt.addingTimeInterval(-staleAfter))
    }

    /// What to do now. `mayStillSend` says whether a claimed delivery's lease still holds (a row
    /// whose lease may have lapsed is given back, not sent beside the instance that takes it over).
    package mutating func next(
        now: ContinuousClock.Instant, mayStillSend: (ClaimedDelivery) -> Bool
    ) -> [Action] {
        var actions: [Action] = []
        if stopping {
            if let listen = listenIfNeeded() { actions.append(listen) }
            if outstanding == 0 {
                let release = queue[head...].map(\.id)
                queue.removeAll()
                head = 0
                actions.append(.finish(record: results, release: release))
                results.removeAll()
            } else {
                actions.append(.awaitEvent)
            }
            return actions
        }
        if !claiming && !exhausted && waiting < settings.concurrency {
            claiming = true
            outstanding += 1
            actions.append(.claim(limit: settings.concurrency * 2))
        }
        let room = min(settings.concurrency - inFlight.count, waiting)
        if room > 0 {
            let batch = queue[head..<head + room].map {
                InFlight(
                    claimed: $0,
                    retry: DeliveryRetryState(
                        attempts: $0.attempts, tokenRefreshed: $0.tokenRefreshed,
                        createdAt: Self.worthFrom($0, staleAfter: settings.policy.staleAfter),
                        registeredAt: $0.deviceRegisteredAt))
            }
            head += room
            actions += launch(batch, mayStillSend: mayStillSend)
        }
        if let listen = listenIfNeeded() { actions.append(listen) }
        if !recording && !results.isEmpty
            && (results.count >= settings.flushEvery || inFlight.isEmpty
                || now - lastRecord > settings.flushInterval)
        {
            recording = true
            lastRecord = now
            outstanding += 1
            actions.append(.record(results))
            results.removeAll(keepingCapacity: true)
        }
        if inFlight.isEmpty && !claiming && !recording && !listening && results.isEmpty && waiting == 0 {
            actions.append(.idle)
        } else {
            actions.append(.awaitEvent)
        }
        return actions
    }

    /// Stop: what is in flight finishes and is recorded; nothing new is claimed or sent (but a
    /// delivery refused for its credentials is still resent once they are refreshed); what was
    /// claimed and not sent is given back.
    package mutating func stop() {
        stopping = true
    }

    /// Puts entries on their way, but for those whose lease may have lapsed (given back).
    private mutating func launch(_ entries: [InFlight], mayStillSend: (ClaimedDelivery) -> Bool) -> [Action] {
        var actions: [Action] = []
        let lapsed = entries.filter { !mayStillSend($0.claimed) }.map(\.claimed.id)
        var entries = entries
        if !lapsed.isEmpty {
            let gone = Set(lapsed)
            entries.removeAll { gone.contains($0.claimed.id) }
            outstanding += 1
            actions.append(.release(lapsed))
        }
        guard !entries.isEmpty else { return actions }
        let first = nextSlot
        nextSlot += entries.count
        for (offset, entry) in entries.enumerated() { inFlight[first + offset] = entry }
        outstanding += 1
        actions.append(.send(first: first, entries.map(\.claimed)))
        return actions
    }

    /// One child task waits for answers while any are outstanding.
    private mutating func listenIfNeeded() -> Action? {
        guard !listening && !inFlight.isEmpty else { return nil }
        listening = true
        outstanding += 1
        return .listen
    }

    // MARK: What comes back

    /// A claim came back.
    package mutating func claimed(_ deliveries: [ClaimedDelivery]) {
        outstanding -= 1
        claiming = false
        if head > 0 {
            queue.removeFirst(head)
            head = 0
        }
        queue += deliveries
        exhausted = deliveries.isEmpty
    }

    /// Results were recorded: a recorded retry may have made rows due.
    package mutating func recorded() {
        outstanding -= 1
        recording = false
        exhausted = false
    }

    /// A send (or a release) returned.
    package mutating func sent() {
        outstanding -= 1
    }

    /// The dispatcher woke from idle: rows may be due.
    package mutating func woke() {
        exhausted = false
    }

    /// Answers arrived: the retry policy decides what each means (`random` in 0..<1 for its
    /// jitter). Deliveries whose credentials were refused come back in `resend`, to go out again
    /// (through ``resend(_:mayStillSend:)``) once the channel has refreshed them.
    package mutating func answered(
        _ answers: [(slot: Int, outcome: ProviderOutcome)], now: Date, random: () -> Double
    ) -> (decisions: [Decision], resend: [InFlight]) {
        outstanding -= 1
        listening = false
        var decisions: [Decision] = []
        var resend: [InFlight] = []
        var again: [ClaimedDelivery] = []
        defer {
            // Not sent (its time to be sent had passed): back to the front of the queue, where the
            // launch asks again whether its lease holds, as renewed since; sent then with a new
            // time, or given back. No attempt spent, nothing recorded.
            queue.insert(contentsOf: again, at: head)
        }
        for (slot, outcome) in answers {
            guard var entry = inFlight.removeValue(forKey: slot) else { continue }
            let claimed = entry.claimed
            if case .notSent = outcome {
                again.append(claimed)
                continue
            }
            let action = entry.retry.next(after: outcome, policy: settings.policy, now: now, random: random())
            decisions.append(Decision(delivery: claimed, action: action))
            switch action {
            case .markDelivered:
                results.append(.delivered(id: claimed.id, at: now))
            case .refreshTokenAndRetry:
                resend.append(entry)
            case .retry(let at, let reason):
                results.append(
                    .retry(id: claimed.id, at: at, reason: reason, tokenRefreshed: entry.retry.tokenRefreshed))
            case .pruneDevice(let reason):
                results.append(.pruned(id: claimed.id, deviceID: claimed.deviceID, reason: reason, at: now))
            case .fail(let reason):
                results.append(.failed(id: claimed.id, reason: reason, at: now))
            case .hold(let reason):
                results.append(.held(id: claimed.id, reason: reason, at: now))
            }
        }
        return (decisions, resend)
    }

    /// Sends again what was refused for its credentials.
    package mutating func resend(_ entries: [InFlight], mayStillSend: (ClaimedDelivery) -> Bool) -> [Action] {
        launch(entries, mayStillSend: mayStillSend)
    }
}
