import Alerts
import Baseball
import Clocks
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdWebSocket
import NIOCore
import Scores
import Storage

/// The JSON API, the web app and the live stream, on Hummingbird: route collections by concern
/// (``SiteRoutes``, ``GameRoutes``, ``DeviceRoutes``, ``DealRoutes``, ``StreamRoutes``,
/// ``AdminRoutes``, Keen's ``AnalyticsAPI``), each given what it needs when it is made, behind one
/// guarded channel. Errors are JSON (`{"error":{"message":...}}`); bodies and lists are bounded.
package struct APIServer: Sendable {
    package let store: any DeviceStore & SubscriptionStore & MomentStore
    package let board: LiveBoard
    package let feed: LiveFeed
    /// The live feed held back for spoiler delays (a service to run beside the server).
    package let delayed: DelayedFeeds
    package let seasons: SeasonLibrary
    package let clock: any WallClock
    package let options: Options

    package init(
        store: any DeviceStore & SubscriptionStore & MomentStore, board: LiveBoard, feed: LiveFeed,
        seasons: SeasonLibrary, clock: any WallClock, options: Options = Options()
    ) {
        self.store = store
        self.board = board
        self.feed = feed
        delayed = DelayedFeeds(live: feed, clock: clock)
        self.seasons = seasons
        self.clock = clock
        self.options = options
    }

    /// Every operation, as the OpenAPI document lists them (the document is checked against the
    /// routes): what the 405 answers name.
    package static var operations: [(method: String, template: String)] { OpenAPIDocument.operations }

    package func router() -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        if !options.gate.limits.trustedProxies.isEmpty {
            router.add(middleware: ClientAddressMiddleware(proxies: options.gate.limits.trustedProxies))
        }
        router.add(
            middleware: HardeningMiddleware(
                operations: Self.operations, maxHeaderCount: options.gate.limits.maxHeaderCount))
        // Requests by endpoint, method and status, and their durations (through the process's
        // metrics system, which `nohit serve` bootstraps with the metrics' factory).
        router.add(middleware: MetricsMiddleware())
        if !options.webOrigins.isEmpty { router.add(middleware: WebOriginsMiddleware(origins: options.webOrigins)) }
        // Inside the web origins': a refusal carries their headers, so a page reads it.
        router.add(middleware: StorageFaultMiddleware(health: options.storage))
        if let publicFolder = options.publicFolder {
            router.add(middleware: FileMiddleware(publicFolder, searchForIndexHtml: true))
        }
        let options = options
        SiteRoutes(
            document: OpenAPIDocument.served(
                ruleIDs: options.deals.map { $0.rules.map(\.id) },
                apps: options.registrar.apps.mapValues(\.topic)),
            scrape: { [board, delayed] in
                try await options.metrics.scrape(
                    board: board, feeds: delayed, outboxStore: options.outbox, attemptOuts: options.attemptOuts,
                    gate: options.gate, stalls: options.stalls, pacing: options.pacing,
                    analytics: options.analytics?.queries, source: options.sourceStatus?(), storage: options.storage,
                    broadcasts: options.broadcastCounts?())
            },
            readiness: { [store] in
                await Readiness.check(
                    ping: { try await store.ping() },
                    source: options.sourceStatus?() ?? SourceStatus(kind: options.source, ready: true),
                    faults: options.deliveryFaults?.all ?? [], storage: options.storage.failing)
            },
            metricsAccess: options.metricsAccess, adminToken: options.adminToken,
            configuration: { [seasons, clock] in
                var configuration = ClientConfiguration(
                    vapidPublicKey: options.vapidPublicKey, seasons: seasons.available(),
                    attemptOuts: options.attemptOuts)
                configuration.source = options.source
                configuration.analytics = options.webAnalytics
                configuration.teams = TeamDirectory.clubs(on: API.day(clock.now())).map {
                    ClientConfiguration.Club(abbreviation: $0.abbreviation, code: $0.franchise, name: $0.name)
                }
                return configuration
            }
        ).add(to: router)
        if let analytics = options.analytics {
            analytics.add(to: router)
        } else {
            AnalyticsAPI.addAbsent(to: router)
        }
        let api = router.group("api")
        let widget = WidgetFeed(board: board, attemptOuts: options.attemptOuts)
        GameRoutes(
            board: board, feeds: delayed, store: store, seasons: seasons, widget: widget,
            views: BoardViewCache(board: board), standingsViews: BoardViewCache(board: board), clock: clock,
            attemptOuts: options.attemptOuts,
            keepFinished: options.keepFinished
        ).add(to: api)
        DeviceRoutes(
            store: store, registrar: options.registrar, registrations: options.registrations, widget: widget,
            dealRules: options.deals?.rules.map(\.id), clock: clock
        ).add(to: api)
        DealRoutes(deals: options.deals, clock: clock, board: board).add(to: api)
        ChannelRoutes(channel: options.broadcastChannel, board: board).add(to: api)
        streamRoutes.add(to: api)
        AdminRoutes(
            adminToken: options.adminToken, store: store, outbox: options.outbox, analytics: options.analytics,
            webProject: options.webAnalytics?.projectID, testPush: options.testPush, clock: clock
        ).add(to: api)
        return router
    }

    var streamRoutes: StreamRoutes {
        StreamRoutes(feeds: delayed, gate: options.gate, stalls: options.stalls, pacing: options.pacing)
    }

    /// HTTP/1.1 with the WebSocket upgrade for `/api/ws`, and HTTP/2 with prior knowledge on the
    /// same port, every connection through the gate: the connection limits, the header timeout
    /// and size limits, the idle timeout, and a 400 or 431 for a request the decoder cannot read.
    /// The connections run in `shards` when given (a service the application must run), else in
    /// the server's own task group.
    package func server(shards: ConnectionShards? = nil) -> HTTPServerBuilder {
        let webSocketResponder = streamRoutes.webSocketRouter().buildResponder()
        let gate = options.gate
        let limits = gate.limits
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                idleTimeout: limits.idleTimeout,
                httpDecoderConfiguration: .init(
                    maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes,
                    maxHeaderFieldCount: limits.maxHeaderCount)),
            ws: .init(maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(30))))
        // Many live streams on one HTTP/2 connection.
        let http2 = HTTP2ChannelConfiguration(
            idleTimeout: .nanoseconds(limits.idleTimeout.nanoseconds),
            streamConfiguration: .init(idleTimeout: limits.idleTimeout))
        return HTTPServerBuilder { responder in
            GuardedServerChannel(
                inner: HTTP1OrHTTP2Channel(
                    http1: HTTP1WebSocketUpgradeChannel(
                        responder: Self.inChildTask(responder), webSocketResponder: webSocketResponder,
                        configuration: configuration),
                    http2: HTTP2Channel(responder: responder, configuration: http2),
                    configureHTTP1: GuardedServerChannel<
                        HTTP1OrHTTP2Channel<HTTP1WebSocketUpgradeChannel>
                    >.parserErrorResponder(gate: gate),
                    configureHTTP2: GuardedServerChannel<
                        HTTP1OrHTTP2Channel<HTTP1WebSocketUpgradeChannel>
                    >.protocolErrorWatcher(gate: gate)),
                gate: gate, shards: shards)
        }
    }
}
