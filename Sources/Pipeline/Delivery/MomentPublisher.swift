import Alerts
import Baseball
import Delivery
import Foundation
import Storage

/// The active devices, held in memory so a moment fans out without reading every device from
/// the database. Before each fan-out it asks the store what changed since it last looked (a
/// registration, new preferences, a pruned token — from this process or another) and reads only
/// those devices; a removal, or the first call, reads everything.
package actor DeviceDirectory {
    private let store: any DeviceStore
    /// In the store's order (registration, then id); changed devices keep their place, new ones
    /// go at the end.
    private var ordered: [Device]?
    private var position: [UUID: Int] = [:]
    private var version: Int?
    private var removals = 0
    /// Full reads and incremental reads so far (tests, diagnostics).
    package private(set) var reads = (full: 0, incremental: 0)

    package init(store: any DeviceStore) {
        self.store = store
    }

    /// The active devices now. Callers may overlap (the publisher, the broadcast channels): the
    /// actor lets another in at each read of the store, so what is kept is checked again after
    /// each, and a read that another call overtook is made again from what that call kept.
    package func active() async throws -> [Device] {
        while true {
            if let version, let devices = ordered {
                let current = try await store.devicesVersion()
                guard self.version == version else { continue }
                if current == version { return devices }
                let changes = try await store.deviceChanges(after: version)
                guard self.version == version, var devices = ordered else { continue }
                if changes.removals == removals {
                    var gone = Set<UUID>()
                    for device in changes.devices {
                        if let index = position[device.id] {
                            if device.isActive { devices[index] = device } else { gone.insert(device.id) }
                        } else if device.isActive {
                            position[device.id] = devices.count
                            devices.append(device)
                        }
                    }
                    if !gone.isEmpty {
                        devices.removeAll { gone.contains($0.id) }
                        position = Dictionary(
                            uniqueKeysWithValues: devices.enumerated().map { ($0.element.id, $0.offset) })
                    }
                    ordered = devices
                    self.version = changes.version
                    reads.incremental += 1
                    return devices
                }
            }
            let before = version
            let all = try await store.deviceChanges(after: nil)
            // Another call kept a later read meanwhile: that one stands.
            if version != before, let version, version >= all.version, let devices = ordered { return devices }
            ordered = all.devices
            position = Dictionary(uniqueKeysWithValues: all.devices.enumerated().map { ($0.element.id, $0.offset) })
            version = all.version
            removals = all.removals
            reads.full += 1
            return all.devices
        }
    }
}

/// Turns a moment into outbox rows: asks the planner about every device, writes the moment, its
/// payloads and its deliveries in one transaction, and wakes the dispatchers.
package struct MomentPublisher: Sendable {
    package let outbox: any OutboxStore
    package let directory: DeviceDirectory
    package let wake: [ChannelKind: WakeSignal]
    /// After this long a moment's alerts are stale (`apns-expiration`, Web Push `TTL`).
    package let lifetime: TimeInterval
    /// Where the rows' play times are noted (the play-to-send latency), if anywhere.
    package let playTimes: PlayTimes?
    /// How many Live Activities are started by push on one device, and how often.
    package let startBudget: StartBudget

    package init(
        outbox: any OutboxStore, directory: DeviceDirectory, wake: [ChannelKind: WakeSignal],
        lifetime: TimeInterval = RetryPolicy().staleAfter, playTimes: PlayTimes? = nil,
        startBudget: StartBudget = StartBudget()
    ) {
        self.outbox = outbox
        self.directory = directory
        self.wake = wake
        self.lifetime = lifetime
        self.playTimes = playTimes
        self.startBudget = startBudget
    }

    package struct Published: Sendable, Hashable {
        /// False when the moment was already stored (derived again): nothing was written.
        package var isNew: Bool
        package var deliveries: Int
    }

    /// Publishes `moment`, which happened at `time`.
    @discardableResult
    package func publish(_ moment: Moment, game: GameInfo, at time: Date) async throws -> Published {
        let bidKey = moment.bidKey
        // Favourites and a device's own names are by franchise.
        let teams = [game.away.club.franchise, game.home.club.franchise]
        // What a Live Activity's attributes name the bid's team by (as its start wrote them).
        let pitchingTeam = game.team(moment.pitchingSide).abbreviation
        // A moment derived again (after a restart) was planned, for every device, when it was
        // stored: nothing to do. (Recording it again would write nothing either.)
        if try await outbox.isRecorded(momentID: moment.id) { return Published(isNew: false, deliveries: 0) }
        let devices = try await directory.active()
        let followers = try await outbox.followers(bidKey: bidKey)
        let expires = time.addingTimeInterval(lifetime)

        var deliveries: [NewDelivery] = []
        deliveries.reserveCapacity(devices.count)
        // A payload per channel and wording, named once (not a string per device).
        struct Variant: Hashable {
            var kind: ChannelKind
            var jinxSafe: Bool
            /// The device's own names for the two teams, if any.
            var names: [String: String]
            /// A push-to-start's: the delay bucket of the channel its activity follows (nil: by token).
            var bucket: Int? = nil
        }
        var variantKeys: [Variant: String] = [:]
        for device in devices {
            guard
                case .send(let notBefore) = Planner.decide(
                    moment, teams: teams, at: time, device: device,
                    history: DeviceBidHistory(progressSent: followers.contains(device.id)), pitchingTeam: pitchingTeam)
            else { continue }
            let kind = device.channel.kind
            let names =
                device.preferences.teamNames.isEmpty
                ? [:] : device.preferences.teamNames.filter { teams.contains($0.key) }
            var wording = Variant(kind: kind, jinxSafe: device.preferences.jinxSafe, names: names)
            if case .liveActivityStart(_, _, _, .channel) = device.channel {
                wording.bucket = BroadcastChannelPlan.bucket(for: device.preferences.spoilerDelaySeconds)
            }
            let variant: String
            if let known = variantKeys[wording] {
                variant = known
            } else {
                variant =
                    "\(moment.id)/\(kind.rawValue)/\(wording.jinxSafe ? "jinx-safe" : "plain")"
                    + (names.isEmpty ? "" : "/names-\(variantKeys.count)")
                    + (wording.bucket.map { "/bucket-\($0)" } ?? "")
                variantKeys[wording] = variant
            }
            deliveries.append(
                NewDelivery(
                    id: .delivery(momentID: moment.id, deviceID: device.id), deviceID: device.id, channel: kind,
                    payloadKey: variant, notBefore: notBefore, expiresAt: expires, bidKey: bidKey,
                    momentKind: moment.kind, momentOuts: moment.outs))
        }
        try await pace(&deliveries, at: time)
        let payloads = try variantKeys.sorted { $0.value < $1.value }.map { variant, key -> StoredPayload in
            let message = MessageText.render(moment, game: game, jinxSafe: variant.jinxSafe, teamNames: variant.names)
            let body: Data =
                switch variant.kind {
                case .apns: try Payloads.apnsAlert(message, moment: moment, game: game)
                case .liveActivity, .liveActivityChannel:
                    try Payloads.liveActivity(message, moment: moment, game: game, at: time)
                case .liveActivityStart:
                    try Payloads.liveActivityStart(
                        message, moment: moment, game: game, at: time, bucket: variant.bucket)
                case .webPush: try Payloads.webPush(message, moment: moment, game: game)
                case .webhook: try Payloads.webhook(message, moment: moment, game: game)
                case .console: Payloads.console(message)
                }
            return StoredPayload(key: key, body: body)
        }
        // Noted before the rows exist: a dispatcher may send them as soon as they do.
        if !deliveries.isEmpty { playTimes?.published(gameID: moment.gameID, bidKey: bidKey, at: time) }
        let isNew = try await outbox.record(
            StoredMoment(moment: moment, game: game, occurredAt: time), payloads: payloads, deliveries: deliveries)
        if isNew {
            for kind in Set(deliveries.map(\.channel)) { wake[kind]?.signal() }
        }
        return Published(isNew: isNew, deliveries: isNew ? deliveries.count : 0)
    }

    /// Each push-to-start within its device's budget: due at the first time the budget allows
    /// (``StartBudget``), counting the starts already planned for the device, and stale a
    /// lifetime after that.
    private func pace(_ deliveries: inout [NewDelivery], at time: Date) async throws {
        let starts = deliveries.indices.filter { deliveries[$0].channel == .liveActivityStart }
        guard !starts.isEmpty else { return }
        var planned = try await outbox.plannedStarts(since: time.addingTimeInterval(-startBudget.window))
        for index in starts {
            let device = deliveries[index].deviceID
            let slot = startBudget.slot(wanted: deliveries[index].notBefore, planned: planned[device] ?? [])
            deliveries[index].notBefore = slot
            deliveries[index].expiresAt = slot.addingTimeInterval(lifetime)
            planned[device, default: []].append(slot)
        }
    }
}
