import Analytics
import Foundation
import Hummingbird
import JSON
import Storage

/// Keen's saved and cached queries under `/3.0/projects/{project_id}/queries/saved`: a query
/// kept by name (`PUT` with `{"query": {...}, "refresh_rate": 0, "metadata": {...}}`, master key),
/// listed and read back with Keen's fields, and answered by name (`/result`, read key). A saved
/// query with a `refresh_rate` (4 to 48 hours, in seconds, as Keen allows) is a cached query: its
/// result is kept and refreshed in the background (``SavedQueryRefresher``), and `/result`
/// answers from the cache, saying so in `execution_metadata`.
extension AnalyticsAPI {
    /// Keen's bounds on a cached query's refresh rate, in seconds (0: not cached).
    static let refreshRates = 14_400...172_800
    /// A cached query's result larger than this is not kept (it is run when asked for).
    static let maximumCachedResultBytes = 4 << 20

    func addSavedQueries(_ project: RouterGroup<APIRequestContext>) {
        project.get("queries/saved") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let saved = try await store.savedQueries(project: id)
                return Self.response(.ok, body: .array(saved.map { Self.savedQueryJSON($0) }))
            }
        }
        project.get("queries/saved/:name") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let name = try context.parameters.require("name")
                guard let saved = try await store.savedQuery(project: id, name: name) else {
                    throw KeenError.notFound("no saved query \(name) in project \(id)")
                }
                return Self.response(.ok, body: Self.savedQueryJSON(saved))
            }
        }
        // keen-analysis.js creates with POST and updates with PUT; both replace the whole query.
        for method in [HTTPRequest.Method.put, .post] {
            project.on("queries/saved/:name", method: method) { request, context in
                await handle {
                    let (id, _) = try await authorize(request, context, .master)
                    let name = try context.parameters.require("name")
                    try Self.checkSavedQueryName(name)
                    let body = try await withBody(request, context, upTo: Self.maximumQueryBody) { $0 }
                    let definition = try Self.savedQueryDefinition(body, now: now())
                    if try await store.savedQuery(project: id, name: name) == nil,
                        try await store.savedQueries(project: id).count >= limits.savedQueriesPerProject
                    {
                        throw KeenError.badParameter(
                            "name",
                            "project \(id) holds its \(limits.savedQueriesPerProject) saved queries; delete one first")
                    }
                    let (saved, created) = try await store.putSavedQuery(
                        project: id, name: name, definition: definition, now: now())
                    return Self.response(created ? .created : .ok, body: Self.savedQueryJSON(saved))
                }
            }
        }
        project.delete("queries/saved/:name") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let name = try context.parameters.require("name")
                guard try await store.deleteSavedQuery(project: id, name: name) else {
                    throw KeenError.notFound("no saved query \(name) in project \(id)")
                }
                return Self.response(.noContent, body: nil)
            }
        }
        project.get("queries/saved/:name/result") { request, context in
            await handle {
                let (id, key) = try await authorize(request, context, .savedQueries)
                let name = try context.parameters.require("name")
                guard let saved = try await store.savedQuery(project: id, name: name) else {
                    throw KeenError.notFound("no saved query \(name) in project \(id)")
                }
                try Self.checkAllowed(key, saved)
                var answer = Self.savedQueryJSON(saved).object ?? JSONObject()
                if saved.refreshRate > 0, let cached = saved.result, let at = saved.resultAt {
                    // From the cache: what the last refresh answered, and when.
                    answer["result"] = cached["result"] ?? .null
                    answer["execution_metadata"] = .object(
                        QueryResultCache.fromCache(
                            cached["execution_metadata"]?.object ?? JSONObject(), at: at, now: now()))
                    return Self.response(.ok, body: .object(answer))
                }
                try takeQuery(key: key, context)
                let (result, metadata) = try await runSaved(saved, context: context)
                answer["result"] = result
                answer["execution_metadata"] = .object(metadata)
                return Self.response(.ok, body: .object(answer))
            }
        }
    }

    /// Runs a saved query's definition now (a cached one's result kept, due again after its rate).
    func runSaved(_ saved: SavedQuery, context: APIRequestContext?) async throws -> (JSONValue, JSONObject) {
        let definition = saved.definition["query"]?.object ?? JSONObject()
        let type = definition["analysis_type"]?.string ?? ""
        let started = now()
        let query = try KeenQuery.parse(type, parameters: definition, now: started)
        let share = "\(saved.project) \(context.map(\.client) ?? "refresh")"
        let (result, metadata) = try await execute(query, project: saved.project, share: share)
        if saved.refreshRate > 0 {
            let due = started + Int64(saved.refreshRate) * 1_000_000
            var kept = JSONObject()
            kept["result"] = result
            kept["execution_metadata"] = .object(metadata)
            if JSONValue.object(kept).jsonBytes.count <= Self.maximumCachedResultBytes {
                try await store.cacheSavedQueryResult(
                    project: saved.project, name: saved.name, modifiedAt: saved.modifiedAt, result: kept, at: started,
                    due: due)
            } else {
                // Too large to keep (an extraction, say): answered when asked for, as a saved query.
                try await store.postponeSavedQuery(
                    project: saved.project, name: saved.name, modifiedAt: saved.modifiedAt, due: due)
            }
        }
        return (result, metadata)
    }

    /// Runs `query` in its turn: the result and Keen's `execution_metadata`.
    func execute(_ query: KeenQuery, project: String, share: String) async throws -> (JSONValue, JSONObject) {
        let started = DispatchTime.now().uptimeNanoseconds
        let (result, scanned) = try await queries.run(for: share) { budget in
            (try await store.query(project: project, query, budget: budget), budget.eventsScanned)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let properties = query.propertiesRead
        return (
            result,
            JSONObject([
                ("total_processing_time", .number(seconds)), ("events_scanned", .number(Double(scanned))),
                ("properties_per_event", .number(Double(properties))),
                ("total_properties_scanned", .number(Double(scanned * properties))),
            ])
        )
    }

    /// A saved query as Keen answers it (the iOS client's tests and the Explorer read these
    /// fields): its name, definition, dates and URLs.
    static func savedQueryJSON(_ saved: SavedQuery) -> JSONValue {
        let base = "/3.0/projects/\(saved.project)/queries/saved/\(saved.name)"
        var runInformation: JSONValue = .null
        if saved.refreshRate > 0 {
            runInformation = [
                "last_run_date": saved.resultAt.map { .string(KeenTime.format($0)) } ?? .null,
                "next_run_date": saved.dueAt.map { .string(KeenTime.format($0)) } ?? .null,
            ]
        }
        return .object(
            JSONObject([
                ("query_name", .string(saved.name)),
                ("refresh_rate", .number(Double(saved.refreshRate))),
                ("query", saved.definition["query"] ?? .null),
                ("metadata", saved.definition["metadata"] ?? .null),
                ("created_date", .string(KeenTime.format(saved.createdAt))),
                ("last_modified_date", .string(KeenTime.format(saved.modifiedAt))),
                ("user_last_modified_date", .string(KeenTime.format(saved.modifiedAt))),
                ("urls", ["cached_query_url": .string(base), "cached_query_results_url": .string(base + "/result")]),
                ("run_information", runInformation),
            ]))
    }

    static func checkSavedQueryName(_ name: String, what: String = "a saved query's name") throws {
        guard name.wholeMatch(of: /[A-Za-z0-9_-]{1,100}/) != nil else {
            throw KeenError.badParameter(
                "name", "\(what) is 1 to 100 letters, digits, '-' or '_', not '\(name.prefix(100))'")
        }
    }

    /// The definition in a `PUT` body: `query` (an object with its `analysis_type`, checked as an
    /// ad-hoc query would be), `refresh_rate` (0, or 4 to 48 hours in seconds) and `metadata`.
    static func savedQueryDefinition(_ body: [UInt8], now: Int64) throws -> JSONObject {
        guard case .object(let object)? = try? JSONValue.parse(body) else {
            throw KeenError.badParameter(
                "body", "a saved query is a JSON object: {\"query\": {...}, \"refresh_rate\": 0}")
        }
        guard let query = object["query"]?.object else {
            throw KeenError.missingParameter("query", "a saved query's definition, with its analysis_type")
        }
        guard let type = query["analysis_type"]?.string else {
            throw KeenError.missingParameter("query.analysis_type", "the analysis the saved query runs")
        }
        _ = try KeenQuery.parse(type, parameters: query, now: now)
        var rate = 0
        if let found = object["refresh_rate"], found != .null {
            rate = try KeenQuery.whole(found, "refresh_rate", 0...refreshRates.upperBound)
            guard rate == 0 || refreshRates.contains(rate) else {
                throw KeenError.badParameter(
                    "refresh_rate",
                    "is 0 (not cached) or \(refreshRates.lowerBound) to \(refreshRates.upperBound) seconds (4 to 48 hours), not \(rate)"
                )
            }
        }
        var metadata: JSONValue = .null
        if let found = object["metadata"], found != .null {
            guard case .object = found else {
                throw KeenError.badParameter(
                    "metadata", "is an object (display_name, visualization), not \(found.typeName)")
            }
            metadata = found
        }
        return JSONObject([
            ("refresh_rate", .number(Double(rate))), ("query", .object(query)), ("metadata", metadata),
        ])
    }

    /// Whether `key` may read `saved`'s result. The read and master keys may read any. An access
    /// key permitted `saved_queries` may read saved queries its `options.saved_queries` lets it
    /// (`allowed`: the only names it may read; `blocked`: names it may not); one permitted
    /// `cached_queries` may read cached ones. A cached query that `options.cached_queries` leaves
    /// out is read by neither permission (a key permitted `saved_queries` read a cached query its
    /// `cached_queries.allowed` left out). An access key whose queries carry filters
    /// (`options.queries.filters`) reads no saved query: their results are not filtered, and it
    /// would read past its filters.
    static func checkAllowed(_ key: AnalyticsKey, _ saved: SavedQuery) throws {
        guard key.kind == .access else { return }
        if key.queryFilters.map({ $0 != .null && $0 != .array([]) }) == true {
            throw KeenError.invalidKey(
                "this access key's queries are filtered (options.queries.filters); a saved query's result is not, so it may not read one"
            )
        }
        let cached = saved.refreshRate > 0
        func leavesOut(_ kind: String) -> Bool {
            let options = key.options[kind]
            if let allowed = options?["allowed"], allowed != .null,
                !(allowed.array?.contains(.string(saved.name)) ?? false)
            {
                return true
            }
            if let blocked = options?["blocked"], blocked != .null, blocked.array?.contains(.string(saved.name)) ?? true
            {
                return true
            }
            return false
        }
        let bySaved = key.permitted.contains("saved_queries") && !leavesOut("saved_queries")
        let byCached = cached && key.permitted.contains("cached_queries")
        guard (bySaved || byCached) && !(cached && leavesOut("cached_queries")) else {
            throw KeenError.invalidKey(
                "this access key may not read saved query \(saved.name) (its saved_queries or cached_queries options)")
        }
    }
}

extension KeenQuery {
    /// The properties the query reads from each event (Keen's `properties_per_event`).
    var propertiesRead: Int {
        var names = Set<String>()
        func add(_ filters: [KeenFilter]) {
            for filter in filters {
                if filter.op == .or { add(filter.operands) } else { names.insert(filter.path) }
            }
        }
        add(filters)
        for step in steps {
            add(step.filters)
            names.insert(step.actor)
        }
        if let target = analysis.target { names.insert(target) }
        for (_, spec) in analyses { if let target = spec.target { names.insert(target) } }
        names.formUnion(groupBy)
        names.formUnion(propertyNames ?? [])
        if timeframe != nil || interval != nil { names.insert("keen.timestamp") }
        return names.count
    }
}
