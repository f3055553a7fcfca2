import Alerts
import Analytics
import Baseball
import Clocks
import Delivery
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdWebSocket
import Logging
import NIOCore
import Pipeline
import Retrosheet
import Scores
import Storage

/// The JSON API, the web app and the live stream, on Hummingbird: route collections by concern
/// (``SiteRoutes``, ``GameRoutes``, ``DeviceRoutes``, ``DealRoutes``, ``StreamRoutes``,
/// ``AdminRoutes``, Keen's ``AnalyticsAPI``), each given what it needs when it is made, behind one
/// guarded channel. Errors are JSON (`{"error":{"message":...}}`); bodies and lists are bounded.
package struct APIServer: Sendable {
    /// What a server may have beyond its store, board, feed, seasons and clock (each has a default
    /// for tests of the API alone).
    package struct Options: Sendable {
        package var registrar = Registrar()
        /// Origins of the declared apps' web pages served elsewhere: they may call the device
        /// endpoints and `/api/config` across origins (CORS); no other origin may.
        package var webOrigins: Set<String> = []
        /// How often bids finished in the seasons known (`Data/odds/bid-odds.json`): the attempt
        /// cards' odds.
        package var odds: BidOdds?
        /// Outs a side must be hitless through to count as a current attempt (12: four innings).
        package var attemptOuts = 12
        /// The VAPID public key browsers subscribe with (base64url), when Web Push is configured.
        package var vapidPublicKey: String?
        /// The operator's token for `/api/admin/...`; without one those endpoints are closed.
        package var adminToken: String?
        /// The registry behind /metrics (the dispatchers feed it through its factory).
        package var metrics = ServerMetrics()
        /// Who may read /metrics: loopback only by default.
        package var metricsAccess = MetricsAccess.loopback
        /// The outbox, for its depth in /metrics and the operator's counts.
        package var outbox: (any OutboxStore)?
        /// The web UI's files; nil serves the API alone.
        package var publicFolder: String? = Bundle.module.resourceURL?.appendingPathComponent("Public").path
        /// Who may connect and how much they may ask (connections, timeouts, head sizes, streams).
        package var gate = ConnectionGate(limits: ConnectionLimits())
        /// Live-stream clients whose writes stopped going out, closed after its timeout (swept by
        /// ``StreamStallSweep``).
        package var stalls = StreamStallWatch()
        /// Keeps each live-stream client to a few batches queued on its connection's event loop.
        package var pacing = StreamPacing()
        /// Registrations per client: 10 a minute, 20 at once, by default.
        package var registrations = RateLimiter(perMinute: 10, burst: 20)
        /// How long a finished game of the day before stays on the default scoreboard (its late
        /// games still under way stay until they end).
        package var keepFinished: TimeInterval = 3 * 3600
        /// Where live games come from (`replay` or `statsapi`), for the page's data notice.
        package var source = "replay"
        /// How the source is doing, for `/readyz` and the metrics (nil: a replay, always current).
        package var sourceStatus: (@Sendable () -> SourceStatus)?
        /// The deals: today's answers and histories (none: the deal endpoints answer 404).
        package var deals: DealDesk?
        /// Keen's API under `/3.0/projects/...` (the store's analytics).
        package var analytics: AnalyticsAPI?
        /// The web app's own analytics project and its write key (public: the page sends its
        /// views and taps with it), told to the page by `/api/config`.
        package var webAnalytics: ClientConfiguration.Analytics?

        package init() {}
    }

    package let store: any DeviceStore & SubscriptionStore & MomentStore
    package let board: LiveBoard
    package let feed: LiveFeed
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
        self.seasons = seasons
        self.clock = clock
        self.options = options
    }

    /// Every operation, as the OpenAPI document lists them (the document is checked against the
    /// routes): what the 405 answers name.
    package static var operations: [(method: String, template: String)] { OpenAPIDocument.operations }

    package func router() -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(
            middleware: HardeningMiddleware(
                operations: Self.operations, maxHeaderCount: options.gate.limits.maxHeaderCount))
        // Requests by endpoint, method and status, and their durations (through the process's
        // metrics system, which `nohit serve` bootstraps with the metrics' factory).
        router.add(middleware: MetricsMiddleware())
        if !options.webOrigins.isEmpty { router.add(middleware: WebOriginsMiddleware(origins: options.webOrigins)) }
        if let publicFolder = options.publicFolder {
            router.add(middleware: FileMiddleware(publicFolder, searchForIndexHtml: true))
        }
        let options = options
        SiteRoutes(
            document: OpenAPIDocument.served(
                ruleIDs: options.deals.map { $0.rules.map(\.id) },
                apps: options.registrar.apps.mapValues(\.topic)),
            scrape: { [board, feed] in
                try await options.metrics.scrape(
                    board: board, feed: feed, outboxStore: options.outbox, attemptOuts: options.attemptOuts,
                    gate: options.gate, stalls: options.stalls, pacing: options.pacing,
                    analytics: options.analytics?.queries, source: options.sourceStatus?())
            },
            readiness: { [store] in
                await Readiness.check(
                    ping: { try await store.ping() },
                    source: options.sourceStatus?() ?? SourceStatus(kind: options.source, ready: true))
            },
            metricsAccess: options.metricsAccess, adminToken: options.adminToken,
            configuration: { [seasons, clock] in
                var configuration = ClientConfiguration(
                    vapidPublicKey: options.vapidPublicKey, seasons: seasons.available(),
                    attemptOuts: options.attemptOuts)
                configuration.source = options.source
                configuration.analytics = options.webAnalytics
                configuration.odds = options.odds.map { odds in
                    Dictionary(
                        uniqueKeysWithValues: BidOdds.outs.compactMap { outs in
                            odds.sentence(outs: outs).map { ("\(outs)", $0) }
                        })
                }
                configuration.pitchOdds = options.odds?.pitches.map { table in
                    table.rows.compactMap { row in
                        options.odds?.pitchChance(outs: row.outs, pitches: row.from).map {
                            ClientConfiguration.PitchOdds(
                                outs: row.outs, from: row.from, to: row.to, sentence: $0.sentence)
                        }
                    }
                }
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
            board: board, feed: feed, store: store, seasons: seasons, widget: widget,
            views: BoardViewCache(board: board), clock: clock, attemptOuts: options.attemptOuts,
            keepFinished: options.keepFinished
        ).add(to: api)
        DeviceRoutes(
            store: store, registrar: options.registrar, registrations: options.registrations, widget: widget,
            dealRules: options.deals?.rules.map(\.id), clock: clock
        ).add(to: api)
        DealRoutes(deals: options.deals, clock: clock).add(to: api)
        streamRoutes.add(to: api)
        AdminRoutes(
            adminToken: options.adminToken, store: store, outbox: options.outbox, analytics: options.analytics,
            webProject: options.webAnalytics?.projectID, clock: clock
        ).add(to: api)
        return router
    }

    var streamRoutes: StreamRoutes {
        StreamRoutes(feed: feed, gate: options.gate, stalls: options.stalls, pacing: options.pacing)
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

extension APIServer {
    /// `responder`, answering each request in a child task of the connection's task. A task keeps
    /// the memory its deepest frames took until it ends (the runtime's task allocator keeps its
    /// slabs for reuse), and a request's frames (the middlewares, the router, the handler) are
    /// the deepest an HTTP/1.1 connection's task reaches: kept by every idle keep-alive
    /// connection, about 11 KB each, where a child task's are freed when the answer is written.
    /// (HTTP/2 answers each stream in a task of its own already.) The child starts at once on this
    /// thread, not through the executor's queue (where, on a busy machine, each hop waits).
    static func inChildTask(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        { request, writer, channel in
            let handedOver = HandedOver(writer)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addImmediateTask { try await responder(request, handedOver.take(), channel) }
                try await group.waitForAll()
            }
        }
    }

    /// A response writer handed to the child task that answers (taken once, there).
    private final class HandedOver: @unchecked Sendable {
        private var writer: ResponseWriter?

        init(_ writer: consuming ResponseWriter) { self.writer = .some(writer) }

        func take() -> ResponseWriter {
            guard let writer = writer.take() else { preconditionFailure("a response writer is taken once") }
            return writer
        }
    }
}

/// The service's HTTP application, as `nohit serve` runs it and the tests and benchmarks drive it:
/// `api`'s routes behind its guarded channel, on `configuration`'s address (the Hummingbird
/// template's `buildApplication`). Its connections run in `ConnectionShards`, a service of the
/// application's own that stops after the server.
package func buildApplication(
    _ api: APIServer, configuration: ApplicationConfiguration = ApplicationConfiguration(),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }, logger: Logger? = nil
) -> some ApplicationProtocol {
    let shards = ConnectionShards()
    return Application(
        responder: OwnTaskResponder(base: api.router().buildResponder()), server: api.server(shards: shards),
        configuration: configuration, services: [shards], onServerRunning: onServerRunning, logger: logger)
}

/// `base`, each request routed and handled (the middlewares, the router, the handler) in a task
/// of its own that ends with the response's head: the memory its frames took is freed before the
/// body is written, and a live stream's body, written for hours, is written from a shallow task
/// (5,000 never-reading streams: +168 MB, were +196 MB). Started at once on this thread.
struct OwnTaskResponder<Base: HTTPResponder>: HTTPResponder where Base.Context: Sendable {
    typealias Context = Base.Context

    let base: Base

    func respond(to request: Request, context: Context) async throws -> Response {
        try await withThrowingTaskGroup(of: Response.self) { group in
            group.addImmediateTask { try await base.respond(to: request, context: context) }
            guard let response = try await group.next() else { preconditionFailure("the one task answers") }
            return response
        }
    }
}
