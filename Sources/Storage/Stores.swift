import Alerts
import Baseball
import Foundation

/// Registered devices.
package protocol DeviceStore: Sendable {
    /// Stores a new device. Throws `StoreError.duplicate` when the id exists.
    func register(_ device: Device) async throws
    /// Stores many new devices in one transaction: all or none (a duplicate id refuses them all).
    func register(contentsOf devices: [Device]) async throws
    func device(id: UUID) async throws -> Device?
    /// Replaces the device's channel address (an APNs or Live Activity token rotated, a
    /// subscription renewed) and re-activates it; false when there is no such device.
    func updateChannel(id: UUID, to channel: DeviceChannel, at date: Date) async throws -> Bool
    /// Stops sending to the device; false when there is no such device.
    func disable(id: UUID, reason: String, at date: Date) async throws -> Bool
    func delete(id: UUID) async throws -> Bool
    /// Every active device.
    func activeDevices() async throws -> [Device]
    func deviceCount() async throws -> Int
    /// A number that changes whenever a device is added, changed (channel, preferences, status)
    /// or removed, by this process or another one sharing the store.
    func devicesVersion() async throws -> Int
    /// Devices added or changed after `version` (active or not), or every active device when nil,
    /// with the current version and the number of devices ever removed — read together.
    func deviceChanges(after version: Int?) async throws -> DeviceChanges
}

/// What changed among the devices since a version.
package struct DeviceChanges: Sendable {
    package var version: Int
    /// Devices deleted so far: when this moves, a reader reads everything again.
    package var removals: Int
    package var devices: [Device]

    package init(version: Int, removals: Int, devices: [Device]) {
        self.version = version
        self.removals = removals
        self.devices = devices
    }
}

/// What each device subscribes to: its preferences.
package protocol SubscriptionStore: Sendable {
    func preferences(deviceID: UUID) async throws -> Preferences?
    /// Replaces the preferences (already validated); false when there is no such device.
    func updatePreferences(deviceID: UUID, to preferences: Preferences) async throws -> Bool
    /// Active devices with `team` among their favourites.
    func deviceIDs(favouring team: String) async throws -> [UUID]
}

/// Moments, stored once each.
package protocol MomentStore: Sendable {
    func moment(id: String) async throws -> StoredMoment?
    /// The most recent moments, newest first.
    func recentMoments(limit: Int) async throws -> [StoredMoment]
    func moments(gameID: String) async throws -> [StoredMoment]
}

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
    func outboxCounts() async throws -> OutboxCounts
    /// Whether any delivery of these channels is being sent, or pending (and due by `dueBy`, when
    /// given). Cheap whatever the outbox holds: callers poll it.
    func hasUnfinished(channels: [ChannelKind], dueBy: Date?) async throws -> Bool
    /// When the next pending delivery of `channel` is due, if any.
    func nextDue(channel: ChannelKind) async throws -> Date?
}

/// A moment as stored, with the game it belongs to and when it happened.
package struct StoredMoment: Sendable, Hashable, Codable {
    package var moment: Moment
    package var game: GameInfo
    package var occurredAt: Date

    package init(moment: Moment, game: GameInfo, occurredAt: Date) {
        self.moment = moment
        self.game = game
        self.occurredAt = occurredAt
    }
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
}

/// The outcome of an attempt, to record.
package enum DeliveryResult: Sendable, Hashable {
    case delivered(id: UUID, at: Date)
    case retry(id: UUID, at: Date, reason: String, tokenRefreshed: Bool)
    case failed(id: UUID, reason: String, at: Date)
    /// Failed, and the device is disabled.
    case pruned(id: UUID, deviceID: UUID, reason: String, at: Date)

    /// The delivery it is about.
    package var id: UUID {
        switch self {
        case .delivered(let id, _), .retry(let id, _, _, _), .failed(let id, _, _), .pruned(let id, _, _, _): id
        }
    }
}

package struct RecoveryReport: Sendable, Hashable {
    /// In doubt and queued again under the same id.
    package var requeued: [UUID] = []
    /// In doubt but superseded by a later delivered alert of the same bid: dropped.
    package var superseded: [UUID] = []

    package init(requeued: [UUID] = [], superseded: [UUID] = []) {
        self.requeued = requeued
        self.superseded = superseded
    }
}

package struct OutboxCounts: Sendable, Hashable {
    package var pending = 0
    package var sending = 0
    package var delivered = 0
    package var failed = 0
    package var superseded = 0

    package init() {}
    package var total: Int { pending + sending + delivered + failed + superseded }
}

/// A store operation that cannot be done.
package enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    case duplicate(String)
    case corrupt(String)

    package var description: String {
        switch self {
        case .duplicate(let what): "already exists: \(what)"
        case .corrupt(let what): "stored data cannot be read: \(what)"
        }
    }
}
