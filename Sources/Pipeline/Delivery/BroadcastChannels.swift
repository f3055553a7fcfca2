import Alerts
import Clocks
import Delivery
import Foundation
import Logging
import ServiceLifecycle
import Storage
import Synchronization

/// The broadcast channels (iOS 18) the service keeps on APNs: one per followed game per delay
/// bucket, per app and environment (``BroadcastChannelPlan``), made when the game first holds a
/// bid worth following, deleted a few minutes after its final. Each is kept as a device of kind
/// ``ChannelKind/liveActivityChannel``, so its broadcasts go through the outbox with the delivery
/// promise (a broadcast in flight at a crash is sent again with the same `apns-id`).
///
/// Nothing leaks: a channel is made on APNs before its device is written, and its device disabled
/// only after APNs deleted it; at start, and every hour, the service lists the app's channels and
/// deletes those no device keeps (seen so at two listings, a grace apart, so another instance's
/// channel between its making and its writing is spared) and those of games long over. The
/// number of channels per app and environment stays within APNs' limit, and each refusal is
/// counted and said.
package final class BroadcastChannels: GameChangeConsumer, Service {
    package struct Settings: Sendable {
        /// APNs' limit on an app's channels in an environment.
        package var limit = 10_000
        /// After the final (and the channel's delay), the end broadcast has gone: then deleted.
        package var afterFinal: TimeInterval = 300
        /// How often the channels due for deletion are looked for.
        package var tick: TimeInterval = 60
        /// How often the app's channels are listed and the unkept deleted.
        package var sweepInterval: TimeInterval = 3600
        /// A channel no device keeps is deleted when a second listing, this much later, still finds
        /// it unkept.
        package var leakGrace: TimeInterval = 120
        /// A channel this old is of a game long over (its final unseen, as after a restart).
        package var maximumAge: TimeInterval = 12 * 3600

        package init() {}
    }

    /// What the channels did since start.
    package struct Counts: Sendable, Hashable {
        /// Channels kept now (as the last round found them).
        package var open = 0
        package var created = 0
        package var deleted = 0
        /// Channels no device kept (a crash between making and writing one), deleted by a sweep.
        package var leaksDeleted = 0
        /// Channels not made because the app's environment was at the limit.
        package var refusedAtLimit = 0
        /// Management requests that failed (tried again later).
        package var failures = 0
    }

    /// An app in an environment, and its management client.
    package struct App: Sendable, Hashable {
        package var topic: String
        package var environment: APNsEnvironment

        package init(topic: String, environment: APNsEnvironment) {
            self.topic = topic
            self.environment = environment
        }
    }

    private struct State {
        var pending: [(moment: Moment, teams: [String], time: Date)] = []
        var working = false
        /// Each game's final, as seen.
        var finals: [String: Date] = [:]
        /// Channels found unkept at the last listing.
        var suspects: Set<String> = []
        var counts = Counts()
        var nextSweep: Date?
        /// Apps at their limit, and when that was last said.
        var saidLimit: [App: Date] = [:]
    }

    let clients: BroadcastClients
    let store: any DeviceStore
    let directory: DeviceDirectory
    let clock: any WallClock
    let settings: Settings
    let logger: Logger
    private let state = Mutex(State())
    private let work: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation

    package init(
        clients: BroadcastClients, store: any DeviceStore, directory: DeviceDirectory, clock: any WallClock,
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

    /// Notes each bid moment (the channels it may need are made off the game's path) and each final.
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
    /// start (twice, a grace apart) and every hour; until graceful shutdown.
    package func run() async throws {
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
                state.withLock { $0.nextSweep = clock.now() }
                for await _ in work {
                    await step()
                }
                group.cancelAll()
            }
        }
    }

    /// One round: the channels wanted, those due for deletion, a listing when one is due.
    package func step() async {
        state.withLock { $0.working = true }
        defer { state.withLock { $0.working = false } }
        let pending = state.withLock {
            let pending = $0.pending
            $0.pending = []
            return pending
        }
        do {
            for (moment, teams, time) in pending { try await make(for: moment, teams: teams, at: time) }
            try await deleteDue()
            let now = clock.now()
            let sweepDue = state.withLock { state -> Bool in
                guard let next = state.nextSweep, now >= next else { return false }
                state.nextSweep = now.addingTimeInterval(settings.sweepInterval)
                return true
            }
            if sweepDue { try await sweep() }
            let open = try await kept().count
            state.withLock { $0.counts.open = open }
        } catch {
            state.withLock { $0.counts.failures += 1 }
            logger.warning(
                "broadcast channels: a round failed; tried again at the next", metadata: ["error": "\(error)"])
        }
    }

    /// Returns once every noted moment is handled.
    package func waitUntilIdle() async {
        while state.withLock({ !$0.pending.isEmpty || $0.working }) {
            if Task.isCancelled { return }
            await step()
        }
    }

    /// The channel kept for `key`, if one is (the first made, should two instances have made one).
    package func channel(for key: BroadcastChannelPlan.Key) async throws -> String? {
        try await kept().filter { $0.key == key }.min {
            ($0.device.registeredAt, $0.device.id.uuidString) < ($1.device.registeredAt, $1.device.id.uuidString)
        }?.id
    }

    /// The service's channels as its devices keep them (active).
    private func kept() async throws -> [(key: BroadcastChannelPlan.Key, device: Device, id: String)] {
        try await directory.active().compactMap { device in
            guard let key = BroadcastChannelPlan.Key(device),
                case .liveActivityChannel(let id, _, _, _) = device.channel
            else { return nil }
            return (key, device, id)
        }
    }

    /// Makes the channels `moment` needs that no device keeps yet.
    private func make(for moment: Moment, teams: [String], at time: Date) async throws {
        if state.withLock({ $0.finals[moment.gameID] != nil }) { return }
        let devices = try await directory.active()
        let kept = try await self.kept()
        let have = Set(kept.map(\.key))
        let wanted = BroadcastChannelPlan.wanted(moment, teams: teams, at: time, devices: devices)
        for key in wanted.subtracting(have).sorted() {
            let app = App(topic: key.topic, environment: key.environment)
            guard let client = clients.client(for: app) else { continue }
            if kept.count(where: { $0.key.topic == key.topic && $0.key.environment == key.environment })
                >= settings.limit
            {
                refused(app, key: key, because: "\(settings.limit) channels kept already")
                continue
            }
            let made = await Self.create(on: client)
            if case .failure(let failure) = made, failure.reason == "TooManyChannels" {
                refused(app, key: key, because: "APNs said TooManyChannels")
                continue
            }
            let id = try made.get()
            let device = Device(
                id: UUID(),
                channel: .liveActivityChannel(
                    id: id, gameID: key.gameID, environment: key.environment, topic: key.topic),
                preferences: BroadcastChannelPlan.preferences(for: key), registeredAt: clock.now(), secretHash: "")
            do {
                try await store.register(device)
            } catch {
                // Not kept: not left on APNs either.
                _ = try? await client.deleteChannel(id)
                throw error
            }
            state.withLock { $0.counts.created += 1 }
            logger.info("broadcast channel made", metadata: ["channel": "\(id)", "for": "\(key)"])
        }
        if !wanted.subtracting(have).isEmpty { try await keepOneEach() }
    }

    private static func create(on client: APNsBroadcastClient) async -> Result<String, APNsBroadcastClient.Failure> {
        do {
            return .success(try await client.createChannel())
        } catch {
            return .failure(error)
        }
    }

    /// Another instance may have made the same channel at once: the later of two is deleted, as
    /// every instance decides alike.
    private func keepOneEach() async throws {
        let kept = try await self.kept()
        let byKey = Dictionary(grouping: kept, by: \.key)
        for (_, channels) in byKey where channels.count > 1 {
            let ordered = channels.sorted {
                ($0.device.registeredAt, $0.device.id.uuidString) < ($1.device.registeredAt, $1.device.id.uuidString)
            }
            for extra in ordered.dropFirst() {
                try await delete(extra.device, id: extra.id, key: extra.key, reason: "another instance made it too")
            }
        }
    }

    private func refused(_ app: App, key: BroadcastChannelPlan.Key, because reason: String) {
        let now = clock.now()
        let say = state.withLock { state -> Bool in
            state.counts.refusedAtLimit += 1
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

    /// Deletes the channel on APNs, then disables its device.
    private func delete(_ device: Device, id: String, key: BroadcastChannelPlan.Key, reason: String) async throws {
        guard let client = clients.client(for: App(topic: key.topic, environment: key.environment)) else { return }
        do {
            try await client.deleteChannel(id)
        } catch {
            state.withLock { $0.counts.failures += 1 }
            logger.warning(
                "broadcast channel not deleted now; tried again later",
                metadata: ["channel": "\(id)", "error": "\(error)"])
            return
        }
        _ = try await store.disable(id: device.id, reason: "broadcast channel deleted: \(reason)", at: clock.now())
        state.withLock { $0.counts.deleted += 1 }
        logger.info("broadcast channel deleted", metadata: ["channel": "\(id)", "for": "\(key)", "why": "\(reason)"])
    }

    /// The channels of games over (a few minutes past the final and the delay), or long past.
    private func deleteDue() async throws {
        let now = clock.now()
        let finals = state.withLock { $0.finals }
        for (key, device, id) in try await kept() {
            if let final = finals[key.gameID],
                now >= final.addingTimeInterval(TimeInterval(key.delay) + settings.afterFinal)
            {
                try await delete(device, id: id, key: key, reason: "the game is over")
            } else if now.timeIntervalSince(device.registeredAt) >= settings.maximumAge {
                try await delete(device, id: id, key: key, reason: "made \(Int(settings.maximumAge / 3600)) h ago")
            }
        }
    }

    /// Lists each app's channels and deletes those no device keeps at two listings in a row. The
    /// apps are those of the service's channels and of its iOS devices.
    package func sweep() async throws {
        let kept = try await self.kept()
        let keptIDs = Set(kept.map(\.id))
        var apps = Set(kept.map { App(topic: $0.key.topic, environment: $0.key.environment) })
        for device in try await directory.active() {
            switch device.channel {
            case .apns(_, let environment, let topic), .liveActivity(_, let environment, let topic):
                apps.insert(App(topic: topic, environment: environment))
            default: continue
            }
        }
        var unkept = Set<String>()
        for app in apps.sorted(by: { ($0.topic, $0.environment.rawValue) < ($1.topic, $1.environment.rawValue) }) {
            guard let client = clients.client(for: app) else { continue }
            for id in try await client.allChannels() where !keptIDs.contains(id) {
                if state.withLock({ $0.suspects.contains(id) }) {
                    if try await client.deleteChannel(id) {
                        state.withLock { $0.counts.leaksDeleted += 1 }
                        logger.notice(
                            "broadcast channel kept by no device (left by a stop between making and keeping it): deleted",
                            metadata: ["channel": "\(id)", "app": "\(app.topic) (\(app.environment.rawValue))"])
                    }
                } else {
                    unkept.insert(id)
                }
            }
        }
        let now = clock.now()
        state.withLock {
            $0.suspects = unkept
            // Those found now are looked at again a grace later, not an hour.
            if !unkept.isEmpty { $0.nextSweep = now.addingTimeInterval(settings.leakGrace) }
        }
    }
}
