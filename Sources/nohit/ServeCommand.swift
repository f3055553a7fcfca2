import Alerts
import ArgumentParser
import AsyncHTTPClient
import Baseball
import Clocks
import Configuration
import Deals
import Delivery
import Foundation
import Hummingbird
import Logging
import Metrics
import Pipeline
import Retrosheet
import Scores
import Server
import ServiceLifecycle
import StatsAPI
import Storage
import Synchronization

/// `nohit serve --date DATE`: the HTTP API and live stream, fed by a replayed day as if live,
/// with alerts going out through the pipeline.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the JSON API and the live stream, watching a replayed day as if live, or MLB's Stats API.",
        discussion: """
            --date plays that day's Retrosheet games on a clock running --speed times real time (each game \
            from its real first pitch, over its real length); moments become alerts to the registered devices \
            and events on /api/stream. --source statsapi follows MLB's Stats API instead (or a \
            `nohit fake-statsapi`, with --statsapi-url and --statsapi-date). SIGINT or SIGTERM stops gracefully.

            Every setting can also come from a NOHIT_* environment variable or a JSON file (--config or \
            $NOHIT_CONFIG); a flag wins over the variable, the variable over the file. The names: --port is \
            http.port, NOHIT_HTTP_PORT, {"http": {"port": 8080}}; `nohit settings` (docs/configuration.md) \
            lists them all.

            Endpoints: GET /healthz, /readyz, /metrics, /api/games, /api/games/{id}, /api/attempts, /api/moments, \
            /api/hall-of-fame/{season}, /api/stream (Server-Sent Events; Last-Event-ID resumes), /api/ws (WebSocket; ?after= resumes); \
            POST /api/devices; GET and PUT /api/devices/{id}/preferences (Authorization: Bearer <secret>).
            """
    )

    @Option(help: Settings.help("http.host"))
    var host: String?

    @Option(help: Settings.help("http.port"))
    var port: Int?

    @Option(help: Settings.help("source"))
    var source: String?

    @Option(help: Settings.help("statsapi.url"))
    var statsapiURL: String?

    @Option(help: Settings.help("statsapi.push-url"))
    var statsapiPushURL: String?

    @Option(help: Settings.help("statsapi.date"))
    var statsapiDate: String?

    @Option(name: [.customLong("date"), .customLong("replay")], help: Settings.help("replay.date"))
    var date: String?

    @Option(help: Settings.help("replay.speed"))
    var speed: Double?

    @Option(help: Settings.help("retrosheet.data"))
    var data: [String] = []

    @Option(name: .customLong("deals"), help: Settings.help("deals.files"))
    var dealFiles: [String] = []

    @Option(help: Settings.help("delivery.concurrency"))
    var concurrency: Int?

    @Option(help: Settings.help("admin.token"))
    var adminToken: String?

    @Option(help: Settings.help("admin.token-file"))
    var adminTokenFile: String?

    @Option(help: Settings.help("http.max-connections"))
    var maxConnections: Int?

    @Option(help: Settings.help("http.max-connections-per-client"))
    var maxConnectionsPerClient: Int?

    @Option(help: Settings.help("http.header-timeout"))
    var headerTimeout: Int?

    @Option(help: Settings.help("http.idle-timeout"))
    var idleTimeout: Int?

    @Option(help: Settings.help("http.backlog"))
    var backlog: Int?

    @Option(help: Settings.help("http.max-streams"))
    var maxStreams: Int?

    @Option(help: Settings.help("http.abuse-penalty"))
    var abusePenalty: Int?

    @Option(help: Settings.help("http.metrics"))
    var metrics: String?

    @Option(help: Settings.help("http.registrations-per-minute"))
    var registrationsPerMinute: Int?

    @Option(help: Settings.help("scoreboard.keep-finished-minutes"))
    var keepFinishedMinutes: Int?

    @OptionGroup var store: StoreOptions
    @OptionGroup var providers: ProviderOptions
    @OptionGroup var logging: LoggingOptions

    /// What the command line gave, as settings keys.
    var flags: [String: ConfigContent] {
        var flags = providers.flags.merging(logging.flags) { $1 }
        if let host { flags["http.host"] = .string(host) }
        if let port { flags["http.port"] = .int(port) }
        if let date { flags["replay.date"] = .string(date) }
        if let source { flags["source"] = .string(source) }
        if let statsapiURL { flags["statsapi.url"] = .string(statsapiURL) }
        if let statsapiDate { flags["statsapi.date"] = .string(statsapiDate) }
        if let statsapiPushURL { flags["statsapi.push-url"] = .string(statsapiPushURL) }
        if let speed { flags["replay.speed"] = .double(speed) }
        if !data.isEmpty { flags["retrosheet.data"] = .stringArray(data) }
        if !dealFiles.isEmpty { flags["deals.files"] = .stringArray(dealFiles) }
        if let concurrency { flags["delivery.concurrency"] = .int(concurrency) }
        if let adminToken { flags["admin.token"] = .string(adminToken) }
        if let adminTokenFile { flags["admin.token-file"] = .string(adminTokenFile) }
        if let metrics { flags["http.metrics"] = .string(metrics) }
        for (key, value) in [
            ("http.max-connections", maxConnections), ("http.max-connections-per-client", maxConnectionsPerClient),
            ("http.header-timeout", headerTimeout), ("http.idle-timeout", idleTimeout),
            ("http.max-streams", maxStreams), ("http.backlog", backlog), ("http.abuse-penalty", abusePenalty),
            ("http.registrations-per-minute", registrationsPerMinute),
            ("scoreboard.keep-finished-minutes", keepFinishedMinutes),
        ] {
            if let value { flags[key] = .int(value) }
        }
        return flags
    }

    func run() async throws {
        let settings = try await store.settings(flags)
        let host = try settings.string("http.host", default: "127.0.0.1")
        let port = try settings.int("http.port", default: 8080)
        let speed = try settings.double("replay.speed", default: 60)
        let concurrency = try settings.int("delivery.concurrency", default: 256)
        try ReplaySetup.validate(speed: speed, concurrency: concurrency)
        guard (0...65_535).contains(port) else { throw ValidationError("the port must be 0 to 65535, not \(port)") }
        let sourceName = try settings.string("source", default: "replay")
        guard ["replay", "statsapi"].contains(sourceName) else {
            throw ValidationError("the source must be replay or statsapi, not '\(sourceName)'")
        }
        let replay = try settings.string("replay.date")
        if sourceName == "replay" && replay == nil {
            throw ValidationError(
                "give the day to replay: --date YYYY-MM-DD (or NOHIT_REPLAY_DATE, or replay.date in the file), "
                    + "or --source statsapi")
        }
        // Every setting is read before anything that must be shut down (the HTTP clients) exists.
        let adminToken = try Self.adminToken(
            given: try settings.string("admin.token"), file: try settings.string("admin.token-file"))
        let limits = try Self.limits(settings)
        let registrationsPerMinute = try settings.int("http.registrations-per-minute", default: 10)
        guard (0...100_000).contains(registrationsPerMinute) else {
            throw ValidationError("registrations per minute must be 0 to 100000, not \(registrationsPerMinute)")
        }
        let webFolder = try Self.checkedWebFolder()
        let metricsText = try settings.string("http.metrics", default: "loopback")
        guard let metricsAccess = MetricsAccess(rawValue: metricsText) else {
            throw ValidationError(
                "http.metrics must be \(MetricsAccess.allCases.map(\.rawValue).joined(separator: ", ")), not '\(metricsText)'"
            )
        }
        if metricsAccess == .token && (adminToken ?? "").isEmpty {
            throw ValidationError(
                "http.metrics token needs an admin token (--admin-token-file, NOHIT_ADMIN_TOKEN or --admin-token)")
        }
        let keepFinished = try settings.int("scoreboard.keep-finished-minutes", default: 180)
        guard (0...1440).contains(keepFinished) else {
            throw ValidationError("minutes a finished game stays must be 0 to 1440, not \(keepFinished)")
        }
        let allowPrivateNetworks = try settings.bool("delivery.allow-private-networks", default: false)
        let statsAPIDate = try settings.string("statsapi.date")
        if let statsAPIDate, statsAPIDate.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) == nil {
            throw ValidationError("the Stats API date must be YYYY-MM-DD, not '\(statsAPIDate)'")
        }
        let dealRules = try Runtime.dealRules(settings)
        let analyticsLimits = try Self.analyticsLimits(settings)
        try logging.bootstrap(settings)
        let location = try store.location(settings)
        let options = Options(
            host: host, port: port, speed: speed, concurrency: concurrency, sourceName: sourceName, replay: replay,
            adminToken: adminToken, limits: limits, registrationsPerMinute: registrationsPerMinute,
            keepFinished: keepFinished, allowPrivateNetworks: allowPrivateNetworks, statsAPIDate: statsAPIDate,
            dealRules: dealRules, analyticsLimits: analyticsLimits, metricsAccess: metricsAccess,
            webFolder: webFolder)
        let day = try sourceName == "replay" ? replay.map { try ReplaySetup.day($0, settings: settings) } : nil
        try await location.withStore { opened in
            try await serve(opened, day: day, location: location, settings: settings, options: options)
        }
    }

    /// What `run` read and checked before opening the database.
    struct Options: Sendable {
        var host: String
        var port: Int
        var speed: Double
        var concurrency: Int
        var sourceName: String
        var replay: String?
        var adminToken: String?
        var limits: ConnectionLimits
        var registrationsPerMinute: Int
        var keepFinished: Int
        var allowPrivateNetworks: Bool
        var statsAPIDate: String?
        var dealRules: [DealRule]
        var analyticsLimits: AnalyticsLimits
        var metricsAccess: MetricsAccess
        /// `$NOHIT_WEB_FOLDER`, checked.
        var webFolder: String?
    }

    func serve(
        _ opened: OpenedStore, day: (games: [ReplayGame], places: [String])?, location: StoreLocation,
        settings: Settings, options: Options
    ) async throws {
        let (host, port, speed, concurrency, sourceName, replay) = (
            options.host, options.port, options.speed, options.concurrency, options.sourceName, options.replay
        )
        let (adminToken, limits, registrationsPerMinute, keepFinished, allowPrivateNetworks, statsAPIDate) = (
            options.adminToken, options.limits, options.registrationsPerMinute, options.keepFinished,
            options.allowPrivateNetworks, options.statsAPIDate
        )
        let dealRules = options.dealRules
        let logger = Logger(label: "nohit.serve")
        // Before the connection limit is worked out from it.
        if let raised = ConnectionLimits.raiseOpenFileLimit() {
            logger.notice(
                "open-file limit raised to the hard limit: one descriptor per live-stream client",
                metadata: ["limit.before": "\(raised.before)", "limit.after": "\(raised.after)"])
        }

        let places: [String]
        let database = opened.store
        var run: SharedRun?
        let providerSettings: ProviderSettings
        let channels: ProviderChannels
        let feedback: FeedbackHook?
        let clock: any WallClock
        var games: [ReplayGame] = []
        var statsAPIURL: String?
        var pushURL: String?
        let banner: String
        if let replay, let day, sourceName == "replay" {
            let setup = try await ReplaySetup.prepare(
                day: day, speed: speed, settings: settings, store: opened, location: location,
                providers: providers, logger: logger)
            (games, places, providerSettings, channels, feedback, clock, run) = (
                setup.games, setup.places, setup.settings, setup.channels, setup.feedback, setup.clock, setup.run
            )
            banner = "serving \(replay) (\(games.count) games) at speed \(speed)"
        } else {
            clock = SystemWallClock()
            places = try ReplaySetup.retrosheetPlaces(settings)
            statsAPIURL = try settings.string("statsapi.url", default: Self.statsAPIURL)
            pushURL = try Self.pushURL(settings.string("statsapi.push-url"), statsAPI: statsAPIURL ?? Self.statsAPIURL)
            (providerSettings, channels, feedback) = try await ReplaySetup.prepareDelivery(
                settings: settings, store: opened, location: location, providers: providers, clock: clock,
                logger: logger)
            if let coordination = opened.coordination {
                // One run for every instance following the Stats API on this database.
                run = try await coordination.joinRun(
                    key: "statsapi \(statsAPIURL ?? Self.statsAPIURL)", epoch: Date().timeIntervalSince1970,
                    notBefore: .distantPast)
            }
            banner = "following the Stats API at \(statsAPIURL ?? Self.statsAPIURL)"
        }

        let board = LiveBoard()
        let feed = LiveFeed()
        let metrics = ServerMetrics()
        // Hummingbird's request metrics go through the process's metrics system.
        MetricsSystem.bootstrap(metrics.factory)
        let statistics = DeliveryStatistics(metrics: metrics.factory)
        let seasons = SeasonLibrary(places: places)
        let odds = await Self.odds(seasons, logger: logger)
        let runtime = Runtime(
            store: database, channels: channels.channels, clock: clock, concurrency: concurrency,
            staleAfter: providerSettings.staleAfter, statistics: statistics, dealRules: dealRules,
            seasonFiles: { [places] season in
                places.lazy.compactMap { EventFiles.season(season, in: $0) }.first
                    .flatMap { try? EventFiles.expand([$0]) } ?? []
            },
            consumers: [LiveConsumer(board: board, feed: feed), HistoryWarmer(seasons: seasons)], feedback: feedback,
            odds: odds,
            meaning: { completed, game in
                let club = game.team(completed.pitchingSide)
                let lookup = Task {
                    await seasons.meaning(
                        franchise: club.club.franchise, nickname: club.club.nickname, date: game.date,
                        gameID: completed.gameID)
                }
                // The completed alert waits at most 15 s for its history (the seasons are read in
                // the background from the 4th inning on; a club without a no-hitter in decades
                // reads them all): past that it goes without, and the reading goes on for the next.
                return await Self.within(.seconds(15)) { await lookup.value }
            }, logger: logger)

        var serving = APIServer.Options()
        serving.registrar = Registrar(allowPrivateNetworks: allowPrivateNetworks)
        serving.registrar.apps = Dictionary(
            uniqueKeysWithValues: providerSettings.apps.map { ($0.id, (topic: $0.topic, environment: $0.environment)) })
        serving.webOrigins = Set(providerSettings.apps.compactMap(\.webOrigin))
        serving.odds = odds
        serving.vapidPublicKey =
            VAPID(key: providerSettings.vapidKey, subject: providerSettings.vapidSubject).publicKeyBase64URL
        serving.metrics = metrics
        serving.adminToken = adminToken
        serving.metricsAccess = options.metricsAccess
        serving.gate = ConnectionGate(limits: limits, logger: logger)
        serving.registrations = RateLimiter(perMinute: registrationsPerMinute, burst: 2 * registrationsPerMinute)
        serving.outbox = database
        serving.keepFinished = TimeInterval(keepFinished * 60)
        serving.deals = runtime.deals
        serving.source = statsAPIURL == nil ? "replay" : "statsapi"
        // The Stats API poller's requests, for /readyz and the metrics.
        let health = statsAPIURL == nil ? nil : PollerHealth(now: clock.now(), timeout: 10)
        if let health {
            serving.sourceStatus = { [clock] in
                let snapshot = health.snapshot
                let (ready, reason) = snapshot.readiness(now: clock.now())
                var status = SourceStatus(kind: "statsapi", ready: ready, reason: reason)
                status.lastSuccess = snapshot.lastSuccess
                status.expectedWait = snapshot.plannedWait
                status.requests = snapshot.requests
                // A game is dropped an hour after its last request, even when no request follows.
                let now = clock.now()
                status.games = snapshot.games.filter {
                    now.timeIntervalSince($0.value.lastRequest) < PollerHealth.keepGame
                }.mapValues {
                    SourceStatus.Game(
                        gameID: $0.gameID, lastSuccess: $0.lastSuccess, answered: $0.answered, failed: $0.failed,
                        feedTime: $0.feedTime, feedLag: $0.feedLag)
                }
                return status
            }
        }
        // For work on the web app: its files served from the checkout, changed without a rebuild.
        if let webFolder = options.webFolder { serving.publicFolder = webFolder }
        if let analytics = database as? any AnalyticsStore {
            // Events are stamped by the real clock, whatever clock the day is replayed on.
            serving.analytics = AnalyticsAPI(
                store: analytics, clock: SystemWallClock(), queries: AnalyticsQueries(limits: options.analyticsLimits))
            serving.webAnalytics = try await WebAnalyticsProject.ensure(
                store: analytics, dataDir: location.dataDir, now: Date())
        }
        let api = APIServer(
            store: database, board: board, feed: feed, seasons: seasons, clock: clock,
            options: serving)
        let source: any Service
        // Several instances on one PostgreSQL database: each game said by one of them into the
        // shared game log, which every instance applies (its board, stream and moments).
        var shared: Runtime.Shared?
        if let run, let coordination = opened.coordination {
            // A replayed day is read from its start; the Stats API's log from the last day and a half.
            let start =
                statsAPIURL == nil
                ? 0
                : try await coordination.startSequence(run: run.id, since: clock.now().addingTimeInterval(-36 * 3600))
            shared = Runtime.Shared(
                coordination: coordination, run: run, runtime: runtime, clock: clock,
                about: "nohit serve on port \(port)", start: start, logger: logger)
        }
        // Created last, once nothing else can fail: a client dropped without shutdown traps.
        var statsAPIClient: HTTPClient?
        if let statsAPIURL {
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            statsAPIClient = client
            var poller = StatsAPIPoller(
                transport: HTTPStatsAPITransport(client: client, baseURL: statsAPIURL), clock: clock,
                logger: Logger(label: "nohit.statsapi"))
            if let statsAPIDate { poller.officialDates = { _ in [statsAPIDate] } }
            poller.health = health
            if let pushURL {
                poller.push = GamedayPushClient(baseURL: pushURL, logger: Logger(label: "nohit.statsapi.push"))
            }
            if let shared {
                let games = SharedGames(leases: shared.leases, log: shared.log)
                source = StatsAPISource(poller: poller, sink: games, claims: games)
            } else {
                // The play-to-send latency, where this instance both reads the games and publishes
                // their moments (with several, another instance may publish what this one read).
                var statsAPI = StatsAPISource(poller: poller, sink: runtime.hub)
                statsAPI.playTimes = runtime.pipeline.statistics.playTimes
                source = statsAPI
            }
        } else if let shared {
            source = SharedReplaySource(
                timeline: ReplayTimeline(games: games), leases: shared.leases, log: shared.log, clock: clock)
        } else {
            var replaySource = ReplaySource(games: games, sink: runtime.hub, clock: clock)
            replaySource.settle = { try await runtime.pipeline.waitUntilIdle() }
            source = replaySource
        }
        let app = buildApplication(
            api,
            configuration: .init(address: .hostname(host, port: port), serverName: "nohit", backlog: limits.backlog),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                StandardStreams.writeError(
                    "nohit: \(banner) on http://\(host.contains(":") ? "[\(host)]" : host):\(bound)\n"
                        + "nohit: open \(Self.browserURL(host: host, port: bound)) in a browser; Ctrl-C (or SIGTERM) "
                        + "stops gracefully\n")
            },
            logger: logger)
        defer { feed.finishAll() }
        var failure: (any Error)?
        do {
            // The source may finish long before the server (a replayed day is over): the rest goes
            // on. Shut down in reverse: the server first, then the stream, the source, and the
            // dispatchers last (they finish what is in flight).
            _ = try await runtime.run(
                (shared?.services ?? []) + [
                    .init(service: source, successTerminationBehavior: .ignore),
                    .init(service: FeedHeartbeat(feed: feed)),
                    .init(service: StreamStallSweep(watch: api.options.stalls)),
                    .init(service: app),
                    // Last, so stopped first: the server's graceful stop waits for its requests,
                    // and a running query must end before it (at its next check).
                ]
                    + (api.options.analytics.map {
                        // The refresher after the queries, so stopped before them.
                        [.init(service: $0.queries), .init(service: SavedQueryRefresher(api: $0))]
                    } ?? []), logger: logger)
        } catch {
            failure = error
        }
        try? await channels.shutdown()
        try? await statsAPIClient?.shutdown()
        if let failure {
            guard let message = SystemErrors.listening(failure, host: host, port: port) else { throw failure }
            StandardStreams.writeError("nohit: \(message)\n")
            throw ExitCode(2)
        }
    }

    /// Where a browser on this machine opens the service listening on `host`.
    static func browserURL(host: String, port: Int) -> String {
        switch host {
        case "0.0.0.0", "::", "": "http://localhost:\(port)/ (from elsewhere: this machine's address)"
        case let address where address.contains(":"): "http://[\(address)]:\(port)/"
        default: "http://\(host):\(port)/"
        }
    }

    static let statsAPIURL = "https://statsapi.mlb.com/api/"

    /// The Gameday push's base from its setting: nil for "off" (polling only), the Stats API's
    /// own push when not set.
    static func pushURL(_ setting: String?, statsAPI: String) throws -> String? {
        if setting?.lowercased() == "off" { return nil }
        let url = setting ?? GamedayPushClient.baseURL(forStatsAPI: statsAPI)
        guard let url, let components = URLComponents(string: url),
            ["ws", "wss"].contains(components.scheme?.lowercased() ?? ""), components.host?.isEmpty == false
        else {
            throw ValidationError(
                "statsapi.push-url must be a ws:// or wss:// URL, or off, not '\(setting ?? "derived from \(statsAPI)")'"
            )
        }
        return url
    }

    /// The Keen API's limits from the settings (`analytics.*`), each checked.
    static func analyticsLimits(_ settings: Settings) throws -> AnalyticsLimits {
        var limits = AnalyticsLimits()
        func read(_ key: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
            let read = try settings.int(key, default: value)
            guard range.contains(read) else {
                throw ValidationError("\(key) must be \(range.lowerBound) to \(range.upperBound), not \(read)")
            }
            return read
        }
        limits.eventsPerMinutePerKey = try read(
            "analytics.events-per-minute-per-key", limits.eventsPerMinutePerKey, 0...100_000_000)
        limits.eventsPerMinutePerClient = try read(
            "analytics.events-per-minute-per-client", limits.eventsPerMinutePerClient, 0...100_000_000)
        limits.queriesPerMinutePerKey = try read(
            "analytics.queries-per-minute-per-key", limits.queriesPerMinutePerKey, 0...1_000_000)
        limits.queriesPerMinutePerClient = try read(
            "analytics.queries-per-minute-per-client", limits.queriesPerMinutePerClient, 0...1_000_000)
        limits.querySeconds = Double(try read("analytics.query-seconds", Int(limits.querySeconds), 1...300))
        limits.queryMemoryBytes =
            try read("analytics.query-memory-mb", limits.queryMemoryBytes / 1_048_576, 16...65_536) * 1_048_576
        limits.concurrentQueries = try read("analytics.concurrent-queries", limits.concurrentQueries, 1...256)
        limits.bodyBytesInFlight =
            try read("analytics.body-mb-in-flight", limits.bodyBytesInFlight / 1_048_576, 10...4096) * 1_048_576
        return limits
    }

    /// The connection limits from the settings, each checked.
    /// The operator's token: given as a setting, or the first line of a file (so that it is not
    /// in the process list, as a flag's value is). Not both; never empty.
    static func adminToken(given: String?, file: String?) throws -> String? {
        guard let file else {
            if let given, given.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw ValidationError(
                    "the admin token is empty: give one, or leave admin.token out to close /api/admin")
            }
            return given
        }
        guard given == nil else {
            throw ValidationError("give the admin token once: admin.token-file or admin.token, not both")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError(
                "cannot read the admin token file \(file): \((error as NSError).localizedDescription)")
        }
        let token =
            String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !token.isEmpty else {
            throw ValidationError("the admin token file \(file) is empty: its first line is the token")
        }
        return token
    }

    static func limits(_ settings: Settings) throws -> ConnectionLimits {
        var limits = ConnectionLimits()
        func read(_ key: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
            let read = try settings.int(key, default: value)
            guard range.contains(read) else {
                throw ValidationError("\(key) must be \(range.lowerBound) to \(range.upperBound), not \(read)")
            }
            return read
        }
        limits.maxConnections = try read("http.max-connections", limits.maxConnections, 1...1_000_000)
        limits.maxConnectionsPerClient = try read(
            "http.max-connections-per-client", limits.maxConnectionsPerClient, 0...1_000_000)
        limits.headerTimeout = .seconds(Int64(try read("http.header-timeout", 10, 1...3600)))
        limits.idleTimeout = .seconds(Int64(try read("http.idle-timeout", 75, 1...86_400)))
        limits.maxStreams = try read("http.max-streams", limits.maxStreams, 0...1_000_000)
        limits.backlog = try read("http.backlog", limits.backlog, 1...65_535)
        limits.abusePenalty = .seconds(Int64(try read("http.abuse-penalty", 30, 0...86_400)))
        return limits
    }

    /// `$NOHIT_WEB_FOLDER`: a folder to serve the web app from instead of the bundled files,
    /// checked before anything is started.
    static func checkedWebFolder() throws -> String? {
        guard let folder = ProcessInfo.processInfo.environment["NOHIT_WEB_FOLDER"] else { return nil }
        guard FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("index.html")) else {
            throw ValidationError(
                "NOHIT_WEB_FOLDER: no index.html in '\(folder)' (Sources/Server/Public is the web app)")
        }
        return folder
    }
}

extension ServeCommand {
    /// `body`'s value, or nil when it takes longer than `limit` (it goes on, unawaited).
    static func within<Value: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> Value?) async
        -> Value?
    {
        let once = Once()
        return await withCheckedContinuation { continuation in
            Task {
                let value = await body()
                if once.first() { continuation.resume(returning: value) }
            }
            Task {
                try? await Task.sleep(for: limit)
                if once.first() { continuation.resume(returning: nil) }
            }
        }
    }
}

/// True the first time `first()` is asked only (one of several racing tasks resumes a continuation).
final class Once: Sendable {
    private let done = Mutex(false)

    init() {}

    func first() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

/// Once a bid is hitless through four innings, reads the no-hitters of the seasons held up to its
/// game's in the background (once per season), so what a no-hitter means is ready when it completes.
final class HistoryWarmer: GameChangeConsumer {
    let seasons: SeasonLibrary
    private let started = Mutex<Set<Int>>([])

    init(seasons: SeasonLibrary) {
        self.seasons = seasons
    }

    func consume(_ change: GameChange) async throws {
        guard change.moments.contains(where: { $0.kind == .hitlessInnings && $0.outs >= 12 }),
            let year = Int(change.game.info.date.prefix(4)), started.withLock({ $0.insert(year).inserted })
        else { return }
        Task.detached(priority: .utility) { [seasons] in await seasons.warmOfficials(through: year) }
    }
}

extension ServeCommand {
    /// The odds of history the service uses: computed at start from the seasons it holds when
    /// they are more than the shipped table's (an operator's own Retrosheet library), else the
    /// shipped table (1950–2020); said either way.
    static func odds(_ seasons: SeasonLibrary, logger: Logger) async -> BidOdds? {
        let shipped = shippedOdds()
        let held = seasons.available()
        if held.count > shipped?.seasons.count ?? 0 {
            logger.notice("computing the odds of history from the seasons held", metadata: ["seasons": "\(held.count)"])
            do {
                if let computed = try await seasons.odds() {
                    logger.notice(
                        "odds of history from the seasons held",
                        metadata: [
                            "seasons": "\(computed.seasons.first ?? 0)-\(computed.seasons.last ?? 0)",
                            "sides": "\(computed.sides)",
                        ])
                    return computed
                }
            } catch {
                logger.warning(
                    "the seasons held cannot be read for the odds; the shipped table is used",
                    metadata: ["error": "\(error)"])
            }
        }
        if let shipped {
            logger.info(
                "odds of history: the shipped table",
                metadata: ["seasons": "\(shipped.seasons.first ?? 0)-\(shipped.seasons.last ?? 0)"])
        }
        return shipped
    }

    /// The shipped table of how often bids finished, 1950–2020 (`Data/odds/bid-odds.json`, beside
    /// the working directory, else in the source tree); nil, said, when it cannot be read.
    static func shippedOdds() -> BidOdds? {
        let local = "Data/odds/bid-odds.json"
        let path =
            FileManager.default.fileExists(atPath: local)
            ? local
            : URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(local).path
        do {
            return try JSONDecoder().decode(BidOdds.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            StandardStreams.writeError(
                "nohit: no odds on the attempt cards: \(path) cannot be read (\(error.localizedDescription))\n")
            return nil
        }
    }
}
