import Analytics
import Clocks
import Foundation
import HTTPTypes
import Hummingbird
import JSON
import Logging
import NIOCore
import Storage

/// Keen's API under `/3.0/projects/{project_id}`, on the same server: events in (one, a batch,
/// an image beacon, `sendBeacon`'s text bodies), queries out, schema, deletes and access keys —
/// so that Keen's own unchanged clients work against it (`docs/analytics.md`). Errors are Keen's:
/// `{"message", "error_code"}`.
package struct AnalyticsAPI: Sendable {
    package var store: any AnalyticsStore
    package var clock: any WallClock
    /// The queries in progress, their turns and budgets (a service: it stops them at shutdown).
    package let queries: AnalyticsQueries
    package var limits: AnalyticsLimits { queries.limits }
    let eventsPerKey: RateLimiter
    let eventsPerClient: RateLimiter
    let queriesPerKey: RateLimiter
    let queriesPerClient: RateLimiter
    let bodies: ByteAllowance
    let properties: PropertyRoom
    /// Ad-hoc results kept for queries that name a `max_age`.
    let resultCache = QueryResultCache()
    package var logger = Logger(label: "nohit.analytics")
    /// Where a write refused for a fault of the machine (a full disk) is noted (`/readyz`).
    let storage: StorageHealth
    /// The folder an extraction with `email` is written to (no mail server here); none refuses them.
    package var extractions: String?
    /// Whether an extraction is being written (one at a time).
    let extracting = ExtractionTurn()

    package init(
        store: any AnalyticsStore, clock: any WallClock, queries: AnalyticsQueries = AnalyticsQueries(),
        storage: StorageHealth = StorageHealth(), extractions: String? = nil
    ) {
        self.store = store
        self.extractions = extractions
        self.clock = clock
        self.queries = queries
        self.storage = storage
        let limits = queries.limits
        func limiter(_ perMinute: Int) -> RateLimiter {
            RateLimiter(perMinute: perMinute, burst: max(1, perMinute / 6))
        }
        eventsPerKey = limiter(limits.eventsPerMinutePerKey)
        eventsPerClient = limiter(limits.eventsPerMinutePerClient)
        queriesPerKey = RateLimiter(perMinute: limits.queriesPerMinutePerKey, burst: limits.queriesPerMinutePerKey)
        queriesPerClient = RateLimiter(
            perMinute: limits.queriesPerMinutePerClient, burst: limits.queriesPerMinutePerClient)
        properties = PropertyRoom(
            perCollection: limits.propertiesPerCollection, perProject: limits.collectionsPerProject)
        // A client's share: a quarter of all, and room for the largest batch alone.
        bodies = ByteAllowance(
            limits.bodyBytesInFlight, perClient: max(limits.bodyBytesInFlight / 4, limits.maximumBatchBytes))
    }

    static let cors: [(HTTPField.Name, String)] = [
        (.accessControlAllowOrigin, "*"),
        (.accessControlAllowHeaders, "Authorization, Content-Type, Keen-Sdk"),
        (.accessControlAllowMethods, "GET, POST, PUT, DELETE, OPTIONS"),
        (.accessControlMaxAge, "86400"),
    ]

    /// The 1×1 transparent GIF an image beacon gets.
    static let gif: [UInt8] = [
        0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF,
        0xFF, 0x21, 0xF9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
        0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B,
    ]

    package func add(to router: Router<APIRequestContext>) {
        let project = router.group("3.0/projects/:project")
        for path in [
            "events", "events/:collection", "queries/:analysis", "queries/saved", "queries/saved/:name",
            "queries/saved/:name/result", "datasets", "datasets/:name", "datasets/:name/results",
            "keys", "keys/:key", "keys/:key/:action",
        ] {
            project.on(RouterPath(path), method: .options) { _, _ in
                Self.response(.noContent, body: nil)
            }
        }
        project.post("events") { request, context in
            await handle {
                let (id, key) = try await authorize(request, context, .writes)
                let client = try checkWriteRoom(key, request, context)
                return try await withBody(request, context, upTo: limits.maximumBatchBytes) { body in
                    try await batch(body, project: id, key: key, client: client)
                }
            }
        }
        project.post("events/:collection") { request, context in
            await handle {
                let (id, key) = try await authorize(request, context, .writes)
                let client = try checkWriteRoom(key, request, context)
                let collection = try context.parameters.require("collection")
                // Room for the largest event and its JSON's spacing.
                return try await withBody(request, context, upTo: KeenEventRules.maximumEventBytes + 64 * 1024) {
                    body in
                    let event: JSONValue
                    do {
                        event = try JSONValue.parse(body)
                    } catch {
                        throw KeenError.invalidEvent("the body is not JSON: \(error)")
                    }
                    try takeWrites(1, key: key, client: client)
                    try await single(event, size: body.count, collection: collection, project: id, key: key)
                    return Self.response(.created, body: ["created": true])
                }
            }
        }
        project.get("events/:collection") { request, context in
            await handle {
                let collection = try context.parameters.require("collection")
                let query = Self.query(request)
                // An image beacon: the event in `data`, base64 of its JSON.
                if let data = query.first(where: { $0.name == "data" })?.value {
                    let (id, key) = try await authorize(request, context, .writes)
                    let client = try checkWriteRoom(key, request, context)
                    try takeWrites(1, key: key, client: client)
                    // A `+` sent unescaped reads as a space.
                    let base64 = data.replacingOccurrences(of: " ", with: "+")
                    guard let decoded = Data(base64Encoded: base64) ?? Data(base64Encoded: Self.padded(base64)),
                        let event = try? JSONValue.parse(decoded)
                    else {
                        throw KeenError.invalidEvent("data must be the event's JSON in base64")
                    }
                    try await single(event, size: decoded.count, collection: collection, project: id, key: key)
                    var response = Response(
                        status: .ok, headers: [.contentType: "image/gif", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: Self.gif)))
                    for (name, value) in Self.cors { response.headers[name] = value }
                    return response
                }
                let (id, _) = try await authorize(request, context, .schema)
                guard let schema = try await store.schema(project: id).first(where: { $0.name == collection }) else {
                    throw KeenError.notFound("no event collection '\(collection)' in project \(id)")
                }
                return Self.response(.ok, body: ["properties": Self.properties(schema)])
            }
        }
        project.get("events") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .schema)
                let schema = try await store.schema(project: id)
                return Self.response(
                    .ok,
                    body: .array(
                        schema.map {
                            [
                                "name": .string($0.name), "properties": Self.properties($0),
                                "url": .string("/3.0/projects/\(id)/events/\($0.name)"),
                            ]
                        }))
            }
        }
        project.delete("events/:collection") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let collection = try context.parameters.require("collection")
                let parameters = try KeenQuery.parameters(fromQuery: Self.query(request))
                let zone = try QueryZone.parse(parameters["timezone"])
                let timeframe = try zone.resolve(parameters["timeframe"], now: now())
                let filters = try KeenFilter.parseList(parameters["filters"])
                // It holds the store's writer: it keeps its turn to the end.
                _ = try await queries.run(pausable: false) { budget in
                    try await store.deleteEvents(
                        project: id, collection: collection, timeframe: timeframe, filters: filters, budget: budget)
                }
                properties.forget(project: id)
                return Self.response(.noContent, body: nil)
            }
        }
        for method in [HTTPRequest.Method.get, .post] {
            project.on("queries/:analysis", method: method) { request, context in
                await handle {
                    let (id, key) = try await authorize(request, context, .queries)
                    try takeQuery(key: key, context)
                    let analysis = try context.parameters.require("analysis")
                    var parameters = try KeenQuery.parameters(fromQuery: Self.query(request))
                    if request.method == .post {
                        let object = try await withBody(request, context, upTo: Self.maximumQueryBody) {
                            body -> JSONObject? in
                            guard !body.isEmpty else { return nil }
                            guard case .object(let object)? = try? JSONValue.parse(body) else {
                                throw KeenError.badParameter(
                                    "body", "a query's body is a JSON object of its parameters")
                            }
                            return object
                        }
                        for member in object?.members ?? [] { parameters[member.key] = member.value }
                    }
                    let query = try KeenQuery.parse(
                        analysis, parameters: parameters, now: now(),
                        keyFilters: try KeenFilter.parseList(key.queryFilters))
                    // Keen mails it; here it is written on the server (the master key's to ask, one
                    // at a time), and the answer says where.
                    if let email = query.email {
                        _ = try await authorize(request, context, .master)
                        return try await extractToFile(query, email: email, project: id)
                    }
                    // Turns are shared fairly between keys, then between each key's clients.
                    let share = AnalyticsQueries.share(
                        key: key.rateKey.replacingOccurrences(of: " ", with: "%20"),
                        client: context.client)
                    let includeMetadata =
                        parameters["include_metadata"] == .bool(true)
                        || parameters["include_metadata"] == .string("true")
                    // `max_age`: a result computed at most that many seconds ago may be answered.
                    let cacheKey = QueryResultCache.key(
                        project: id, analysis: analysis, parameters: parameters, keyFilters: key.queryFilters)
                    var (result, metadata): (JSONValue, JSONObject)
                    if let maxAge = query.maxAge, let cached = resultCache.get(cacheKey, maxAge: maxAge, now: now()) {
                        (result, metadata) = cached
                    } else {
                        (result, metadata) = try await execute(query, project: id, share: share)
                        if query.maxAge != nil {
                            resultCache.put(cacheKey, result: result, metadata: metadata, at: now())
                        }
                    }
                    if case .object(var object) = result, analysis == "funnel" {
                        if includeMetadata { object["execution_metadata"] = .object(metadata) }
                        return Self.response(.ok, body: .object(object))
                    }
                    var answer = JSONObject([("result", result)])
                    if includeMetadata { answer["execution_metadata"] = .object(metadata) }
                    return Self.response(.ok, body: .object(answer))
                }
            }
        }
        addSavedQueries(project)
        addExport(project)
        addDatasets(project)
        addKeys(project)
    }

    /// On a server whose store keeps no analytics, Keen's clients are told why (404).
    static func addAbsent(to router: Router<APIRequestContext>) {
        let none: JSONValue = [
            "message": "this server keeps no analytics: its store does not keep them",
            "error_code": "ResourceNotFoundError",
        ]
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .options] {
            router.on("3.0/**", method: method) { _, _ in response(.notFound, body: none) }
        }
    }

    // MARK: Events

    func now() -> Int64 { Int64((clock.now().timeIntervalSince1970 * 1_000_000).rounded()) }

    /// One event, `size` bytes of JSON as sent.
    func single(_ event: JSONValue, size: Int, collection: String, project: String, key: AnalyticsKey) async throws {
        try KeenEventRules.checkCollection(collection)
        if size > KeenEventRules.maximumEventBytes {
            throw KeenError.tooLarge("the event is larger than \(KeenEventRules.maximumEventBytes) bytes")
        }
        let arrival = now()
        let normalized = try KeenEventRules.normalize(event, now: arrival, autofill: key.autofill)
        if let refused = try await admit([normalized], to: collection, project: project).first ?? nil {
            throw refused
        }
        _ = try await store.record(project: project, batch: [(collection, [normalized])], createdAt: arrival)
    }

    /// `POST /events`: each event checked alone; the answer lists every collection in the order
    /// sent, and in each an entry per event in its place (the iOS client matches them by index).
    func batch(_ body: [UInt8], project: String, key: AnalyticsKey, client: String) async throws -> Response {
        // A batch past the limit is refused before it costs a parse (a few milliseconds a
        // megabyte, and its tree many times its size).
        if body.count > 64 * 1024, let total = JSONValue.batchElementCount(body), total > limits.maximumBatchEvents {
            throw tooManyEvents(total, client: client)
        }
        let document: JSONValue
        do {
            document = try JSONValue.parse(body)
        } catch {
            throw KeenError.invalidBatch("the body is not JSON: \(error)")
        }
        guard case .object(let collections) = document else {
            throw KeenError.invalidBatch("a batch is an object of collection names to lists of events")
        }
        // Counted before any is checked: the batch's size bounds the work and the answer.
        var total = 0
        for (collection, value) in collections.members {
            guard case .array(let events) = value else {
                throw KeenError.invalidBatch("'\(collection)' must hold a list of events, not \(value.typeName)")
            }
            total += events.count
        }
        guard total <= limits.maximumBatchEvents else { throw tooManyEvents(total, client: client) }
        try takeWrites(total, key: key, client: client)
        let arrival = now()
        let checkSizes = body.count > KeenEventRules.maximumEventBytes
        var outcomes: [[Result<IncomingEvent, KeenError>]] = []
        var accepted: [(collection: String, events: [IncomingEvent])] = []
        for (collection, value) in collections.members {
            guard case .array(let events) = value else {
                throw KeenError.invalidBatch("'\(collection)' must hold a list of events, not \(value.typeName)")
            }
            var results: [Result<IncomingEvent, KeenError>] = []
            results.reserveCapacity(events.count)
            var good: [IncomingEvent] = []
            let name: KeenError?
            do {
                try KeenEventRules.checkCollection(collection)
                name = nil
            } catch {
                name = error
            }
            for event in events {
                if let name {
                    results.append(.failure(name))
                    continue
                }
                do throws(KeenError) {
                    if checkSizes && event.jsonBytes.count > KeenEventRules.maximumEventBytes {
                        throw KeenError.tooLarge("the event is larger than \(KeenEventRules.maximumEventBytes) bytes")
                    }
                    let normalized = try KeenEventRules.normalize(event, now: arrival, autofill: key.autofill)
                    results.append(.success(normalized))
                    good.append(normalized)
                } catch {
                    results.append(.failure(error))
                }
            }
            // Charged before the write: an event past its collection's property names is refused.
            let refused = try await admit(good, to: collection, project: project)
            if refused.contains(where: { $0 != nil }) {
                var next = 0
                for index in results.indices {
                    guard case .success = results[index] else { continue }
                    if let error = refused[next] { results[index] = .failure(error) }
                    next += 1
                }
                good = zip(good, refused).filter { $0.1 == nil }.map(\.0)
            }
            outcomes.append(results)
            accepted.append((collection, good))
        }
        _ = try await store.record(project: project, batch: accepted.filter { !$0.events.isEmpty }, createdAt: arrival)
        // Keen's clients read each failure's name; its words are kept within 64 KB in all (past
        // it, empty), so a batch of many bad events is not answered with many times its size.
        var words = 64 * 1024
        var answer = JSONObject()
        for ((collection, _), results) in zip(collections.members, outcomes) {
            answer[collection] = .array(
                results.map { result in
                    switch result {
                    case .success: return ["success": true]
                    case .failure(let error):
                        let description = words > 0 ? String(error.message.prefix(300)) : ""
                        words -= description.utf8.count
                        return [
                            "success": false,
                            "error": ["name": .string(error.code), "description": .string(description)],
                        ]
                    }
                })
        }
        return Self.response(.ok, body: .object(answer))
    }

    /// Whether each event may go into `collection` (`PropertyRoom`).
    func admit(_ events: [IncomingEvent], to collection: String, project: String) async throws -> [KeenError?] {
        guard !events.isEmpty else { return [] }
        return try await properties.admit(project: project, collection: collection, events) {
            try await store.schema(project: project)
        }
    }

    // MARK: Plumbing

    static func properties(_ schema: CollectionSchema) -> JSONValue {
        var object = JSONObject()
        for property in schema.properties where object[property.path] == nil {
            object[property.path] = .string(property.type)
        }
        return .object(object)
    }

    static func padded(_ base64: String) -> String {
        base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4)
    }

    /// The query string as form fields (`+` is a space, then percent-decoding), in order.
    static func query(_ request: Request) -> [(name: String, value: String)] {
        guard let query = request.uri.query, !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    static func response(_ status: HTTPResponse.Status, body: JSONValue?) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-store"]
        for (name, value) in cors { headers[name] = value }
        guard let body else { return Response(status: status, headers: headers) }
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body.jsonBytes)))
    }

    /// Runs a route, answering a Keen error (or any other, as a 500 that says what failed) as
    /// Keen does.
    func handle(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as KeenError {
            var response = Self.response(HTTPResponse.Status(code: error.status), body: error.body)
            if let wait = error.retryAfter { response.headers[.retryAfter] = "\(wait)" }
            return response
        } catch let error as StoreError {
            return Self.response(.badRequest, body: KeenError(status: 400, code: "BadRequestError", "\(error)").body)
        } catch let error where StorageFault(error) != nil {
            // Nothing of the request was stored (its transaction was rolled back): refused, never
            // acknowledged, so the client sends it again.
            let fault = StorageFault(error)!
            storage.failed(fault, what: "an analytics request's writes")
            var response = Self.response(
                .serviceUnavailable,
                body: KeenError(
                    status: 503, code: "ServiceUnavailableError",
                    "the server cannot store this now: \(fault); nothing of this request was stored, send it again later"
                ).body)
            response.headers[.retryAfter] = "30"
            return response
        } catch let error as any HTTPResponseError {
            return Self.response(
                error.status, body: KeenError(status: error.status.code, code: "BadRequestError", "\(error)").body)
        } catch {
            // Whatever failed (a database's error carries its SQL) is logged, not told.
            logger.error("analytics request failed", metadata: ["error": "\(error)"])
            return Self.response(
                .internalServerError,
                body: KeenError(status: 500, code: "InternalServerError", "the server failed to answer; it is logged")
                    .body)
        }
    }
}
