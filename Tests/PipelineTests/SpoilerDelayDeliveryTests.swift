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
import TestSupport
import Testing

/// The whole day of Giolito's no-hitter (2020-08-25, shipped) a minute behind, on the phone and the
/// lock screen: an app's alerts, a Live Activity updated by its own token, one started by push and
/// the bid's 60-s broadcast channel, all at a spoiler delay of 60 s, through the pipeline to the
/// fake APNs over TLS and HTTP/2 on the pipeline's clock. Nothing reaches the fake before its
/// moment's time plus a minute, and every delivery planned reaches it. (The stream, the widget and
/// the web page a minute behind: `SpoilerDelayTests`, `WidgetTests`, `delay_page.py`.)
@Suite(.serialized) struct SpoilerDelayDeliveryTests {
    static let bundle = BroadcastChannelsTests.bundle

    @Test func aWholeDayAMinuteBehindReachesNoDeviceEarlyAndEveryDeviceWithAll() async throws {
        let games = try ReplaySchedule.games(on: BroadcastChannelsTests.day, data: [TestData.path("retrosheet")])
        let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
        let key = P256.Signing.PrivateKey()
        var configuration = FakeProviderConfiguration(verificationKey: key.publicKey, keyID: "K", teamID: "T")
        configuration.clock = { clock.now() }
        let server = try await FakeProviderServer.start(configuration: configuration)
        defer { Task { try await server.shutdown() } }
        let token = APNsProviderToken(key: key, keyID: "K", teamID: "T", clock: SystemWallClock())
        var options = HTTP2Client.Configuration()
        options.extraCertificateAuthorities = [server.authority.caCertificatePEM]
        let clients = BroadcastClients { [options] app in
            try APNsBroadcastClient(
                managementURL: server.baseURL, broadcastURL: server.baseURL, bundleID: app.topic, token: token,
                timeout: .seconds(60), client: options)
        }
        var preferences = Preferences()
        preferences.spoilerDelaySeconds = 60
        preferences.thresholdInnings = 6
        preferences.frequency = .everyInning
        let hex = { (index: Int) in String(format: "%064x", 0xd000 + index) }
        let channels: [DeviceChannel] = [
            .apns(token: hex(1), environment: .production, topic: Self.bundle),
            .liveActivity(token: hex(2), environment: .production, topic: Self.bundle),
            .liveActivityStart(token: hex(3), environment: .production, topic: Self.bundle, updates: .channel),
        ]
        let devices = channels.map {
            Device(
                id: UUID(), channel: $0, preferences: preferences,
                registeredAt: Date(timeIntervalSince1970: 1_598_000_000), secretHash: "")
        }
        let store = try SQLiteStore(
            path: FileManager.default.temporaryDirectory.appendingPathComponent("delay-\(UUID().uuidString).sqlite")
                .path)
        try await store.register(contentsOf: devices)
        let apns = APNsConfiguration(productionURL: server.baseURL, sandboxURL: server.baseURL, timeout: .seconds(60))
        let transport = try HTTP2APNsTransport(configuration: apns, client: options)
        let pipeline = AlertPipeline(
            store: store,
            channels: [ChannelKind.apns, .liveActivity, .liveActivityChannel].map {
                APNsChannel(kind: $0, transport: transport, token: token)
            } + [
                APNsChannel(
                    kind: .liveActivityStart, transport: transport, token: token,
                    starts: .init(channel: { clients.channel(for: $0) }, now: { clock.now() }))
            ], clock: clock)
        let broadcasts = BroadcastChannels(
            clients: clients, store: store, directory: pipeline.directory, clock: clock)
        let hub = GameHub(consumers: [AlertConsumer(publisher: pipeline.publisher), broadcasts])
        let source = ReplaySource(
            games: games, sink: hub, clock: clock,
            settle: {
                await broadcasts.waitUntilIdle()
                try await pipeline.waitUntilIdle()
            }, afterDay: { try await pipeline.waitUntilDrained(manual: clock) })
        let group = ServiceGroup(
            configuration: .init(
                services: pipeline.services.map { .init(service: $0) } + [
                    .init(service: source, successTerminationBehavior: .gracefullyShutdownGroup)
                ], logger: Logger(label: "test.delay")))
        try await group.run()
        await transport.shutdown()

        // Every delivery planned, to a device or a channel, by the moment it is for.
        let receivers = try await store.activeDevices()
        #expect(receivers.contains { $0.channel.kind == .liveActivityChannel }, "the bid's 60-s channel")
        #expect(receivers.allSatisfy { $0.preferences.spoilerDelaySeconds == 60 })
        var momentOf: [String: (kind: ChannelKind, time: Date)] = [:]
        for game in games {
            for stored in try await store.moments(gameID: game.info.id, scoreAlerts: true) {
                for receiver in receivers {
                    let id = UUID.delivery(momentID: stored.moment.id, deviceID: receiver.id).text().lowercased()
                    momentOf[id] = (receiver.channel.kind, stored.occurredAt)
                }
            }
        }
        let accepted = server.state.acceptedAt
        var early: [String] = []
        var byKind: [ChannelKind: Int] = [:]
        for (id, at) in accepted {
            let moment = try #require(momentOf[id], "an accepted apns-id \(id) that is no planned delivery")
            byKind[moment.kind, default: 0] += 1
            if at < moment.time.addingTimeInterval(60) {
                early.append("\(moment.kind) \(id) at \(at), play \(moment.time)")
            }
        }
        print(
            "a day a minute behind: \(accepted.count) accepted (\(byKind.map { "\($0.key.rawValue) \($0.value)" }.sorted())), "
                + "\(early.count) early")
        #expect(early.isEmpty, "\(early.prefix(3))")
        // Each one reached the fake: nothing failed, nothing left, every planned row delivered once.
        let counts = try await store.outboxCounts()
        #expect(counts.pending == 0 && counts.sending == 0 && counts.failed == 0 && counts.held == 0)
        #expect(counts.delivered == accepted.count)
        #expect(
            Set(ChannelKind.allCases.filter { byKind[$0] != nil }) == [
                .apns, .liveActivity, .liveActivityChannel, .liveActivityStart,
            ])
        #expect(byKind[.liveActivityStart] == 1, "one start, for Giolito's bid")
    }
}
