import Alerts
import Foundation

/// The outbox: one row per (moment, device) to deliver, written with its moment in one
/// transaction, and worked through by the dispatchers.
package protocol OutboxStore: Sendable {
    /// Stores `moment` with its payloads and deliveries in one transaction. When the moment was
    /// already stored (derived again after a restart), nothing is written and false is returned.
    @discardableResult
    func record(_ moment: StoredMoment, payloads: [StoredPayload], deliveries: [NewDelivery]) async throws -> Bool
    /// Whether the moment is stored (its deliveries with it): then it was planned already.
    func isRecorded(momentID: String) async throws -> Bool
    /// The devices told the bid is on: an in-progress alert of it (an inning, an out in the 9th,
    /// a revival) was planned for them. Recorded with the deliveries, so in the same transaction.
    func followers(bidKey: String) async throws -> Set<UUID>
    /// Claims up to `limit` due deliveries of `channel`, recording each attempt as started (so a
    /// crash from here leaves it in doubt, not forgotten). Deliveries to a device deleted or
    /// disabled since they were queued are not returned: they fail, with the reason.
    func claim(channel: ChannelKind, now: Date, limit: Int) async throws -> [ClaimedDelivery]
    /// Records the outcomes of attempts.
    func complete(_ results: [DeliveryResult]) async throws
    /// A dispatcher has nothing in flight and nothing due: once no channel has anything being
    /// sent or due by `now`, housekeeping that would have slowed a fan-out runs (SQLite: the WAL
    /// checkpoint deferred since a moment was recorded).
    func deliveriesSettled(now: Date) async throws
    /// Gives back claimed deliveries that were never sent (a graceful stop): pending again, the
    /// attempt not counted.
    func release(_ ids: [UUID]) async throws
    /// After a restart: attempts started and never finished are in doubt. Those superseded by a
    /// later delivered alert of the same bid to the same device are dropped; the rest are queued
    /// again under the same delivery id.
    func recoverInDoubt(now: Date) async throws -> RecoveryReport
    /// At start: the deliveries held for a configuration the provider refused are pending again,
    /// due `now` (the configuration may have been mended since); how many.
    func releaseHeld(now: Date) async throws -> Int
    /// For a store several instances share: renews this instance's leases on the deliveries it is
    /// sending, and puts back in doubt (as ``recoverInDoubt(now:)`` does) those whose instance
    /// stopped renewing. A store one process dispatches from has nothing to do here: its recovery
    /// at start covers it.
    func maintainLeases(now: Date) async throws -> RecoveryReport
    func outboxCounts() async throws -> OutboxCounts
    /// The deliveries that failed, most recent first (`limit` of them), and how many failed by
    /// channel and reason (the 50 largest): what an operator looks at when alerts go missing.
    func failedDeliveries(limit: Int) async throws -> FailedDeliveries
    /// Whether any delivery of these channels is being sent, or pending (and due by `dueBy`, when
    /// given). Cheap whatever the outbox holds: callers poll it.
    func hasUnfinished(channels: [ChannelKind], dueBy: Date?) async throws -> Bool
    /// When the next pending delivery of `channel` is due, if any.
    func nextDue(channel: ChannelKind) async throws -> Date?
    /// The push-to-start deliveries due since `since` and not failed (sent, being sent or still to
    /// send), by device: what a device's start budget has spent (``StartBudget``).
    func plannedStarts(since: Date) async throws -> [UUID: [Date]]
    /// Whether this instance still surely holds the lease on a claimed delivery, so that sending
    /// it cannot race another instance that took the row back (a store one process dispatches
    /// from: always). An instance that could not renew its leases in time (stalled, cut off from
    /// the database) stops sending and gives the rows back instead of sending them beside the
    /// instance that takes them over.
    func mayStillSend(_ delivery: ClaimedDelivery) -> Bool
    /// Until when `mayStillSend` says yes for `delivery` as things stand (nil: always): the
    /// deadline its request carries to the wire, so that a process held up between the decision
    /// and the write (paused, starved) does not send it after its lease lapsed.
    func sendDeadline(_ delivery: ClaimedDelivery) -> ContinuousClock.Instant?
}

extension OutboxStore {
    package func maintainLeases(now: Date) async throws -> RecoveryReport { RecoveryReport() }
    package func mayStillSend(_ delivery: ClaimedDelivery) -> Bool { true }
    package func sendDeadline(_ delivery: ClaimedDelivery) -> ContinuousClock.Instant? { nil }

    /// Whether any delivery of these channels is being sent or pending, whenever due.
    package func hasUnfinished(channels: [ChannelKind]) async throws -> Bool {
        try await hasUnfinished(channels: channels, dueBy: nil)
    }
}

/// What recording a moment does to the push-to-start deliveries still unsent: a moment that ends
/// its bid drops those of that bid (an activity started for a bid already over would show it alive),
/// failed with the reason, in the moment's own transaction. The same in every store.
package enum PendingStarts {
    /// The bid whose unsent starts recording `moment` drops, if it ends one.
    package static func endedBid(_ moment: Moment) -> String? {
        moment.kind.isBid && !moment.kind.bidStillAlive ? moment.bidKey : nil
    }

    /// The failure's reason, before what the start last waited for (SQL appends it).
    package static func reason(_ moment: Moment) -> String {
        "not started: the bid was over (\(moment.kind.rawValue), \(moment.outs) outs) before the start could go"
    }

    /// What the start waited for when no attempt failed: its time (the device's spoiler delay, or
    /// its push-to-start budget).
    package static let waitedForBudget = " (not yet due: held by the device's spoiler delay or push-to-start budget)"
}

/// A channel's bytes for a moment, shared by all its deliveries on that channel.
package struct StoredPayload: Sendable, Hashable {
    /// e.g. `<moment id>/apns/jinx-safe`.
    package var key: String
    package var body: Data

    package init(key: String, body: Data) {
        self.key = key
        self.body = body
    }
}

/// A delivery to write.
package struct NewDelivery: Sendable, Hashable {
    package var id: UUID
    package var deviceID: UUID
    package var channel: ChannelKind
    package var payloadKey: String
    package var notBefore: Date
    package var expiresAt: Date
    package var bidKey: String
    package var momentKind: Moment.Kind
    package var momentOuts: Int

    package init(
        id: UUID, deviceID: UUID, channel: ChannelKind, payloadKey: String, notBefore: Date, expiresAt: Date,
        bidKey: String, momentKind: Moment.Kind, momentOuts: Int
    ) {
        self.id = id
        self.deviceID = deviceID
        self.channel = channel
        self.payloadKey = payloadKey
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.bidKey = bidKey
        self.momentKind = momentKind
        self.momentOuts = momentOuts
    }
}

/// A delivery claimed for an attempt.
package struct ClaimedDelivery: Sendable, Hashable {
    package var id: UUID
    package var deviceID: UUID
    package var channel: DeviceChannel
    package var payload: Data
    package var bidKey: String
    package var createdAt: Date
    package var expiresAt: Date
    package var deviceRegisteredAt: Date
    /// Attempts including this one.
    package var attempts: Int
    package var tokenRefreshed: Bool
    /// For a store several instances share: when this instance asked for the lease on the row
    /// and when it had it (local monotonic time), for ``OutboxStore/mayStillSend(_:)``.
    package var lease: LeaseStamp? = nil
}

/// When a lease was asked for and when it was granted, on this process's monotonic clock.
package struct LeaseStamp: Sendable, Hashable {
    package var asked: ContinuousClock.Instant
    package var granted: ContinuousClock.Instant

    package init(asked: ContinuousClock.Instant, granted: ContinuousClock.Instant) {
        self.asked = asked
        self.granted = granted
    }
}

/// The outcome of an attempt, to record.
package enum DeliveryResult: Sendable, Hashable {
    case delivered(id: UUID, at: Date)
    case retry(id: UUID, at: Date, reason: String, tokenRefreshed: Bool)
    case failed(id: UUID, reason: String, at: Date)
    /// Failed, and the device is disabled.
    case pruned(id: UUID, deviceID: UUID, reason: String, at: Date)
    /// Refused for the server's configuration: kept unsent, neither claimed nor failed, until
    /// ``OutboxStore/releaseHeld(now:)`` at the next start.
    case held(id: UUID, reason: String, at: Date)

    /// The delivery it is about.
    package var id: UUID {
        switch self {
        case .delivered(let id, _), .retry(let id, _, _, _), .failed(let id, _, _), .pruned(let id, _, _, _),
            .held(let id, _, _):
            id
        }
    }
}

package struct RecoveryReport: Sendable, Hashable {
    /// In doubt and queued again under the same id.
    package var requeued: [UUID] = []
    /// In doubt but superseded by a later delivered alert of the same bid: dropped.
    package var superseded: [UUID] = []
    /// For a shared store: how many of them each instance had in flight when its lease lapsed
    /// (it was killed, or stalled past its lease).
    package var takenFrom: [String: Int] = [:]

    package init(requeued: [UUID] = [], superseded: [UUID] = [], takenFrom: [String: Int] = [:]) {
        self.requeued = requeued
        self.superseded = superseded
        self.takenFrom = takenFrom
    }
}

/// Deliveries that failed: the most recent, and counts by channel and reason.
package struct FailedDeliveries: Sendable, Hashable {
    package struct Delivery: Sendable, Hashable {
        package var deliveryID: UUID
        package var deviceID: UUID
        package var channel: String
        /// The provider's reason (`Unregistered`, `BadDeviceToken`, `413 PayloadTooLarge`, `gave up after 8 attempts: ...`).
        package var reason: String
        package var failedAt: Date
        package var momentID: String
        package var attempts: Int
        /// Whether the device is still sent to (a device the provider said was gone is pruned:
        /// disabled, with the reason); nil when it was removed.
        package var deviceActive: Bool?

        package init(
            deliveryID: UUID, deviceID: UUID, channel: String, reason: String, failedAt: Date, momentID: String,
            attempts: Int, deviceActive: Bool?
        ) {
            self.deliveryID = deliveryID
            self.deviceID = deviceID
            self.channel = channel
            self.reason = reason
            self.failedAt = failedAt
            self.momentID = momentID
            self.attempts = attempts
            self.deviceActive = deviceActive
        }
    }

    package struct Count: Sendable, Hashable {
        package var channel: String
        package var reason: String
        package var count: Int

        package init(channel: String, reason: String, count: Int) {
            self.channel = channel
            self.reason = reason
            self.count = count
        }
    }

    package var recent: [Delivery]
    package var counts: [Count]

    package init(recent: [Delivery], counts: [Count]) {
        self.recent = recent
        self.counts = counts
    }
}

package struct OutboxCounts: Sendable, Hashable {
    package var pending = 0
    package var sending = 0
    package var delivered = 0
    package var failed = 0
    package var superseded = 0
    /// Held for a configuration the provider refused, until the next start.
    package var held = 0
    /// Push-to-start deliveries APNs accepted, and those that failed: refused, given up, or
    /// dropped because the bid was over before the device's budget let them go.
    package var startsSent = 0
    package var startsFailed = 0

    package init() {}
    package var total: Int { pending + sending + delivered + failed + superseded + held }
}
