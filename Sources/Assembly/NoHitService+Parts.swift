import Alerts
import AsyncHTTPClient
import Clocks
import Delivery
import Foundation
import Logging
import Pipeline
import Scores
import Server
import ServiceLifecycle
import StatsAPI
import Storage

extension NoHitService {
    /// The source of games as a service, with what the service keeps of it.
    struct SourceParts {
        var service: (any Service)?
        /// What runs beside it, started before it and stopped after it (the Gameday push).
        var companions: [any Service] = []
        /// Whether the source's end is the end of the run (`nohit replay`).
        var endsTheRun = false
        var progress: ReplaySource.Progress?
        /// The Stats API's HTTP client, shut down after the services.
        var client: HTTPClient?
    }

    /// The source the settings name, saying what happens into the hub (or, for instances sharing
    /// a database, into the shared game log).
    static func makeSource(
        _ settings: ServiceSettings, hub: GameHub, pipeline: AlertPipeline, warmer: HistoryWarmer,
        shared: SharedInstances?, manual: ManualWallClock?, health: PollerHealth?, clock: any WallClock,
        logger: Logger
    ) async throws -> SourceParts {
        switch settings.source {
        case .driven:
            return SourceParts()
        case .replay(let replay):
            // The day over (`nohit replay`), the source waits for every alert to be sent.
            let ends = replay.endsWithTheDay
            if let shared {
                let source = SharedReplaySource(
                    timeline: ReplayTimeline(games: replay.games), leases: shared.leases, log: shared.log,
                    clock: clock,
                    afterDay: {
                        guard ends else { return }
                        try await shared.caughtUp()
                        try await pipeline.waitUntilDrained(manual: nil)
                    }, logger: logger)
                return SourceParts(service: source, endsTheRun: ends, progress: source.progress)
            }
            let source = ReplaySource(
                games: replay.games, sink: hub, clock: clock,
                settle: {
                    // As fast as it can go, the clock never runs ahead of the alerts or of what a
                    // completed no-hitter means.
                    try await pipeline.waitUntilIdle()
                    await warmer.waitUntilIdle()
                },
                afterDay: { if ends { try await pipeline.waitUntilDrained(manual: manual) } })
            return SourceParts(service: source, endsTheRun: ends, progress: source.progress)
        case .statsAPI(let statsAPI):
            // Created last, once nothing else can fail: a client dropped without shutdown traps.
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            var officialDates: @Sendable (Date) -> [String] = StatsAPIPoller.defaultDates
            if let date = statsAPI.date { officialDates = { _ in [date] } }
            let push = statsAPI.pushURL.map {
                GamedayPushClient(baseURL: $0, logger: Logger(label: "nohit.statsapi.push"))
            }
            let poller = StatsAPIPoller(
                transport: HTTPStatsAPITransport(client: client, baseURL: statsAPI.url), clock: clock,
                logger: Logger(label: "nohit.statsapi"), officialDates: officialDates, health: health,
                push: push)
            let source: StatsAPISource
            if let shared {
                let games = SharedGames(leases: shared.leases, log: shared.log, logger: logger)
                source = StatsAPISource(poller: poller, sink: games, claims: games)
            } else {
                // The play-to-send latency, where this instance both reads the games and publishes
                // their moments (with several, another instance may publish what this one read).
                source = StatsAPISource(poller: poller, sink: hub, playTimes: pipeline.statistics.playTimes)
            }
            return SourceParts(service: source, companions: push.map { [$0] } ?? [], client: client)
        }
    }

    /// The HTTP API: its routes, the web app, the live stream, Keen's API on the store's analytics.
    static func makeAPI(
        _ http: ServiceSettings.HTTP, settings: ServiceSettings, store opened: OpenedStore, board: LiveBoard,
        feed: LiveFeed, seasons: SeasonLibrary, deals: DealDesk, metrics: ServerMetrics,
        providers: ProviderSettings?, channels: ProviderChannels?, health: PollerHealth?, faults: DeliveryFaults,
        storage: StorageHealth, broadcasts: BroadcastChannels?, clock: any WallClock
    ) async throws -> APIServer {
        let database = opened.store
        var analytics: AnalyticsAPI?
        var webAnalytics: ClientConfiguration.Analytics?
        if let store = database as? any AnalyticsStore {
            // Events are stamped by the real clock, whatever clock the day is replayed on.
            analytics = AnalyticsAPI(
                store: store, clock: SystemWallClock(), queries: AnalyticsQueries(limits: settings.analytics),
                storage: storage,
                // Keen's extractions by `email`, written here (no mail server).
                extractions: (settings.store.dataDir as NSString).appendingPathComponent("extractions"))
            webAnalytics = try await WebAnalyticsProject.ensure(
                store: store, dataDir: settings.store.dataDir, now: Date())
        }
        let apps = providers?.apps ?? []
        var declared: [String: (topic: String, environment: APNsEnvironment)] = [:]
        for app in apps { declared[app.id] = (app.topic, app.environment) }
        let registrar = Registrar(
            allowPrivateNetworks: providers?.endpointGuard.allowPrivateNetworks ?? false, apps: declared)
        var vapidPublicKey: String?
        if let providers {
            vapidPublicKey = VAPID(key: providers.vapidKey, subject: providers.vapidSubject).publicKeyBase64URL
        }
        var sourceStatus: (@Sendable () -> SourceStatus)?
        if let health { sourceStatus = { health.sourceStatus(now: clock.now()) } }
        var testPush: (@Sendable (Device) async -> TestPushAnswer)?
        if let channels {
            testPush = { device in TestPushAnswer(await PushTest.send(to: device, through: channels, now: Date())) }
        }
        var options = APIServer.Options(
            registrar: registrar, webOrigins: Set(apps.compactMap(\.webOrigin)),
            vapidPublicKey: vapidPublicKey,
            adminToken: http.adminToken, metrics: metrics, metricsAccess: http.metricsAccess, outbox: database,
            // For work on the web app: its files served from the checkout, changed without a rebuild.
            publicFolder: http.webFolder ?? APIServer.Options.bundledPublicFolder,
            gate: ConnectionGate(limits: http.limits, logger: Logger(label: "nohit.serve")),
            registrations: RateLimiter(perMinute: http.registrationsPerMinute, burst: 2 * http.registrationsPerMinute),
            keepFinished: TimeInterval(http.keepFinishedMinutes * 60), source: settings.source.name,
            sourceStatus: sourceStatus, deliveryFaults: faults, storage: storage, deals: deals,
            analytics: analytics, webAnalytics: webAnalytics, testPush: testPush)
        if let broadcasts {
            options.broadcastChannel = { broadcasts.channel(for: $0) }
            options.broadcastCounts = { broadcasts.counts }
        }
        return APIServer(store: database, board: board, feed: feed, seasons: seasons, clock: clock, options: options)
    }
}
