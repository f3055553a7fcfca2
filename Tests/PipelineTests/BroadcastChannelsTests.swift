import Alerts
import Clocks
import Crypto
import Delivery
import FakeProviders
import Foundation
import Logging
import Pipeline
import Retrosheet
import ServiceLifecycle
import Storage
import Synchronization
import TestSupport
import Testing

/// Broadcast channels through the whole pipeline against the fake APNs over TLS and HTTP/2: the
/// day of Giolito's no-hitter (2020-08-25, shipped) replayed to iOS devices at three spoiler
/// delays and in two environments. A channel per followed bid per delay bucket is made when the
/// bid is first worth following to a device, each later change of the bid is broadcast on it once
/// (through the outbox: `apns-id` the delivery's, priority 10 for the end), every activity
/// subscribed hears it, the channel is deleted after the final once its end went out, and none is
/// left on APNs — neither after the day nor after a stop while making one; another deployment's
/// channels are left alone.
@Suite(.serialized) struct BroadcastChannelsTests {
    static let bundle = "com.example.nohit"
    static let day = "2020-08-25"

    struct Setup {
        let server: FakeProviderServer
        let key = P256.Signing.PrivateKey()
        let token: APNsProviderToken
        let options: HTTP2Client.Configuration
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "broadcast-\(UUID().uuidString).sqlite"
        )
        .path

        init(channelLimit: Int = 10_000) async throws {
            var configuration = FakeProviderConfiguration(verificationKey: key.publicKey, keyID: "K", teamID: "T")
            configuration.channelLimit = channelLimit
            server = try await FakeProviderServer.start(configuration: configuration)
            token = APNsProviderToken(key: key, keyID: "K", teamID: "T", clock: SystemWallClock())
            var options = HTTP2Client.Configuration()
            options.extraCertificateAuthorities = [server.authority.caCertificatePEM]
            self.options = options
        }

        func clients() -> BroadcastClients {
            BroadcastClients { [server, token, options] app in
                try APNsBroadcastClient(
                    managementURL: server.baseURL, broadcastURL: server.baseURL, bundleID: app.topic, token: token,
                    timeout: .seconds(60), client: options)
            }
        }

        /// A phone of the app in `environment`, with `delay` seconds of spoiler delay.
        func phone(_ index: Int, environment: APNsEnvironment = .production, delay: Int = 0, innings: Int = 6) -> Device
        {
            var preferences = Preferences()
            preferences.spoilerDelaySeconds = delay
            preferences.thresholdInnings = innings
            return Device(
                id: UUID(),
                channel: .apns(
                    token: String(format: "%064x", index), environment: environment,
                    topic: BroadcastChannelsTests.bundle),
                preferences: preferences, registeredAt: Date(timeIntervalSince1970: 1_598_000_000), secretHash: "")
        }

        /// Replays the day through the alert pipeline and the channels; after each change, three
        /// activities subscribe to each channel new since the last (as apps starting an activity on
        /// it would). Returns the pipeline, the channels, and the end of the day on its clock.
        func replay(
            store: SQLiteStore, settings: BroadcastChannels.Settings = .init()
        ) async throws -> (BroadcastChannels, ManualWallClock, AlertPipeline) {
            let games = try ReplaySchedule.games(on: BroadcastChannelsTests.day, data: [TestData.path("retrosheet")])
            let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
            let apns = APNsConfiguration(
                productionURL: server.baseURL, sandboxURL: server.baseURL, timeout: .seconds(60))
            let transport = try HTTP2APNsTransport(configuration: apns, client: options)
            let pipeline = AlertPipeline(
                store: store,
                channels: [
                    APNsChannel(kind: .apns, transport: transport, token: token),
                    APNsChannel(kind: .liveActivityChannel, transport: transport, token: token),
                ], clock: clock)
            let channels = BroadcastChannels(
                clients: clients(), store: store, directory: pipeline.directory, clock: clock, settings: settings)
            let hub = GameHub(consumers: [AlertConsumer(publisher: pipeline.publisher), channels])
            let subscribed = Subscribed()
            let source = ReplaySource(
                games: games, sink: hub, clock: clock,
                settle: {
                    await channels.waitUntilIdle()
                    for device in try await store.activeDevices() {
                        guard case .liveActivityChannel(let id, _, _, _) = device.channel,
                            !BroadcastChannelPlan.isIntent(id),
                            subscribed.first(id)
                        else {
                            continue
                        }
                        for activity in 0..<3 { server.state.subscribe(device: "\(id)-activity-\(activity)", to: id) }
                    }
                    try await pipeline.waitUntilIdle()
                }, afterDay: { try await pipeline.waitUntilDrained(manual: clock) })
            let group = ServiceGroup(
                configuration: .init(
                    services: pipeline.services.map { .init(service: $0) } + [
                        .init(service: source, successTerminationBehavior: .gracefullyShutdownGroup)
                    ], logger: Logger(label: "test.broadcast")))
            try await group.run()
            await transport.shutdown()
            return (channels, clock, pipeline)
        }
    }

    final class Subscribed: Sendable {
        private let seen = Mutex<Set<String>>([])
        /// Whether `id` is seen for the first time.
        func first(_ id: String) -> Bool { seen.withLock { $0.insert(id).inserted } }
    }

    @Test func aFollowedBidIsBroadcastOnItsChannelsWhichAreDeletedAfterTheFinal() async throws {
        let setup = try await Setup()
        defer { Task { [server = setup.server] in try await server.shutdown() } }
        let store = try SQLiteStore(path: setup.path)
        // Two fans at no delay, one 45 s behind (the 60 s bucket), one 300 s, one in the sandbox;
        // and one who follows only bids into the 9th (no channel of its own: its bucket has one).
        let phones = [
            setup.phone(1), setup.phone(2, innings: 9), setup.phone(3, delay: 45), setup.phone(4, delay: 300),
            setup.phone(5, environment: .sandbox),
        ]
        try await store.register(contentsOf: phones)
        let (channels, clock, pipeline) = try await setup.replay(store: store)

        // One channel per bid, delay bucket and environment, for every bid that passed six
        // hitless innings: Giolito's (the home side's), at 0, 60 and 300 s and in the sandbox.
        let kept = try await store.activeDevices().compactMap { BroadcastChannelPlan.Key($0) }
        let giolito = "CHA202008250"
        let bid = "CHA202008250-home"
        #expect(
            Set(kept.filter { $0.gameID == giolito })
                == [
                    .init(bid: bid, topic: Self.bundle, environment: .production, delay: 0),
                    .init(bid: bid, topic: Self.bundle, environment: .production, delay: 60),
                    .init(bid: bid, topic: Self.bundle, environment: .production, delay: 300),
                    .init(bid: bid, topic: Self.bundle, environment: .sandbox, delay: 0),
                ])
        #expect(Set(kept).count == kept.count, "one channel per key")
        #expect(channels.counts.created == kept.count && channels.counts.refusedAtLimit == 0)
        #expect(channels.counts.open == kept.count)

        // Each broadcast once, on a channel that exists, reaching its three activities; the
        // id the outbox gave the delivery; priority 10 for the end only, which is the last.
        let broadcasts = setup.server.state.acceptedBroadcasts
        let devices = try await store.activeDevices()
        let giolitosChannels = devices.filter { BroadcastChannelPlan.Key($0)?.gameID == giolito }
        #expect(giolitosChannels.count == 4)
        print(
            "broadcast channels on \(Self.day): \(kept.count) made for \(Set(kept.map(\.bid)).sorted()); "
                + "\(broadcasts.count) broadcasts reaching \(broadcasts.map(\.reached).reduce(0, +)) activities")
        for device in giolitosChannels {
            let id = try #require(Self.channelID(device))
            // The channel an app is told to start its activity on.
            #expect(channels.channel(for: try #require(BroadcastChannelPlan.Key(device))) == id)
            let sent = broadcasts.filter { $0.channelID == id }
            #expect(sent.count >= 3, "the bid's changes after the 6th inning: \(sent.count)")
            #expect(sent.allSatisfy { $0.count == 1 && $0.reached == 3 })
            #expect(sent.map(\.priority) == Array(repeating: 5, count: sent.count - 1) + [10])
            let events = sent.map { Self.event($0.payload) }
            #expect(events.last == "end" && events.dropLast().allSatisfy { $0 == "update" })
            #expect(sent.allSatisfy { $0.payload.count <= 5120 })
        }
        // The outbox's ids: a resend after a crash would carry the same.
        let moments = try await store.moments(gameID: giolito, scoreAlerts: false)
        let expectedIDs = Set(
            moments.flatMap { moment in
                giolitosChannels.map { UUID.delivery(momentID: moment.moment.id, deviceID: $0.id).text().lowercased() }
            })
        let giolitoIDs = Set(giolitosChannels.compactMap(Self.channelID))
        #expect(broadcasts.filter { giolitoIDs.contains($0.channelID) }.allSatisfy { expectedIDs.contains($0.apnsID) })

        // A broadcast due and not yet sent (the dispatchers stopped, as a retry would wait) may be
        // a channel's end: past the final, the delay and the few minutes, the channels stay.
        var late = try #require(moments.last?.moment)
        late.id += "-again"
        try await pipeline.publisher.publish(late, game: try #require(moments.last?.game), at: clock.now())
        clock.advance(by: 5 * 60 + 300 + 1)
        await channels.step()
        #expect(setup.server.state.channelCounts.open == kept.count)
        // However old the channels are (past the 12 hours after which a channel is taken for one
        // of a game long over): a broadcast still to send is not failed by its channel's deletion.
        clock.advance(by: 13 * 3600)
        await channels.step()
        #expect(setup.server.state.channelCounts.open == kept.count)
        // Once it went out, every channel is deleted, and none is left on APNs: by the service
        // as it runs (its round at start, then every minute of its clock), until it is stopped.
        try await Self.drain(pipeline, clock: clock)
        let running = Task { try await channels.run() }
        // (Done when APNs has none, every channel's row is disabled, and the round has read it.)
        let key = BroadcastChannelPlan.Key(bid: bid, topic: Self.bundle, environment: .production, delay: 0)
        for _ in 0..<600
        where setup.server.state.channelCounts.open > 0 || channels.counts.deleted < kept.count
            || channels.channel(for: key) != nil
        {
            clock.advance(by: 60)
            try await Task.sleep(for: .milliseconds(50))
        }
        running.cancel()
        try await running.value
        #expect(setup.server.state.channelCounts.open == 0)
        #expect(try await store.activeDevices().allSatisfy { BroadcastChannelPlan.Key($0) == nil })
        #expect(channels.counts.deleted == kept.count && channels.counts.failures == 0)
        #expect(channels.channel(for: key) == nil)
    }

    @Test func aStopWhileMakingLeavesNothingAndTheLimitIsKept() async throws {
        let setup = try await Setup(channelLimit: 2)
        defer { Task { [server = setup.server] in try await server.shutdown() } }
        let store = try SQLiteStore(path: setup.path)
        let other = "com.example.other"
        // A phone of another app that follows only bids into the 9th: that app is listed by the
        // sweeps, and wants no channel of its own this day.
        var foreignPhone = setup.phone(9, innings: 9)
        foreignPhone.channel = .apns(token: String(format: "%064x", 9), environment: .production, topic: other)
        try await store.register(contentsOf: [
            setup.phone(1), setup.phone(2, delay: 30), setup.phone(3, delay: 60), foreignPhone,
        ])
        // A stop between APNs making a channel and the service keeping its id: the intent written
        // before (an hour ago), the channel on APNs.
        let client = try #require(try setup.clients().client(for: .init(topic: Self.bundle, environment: .production)))
        let leaked = try await client.createChannel()
        let intent = Device(
            id: UUID(),
            channel: .liveActivityChannel(
                id: BroadcastChannelPlan.intentPrefix + "stopped", bid: "NYA202008250-home", environment: .production,
                topic: Self.bundle),
            registeredAt: Date(timeIntervalSince1970: 1_598_000_000), secretHash: "")
        try await store.register(intent)
        // Another deployment's channel of another app this service also pushes for: not its own.
        let otherClient = try #require(try setup.clients().client(for: .init(topic: other, environment: .production)))
        let foreign = try await otherClient.createChannel()

        var settings = BroadcastChannels.Settings()
        settings.limit = 2
        let (channels, _, _) = try await setup.replay(store: store, settings: settings)
        // Three buckets wanted; the intent and the first made fill the limit of two: the two
        // others are refused, each counted once, nothing crashed into.
        #expect(channels.counts.created == 1)
        #expect(channels.counts.refusedAtLimit == 2)
        // The first listing only suspects the leak (another instance may be about to keep it);
        // the second deletes it, and the intent ends.
        try await channels.sweep()
        #expect(try await client.allChannels().contains(leaked))
        try await channels.sweep()
        #expect(try await !client.allChannels().contains(leaked))
        #expect(channels.counts.leaksDeleted == 1)
        #expect(try await store.device(id: intent.id)?.isActive == false)
        // The kept one stays, and the other deployment's.
        #expect(try await client.allChannels().count == 1)
        #expect(try await otherClient.allChannels() == [foreign])
        await client.shutdown()
        await otherClient.shutdown()
    }

    /// Broadcasts turned off (`apns.broadcast` false) after a channel was made: no channel is
    /// made, the one made before still carries its bid's changes to the activities started on it,
    /// and it is deleted after the final, so none is left on APNs.
    @Test func turnedOffTheChannelsMadeBeforeAreDeletedAndNoneMade() async throws {
        let setup = try await Setup()
        defer { Task { [server = setup.server] in try await server.shutdown() } }
        let store = try SQLiteStore(path: setup.path)
        try await store.register(contentsOf: [setup.phone(1), setup.phone(2, delay: 45)])
        // Giolito's bid at no delay, made while broadcasts were on.
        let client = try #require(try setup.clients().client(for: .init(topic: Self.bundle, environment: .production)))
        let before = try await client.createChannel()
        let bid = "CHA202008250-home"
        try await store.register(
            Device(
                id: UUID(),
                channel: .liveActivityChannel(id: before, bid: bid, environment: .production, topic: Self.bundle),
                preferences: BroadcastChannelPlan.preferences(
                    for: .init(bid: bid, topic: Self.bundle, environment: .production, delay: 0)),
                // That afternoon (a channel over 12 hours old is taken for one of a game long over).
                registeredAt: Date(timeIntervalSince1970: 1_598_374_800), secretHash: ""))

        var settings = BroadcastChannels.Settings()
        settings.makesChannels = false
        let (channels, clock, pipeline) = try await setup.replay(store: store, settings: settings)
        // None made (the 60-s bucket the second phone wants has none), the old one broadcast on.
        #expect(channels.counts.created == 0 && channels.counts.refusedAtLimit == 0)
        let listed = try await client.allChannels()
        #expect(listed == [before])
        let sent = setup.server.state.acceptedBroadcasts.filter { $0.channelID == before }
        #expect(sent.count >= 3 && sent.allSatisfy { $0.count == 1 && $0.reached == 3 })
        let last = try #require(sent.last)
        #expect(last.priority == 10 && Self.event(last.payload) == "end")
        // After the final (its delay and the few minutes), deleted as ever.
        try await Self.drain(pipeline, clock: clock)
        let running = Task { try await channels.run() }
        for _ in 0..<600 where setup.server.state.channelCounts.open > 0 || channels.counts.deleted < 1 {
            clock.advance(by: 60)
            try await Task.sleep(for: .milliseconds(50))
        }
        running.cancel()
        try await running.value
        #expect(setup.server.state.channelCounts.open == 0)
        #expect(channels.counts.deleted == 1 && channels.counts.failures == 0)
        #expect(try await store.activeDevices().allSatisfy { BroadcastChannelPlan.Key($0) == nil })
        await client.shutdown()
    }

    /// Runs the dispatchers until every delivery is sent.
    static func drain(_ pipeline: AlertPipeline, clock: ManualWallClock) async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: pipeline.services.map { .init(service: $0) } + [
                    .init(
                        service: Once { try await pipeline.waitUntilDrained(manual: clock) },
                        successTerminationBehavior: .gracefullyShutdownGroup)
                ], logger: Logger(label: "test.broadcast")))
        try await group.run()
    }

    struct Once: Service {
        let body: @Sendable () async throws -> Void
        func run() async throws { try await body() }
    }

    static func event(_ payload: Data) -> String? {
        let json = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
        return (json?["aps"] as? [String: Any])?["event"] as? String
    }

    static func channelID(_ device: Device) -> String? {
        guard case .liveActivityChannel(let id, _, _, _) = device.channel else { return nil }
        return id
    }
}
