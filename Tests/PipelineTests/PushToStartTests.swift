import Alerts
import Clocks
import Crypto
import Delivery
import FakeProviders
import Foundation
import Logging
import NoHitterActivity
import Pipeline
import Retrosheet
import ServiceLifecycle
import Storage
import TestSupport
import Testing

/// Push-to-start through the whole pipeline against the fake APNs over TLS and HTTP/2, on the day
/// of Giolito's no-hitter (2020-08-25, shipped): the service starts a bid's Live Activity on each
/// device whose push-to-start token is registered, once per bid, naming the bid's broadcast
/// channel at the device's delay bucket (iOS 18) or asking for the activity's own token (iOS
/// 17.2), paced within a start budget per device — and under a budget the fake enforces, every
/// start is either accepted or reported with its reason, none silent, none after its bid was over.
@Suite(.serialized) struct PushToStartTests {
    static let bundle = BroadcastChannelsTests.bundle

    /// Replays the day to `devices` with the fake enforcing `fakeBudget` starts per device in any
    /// `fakeWindow` (on the pipeline's clock) and the service keeping to `budget`.
    static func replay(
        _ devices: [Device], budget: StartBudget, fakeBudget: Int, fakeWindow: TimeInterval = 3600
    ) async throws -> (store: SQLiteStore, server: FakeProviderServer, channels: BroadcastChannels) {
        let games = try ReplaySchedule.games(on: BroadcastChannelsTests.day, data: [TestData.path("retrosheet")])
        let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
        let key = P256.Signing.PrivateKey()
        var configuration = FakeProviderConfiguration(verificationKey: key.publicKey, keyID: "K", teamID: "T")
        configuration.startBudget = fakeBudget
        configuration.startWindow = fakeWindow
        configuration.clock = { clock.now() }
        let server = try await FakeProviderServer.start(configuration: configuration)
        let token = APNsProviderToken(key: key, keyID: "K", teamID: "T", clock: SystemWallClock())
        var options = HTTP2Client.Configuration()
        options.extraCertificateAuthorities = [server.authority.caCertificatePEM]
        let clients = BroadcastClients { [options] app in
            try APNsBroadcastClient(
                managementURL: server.baseURL, broadcastURL: server.baseURL, bundleID: app.topic, token: token,
                timeout: .seconds(60), client: options)
        }
        let store = try SQLiteStore(
            path: FileManager.default.temporaryDirectory.appendingPathComponent("start-\(UUID().uuidString).sqlite")
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
            ], clock: clock, startBudget: budget)
        let channels = BroadcastChannels(clients: clients, store: store, directory: pipeline.directory, clock: clock)
        let hub = GameHub(consumers: [AlertConsumer(publisher: pipeline.publisher), channels])
        let source = ReplaySource(
            games: games, sink: hub, clock: clock,
            settle: {
                await channels.waitUntilIdle()
                try await pipeline.waitUntilIdle()
            }, afterDay: { try await pipeline.waitUntilDrained(manual: clock) })
        let group = ServiceGroup(
            configuration: .init(
                services: pipeline.services.map { .init(service: $0) } + [
                    .init(service: source, successTerminationBehavior: .gracefullyShutdownGroup)
                ], logger: Logger(label: "test.start")))
        try await group.run()
        await transport.shutdown()
        return (store, server, channels)
    }

    static func device(_ index: Int, updates: ActivityUpdates, delay: Int = 0, innings: Int = 6) -> Device {
        var preferences = Preferences()
        preferences.spoilerDelaySeconds = delay
        preferences.thresholdInnings = innings
        return Device(
            id: UUID(),
            channel: .liveActivityStart(
                token: String(format: "%064x", 0xa000 + index), environment: .production, topic: bundle,
                updates: updates),
            preferences: preferences, registeredAt: Date(timeIntervalSince1970: 1_598_000_000), secretHash: "")
    }

    static func aps(_ payload: Data) throws -> [String: Any] {
        let json = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        return try #require(json["aps"] as? [String: Any])
    }

    /// The bid a start is for (from its attributes), and when that bid ended, if it did.
    static func bid(of attributes: BidActivityAttributes, store: SQLiteStore) async throws -> (
        bid: String, ended: Date?
    ) {
        let moments = try await store.moments(gameID: attributes.gameID, scoreAlerts: false)
        let game = try #require(moments.first?.game)
        let side = game.team(.home).abbreviation == attributes.pitchingTeam ? "home" : "away"
        let bid = "\(attributes.gameID)-\(side)"
        let ended = moments.first { $0.moment.bidKey == bid && !$0.moment.kind.bidStillAlive }?.occurredAt
        return (bid, ended)
    }

    static func attributes(_ aps: [String: Any]) throws -> BidActivityAttributes {
        try JSONDecoder().decode(
            BidActivityAttributes.self, from: JSONSerialization.data(withJSONObject: try #require(aps["attributes"])))
    }

    @Test func eachDeviceGetsOneStartPerBidNamingItsChannelOrAskingForItsToken() async throws {
        let onChannel = Self.device(1, updates: .channel)
        let byToken = Self.device(2, updates: .token)
        let behind = Self.device(3, updates: .channel, delay: 45)
        let (store, server, channels) = try await Self.replay(
            [onChannel, byToken, behind], budget: StartBudget(), fakeBudget: 10)
        defer { Task { try await server.shutdown() } }
        let starts = server.state.startedActivities
        #expect(starts.refused == 0)
        let bids = Set(try await store.activeDevices().compactMap { BroadcastChannelPlan.Key($0)?.bid })
        print(
            "push-to-start on \(BroadcastChannelsTests.day): \(starts.accepted.count) starts for bids \(bids.sorted())")
        #expect(bids.contains("CHA202008250-home"))
        for device in [onChannel, byToken, behind] {
            guard case .liveActivityStart(let token, _, _, let updates) = device.channel else { continue }
            let mine = starts.accepted.filter { $0.device == token }
            // One start per followed bid, each once.
            #expect(mine.count == bids.count, "\(updates) \(device.preferences.spoilerDelaySeconds) s: \(mine.count)")
            #expect(Set(mine.map(\.apnsID)).count == mine.count)
            for start in mine {
                let aps = try Self.aps(start.payload)
                #expect(aps["event"] as? String == "start")
                #expect(aps["attributes-type"] as? String == "BidActivityAttributes")
                let attributes = try Self.attributes(aps)
                let state = try JSONDecoder().decode(
                    BidActivityAttributes.ContentState.self,
                    from: JSONSerialization.data(withJSONObject: try #require(aps["content-state"])))
                #expect(state.isAlive && state.outs >= 18, "started past the threshold, while the bid is on")
                let (bid, ended) = try await Self.bid(of: attributes, store: store)
                #expect(ended.map { start.at <= $0 } ?? true, "started before the bid was over")
                switch updates {
                case .channel:
                    // The bid's channel at the device's bucket (45 s → 60 s), which its activity
                    // now follows: the broadcasts after it reach it.
                    let key = BroadcastChannelPlan.Key(
                        bid: bid, topic: Self.bundle, environment: .production,
                        delay: BroadcastChannelPlan.bucket(for: device.preferences.spoilerDelaySeconds))
                    let kept = try await store.activeDevices().first { BroadcastChannelPlan.Key($0) == key }
                    if attributes.gameID == "CHA202008250" {
                        let id = try #require(kept.flatMap(BroadcastChannelsTests.channelID))
                        #expect(start.channel == id)
                        #expect(channels.channel(for: key) == id)
                        let later = server.state.acceptedBroadcasts.filter { $0.channelID == id }
                        #expect(!later.isEmpty && later.allSatisfy { $0.reached >= 1 })
                    }
                    #expect(aps["input-push-token"] == nil && start.channel != nil)
                case .token:
                    #expect(aps["input-push-token"] as? Int == 1 && start.channel == nil)
                }
            }
        }
        let counts = try await store.outboxCounts()
        #expect(counts.startsSent == starts.accepted.count && counts.startsFailed == 0 && counts.pending == 0)
    }

    /// Fans who follow every bid from the 4th inning: the day's bids need two starts each, a day's
    /// budget of one lets one through. Where the service's budget is the smaller, the second start
    /// waits for it and is dropped, said, when its bid ends; where the fake's is (Apple's is not
    /// documented), the fake refuses it and the service reports it once it gives up or the bid ends.
    @Test(arguments: [(service: 1, fake: 10), (service: 2, fake: 1)])
    func underABudgetEveryStartIsMadeOrReported(budgets: (service: Int, fake: Int)) async throws {
        let fans = (0..<4).map { Self.device(10 + $0, updates: $0 % 2 == 0 ? .channel : .token, innings: 4) }
        let day: TimeInterval = 86400
        let (store, server, _) = try await Self.replay(
            fans, budget: StartBudget(starts: budgets.service, window: day), fakeBudget: budgets.fake, fakeWindow: day)
        defer { Task { try await server.shutdown() } }
        let starts = server.state.startedActivities
        let failed = try await store.failedDeliveries(limit: 1000)
        let failedStarts = failed.recent.filter { $0.channel == ChannelKind.liveActivityStart.rawValue }
        let counts = try await store.outboxCounts()
        print(
            "push-to-start under a budget: \(starts.accepted.count) started, \(starts.refused) refused by the fake, "
                + "\(failedStarts.count) reported: \(Set(failedStarts.map(\.reason)).sorted())")
        // Nothing left waiting, and every start planned either accepted (once) or failed with a reason.
        #expect(counts.pending == 0 && counts.sending == 0)
        #expect(Set(starts.accepted.map(\.apnsID)).count == counts.startsSent)
        #expect(counts.startsFailed == failedStarts.count)
        #expect(failedStarts.allSatisfy { !$0.reason.isEmpty })
        #expect(failedStarts.count == fans.count, "the day's second bid, for each fan: \(failedStarts.count)")
        if budgets.service < budgets.fake {
            #expect(starts.refused == 0, "the service kept within its own budget")
            #expect(failedStarts.allSatisfy { $0.reason.contains("push-to-start budget") })
        } else {
            #expect(starts.refused > 0)
            #expect(failedStarts.allSatisfy { $0.reason.contains("TooManyRequests") })
        }
        for fan in fans {
            guard case .liveActivityStart(let token, _, _, _) = fan.channel else { continue }
            let started = starts.accepted.filter { $0.device == token }
            // Both budgets held: no more starts in the day than the smaller allows.
            #expect(started.count <= min(budgets.service, budgets.fake), "\(token): \(started.count) starts")
            #expect(
                !started.isEmpty || failedStarts.contains { $0.deviceID == fan.id }, "\(token): started or reported")
            // None began a bid already over.
            for start in started {
                let (bid, ended) = try await Self.bid(
                    of: try Self.attributes(try Self.aps(start.payload)), store: store)
                #expect(
                    ended.map { start.at <= $0 } ?? true, "\(token) started \(bid) at \(start.at), over at \(ended!)")
            }
        }
    }
}
