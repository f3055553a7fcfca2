import Alerts
import Clocks
import Delivery
import Foundation
import Logging
import ServiceLifecycle
import Storage
import Synchronization

/// The broadcast channels (iOS 18) the service keeps on APNs: one per followed bid per delay
/// bucket, per app and environment (``BroadcastChannelPlan``), made when the bid is first worth
/// following, deleted a few minutes after the game's final once its last broadcast went out. Each
/// is kept as a device of kind ``ChannelKind/liveActivityChannel``, so its broadcasts go through
/// the outbox with the delivery promise.
///
/// Nothing leaks. A channel's device is written before APNs is asked (its id an intent), then
/// given APNs's id; it is disabled only after APNs deleted the channel. At start, and every hour,
/// the service lists each app's channels: when an intent was left by a stop, the channels no
/// device keeps (at two listings, a grace apart, so another instance's channel between its making
/// and its keeping is spared) are deleted, and the intents with them. Channels of an app made by
/// anyone else (another deployment on the same bundle) are left alone. The number of channels per
/// app and environment stays within APNs' limit, and each channel refused is counted and said.
package final class BroadcastChannels: GameChangeConsumer, Service {
    package typealias Key = BroadcastChannelPlan.Key
    package typealias Store = any DeviceStore & OutboxStore

    package struct Settings: Sendable {
        /// APNs' limit on an app's channels in an environment.
        package var limit = 10_000
        /// After the final (and the channel's delay), the end broadcast is due: deleted then, once
        /// no broadcast due is still unsent.
        package var afterFinal: TimeInterval = 300
        /// How often the channels due for deletion are looked for.
        package var tick: TimeInterval = 60
        /// How often the apps' channels are listed.
        package var sweepInterval: TimeInterval = 3600
        /// An unkept channel is deleted when a second listing, this much later, still finds it so;
        /// an intent this old was left by a stop.
        package var leakGrace: TimeInterval = 120
        /// A channel this old is of a game long over (its final unseen, as after a restart).
        package var maximumAge: TimeInterval = 12 * 3600
        /// The longest a round may take (real seconds) before the next is let in.
        package var roundLimit: Double = 60
        /// False when broadcasts are turned off (`apns.broadcast`): no channel is made, and those
        /// made before it was turned off are still broadcast to (their activities started on them)
        /// and deleted as ever, after their games, and at the listings: none is left on APNs.
        package var makesChannels = true

        package init() {}
    }

    /// What the channels did since start.
    package struct Counts: Sendable, Hashable {
        /// Channels kept now (as the last round found them).
        package var open = 0
        package var created = 0
        package var deleted = 0
        /// Channels no device kept (a stop between making and keeping one), deleted by a sweep.
        package var leaksDeleted = 0
        /// Channels not made because the app's environment was at the limit (each once).
        package var refusedAtLimit = 0
        /// Management requests that failed (tried again later).
        package var failures = 0
    }

    /// An app in an environment.
    package typealias App = BroadcastApp

    /// A channel kept, as its device says.
    struct Kept: Sendable {
        var key: Key
        var device: Device
        var id: String
    }

    struct State {
        var pending: [(moment: Moment, teams: [String], time: Date)] = []
        var working = false
        /// The latest round's number: a round given up on (past the limit) that ends late leaves
        /// the flag of the round after it alone.
        var round = 0
        /// Channels APNs made that the database failed to keep, kept first by the next rounds.
        var unkept: [Made] = []
        /// Each game's final, as seen.
        var finals: [String: Date] = [:]
        /// Channels found unkept at the last listing, by app.
        var suspects: Set<String> = []
        var counts = Counts()
        var nextSweep: Date?
        /// Channels refused at the limit (counted once each), and when each app's was last said.
        var refused: Set<Key> = []
        var saidLimit: [App: Date] = [:]
        /// Apps whose management failed, and until when they are not asked again.
        var backoff: [App: (failures: Int, until: Date)] = [:]
    }

    let clients: BroadcastClients
    let store: Store
    let directory: DeviceDirectory
    let clock: any WallClock
    let settings: Settings
    let logger: Logger
    let state = Mutex(State())
    private let work: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    package init(
        clients: BroadcastClients, store: Store, directory: DeviceDirectory, clock: any WallClock,
        settings: Settings = Settings(), logger: Logger = Logger(label: "nohit.broadcast")
    ) {
        self.clients = clients
        self.store = store
        self.directory = directory
        self.clock = clock
        self.settings = settings
        self.logger = logger
        (work, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    package var counts: Counts { state.withLock { $0.counts } }

    /// The channel kept for `key`, as the last round found it.
    package func channel(for key: Key) -> String? { clients.channel(for: key) }

    /// Notes each live bid moment (the channels it may need are made off the game's path) and
    /// each final.
    package func consume(_ change: GameChange) async throws {
        let teams = [change.game.info.away.club.franchise, change.game.info.home.club.franchise]
        let moments = change.moments.filter { $0.kind.isBid && $0.kind.bidStillAlive }
        let final = change.game.isFinal
        guard !moments.isEmpty || final else { return }
        state.withLock {
            if final, $0.finals[change.game.gameID] == nil { $0.finals[change.game.gameID] = change.time }
            for moment in moments { $0.pending.append((moment, teams, change.time)) }
        }
        signal.yield()
    }

    /// Makes the channels noted moments need, deletes those due, and lists the apps' channels at
    /// start and every hour; until graceful shutdown.
    package func run() async throws {
        state.withLock { $0.nextSweep = clock.now() }
        signal.yield()
        await cancelWhenGracefulShutdown { [self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in
                    while !Task.isCancelled {
                        do {
                            try await clock.sleep(until: clock.now().addingTimeInterval(settings.tick))
                        } catch {
                            return
                        }
                        signal.yield()
                    }
                }
                // A round within a limit: a database call that never answers (the server gone
                // mid-call) must hold neither the rounds after it for ever nor the service's stop.
                for await _ in work {
                    let limit = Duration.seconds(settings.roundLimit)
                    if await Deadline.result(within: limit, { [self] in await step() }) == nil {
                        logger.warning(
                            "broadcast channels: a round took too long; left to end", metadata: ["limit": "\(limit)"])
                        giveUpRound()
                    }
                }
                group.cancelAll()
            }
        }
        // A graceful stop (the end of a replay, a restart): what is over need not wait for its
        // few minutes, so a replay leaves no channel behind. Cancelled: nothing more.
        guard !Task.isCancelled else { return }
        _ = await Deadline.result(within: .seconds(settings.roundLimit)) { [self] in
            do {
                _ = try await keepUnkept()
                try await deleteFinished()
            } catch {
                logger.warning("broadcast channels: at the stop, those of games over were left: \(error)")
            }
        }
    }

    /// The channels of games seen final, deleted now if no broadcast is still unsent (their ends
    /// have gone out).
    package func deleteFinished() async throws {
        let finals = state.withLock { $0.finals }
        guard !finals.isEmpty, try await !store.hasUnfinished(channels: [.liveActivityChannel], dueBy: nil)
        else { return }
        for channel in try await read().kept where finals[channel.key.gameID] != nil {
            try await delete(channel, reason: "the game is over and the service stops")
        }
    }

    /// One round (never two at once): the channels wanted, those due for deletion, a listing when
    /// one is due. A failure is logged and the round's work left for the next: the moments not yet
    /// handled when the database failed it (``StorageFault``: unreachable, a full disk) are noted
    /// again, first, for the next round, which makes only what is still missing (a bid's first
    /// moment would otherwise leave its channel unmade until the bid's next one, if it has one);
    /// those of a round failed otherwise are left (a moment failing each time must not hold the
    /// deletions behind it). Returns false when the round failed.
    @discardableResult
    package func step() async -> Bool {
        let round = state.withLock { state -> Int? in
            if state.working { return nil }
            state.working = true
            state.round += 1
            return state.round
        }
        guard let round else { return true }
        defer { state.withLock { if $0.round == round { $0.working = false } } }
        let pending = state.withLock {
            let pending = $0.pending
            $0.pending = []
            return pending
        }
        var handled = 0
        do {
            var made = try await keepUnkept()
            for (moment, teams, time) in pending {
                made = try await make(for: moment, teams: teams, at: time) || made
                handled += 1
            }
            if made { try await keepOneEach() }
            try await deleteDue()
            let now = clock.now()
            let sweepDue = state.withLock { state -> Bool in
                guard let next = state.nextSweep, now >= next else { return false }
                state.nextSweep = now.addingTimeInterval(settings.sweepInterval)
                return true
            }
            if sweepDue { try await sweep() }
            try await refresh()
        } catch {
            // Cancelled (given up on past the limit): its moments are the next round's too.
            let cancelled = error is CancellationError
            state.withLock {
                if !cancelled { $0.counts.failures += 1 }
                if cancelled || StorageFault(error) != nil { $0.pending = Array(pending[handled...]) + $0.pending }
            }
            if cancelled { return true }
            logger.warning(
                "broadcast channels: a round failed; tried again at the next",
                metadata: ["error": "\(PostgresStore.describe(error))"])
            return false
        }
        return true
    }

    /// The round running is given up on (past its limit): the next may start beside it, and its
    /// end, late, leaves that one's flag alone.
    package func giveUpRound() {
        state.withLock {
            $0.counts.failures += 1
            $0.working = false
        }
    }

    /// Returns once every noted moment is handled, or a round failed.
    package func waitUntilIdle() async {
        while state.withLock({ !$0.pending.isEmpty || $0.working }) {
            if Task.isCancelled { return }
            guard await step() else { return }
            if state.withLock({ $0.working }) { try? await Task.sleep(for: .milliseconds(1)) }
        }
    }

    /// The service's channels and intents as its active devices keep them.
    private func read() async throws -> (kept: [Kept], intents: [Kept]) {
        Self.channels(among: try await directory.active())
    }

    /// The service's channels and intents among `devices`.
    static func channels(among devices: [Device]) -> (kept: [Kept], intents: [Kept]) {
        var kept: [Kept] = []
        var intents: [Kept] = []
        for device in devices {
            guard let key = Key(device), case .liveActivityChannel(let id, _, _, _) = device.channel else { continue }
            if BroadcastChannelPlan.isIntent(id) {
                intents.append(Kept(key: key, device: device, id: id))
            } else {
                kept.append(Kept(key: key, device: device, id: id))
            }
        }
        return (kept, intents)
    }

    /// The first made of two, as every instance decides alike.
    private static func first(_ a: Kept, _ b: Kept) -> Bool {
        (a.device.registeredAt, a.device.id.uuidString) < (b.device.registeredAt, b.device.id.uuidString)
    }

    /// What the route and the metrics read: the channels kept now.
    private func refresh() async throws {
        let kept = try await read().kept
        var byKey: [Key: Kept] = [:]
        for channel in kept where byKey[channel.key].map({ Self.first(channel, $0) }) ?? true {
            byKey[channel.key] = channel
        }
        clients.keep(byKey.mapValues(\.id))
        state.withLock { $0.counts.open = kept.count }
    }

    /// Makes the channels `moment` needs that no device keeps or is making yet: whether any was.
    private func make(for moment: Moment, teams: [String], at time: Date) async throws -> Bool {
        guard settings.makesChannels else { return false }
        if state.withLock({ $0.finals[moment.gameID] != nil }) { return false }
        let devices = try await directory.active()
        let (kept, intents) = Self.channels(among: devices)
        // An intent older than the grace is a stop's (its channel, if made, is the sweep's): the
        // key is made again rather than left without a channel until the sweep ends it.
        let now = clock.now()
        let making = intents.filter { now.timeIntervalSince($0.device.registeredAt) < settings.leakGrace }
        let have = Set((kept + making).map(\.key))
        var count = Dictionary(grouping: kept + intents) { App(topic: $0.key.topic, environment: $0.key.environment) }
            .mapValues(\.count)
        var made = false
        for key in BroadcastChannelPlan.wanted(moment, teams: teams, at: time, devices: devices).subtracting(have)
            .sorted()
        {
            let app = App(topic: key.topic, environment: key.environment)
            if let until = state.withLock({ $0.backoff[app]?.until }), clock.now() < until { continue }
            if count[app, default: 0] >= settings.limit {
                refused(app, key: key, because: "\(settings.limit) channels kept already")
                continue
            }
            if try await make(key, app: app) {
                count[app, default: 0] += 1
                made = true
            }
        }
        return made
    }

    /// Makes one channel: its device first (an intent), then APNs's channel, then its id kept.
    private func make(_ key: Key, app: App) async throws -> Bool {
        let client: APNsBroadcastClient
        do {
            guard let made = try clients.client(for: app) else { return false }
            client = made
        } catch {
            failed(app, "its management client cannot be made: \(error)")
            return false
        }
        let intent = Device(
            id: UUID(),
            channel: .liveActivityChannel(
                id: BroadcastChannelPlan.intentPrefix + UUID().text(), bid: key.bid, environment: key.environment,
                topic: key.topic),
            preferences: BroadcastChannelPlan.preferences(for: key), registeredAt: clock.now(), secretHash: "")
        try await store.register(intent)
        let id: String
        do {
            id = try await client.createChannel()
        } catch {
            if error.status == 0 && !error.reason.hasPrefix("cannot sign") {
                // No answer (a timeout, a lost connection): APNs may have made it. The intent stays
                // for the sweep, which looks a grace from now.
                let next = clock.now().addingTimeInterval(settings.leakGrace + 1)
                state.withLock { $0.nextSweep = min($0.nextSweep ?? next, next) }
            } else {
                _ = try await store.disable(
                    id: intent.id, reason: "broadcast channel not made: \(error)", at: clock.now())
            }
            if error.reason == "TooManyChannels" {
                refused(app, key: key, because: "APNs said TooManyChannels")
            } else {
                failed(app, "creating a channel: \(error)")
            }
            return false
        }
        let made = Made(intent: intent, id: id, key: key, app: app)
        let keeping: Bool
        do {
            keeping = try await store.keepChannel(
                id: intent.id, address: made.intentAddress, to: made.channel, at: clock.now())
        } catch {
            // APNs made it, the database did not keep it: the next rounds keep it (its intent,
            // young, keeps any round from making it again meanwhile).
            state.withLock { $0.unkept.append(made) }
            throw error
        }
        // The intent ended meanwhile (a sweep took it for a stop's): the sweep's, as a leak.
        guard keeping else { return false }
        kept(made)
        return true
    }

    /// An app whose management failed is not asked again for a while (1 minute, doubling to an
    /// hour), and the log says why once each time.
    private func failed(_ app: App, _ reason: String) {
        let now = clock.now()
        let failures = state.withLock { state -> Int in
            let failures = (state.backoff[app]?.failures ?? 0) + 1
            state.backoff[app] = (failures, now.addingTimeInterval(min(3600, 60 * pow(2, Double(failures - 1)))))
            state.counts.failures += 1
            return failures
        }
        logger.warning(
            Logger.Message(
                stringLiteral: "broadcast channels of \(app.topic) (\(app.environment.rawValue)) not made: \(reason); "
                    + "asked again later (does the app have the Broadcast capability? docs/operating.md)"),
            metadata: ["failures": "\(failures)"])
    }

    /// Another instance may have made the same channel at once: the later of two is deleted.
    private func keepOneEach() async throws {
        for (_, channels) in Dictionary(grouping: try await read().kept, by: \.key) where channels.count > 1 {
            for extra in channels.sorted(by: Self.first).dropFirst() {
                try await delete(extra, reason: "another instance made it too")
            }
        }
    }

    private func refused(_ app: App, key: Key, because reason: String) {
        let now = clock.now()
        let say = state.withLock { state -> Bool in
            if state.refused.insert(key).inserted { state.counts.refusedAtLimit += 1 }
            if let said = state.saidLimit[app], now.timeIntervalSince(said) < 3600 { return false }
            state.saidLimit[app] = now
            return true
        }
        if say {
            logger.warning(
                Logger.Message(
                    stringLiteral: "no broadcast channel for \(key): \(app.topic) (\(app.environment.rawValue)) is at "
                        + "APNs' limit of channels (\(reason)); its Live Activities are updated one device at a time "
                        + "meanwhile"))
        }
    }

    /// Deletes the channel on APNs, then disables its device; false when APNs could not be asked.
    @discardableResult
    private func delete(_ channel: Kept, reason: String) async throws -> Bool {
        let app = App(topic: channel.key.topic, environment: channel.key.environment)
        do {
            if let client = try clients.client(for: app) { try await client.deleteChannel(channel.id) }
        } catch {
            state.withLock { $0.counts.failures += 1 }
            logger.warning(
                "broadcast channel not deleted now; tried again later",
                metadata: ["channel": "\(channel.id)", "error": "\(error)"])
            return false
        }
        _ = try await store.disable(
            id: channel.device.id, reason: "broadcast channel deleted: \(reason)", at: clock.now())
        state.withLock { $0.counts.deleted += 1 }
        logger.info(
            "broadcast channel deleted",
            metadata: ["channel": "\(channel.id)", "for": "\(channel.key)", "why": "\(reason)"])
        return true
    }

    /// The channels of games over (past the final, the delay and a few minutes, once no broadcast
    /// due is unsent: the end has gone out), or long past.
    private func deleteDue() async throws {
        let now = clock.now()
        let finals = state.withLock {
            $0.finals = $0.finals.filter { now.timeIntervalSince($0.value) < settings.maximumAge }
            return $0.finals
        }
        var due: [(Kept, String)] = []
        for channel in try await read().kept {
            if let final = finals[channel.key.gameID],
                now >= final.addingTimeInterval(TimeInterval(channel.key.delay) + settings.afterFinal)
            {
                due.append((channel, "the game is over"))
            } else if now.timeIntervalSince(channel.device.registeredAt) >= settings.maximumAge {
                due.append((channel, "made \(Int(settings.maximumAge / 3600)) h ago"))
            }
        }
        guard !due.isEmpty else { return }
        // A broadcast due and unsent (a retry, one being sent) may be a channel's end or a change a
        // fan waits for: not yet, however old the channel (a broadcast ends, sent or stale; deleted
        // under it, it failed: seen in a replay at 600 times real speed, where 12 hours of the
        // replay's clock passed in the minutes PostgreSQL was down).
        guard try await !store.hasUnfinished(channels: [.liveActivityChannel], dueBy: now) else { return }
        for (channel, reason) in due {
            try await delete(channel, reason: reason)
        }
    }
}
