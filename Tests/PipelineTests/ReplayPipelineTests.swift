import Alerts
import AsyncHTTPClient
import Baseball
import Clocks
import Crypto
import Delivery
import FakeProviders
import Foundation
import Logging
import NIOSSL
import Pipeline
import Retrosheet
import ServiceLifecycle
import Storage
import TestSupport
import Testing

/// A past day through the whole pipeline — engine, planner, outbox, dispatchers, real channels —
/// against the fake providers.
@Suite(.serialized) struct ReplayPipelineTests {
    static let day = "2020-08-25"

    struct Setup {
        let server: FakeProviderServer
        let client: HTTPClient
        let endpoints: HTTP1Client
        let key = P256.Signing.PrivateKey()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-\(UUID().uuidString).sqlite")
            .path

        init() async throws {
            server = try await FakeProviderServer.start(
                configuration: FakeProviderConfiguration(verificationKey: key.publicKey))
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(
                try NIOSSLCertificate.fromPEMBytes(Array(server.authority.caCertificatePEM.utf8)))
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
            configuration.httpVersion = .automatic
            var http1 = HTTP1Client.Configuration()
            http1.extraCertificateAuthorities = [server.authority.caCertificatePEM]
            // The fake is on loopback; names are never looked up on the network.
            http1.endpointGuard = EndpointGuard(resolver: StaticHostResolver([:]), allowPrivateNetworks: true)
            endpoints = try HTTP1Client(configuration: http1)
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }

        func channels(console: @escaping @Sendable (String) -> Void) -> [any DeliveryChannel] {
            // A long deadline: what a stall does (the alert is sent again, with the same apns-id)
            // has its own tests; here, on a loaded machine, a 5 s deadline passed before the fake
            // in this process answered, and the alert it had accepted was rightly sent twice.
            let apns = APNsConfiguration(
                productionURL: server.baseURL, sandboxURL: server.baseURL, timeout: .seconds(60))
            let token = APNsProviderToken(key: key, keyID: "K", teamID: "T", clock: SystemWallClock())
            return [
                APNsChannel(client: client, configuration: apns, token: token),
                APNsChannel(kind: .liveActivity, client: client, configuration: apns, token: token),
                WebPushChannel(
                    client: endpoints, vapid: VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:ops@example.org"),
                    clock: SystemWallClock()),
                WebhookChannel(client: endpoints, clock: SystemWallClock()),
                ConsoleChannel(write: console),
            ]
        }

        /// What one run did: the moments derived, those stored for the first time, deliveries planned.
        struct Summary {
            var moments: [Moment]
            var newMoments: Int
            var deliveries: Int
        }

        /// Replays the day once, as one run of `nohit replay` would: the same services in one group
        /// (the dispatchers, and the replay source through the game hub), the group shut down once the
        /// day is over and every alert sent.
        func run(
            console: @escaping @Sendable (String) -> Void = { _ in }, odds: BidOdds? = nil,
            meaning: @escaping @Sendable (HistoryWarmer.Question) async -> String? = { _ in nil }
        ) async throws -> (
            Summary, DeliveryStatistics.Snapshot
        ) {
            let store = try SQLiteStore(path: path)
            _ = try await store.recoverInDoubt(now: Date())
            let games = try ReplaySchedule.games(on: ReplayPipelineTests.day, data: [TestData.path("retrosheet")])
            let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
            let pipeline = AlertPipeline(store: store, channels: channels(console: console), clock: clock)
            let alerts = AlertConsumer(publisher: pipeline.publisher)
            let collected = MomentCollector()
            // What a no-hitter would mean, looked up by the warmer while the bid goes on.
            let meanings = NoHitterMeanings()
            let warmer = HistoryWarmer(meanings: meanings, lookup: meaning)
            let hub = GameHub(consumers: [alerts, collected, warmer], odds: odds, meanings: meanings)
            let source = ReplaySource(
                games: games, sink: hub, clock: clock,
                settle: {
                    try await pipeline.waitUntilIdle()
                    await warmer.waitUntilIdle()
                }, afterDay: { try await pipeline.waitUntilDrained(manual: clock) })
            let logger = Logger(label: "test.pipeline")
            let group = ServiceGroup(
                configuration: .init(
                    services: pipeline.services.map { .init(service: $0) } + [
                        .init(service: warmer),
                        .init(service: source, successTerminationBehavior: .gracefullyShutdownGroup),
                    ], logger: logger))
            try await group.run()
            #expect(source.progress.isDone)
            let counts = alerts.counts.value
            return (
                Summary(moments: collected.moments, newMoments: counts.new, deliveries: counts.deliveries),
                pipeline.statistics.snapshot
            )
        }

        func shutdown() async throws {
            try await client.shutdown()
            try await server.shutdown()
        }
    }

    @Test func giolitosNoHitterReachesEveryKindOfDeviceOnce() async throws {
        let setup = try await Setup()
        let store = try SQLiteStore(path: setup.path)
        let start = Date(timeIntervalSince1970: 1_598_000_000)
        let phone = Device(
            id: UUID(),
            channel: .apns(
                token: String(repeating: "a1", count: 32), environment: .sandbox, topic: "com.example.nohit"),
            registeredAt: start, secretHash: "")
        var fanPreferences = Preferences()
        fanPreferences.favouriteTeams = ["CHA"]
        fanPreferences.frequency = .everyOutInNinth
        fanPreferences.teamNames = ["CHA": "Sox"]
        let fan = Device(
            id: UUID(),
            channel: .apns(
                token: String(repeating: "b2", count: 32), environment: .production, topic: "com.example.nohit"),
            preferences: fanPreferences, registeredAt: start, secretHash: "")
        let subscription = setup.server.state.subscribe(baseURL: setup.server.baseURL)
        let browser = Device(
            id: UUID(),
            channel: .webPush(endpoint: subscription.endpoint, p256dh: subscription.p256dh, auth: subscription.auth),
            registeredAt: start, secretHash: "")
        let hook = setup.server.state.webhookEndpoint(id: "hook", baseURL: setup.server.baseURL)
        let server = Device(
            id: UUID(), channel: .webhook(url: hook.url, secret: hook.secret), registeredAt: start, secretHash: "")
        let activity = Device(
            id: UUID(),
            channel: .liveActivity(
                token: String(repeating: "c3", count: 32), environment: .sandbox, topic: "com.example.nohit"),
            registeredAt: start, secretHash: "")
        var quiet = Preferences()
        quiet.jinxSafe = true
        let console = Device(
            id: UUID(), channel: .console(label: "demo"), preferences: quiet, registeredAt: start, secretHash: "")
        let gone = Device(
            id: UUID(),
            channel: .apns(
                token: "410" + String(repeating: "f", count: 61), environment: .sandbox, topic: "com.example.nohit"),
            registeredAt: start, secretHash: "")
        for device in [phone, fan, browser, server, activity, console, gone] { try await store.register(device) }

        let printed = Printed()
        let (summary, statistics) = try await setup.run { printed.append($0) }
        let giolito = summary.moments.filter {
            $0.gameID == "CHA202008250" && $0.pitchingSide == .home && !$0.kind.isScore
        }
        #expect(giolito.map(\.kind).last == .completed)

        // The default device: 6, 7 and 8 hitless innings, then completed (with the 27th out).
        let accepted = Dictionary(uniqueKeysWithValues: setup.server.state.accepted.map { ($0.apnsID, $0.count) })
        #expect(accepted.values.allSatisfy { $0 == 1 })
        let phoneIDs = Set(
            giolito.filter { [18, 21, 24, 27].contains($0.outs) && [.hitlessInnings, .completed].contains($0.kind) }
                .map { UUID.delivery(momentID: $0.id, deviceID: phone.id).uuidString.lowercased() })
        #expect(phoneIDs.count == 4)
        #expect(phoneIDs.isSubset(of: Set(accepted.keys)))
        // The White Sox fan: from 4 innings, every out of the 9th.
        let fanIDs = Set(accepted.keys).intersection(
            giolito.map { UUID.delivery(momentID: $0.id, deviceID: fan.id).uuidString.lowercased() })
        #expect(fanIDs.count == giolito.filter { $0.outs >= 12 }.count)
        // And the final score of the White Sox' game, in the fan's name for them, once; no score
        // alert for anyone else (no other device has a favourite team), none for another game.
        let finals = summary.moments.filter { $0.kind == .finalScore }
        #expect(finals.count == 16)
        let final = try #require(finals.first { $0.gameID == "CHA202008250" })
        let finalID = UUID.delivery(momentID: final.id, deviceID: fan.id).uuidString.lowercased()
        #expect(accepted[finalID] == 1)
        let notification = try #require(setup.server.state.notification(apnsID: finalID))
        let alert = try #require(
            ((try JSONSerialization.jsonObject(with: notification.payload) as? [String: Any])?["aps"] as? [String: Any])?[
                "alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Final: Sox 4, Pirates 0")
        #expect(notification.collapseID == "CHA202008250-score")
        let scoreDeliveries = summary.moments.filter(\.kind.isScore).flatMap { moment in
            [phone, fan, browser, server, console].map {
                UUID.delivery(momentID: moment.id, deviceID: $0.id).uuidString.lowercased()
            }
        }
        #expect(Set(scoreDeliveries).intersection(accepted.keys) == [finalID])
        // The browser decrypted four alerts; the webhook received four signed ones.
        let webPushID = String(subscription.endpoint.split(separator: "/").last!)
        #expect(setup.server.state.webPushMessages(id: webPushID)?.count == 4)
        #expect(setup.server.state.webhookMessages(id: "hook")?.count == 4)
        // The console printed jinx-safe text.
        #expect(printed.lines.count == 4)
        #expect(printed.lines.allSatisfy { !$0.lowercased().contains("no-hitter") })
        // In MLB's abbreviations, as the scoreboard shows them: "PIT 0, CWS 4", never "CHA 4".
        #expect(printed.lines.allSatisfy { $0.contains(/PIT \d+, CWS \d+/) && !$0.contains("CHA") })
        // The 410 device was pruned after its first alert.
        #expect(try await store.device(id: gone.id)?.isActive == false)
        let counts = try await store.outboxCounts()
        #expect(counts.pending == 0 && counts.sending == 0)
        // Counted per channel, as /metrics shows them: the two APNs devices (4 + the fan's) and the
        // one 410, the browser's four, the webhook's four, the console's four.
        let byChannel = statistics.byChannel
        #expect(byChannel[.apns]?.delivered == 4 + fanIDs.count + 1)
        #expect(byChannel[.apns]?.pruned == 1)
        #expect(byChannel[.webPush]?.delivered == 4)
        #expect(byChannel[.webhook]?.delivered == 4)
        #expect(byChannel[.console]?.delivered == 4)
        #expect(byChannel[.webPush]?.latency.totalCount == 4)
        #expect(statistics.delivered == byChannel.values.reduce(0) { $0 + $1.delivered })
        #expect(statistics.latency.totalCount == UInt64(statistics.delivered))

        // Run again, as after a restart: every moment is derived again, nothing new is sent.
        let before = setup.server.state.requestCount
        let (again, _) = try await setup.run()
        #expect(again.newMoments == 0)
        #expect(again.deliveries == 0)
        #expect(setup.server.state.requestCount == before)
        try await setup.shutdown()
    }
}

extension ReplayPipelineTests {
    /// The odds of history (the shipped table, 1950–2020) on Giolito's day: every moment of his
    /// bid from the 4th carries them, and a device that chose to hear of a bid once a quarter of
    /// such bids ended as no-hitters gets its first alert at the first out where they pass 25 %.
    @Test func aDeviceWithMinimumOddsHearsAtTheFirstOutPastThem() async throws {
        let odds = try JSONDecoder().decode(
            BidOdds.self, from: Data(contentsOf: TestData.packageRoot.appendingPathComponent("Data/odds/bid-odds.json"))
        )
        let first = try #require(BidOdds.outs.first { (odds.row(outs: $0)?.share ?? 0) >= 0.25 })
        #expect(first == 22)
        let setup = try await Setup()
        let store = try SQLiteStore(path: setup.path)
        let start = Date(timeIntervalSince1970: 1_598_000_000)
        let phone = Device(
            id: UUID(),
            channel: .apns(
                token: String(repeating: "a1", count: 32), environment: .sandbox, topic: "com.example.nohit"),
            registeredAt: start, secretHash: "")
        var chosen = Preferences()
        chosen.minOdds = 0.25
        let fan = Device(
            id: UUID(),
            channel: .apns(
                token: String(repeating: "b2", count: 32), environment: .sandbox, topic: "com.example.nohit"),
            preferences: try chosen.validated(), registeredAt: start, secretHash: "")
        for device in [phone, fan] { try await store.register(device) }

        // What the no-hitter means, from its season (nothing later than the game counts).
        let season = try EventFiles.expand([TestData.path("retrosheet/2020")])
        let officials = SeasonBids.official(await SeasonBids.summaries(of: season).sides)
        #expect(officials.count == 2)
        let (summary, _) = try await setup.run(odds: odds) { question in
            NoHitterHistory.meaning(
                franchise: question.franchise, nickname: question.nickname, date: question.date,
                gameID: question.gameID, seasons: [2020: officials])
        }
        let giolito = summary.moments.filter {
            $0.gameID == "CHA202008250" && $0.pitchingSide == .home && $0.kind.isBid
        }
        // Every out from the 13th is a moment now (the odds' own at outs between innings); each
        // moment of the live bid carries one figure: the most specific table resting on 50 bids or
        // more (by his pitches at a complete inning, 2020 being scored pitch by pitch; else the
        // 2020s; else every bid since 1950).
        #expect(giolito.filter { $0.kind == .hitlessOut }.map(\.outs) == [13, 14, 16, 17, 19, 20, 22, 23])
        for moment in giolito where moment.kind.bidStillAlive {
            let figure = try #require(moment.odds, "\(moment.id)")
            #expect(figure.bids >= BidOdds.minimumBids || figure.seasons == "since 1950", "\(moment.id)")
            #expect(figure.basis?.hasPrefix("through \(Words.innings(outs: moment.outs))") == true, "\(figure)")
            if moment.outs % 3 != 0 {
                #expect(figure == odds.chance(outs: moment.outs, pitches: nil, season: 2020), "\(moment.id)")
            }
        }
        let innings = giolito.filter { $0.kind == .hitlessInnings }
        #expect(innings.map(\.outs) == [12, 15, 18, 21, 24])
        // Through 4 on fewer than 60 pitches: 3,733 bids since 1988, enough to rest on.
        let fourth = try #require(innings.first?.odds)
        #expect(fourth.basis == "through 4 innings on fewer than 60 pitches" && fourth.seasons == "since 1988")
        #expect(fourth.text == "2%" && fourth.bids == 3733, "\(fourth)")
        // Giolito threw 89 pitches through the 8th: 26 bids like it since 1988 (too few), 3 in the
        // 2020s (too few): every bid hitless through 8 since 1950.
        let eighth = try #require(innings.first { $0.outs == 24 }?.odds)
        #expect(
            eighth.basis == "through 8 innings" && eighth.seasons == "since 1950" && eighth.bids == 377, "\(eighth)")
        #expect(giolito.first { $0.kind == .completed }?.odds == nil)

        let accepted = setup.server.state.accepted.map(\.apnsID)
        func ids(_ device: Device) -> [String] {
            giolito.map { UUID.delivery(momentID: $0.id, deviceID: device.id).uuidString.lowercased() }
                .filter { accepted.contains($0) }
        }
        func moment(_ id: String, of device: Device) -> Moment? {
            giolito.first { UUID.delivery(momentID: $0.id, deviceID: device.id).uuidString.lowercased() == id }
        }
        // The fan who chose odds: the end of the 7th (26 % of 145 bids like his, by pitches), then
        // every inning, then the end (the last out is "No-hitter!", not one more inning).
        let fanMoments = ids(fan).compactMap { moment($0, of: fan) }
        #expect(
            fanMoments.map(\.id) == [
                "CHA202008250-home-hitless-innings-21", "CHA202008250-home-hitless-innings-24",
                "CHA202008250-home-completed-27",
            ])
        let firstAlert = try #require(setup.server.state.notification(apnsID: ids(fan)[0]))
        let alert = try #require(
            ((try JSONSerialization.jsonObject(with: firstAlert.payload) as? [String: Any])?["aps"] as? [String: Any])?[
                "alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Lucas Giolito: no-hitter through 7")
        let body = try #require(alert["body"] as? String)
        let seventh = try #require(innings.first { $0.outs == 21 }?.odds)
        #expect(body.contains("Chance: \(seventh.text) (\(seventh.base) ended as no-hitters)."), "\(body)")
        #expect(
            body.contains(
                "Chance: 26% (38 of 145 bids since 1988 through 7 innings on 75 to 89 pitches ended as no-hitters)."),
            "\(body)")
        print("the first odds alert: \(body)")
        // The next, at the end of the 8th, by his pitches too.
        let next = try #require(setup.server.state.notification(apnsID: ids(fan)[1]))
        let nextBody = try #require(
            ((try JSONSerialization.jsonObject(with: next.payload) as? [String: Any])?["aps"] as? [String: Any])
                .flatMap { $0["alert"] as? [String: Any] }?["body"] as? String)
        #expect(nextBody.contains("Chance: \(eighth.text) (") && nextBody.contains("through 8 innings"), "\(nextBody)")
        // The completed alert: the last out in words and what it means.
        let completed = try #require(giolito.first { $0.kind == .completed })
        #expect(completed.lastPlay == "Erik Gonzalez lines out to right field")
        #expect(completed.meaning == "The White Sox's first no-hitter in the seasons known (in 2020); the 1st of 2020.")
        let last = try #require(setup.server.state.notification(apnsID: ids(fan)[2]))
        let lastBody = try #require(
            ((try JSONSerialization.jsonObject(with: last.payload) as? [String: Any])?["aps"] as? [String: Any])
                .flatMap { $0["alert"] as? [String: Any] }?["body"] as? String)
        #expect(lastBody.contains("The last out: \(completed.lastPlay ?? "-")."), "\(lastBody)")
        #expect(lastBody.hasSuffix(completed.meaning ?? "-"), "\(lastBody)")
        // The default device is told by innings (6 to 9) and the end, never of an out's odds.
        #expect(ids(phone).compactMap { moment($0, of: phone) }.map(\.outs) == [18, 21, 24, 27])
        try await setup.shutdown()
    }
}

/// One moment to many APNs devices over the lean HTTP/2 client, the dispatcher's batch path.
@Suite struct BatchDispatchTests {
    @Test func anExpiredProviderTokenIsRefreshedOnceForEveryDeliveryItFailed() async throws {
        let setup = try await ReplayPipelineTests.Setup()
        let store = try SQLiteStore(path: setup.path)
        // The first device's token starts with e0: the fake expires the provider token at its first
        // request, and refuses that token to every request after it — to the others in flight too.
        func device(_ prefix: String, registeredAt: Date) -> Device {
            let hex = (UUID().text() + UUID().text()).replacingOccurrences(of: "-", with: "")
            return Device(
                id: UUID(),
                channel: .apns(
                    token: prefix + hex.prefix(64 - prefix.count), environment: .production, topic: "com.example.nohit"),
                registeredAt: registeredAt, secretHash: "")
        }
        try await store.register(device("e0", registeredAt: Date().addingTimeInterval(-1)))
        let devices = (0..<39).map { _ in device("ab", registeredAt: Date()) }
        try await store.register(contentsOf: devices)
        var options = HTTP2Client.Configuration()
        options.extraCertificateAuthorities = [setup.server.authority.caCertificatePEM]
        options.connections = 2
        let transport = try HTTP2APNsTransport(
            configuration: APNsConfiguration(productionURL: setup.server.baseURL, sandboxURL: setup.server.baseURL),
            client: options)
        let token = APNsProviderToken(key: setup.key, keyID: "K", teamID: "T", clock: SystemWallClock())
        let pipeline = AlertPipeline(
            store: store, channels: [APNsChannel(transport: transport, token: token)], clock: SystemWallClock(),
            concurrency: 16)
        let dispatchers = Task { try await pipeline.runDispatchers() }

        let game = try #require(
            try ReplaySchedule.games(on: ReplayPipelineTests.day, data: [TestData.path("retrosheet")])
                .first { $0.record.id == "CHA202008250" })
        let followed = GameFollower.moments(
            gameID: game.record.id, starters: game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst,
            updates: game.updates.map(\.update), result: game.result)
        let completed = try #require(followed.moments.first { $0.kind == .completed })
        let published = try await pipeline.publisher.publish(completed, game: game.info, at: Date())
        #expect(published.deliveries == 40)
        try await pipeline.waitUntilDrained(manual: nil)
        dispatchers.cancel()
        _ = try? await dispatchers.value

        let statistics = pipeline.statistics.snapshot
        #expect(statistics.delivered == 40)
        #expect(statistics.failed == 0 && statistics.retried == 0)
        // Sent 16 at a time; the refused ones answered in any grouping, some sent again before the
        // refresh was known: still exactly one new token.
        #expect(token.generated == 2)
        #expect(statistics.tokenRefreshes == 1)
        #expect(setup.server.state.accepted.count == 40)
        #expect(setup.server.state.accepted.allSatisfy { $0.count == 1 })
        await transport.shutdown()
        try await setup.shutdown()
    }
}

/// The moments of every game change, in order.
final class MomentCollector: GameChangeConsumer, @unchecked Sendable {
    // Guarded by the lock.
    private let lock = NSLock()
    private var storage: [Moment] = []
    func consume(_ change: GameChange) async throws { lock.withLock { storage += change.moments } }
    var moments: [Moment] { lock.withLock { storage } }
}

final class Printed: @unchecked Sendable {
    // Guarded by the lock; the console channel writes from dispatcher tasks.
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ line: String) { lock.withLock { storage.append(line) } }
    var lines: [String] { lock.withLock { storage } }
}

/// The in-memory directory of active devices follows the store: a device registered, changed or
/// pruned after the first fan-out is seen by the next one.
@Suite struct DeviceDirectoryTests {
    @Test func followsRegistrationsPreferencesAndPruningAfterItsFirstRead() async throws {
        let store = try SQLiteStore(inMemory: ())
        let directory = DeviceDirectory(store: store)
        func device(token: String = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())
            -> Device
        {
            Device(
                id: UUID(), channel: .apns(token: token, environment: .sandbox, topic: "com.example.nohit"),
                registeredAt: Date(), secretHash: "")
        }
        let first = device()
        try await store.register(first)
        #expect(try await directory.active().map(\.id) == [first.id])
        // Registered through the API while the day is live.
        let second = device()
        try await store.register(second)
        #expect(try await Set(directory.active().map(\.id)) == [first.id, second.id])
        var preferences = Preferences()
        preferences.jinxSafe = true
        #expect(try await store.updatePreferences(deviceID: second.id, to: preferences))
        #expect(try await directory.active().first { $0.id == second.id }?.preferences.jinxSafe == true)
        // Pruned after a 410: no more fan-outs to it.
        #expect(try await store.disable(id: first.id, reason: "Unregistered", at: Date()))
        #expect(try await directory.active().map(\.id) == [second.id])
        // Only the first read was whole; the rest read what changed.
        #expect(await directory.reads.full == 1)
        #expect(await directory.reads.incremental == 3)
        // Back in service with a new token; then a removal reads everything again.
        #expect(try await store.updateChannel(id: first.id, to: first.channel, at: Date()))
        #expect(try await Set(directory.active().map(\.id)) == [first.id, second.id])
        #expect(try await store.delete(id: second.id))
        #expect(try await directory.active().map(\.id) == [first.id])
        #expect(await directory.reads.full == 2)
        // The first phone's app reinstalled registers its token again: one device for it, not two.
        guard case .apns(let token, _, _) = first.channel else { return }
        let again = device(token: token)
        #expect(try await store.register(again) == [first.id])
        #expect(try await directory.active().map(\.id) == [again.id])
        #expect(await directory.reads.full == 2)
        // Nothing changed: nothing read.
        _ = try await directory.active()
        let reads = await directory.reads
        #expect(reads.full == 2 && reads.incremental == 5)
    }

    /// Several callers at once (the publisher and the broadcast channels), each let in while
    /// another waits for the store: every answer is a whole, current list (an overtaken read once
    /// wrote a device at a place its stale copy did not have: a crash).
    @Test func callersAtOnceEachGetTheWholeList() async throws {
        let store = try SQLiteStore(inMemory: ())
        let directory = DeviceDirectory(store: store)
        var registered: [UUID] = []
        for round in 0..<40 {
            var added = Device(
                id: UUID(),
                channel: .apns(
                    token: String(format: "%064x", round + 1), environment: .sandbox, topic: "com.example.nohit"),
                registeredAt: Date(), secretHash: "")
            if round % 7 == 6 { added.preferences.jinxSafe = true }
            try await store.register(added)
            registered.append(added.id)
            if round % 10 == 9 {
                #expect(try await store.disable(id: registered.removeFirst(), reason: "gone", at: Date()))
            }
            let expected = Set(registered)
            let answers = try await withThrowingTaskGroup(of: Set<UUID>.self) { group in
                for _ in 0..<8 { group.addTask { Set(try await directory.active().map(\.id)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0 == expected }, "round \(round)")
        }
    }
}
