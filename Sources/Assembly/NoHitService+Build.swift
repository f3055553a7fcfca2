import Clocks
import Foundation
import Hummingbird
import Logging
import NIOPosix
import Pipeline
import Retrosheet
import Scores
import Server
import ServiceLifecycle
import StatsAPI
import Storage

extension NoHitService {
    /// Builds the service on an open store: every component is given what it needs when it is
    /// made, and nothing is configured afterwards.
    static func build(_ settings: ServiceSettings, store opened: OpenedStore, hooks: Hooks) async throws
        -> NoHitService
    {
        let logger = hooks.logger
        if settings.http != nil, let raised = ConnectionLimits.raiseOpenFileLimit() {
            // Before the connection limit is worked out from it.
            logger.notice(
                "open-file limit raised to the hard limit: one descriptor per live-stream client",
                metadata: ["limit.before": "\(raised.before)", "limit.after": "\(raised.after)"])
        }
        let (clock, manual, run) = try await clockAndRun(settings, store: opened)
        let delivery = try await DeliverySetup.prepare(
            settings.delivery, store: opened.store, clock: clock, notice: hooks.notice, logger: logger)
        // From here on the channels are open: whatever fails shuts them down.
        do {
            return try await assemble(
                settings, store: opened, clock: clock, manual: manual, run: run, delivery: delivery, hooks: hooks)
        } catch {
            await delivery.channels?.close(logger: logger)
            throw error
        }
    }

    /// The service's clock, and for instances sharing a PostgreSQL database the run they play
    /// together (a replayed day on one shared clock; the Stats API's games in one log).
    private static func clockAndRun(_ settings: ServiceSettings, store: OpenedStore) async throws -> (
        any WallClock, ManualWallClock?, SharedRun?
    ) {
        switch settings.source {
        case .driven(let clock):
            return (clock, clock as? ManualWallClock, nil)
        case .statsAPI(let statsAPI):
            // Due times, staleness and the poller's waits on a clock the system's steps do not move.
            let clock = SteadyWallClock.process
            // One run for every instance following the same Stats API on this database.
            let run = try await store.coordination?.joinRun(
                key: "statsapi \(statsAPI.url)", epoch: clock.now().timeIntervalSince1970, notBefore: .distantPast)
            return (clock, nil, run)
        case .replay(let replay):
            let firstPitch = replay.games.map(\.start).min() ?? Date()
            let virtualStart = firstPitch.addingTimeInterval(-60)
            guard let coordination = store.coordination else {
                let manual = replay.speed == 0 ? ManualWallClock(virtualStart) : nil
                return (manual ?? ScaledWallClock(virtualStart: virtualStart, speed: replay.speed), manual, nil)
            }
            guard replay.speed > 0 else {
                throw StartError(
                    "instances sharing a PostgreSQL database replay a day on a shared clock: give --speed N (N > 0); "
                        + "--speed 0 (as fast as possible) needs the SQLite database")
            }
            // Instances started while the day is still being played join its run (and its clock);
            // a later start plays the day again in a new run (moments already stored send nothing).
            let lastEnd = replay.games.map(\.end).max() ?? firstPitch
            let length = lastEnd.timeIntervalSince(virtualStart) / replay.speed
            let now = SteadyWallClock.process.now()
            let run = try await coordination.joinRun(
                key: "replay \(replay.date) x\(replay.speed)", epoch: now.timeIntervalSince1970,
                notBefore: now.addingTimeInterval(-length - 60))
            let clock = ScaledWallClock(
                virtualStart: virtualStart, speed: replay.speed, realStart: Date(timeIntervalSince1970: run.epoch))
            return (clock, nil, run)
        }
    }

    private static func assemble(
        _ settings: ServiceSettings, store opened: OpenedStore, clock: any WallClock, manual: ManualWallClock?,
        run: SharedRun?, delivery: DeliverySetup, hooks: Hooks
    ) async throws -> NoHitService {
        let logger = hooks.logger
        let database = opened.store
        // History's win expectancy for the cards and the play-by-play (1950-2020, shipped).
        let board: LiveBoard
        switch WinExpectancyCount.shipped() {
        case .success(let table): board = LiveBoard(winExpectancy: table)
        case .failure(let error):
            logger.error(
                "no win probability on the cards: the shipped table cannot be read",
                metadata: ["error": "\(error)"])
            board = LiveBoard()
        }
        let feed = LiveFeed()
        let metrics = ServerMetrics()
        let statistics = DeliveryStatistics(metrics: metrics.factory)
        let seasons = SeasonLibrary(places: settings.retrosheetPlaces)
        // The odds of history: from the seasons held where the pages show them, else the shipped table.
        let odds =
            settings.http == nil ? HistoryOdds.shipped(logger: logger) : await HistoryOdds.load(seasons, logger: logger)
        let meanings = NoHitterMeanings()
        let warmer = HistoryWarmer(meanings: meanings) { question in
            await seasons.meaning(
                franchise: question.franchise, nickname: question.nickname, date: question.date,
                gameID: question.gameID)
        }
        let pipeline = AlertPipeline(
            store: database, channels: delivery.channels?.channels ?? [], clock: clock,
            concurrency: settings.delivery.concurrency,
            staleAfter: settings.delivery.providers?.staleAfter ?? ProviderSettings.defaultStaleAfter,
            statistics: statistics,
            // PostgreSQL: a call in flight when the server went away may never answer; it counts
            // as the database unreachable after 30 s and is made again.
            storage: StorageHealth(logger: logger, attemptLimit: opened.coordination == nil ? nil : .seconds(30)),
            startBudget: settings.delivery.startBudget, logger: logger)
        let alerts = AlertConsumer(publisher: pipeline.publisher, storage: pipeline.storage)
        // Broadcasts turned off: the channels made before are still deleted, and none made.
        var broadcastSettings = settings.delivery.broadcasts
        broadcastSettings.makesChannels = settings.delivery.providers?.broadcast ?? true
        let broadcasts = delivery.channels?.broadcastClients.map {
            BroadcastChannels(
                clients: $0, store: database, directory: pipeline.directory, clock: clock,
                settings: broadcastSettings, logger: logger)
        }
        let places = settings.retrosheetPlaces
        let deals = DealDesk(
            rules: settings.dealRules, store: database, publisher: pipeline.publisher,
            seasonFiles: { season in
                places.lazy.compactMap { EventFiles.season(season, in: $0) }.first.map { [$0] } ?? []
            }, logger: logger)
        // The alert publisher first (a moment is stored before anyone sees it), the broadcast
        // channels (noted, made off the game's path), the deals, the
        // caller's, the board and the stream, and the warmer last.
        let live: [any GameChangeConsumer] = settings.http == nil ? [] : [LiveConsumer(board: board, feed: feed)]
        let hub = GameHub(
            consumers: [alerts] + (broadcasts.map { [$0] } ?? [])
                + [DealConsumer(desk: deals, storage: pipeline.storage)] + hooks.consumers + live + [
                    warmer
                ], odds: odds,
            meanings: meanings, logger: logger)

        // Several instances on one PostgreSQL database: each game said by one of them into the
        // shared game log, which every instance applies (its board, stream and moments).
        var shared: SharedInstances?
        if let run, let coordination = opened.coordination {
            // A replayed day is read from its start; the Stats API's log from the last day and a half.
            var start: Int64 = 0
            if case .statsAPI = settings.source {
                start = try await coordination.startSequence(
                    run: run.id, since: clock.now().addingTimeInterval(-36 * 3600))
            }
            shared = SharedInstances(
                coordination: coordination, run: run, hub: hub, pipeline: pipeline, clock: clock,
                about: about(settings), start: start, logger: logger)
        }
        // The Stats API poller's requests, for /readyz and the metrics.
        let health: PollerHealth? =
            if case .statsAPI = settings.source { PollerHealth(now: clock.now(), timeout: 10) } else { nil }
        var api: APIServer?
        if let http = settings.http {
            api = try await makeAPI(
                http, settings: settings, store: opened, board: board, feed: feed, seasons: seasons,
                deals: deals, metrics: metrics, providers: settings.delivery.providers,
                channels: delivery.channels, health: health,
                faults: pipeline.statistics.faults, storage: pipeline.storage, broadcasts: broadcasts, clock: clock)
        }
        let source = try await makeSource(
            settings, hub: hub, pipeline: pipeline, warmer: warmer, shared: shared, manual: manual, health: health,
            clock: clock, logger: logger)
        let eventLoops = settings.http?.threads.map { MultiThreadedEventLoopGroup(numberOfThreads: $0) }

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        // The feedback hook first: stopped after the dispatchers, it sends their last prunes.
        if let feedback = delivery.feedback { services.append(.init(service: feedback)) }
        services += pipeline.services.map { .init(service: $0) }
        // The reader stops, then the instance gives up its games (before the dispatchers stop).
        services += shared?.services ?? []
        services.append(.init(service: warmer))
        if let broadcasts { services.append(.init(service: broadcasts)) }
        services += source.companions.map { .init(service: $0) }
        if let service = source.service {
            // A replayed day may end long before the server: the rest goes on, unless the day is
            // the whole run (`nohit replay`: the group shuts down, the dispatchers last).
            services.append(
                .init(
                    service: service, successTerminationBehavior: source.endsTheRun ? .gracefullyShutdownGroup : .ignore
                ))
        }
        if let api, let http = settings.http {
            services.append(.init(service: FeedHeartbeat(feeds: api.delayed.feeds)))
            // The stream held back for spoiler delays.
            services.append(.init(service: api.delayed))
            services.append(.init(service: StreamStallSweep(watch: api.options.stalls)))
            services.append(
                .init(
                    service: buildHTTPApplication(
                        api,
                        configuration: .init(
                            address: .hostname(http.host, port: http.port), serverName: "nohit",
                            backlog: http.limits.backlog),
                        eventLoopGroup: eventLoops,
                        onServerRunning: { channel in
                            await hooks.onListening(channel.localAddress?.port ?? http.port)
                        }, logger: logger)))
            if let analytics = api.options.analytics {
                // The queries last, so stopped first: the server's graceful stop waits for its
                // requests, and a running query must end before it (at its next check); the
                // refresher after them, so stopped before them.
                services.append(.init(service: analytics.queries))
                services.append(.init(service: SavedQueryRefresher(api: analytics)))
            }
        }
        return NoHitService(
            settings: settings, store: opened, clock: clock, pipeline: pipeline, alerts: alerts, broadcasts: broadcasts,
            deals: deals,
            hub: hub, odds: odds, board: board, feed: feed, metrics: metrics, api: api, progress: source.progress,
            run: run,
            services: services, hooks: hooks, channels: delivery.channels, statsAPIClient: source.client,
            eventLoops: eventLoops)
    }

    /// How this instance names itself among those sharing the database.
    private static func about(_ settings: ServiceSettings) -> String {
        switch settings.source {
        case .replay(let replay):
            settings.http.map { "nohit serve on port \($0.port)" } ?? "nohit replay \(replay.date) x\(replay.speed)"
        case .statsAPI, .driven:
            "nohit serve on port \(settings.http?.port ?? 0)"
        }
    }
}
