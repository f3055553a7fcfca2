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
import NIOCore
import NIOWebSocket
import Pipeline
import Retrosheet
import ServiceLifecycle
import Storage

/// The JSON API and the live stream, on Hummingbird. Errors are JSON
/// (`{"error":{"message":...}}`); request bodies and lists are bounded.
package struct APIServer: Sendable {
    package var store: any DeviceStore & SubscriptionStore & MomentStore
    package var board: LiveBoard
    package var feed: LiveFeed
    package var registrar: Registrar
    package var seasons: SeasonLibrary
    package var clock: any WallClock
    /// Outs a side must be hitless through to count as a current attempt (12: four innings).
    package var attemptOuts = 12
    /// The VAPID public key browsers subscribe with (base64url), when Web Push is configured.
    package var vapidPublicKey: String?
    /// The operator's token for `/api/admin/...`; without one those endpoints are closed.
    package var adminToken: String?
    /// The registry behind /metrics (the dispatchers feed it through its factory).
    package var metrics = ServerMetrics()
    /// The outbox, for its depth in /metrics and the operator's counts (absent in tests of the API
    /// alone).
    package var outbox: (any OutboxStore)?
    /// The web UI's files; nil serves the API alone.
    package var publicFolder: String? = Bundle.module.resourceURL?.appendingPathComponent("Public").path
    /// Who may connect and how much they may ask (connections, timeouts, head sizes, streams).
    package var gate = ConnectionGate(limits: ConnectionLimits())
    /// Registrations per client: 10 a minute, 20 at once, by default.
    package var registrations = RateLimiter(perMinute: 10, burst: 20)
    /// How long a finished game of the day before stays on the default scoreboard (its late games
    /// still under way stay until they end).
    package var keepFinished: TimeInterval = 3 * 3600
    /// Where live games come from (`replay` or `statsapi`), for the page's data notice.
    package var source = "replay"
    /// The deals: today's answers and histories (none: the deal endpoints answer 404).
    package var deals: DealDesk?
    /// Keen's API under `/3.0/projects/...` (the SQLite store's analytics).
    package var analytics: AnalyticsAPI?
    /// The web app's own analytics project and its write key (public: the page sends its views
    /// and taps with it), told to the page by `/api/config`.
    package var webAnalytics: ClientConfiguration.Analytics?

    package static let maximumBody = 16 * 1024
    package static let maximumList = 200

    package init(
        store: any DeviceStore & SubscriptionStore & MomentStore, board: LiveBoard, feed: LiveFeed,
        registrar: Registrar = Registrar(),
        seasons: SeasonLibrary, clock: any WallClock
    ) {
        self.store = store
        self.board = board
        self.feed = feed
        self.registrar = registrar
        self.seasons = seasons
        self.clock = clock
    }

    /// Every operation, as the OpenAPI document lists them (the document is checked against the
    /// routes): what the 405 answers name.
    package static var operations: [(method: String, template: String)] { OpenAPIDocument.operations }

    package func router() -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: HardeningMiddleware(operations: Self.operations))
        // Requests by endpoint, method and status, and their durations (through the process's
        // metrics system, which `nohit serve` bootstraps with ``metrics``' factory).
        router.add(middleware: MetricsMiddleware())
        if let publicFolder {
            router.add(middleware: FileMiddleware(publicFolder, searchForIndexHtml: true))
        }
        router.get("healthz") { _, _ in try Self.json(["status": "ok"]) }
        let document = deals.map { OpenAPIDocument.served(ruleIDs: $0.rules.map(\.id)) } ?? OpenAPIDocument.served
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
        router.get("metrics") { _, _ in try await scrapeMetrics() }
        if let analytics {
            analytics.add(to: router)
        } else {
            // Keen's clients pointed at a server without analytics (a store that keeps none) are told why.
            let none: JSONValue = [
                "message": "this server keeps no analytics: its store does not keep them",
                "error_code": "ResourceNotFoundError",
            ]
            for method in [HTTPRequest.Method.get, .post, .delete, .options] {
                router.on("3.0/**", method: method) { _, _ in AnalyticsAPI.response(.notFound, body: none) }
            }
        }

        let api = router.group("api")
        api.get("config") { _, _ in
            var configuration = ClientConfiguration(
                vapidPublicKey: vapidPublicKey, seasons: seasons.available(), attemptOuts: attemptOuts)
            configuration.source = source
            configuration.analytics = webAnalytics
            configuration.teams = TeamDirectory.clubs(on: Self.day(clock.now())).map {
                ClientConfiguration.Club(abbreviation: $0.abbreviation, code: $0.franchise, name: $0.name)
            }
            return try Self.json(configuration)
        }
        api.get("games") { _, _ in
            // The stream's position is read before the games: a client that opens the stream with
            // `?after=` it misses nothing that happened after this answer (what it gets twice is
            // the same state again).
            let position = feed.lastID
            var response = try Self.json(board.all)
            response.headers[HTTPField.Name("X-Stream-Position")!] = "\(position)"
            return response
        }
        api.get("scoreboard") { request, _ in
            let date = request.uri.queryParameters.get("date")
            if let date, date.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) == nil {
                throw Self.error(.badRequest, "date '\(date)' is not yyyy-mm-dd")
            }
            let games = board.all
            let day = date ?? games.map(\.date).max() ?? ""
            return try Self.json(
                Scoreboard(
                    date: day,
                    games: Self.board(games, day: day, asked: date != nil, now: clock.now(), keepFinished: keepFinished)
                ))
        }
        api.get("games/:id") { _, context in
            let id = try context.parameters.require("id")
            guard let detail = board.detail(id: id) else { throw Self.error(.notFound, "no game \(id) today") }
            let moments = try await store.moments(gameID: id, scoreAlerts: false)
            return try Self.json(
                GameTimeline(
                    game: detail.game, pitchers: detail.pitchers, plays: detail.plays,
                    moments: moments.map(MomentView.init)))
        }
        let widget = WidgetFeed(board: board, attemptOuts: attemptOuts)
        api.get("widget") { request, _ in
            let teams: [String]
            do {
                teams = try WidgetFeed.teams(request.uri.queryParameters.get("teams"))
            } catch {
                throw Self.error(.badRequest, "\(error)")
            }
            return Self.widget(widget.response(teams: teams), request: request)
        }
        api.get("devices/:id/widget") { request, context in
            let device = try await authorized(request, context: context)
            // The device's favourite teams (every game when it has none).
            let teams = device.preferences.favouriteTeams.compactMap {
                TeamDirectory.current($0.uppercased())?.franchise
            }
            return Self.widget(widget.response(teams: Array(Set(teams)).sorted(), isPrivate: true), request: request)
        }
        api.get("attempts") { _, _ in
            let attempts = board.all.flatMap { game in
                game.attempts(minimumOuts: attemptOuts).map { Attempt(game: game, bid: $0) }
            }
            return try Self.json(attempts)
        }
        api.get("moments") { request, _ in
            let limit = try Self.limit(request, default: 50)
            return try Self.json(try await store.recentMoments(limit: limit).map(MomentView.init))
        }
        api.get("hall-of-fame/:season") { request, context in
            let season = try context.parameters.require("season")
            let limit = try Self.limit(request, default: 25)
            guard let sides = try await seasons.hallOfFame(season: season) else {
                throw Self.error(.notFound, "no Retrosheet data for season \(season)")
            }
            return try Self.json(
                sides.prefix(limit).enumerated().map { HallOfFameEntry(rank: $0.offset + 1, side: $0.element) })
        }
        api.get("deals/today") { _, _ in
            guard let deals else { throw Self.error(.notFound, "this server has no deals") }
            return try Self.json(DealsToday(try await deals.today(at: clock.now())))
        }
        api.get("deals/history") { request, _ in
            guard let deals else { throw Self.error(.notFound, "this server has no deals") }
            let season = try Self.season(request, now: clock.now())
            return try Self.json(
                DealsHistory(try await deals.history(season: season, rule: nil, at: clock.now()), sponsor: nil))
        }
        api.get("deals/:rule/history") { request, context in
            guard let deals else { throw Self.error(.notFound, "this server has no deals") }
            let rule = try context.parameters.require("rule")
            guard let known = deals.rules.first(where: { $0.id == rule }) else {
                throw Self.error(.notFound, "no deal rule '\(rule)' (GET /api/deals/today lists them)")
            }
            let season = try Self.season(request, now: clock.now())
            return try Self.json(
                DealsHistory(
                    try await deals.history(season: season, rule: rule, at: clock.now()), sponsor: known.sponsor))
        }
        api.post("devices") { request, context in
            let client = ConnectionGate.clientKey(context.remoteAddress)
            if let wait = registrations.take(client, now: Date()) {
                throw HTTPError(
                    .tooManyRequests, headers: [.retryAfter: "\(Int(wait.rounded(.up)))"],
                    message: "too many registrations from this client; try again in \(Int(wait.rounded(.up))) s")
            }
            let body = try await Self.json(request, context: context, keys: .deviceRegistration)
            let registration: DeviceRegistrationBody
            do {
                registration = try Self.decoder.decode(DeviceRegistrationBody.self, from: body)
            } catch {
                throw Self.error(.badRequest, "the body is not a device registration: \(Self.describe(error))")
            }
            let done: Registration
            do {
                done = try registrar.register(try registration.request(), at: clock.now())
            } catch let error as RegistrationError where error.refusedByPolicy {
                throw Self.error(.forbidden, "\(error)")
            } catch {
                throw Self.error(.badRequest, "\(error)")
            }
            try await store.register(done.device)
            return try Self.json(["id": done.device.id.uuidString, "secret": done.secret], status: .created)
        }
        api.get("devices/:id/preferences") { request, context in
            let device = try await authorized(request, context: context)
            return try Self.json(PreferencesBody(device.preferences))
        }
        api.put("devices/:id/preferences") { request, context in
            let device = try await authorized(request, context: context)
            let body = try await Self.json(request, context: context, keys: .preferences)
            let changes: PreferencesBody
            do {
                changes = try Self.decoder.decode(PreferencesBody.self, from: body)
            } catch {
                throw Self.error(.badRequest, "the body is not valid preferences: \(Self.describe(error))")
            }
            let preferences: Preferences
            do {
                preferences = try changes.applied(to: device.preferences)
            } catch {
                throw Self.error(.badRequest, "invalid preferences: \(error)")
            }
            if let deals, let unknown = preferences.deals.first(where: { id in !deals.rules.contains { $0.id == id } })
            {
                throw Self.error(
                    .badRequest,
                    "invalid preferences: deals: '\(unknown)' is not a deal of this server (GET /api/deals/today lists them)"
                )
            }
            guard try await store.updatePreferences(deviceID: device.id, to: preferences) else {
                throw Self.error(.notFound, "no device \(device.id)")
            }
            return try Self.json(PreferencesBody(preferences))
        }
        api.get("stream") { request, _ in try stream(request) }
        // Reached only without the upgrade headers (the WebSocket router takes the upgrades).
        // Plain requests, and handshakes the WebSocket router declined (a malformed `after`, no
        // room): answered here, in JSON.
        api.get("ws") { request, _ -> Response in
            _ = try Self.eventID(request.uri.queryParameters.get("after"), name: "after")
            try checkStreamRoom()
            // RFC 6455 4.2.1: a request that is not a handshake gets 400.
            throw Self.error(
                .badRequest,
                "/api/ws is a WebSocket: connect with a WebSocket client (Upgrade: websocket, Sec-WebSocket-Version: 13)"
            )
        }

        // Operator endpoints: `Authorization: Bearer <admin token>`.
        api.get("admin/outbox") { request, _ in
            try admin(request)
            guard let outbox else { throw Self.error(.notFound, "this server has no outbox") }
            let counts = try await outbox.outboxCounts()
            return try Self.json([
                "pending": counts.pending, "sending": counts.sending, "delivered": counts.delivered,
                "failed": counts.failed, "superseded": counts.superseded,
            ])
        }
        api.get("admin/devices") { request, _ in
            try admin(request)
            let active = try await store.activeDevices()
            var byChannel: [String: Int] = [:]
            for device in active { byChannel[device.channel.kind.rawValue, default: 0] += 1 }
            return try Self.json(
                AdminDeviceCounts(
                    total: try await store.deviceCount(), active: active.count, activeByChannel: byChannel))
        }
        api.get("admin/metrics") { request, _ in
            try admin(request)
            guard let analytics else { throw Self.error(.notFound, "this server keeps no analytics") }
            let parameters = request.uri.queryParameters
            guard let project = parameters.get("project") ?? webAnalytics?.projectID else {
                throw Self.error(.badRequest, "project: which analytics project (nohit analytics project list)")
            }
            let days =
                try parameters.get("days").map { text in
                    guard let days = Int(text) else { throw Self.error(.badRequest, "days: '\(text)' is not a number") }
                    return days
                } ?? 14
            do {
                let usage = try await analytics.usage(
                    project: project, days: days, timezone: parameters.get("timezone") ?? "UTC")
                return AnalyticsAPI.response(.ok, body: usage)
            } catch let error as KeenError {
                throw Self.error(error.status == 404 ? .notFound : .badRequest, error.message)
            }
        }
        api.post("admin/devices/:id/disable") { request, context in
            try admin(request)
            let text = try context.parameters.require("id")
            guard let id = UUID(uuidString: text) else { throw Self.error(.badRequest, "'\(text)' is not a device id") }
            guard try await store.disable(id: id, reason: "disabled by the operator", at: clock.now()) else {
                throw Self.error(.notFound, "no device \(id)")
            }
            return try Self.json(["id": id.uuidString, "status": "disabled"])
        }
        return router
    }

    // MARK: The live stream

    /// Server-Sent Events: `game` and `moment` events with ids; `Last-Event-ID` (or `?after=`)
    /// resumes after that event. Heartbeats become comment lines, which keep proxies from closing
    /// the stream and end it once the client has gone. Graceful shutdown ends every stream.
    func stream(_ request: Request) throws -> Response {
        // Both are read (and a malformed one refused) even when both are given: the header wins.
        let header = try Self.eventID(request.headers[HTTPField.Name("Last-Event-ID")!], name: "Last-Event-ID")
        let query = try Self.eventID(request.uri.queryParameters.get("after"), name: "after")
        let after = header ?? query
        try checkStreamRoom()
        let events = feed.subscribe(after: after)
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                // However the response ends (the client gone, shutdown), the feed forgets it.
                defer { events.cancel() }
                try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                try await withGracefulShutdownHandler {
                    // Everything waiting in one write: a client that keeps up gets each event as
                    // it comes, one that fell behind the latest of every game, moments first.
                    while let batch = await events.nextBatch() {
                        try await writer.write(batch.sse)
                    }
                } onGracefulShutdown: { [feed] in
                    feed.finishAll()
                }
                try await writer.finish(nil)
            })
    }

    /// The WebSocket side of the live stream, `GET /api/ws` upgraded: each event is one text
    /// message, `{"id":N,"event":"game"|"moment","data":{...}}`. `?after=N` resumes after event N
    /// (browsers cannot set headers on a WebSocket). What the client sends is ignored; the server
    /// pings every 30 s. A client that falls too far behind is closed with 1013 (try again later)
    /// and resumes with `?after=`; graceful shutdown closes every socket normally (1000).
    package func webSocketRouter() -> Router<BasicWebSocketRequestContext> {
        let router = Router(context: BasicWebSocketRequestContext.self)
        // Every handshake is taken, and a request the stream cannot serve is then closed with a
        // code and a reason: a browser never sees the body of a refused handshake (and the
        // WebSocket library answers one with an empty 400), but it does see a close frame.
        router.ws("api/ws") { _, _ in
            .upgrade([:])
        } onUpgrade: { [feed, gate] inbound, outbound, context in
            let after: Int?
            do {
                after = try Self.eventID(context.request.uri.queryParameters.get("after"), name: "after")
            } catch {
                let given = context.request.uri.queryParameters.get("after") ?? ""
                try await outbound.close(
                    .init(codeNumber: 1008), reason: "after must be an event id, not '\(given.prefix(40))'")
                return
            }
            guard feed.clientCount < gate.limits.maxStreams else {
                try await outbound.close(.init(codeNumber: 1013), reason: "the live stream is full: try again later")
                return
            }
            let events = feed.subscribe(after: after)
            defer { events.cancel() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Reading keeps pings answered and ends when the client closes, or when the
                // server stops (the WebSocket library then closes every socket, 1000).
                group.addTask { for try await _ in inbound {} }
                group.addTask {
                    // In id order (a message carries its id, and the client resumes after the last
                    // one it got); what waited is coalesced all the same.
                    while let batch = await events.nextBatch() {
                        for event in batch.events.sorted(by: { $0.id < $1.id }) where event.kind != .heartbeat {
                            try await outbound.write(
                                .custom(WebSocketFrame(fin: true, opcode: .text, data: event.message)))
                        }
                    }
                    // The feed let the client go: it fell too far behind.
                    if !Task.isCancelled {
                        try await outbound.close(
                            .init(codeNumber: 1013), reason: "too far behind: reconnect with ?after=<last id>")
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        return router
    }

    /// A new live-stream client, unless the server has as many as it takes (503).
    func checkStreamRoom() throws {
        guard feed.clientCount < gate.limits.maxStreams else {
            throw HTTPError(
                .serviceUnavailable, headers: [.retryAfter: "10"],
                message: "the live stream has \(gate.limits.maxStreams) clients; try again later")
        }
    }

    /// HTTP/1.1 with the WebSocket upgrade for `/api/ws`, every connection through the gate: the
    /// connection limits, the header timeout and size limits, the idle timeout, and a 400 or 431
    /// for a request the decoder cannot read.
    package func server() -> HTTPServerBuilder {
        let webSocketResponder = webSocketRouter().buildResponder()
        let limits = gate.limits
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                idleTimeout: limits.idleTimeout,
                httpDecoderConfiguration: .init(
                    maxHeaderFieldSize: limits.maxHeaderBytes, maxHeaderListSize: limits.maxHeaderBytes,
                    maxHeaderFieldCount: limits.maxHeaderCount)),
            ws: .init(maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(30))))
        let gate = gate
        // HTTP/2 with prior knowledge on the same port: many live streams on one connection.
        let http2 = HTTP2ChannelConfiguration(
            idleTimeout: .nanoseconds(limits.idleTimeout.nanoseconds),
            streamConfiguration: .init(idleTimeout: limits.idleTimeout))
        return HTTPServerBuilder { responder in
            GuardedServerChannel(
                inner: HTTP1OrHTTP2Channel(
                    http1: HTTP1WebSocketUpgradeChannel(
                        responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
                    http2: HTTP2Channel(responder: responder, configuration: http2),
                    configureHTTP1: GuardedServerChannel<
                        HTTP1OrHTTP2Channel<HTTP1WebSocketUpgradeChannel>
                    >.parserErrorResponder(gate: gate)),
                gate: gate)
        }
    }

    // MARK: Metrics

    func scrapeMetrics() async throws -> Response {
        let text = try await metrics.scrape(
            board: board, feed: feed, outboxStore: outbox, attemptOuts: attemptOuts, gate: gate,
            analytics: analytics?.queries)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: text)))
    }

    // MARK: Helpers

    /// Lets the request through when it carries the operator's token.
    func admin(_ request: Request) throws {
        guard let adminToken, !adminToken.isEmpty else {
            throw Self.error(.forbidden, "operator endpoints are off: the server was started without an admin token")
        }
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
            throw Self.error(.unauthorized, "the admin token is required (Authorization: Bearer <token>)")
        }
        // Their SHA-256 digests compared in constant time: neither the token's length nor where
        // a guess first differs shows in the time taken.
        guard Registrar.constantTimeEqual(String(authorization.dropFirst(7)), adminToken) else {
            throw Self.error(.unauthorized, "wrong admin token")
        }
    }

    /// The device named in the path, when the request carries its secret (`Authorization: Bearer`).
    func authorized(_ request: Request, context: APIRequestContext) async throws -> Device {
        let text = try context.parameters.require("id")
        guard let id = UUID(uuidString: text) else { throw Self.error(.badRequest, "'\(text)' is not a device id") }
        guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
            throw Self.error(.unauthorized, "the device's secret is required (Authorization: Bearer <secret>)")
        }
        // One answer for an unknown device and a wrong secret: which device ids exist is not
        // told to someone without their secrets.
        let device = try await store.device(id: id)
        // The same work whether the device exists or not.
        let matches = Registrar.constantTimeEqual(
            Registrar.hash(secret: String(authorization.dropFirst(7))), device?.secretHash ?? "")
        guard let device, matches else {
            throw Self.error(.unauthorized, "no device \(id) with this secret")
        }
        return device
    }

    /// A JSON body: `application/json` in UTF-8 (415 otherwise), at most `maximumBody` bytes (413),
    /// read strictly (`StrictJSON`: no key twice, none unknown; 400 naming the key).
    static func json(_ request: Request, context: some RequestContext, keys: StrictJSON.Keys) async throws -> Data {
        let type = request.headers[.contentType]?.lowercased().replacingOccurrences(of: " ", with: "") ?? ""
        guard type == "application/json" || type == "application/json;charset=utf-8" else {
            throw Self.error(
                .unsupportedMediaType,
                "the body must be application/json in UTF-8, not \(type.isEmpty ? "untyped" : "'\(type)'")")
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maximumBody)
        } catch is NIOTooManyBytesError {
            throw Self.error(.contentTooLarge, "the body is larger than \(maximumBody) bytes")
        }
        let bytes = Array(buffer.readableBytesView)
        do {
            try StrictJSON.check(bytes, keys: keys)
        } catch {
            throw Self.error(.badRequest, "the body is not accepted: \(error)")
        }
        return Data(bytes)
    }

    /// An event id given to resume after (`Last-Event-ID`, `?after=`): a whole number, 0 or more.
    static func eventID(_ text: String?, name: String) throws -> Int? {
        guard let text else { return nil }
        guard let id = Int(text), id >= 0, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw error(.badRequest, "\(name) must be an event id (a whole number), not '\(text)'")
        }
        return id
    }

    static func limit(_ request: Request, default value: Int) throws -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return value }
        guard let limit = Int(text), (1...maximumList).contains(limit) else {
            throw error(.badRequest, "limit must be 1 to \(maximumList), not '\(text)'")
        }
        return limit
    }

    /// `?season=YYYY` (1871-2100), else the clock's year.
    static func season(_ request: Request, now: Date) throws -> Int {
        guard let text = request.uri.queryParameters.get("season") else {
            return Calendar(identifier: .gregorian).component(.year, from: now)
        }
        guard text.wholeMatch(of: /[0-9]{4}/) != nil, let season = Int(text), (1871...2100).contains(season) else {
            throw Self.error(.badRequest, "season '\(text)' is not a year 1871-2100")
        }
        return season
    }

    /// `yyyy-mm-dd` of `date` in UTC.
    static func day(_ date: Date) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> HTTPError {
        HTTPError(status, message: message)
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty
            ? "the document" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    /// The games of a scoreboard: the day's; on the default board (no date asked), also the day
    /// before's games still under way, and those finished less than `keepFinished` ago (the late
    /// games of last night), first.
    static func board(
        _ games: [GameSnapshot], day: String, asked: Bool, now: Date, keepFinished: TimeInterval
    ) -> [GameSnapshot] {
        let today = games.filter { $0.date == day }
        guard !asked, let previous = games.map(\.date).filter({ $0 < day }).max() else { return today }
        let late = games.filter {
            $0.date == previous
                && ($0.status == .live || ($0.status == .final && now.timeIntervalSince($0.updatedAt) < keepFinished))
        }
        return late + today
    }

    /// A widget feed's answer: 304 without a body when `If-None-Match` names its `ETag`.
    static func widget(_ feed: WidgetFeed.Response, request: Request) -> Response {
        var headers = HTTPFields()
        headers[.eTag] = feed.etag
        headers[.cacheControl] = feed.cacheControl
        if WidgetFeed.matches(request.headers[.ifNoneMatch], etag: feed.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: feed.body))
    }

    package static func json<Value: Encodable>(_ value: Value, status: HTTPResponse.Status = .ok) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: try encoder.encode(value))))
    }
}
