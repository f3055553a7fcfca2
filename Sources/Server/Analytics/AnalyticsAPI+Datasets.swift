import Analytics
import Foundation
import Hummingbird
import JSON
import Storage

/// Keen's cached datasets under `/3.0/projects/{project_id}/datasets`: a query with an `interval`
/// and a relative `timeframe`, indexed by one or more properties (`index_by`), computed ahead into
/// buckets per index value and per interval, and answered by index value and timeframe from them
/// (`/results?index_by=&timeframe=`). A new dataset is "Created", then "Bootstrapping" while its
/// whole timeframe is computed (by the refresher, or by the first request for its results), then
/// "OK"; the refresher computes its latest buckets again every `datasetRefresh`.
extension AnalyticsAPI {
    /// How often a dataset's latest buckets are computed again (µs).
    static let datasetRefresh: Int64 = 15 * 60 * 1_000_000
    /// How long after a failed run it is tried again (µs).
    static let datasetRetry: Int64 = 5 * 60 * 1_000_000
    /// Properties a dataset may be indexed by.
    static let maximumIndexes = 5

    func addDatasets(_ project: RouterGroup<APIRequestContext>) {
        project.get("datasets") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .datasets)
                let datasets = try await store.datasets(project: id)
                return Self.response(
                    .ok,
                    body: .object(
                        JSONObject([
                            ("datasets", .array(datasets.map { datasetJSON($0) })),
                            ("count", .number(Double(datasets.count))), ("next_page_url", .null),
                        ])))
            }
        }
        project.get("datasets/:name") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .datasets)
                let name = try context.parameters.require("name")
                guard let dataset = try await store.dataset(project: id, name: name) else {
                    throw KeenError.notFound("no dataset \(name) in project \(id)")
                }
                return Self.response(.ok, body: datasetJSON(dataset))
            }
        }
        project.put("datasets/:name") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let name = try context.parameters.require("name")
                try Self.checkSavedQueryName(name, what: "a dataset's name")
                let body = try await withBody(request, context, upTo: Self.maximumQueryBody) { $0 }
                let definition = try Self.datasetDefinition(body, now: now())
                if try await store.dataset(project: id, name: name) == nil,
                    try await store.datasets(project: id).count >= limits.datasetsPerProject
                {
                    throw KeenError.badParameter(
                        "name", "project \(id) holds its \(limits.datasetsPerProject) datasets; delete one first")
                }
                let (dataset, created) = try await store.putDataset(
                    project: id, name: name, definition: definition, now: now())
                return Self.response(created ? .created : .ok, body: datasetJSON(dataset))
            }
        }
        project.delete("datasets/:name") { request, context in
            await handle {
                let (id, _) = try await authorize(request, context, .master)
                let name = try context.parameters.require("name")
                guard try await store.deleteDataset(project: id, name: name) else {
                    throw KeenError.notFound("no dataset \(name) in project \(id)")
                }
                return Self.response(.noContent, body: nil)
            }
        }
        project.get("datasets/:name/results") { request, context in
            await handle {
                let (id, key) = try await authorize(request, context, .datasets)
                // A dataset's results are not filtered by the key: one whose queries are (an access
                // key's `options.queries.filters`) would read past its filters.
                if key.kind == .access, key.queryFilters.map({ $0 != .null && $0 != .array([]) }) == true {
                    throw KeenError.invalidKey(
                        "this access key's queries are filtered (options.queries.filters); a dataset's results are not, so it may not read them"
                    )
                }
                let name = try context.parameters.require("name")
                guard var dataset = try await store.dataset(project: id, name: name) else {
                    throw KeenError.notFound("no dataset \(name) in project \(id)")
                }
                let parameters = try KeenQuery.parameters(fromQuery: Self.query(request))
                if dataset.refreshedAt == nil {
                    // Not computed yet: bootstrapped now, in this request's turn.
                    try takeQuery(key: key, context)
                    try await refreshDataset(dataset, share: "\(id) \(context.client)")
                    dataset = try await store.dataset(project: id, name: name) ?? dataset
                }
                return Self.response(.ok, body: try await datasetResults(dataset, parameters: parameters))
            }
        }
    }

    /// The dataset's definition as Keen answers it.
    func datasetJSON(_ dataset: CachedDataset) -> JSONValue {
        var query = dataset.definition["query"]?.object ?? JSONObject()
        query["project_id"] = .string(dataset.project)
        var object = JSONObject([
            ("project_id", .string(dataset.project)), ("organization_id", .null),
            ("dataset_name", .string(dataset.name)), ("display_name", dataset.definition["display_name"] ?? .null),
            ("query", .object(query)), ("index_by", dataset.definition["index_by"] ?? .array([])),
            ("last_scheduled_date", dataset.refreshedAt.map { .string(KeenTime.format($0)) } ?? .null),
            ("latest_subtimeframe_available", dataset.refreshedAt.map { .string(KeenTime.format($0)) } ?? .null),
            (
                "milliseconds_behind",
                dataset.refreshedAt.map { .number(Double(max(0, now() - $0) / 1_000)) } ?? .null
            ),
            ("status", .string(dataset.status)),
        ])
        if let error = dataset.error { object["last_error"] = .string(error) }
        return .object(object)
    }

    /// The definition in a `PUT` body: `display_name`, `query` (an analysis other than extraction
    /// and funnel, with an `interval` and a relative `timeframe`, checked as a query) and `index_by`
    /// (a property or a list of 1 to 5).
    static func datasetDefinition(_ body: [UInt8], now: Int64) throws -> JSONObject {
        guard case .object(let object)? = try? JSONValue.parse(body) else {
            throw KeenError.badParameter(
                "body", "a dataset is a JSON object: {\"display_name\", \"query\": {...}, \"index_by\": [...]}")
        }
        guard let display = object["display_name"]?.string, !display.isEmpty else {
            throw KeenError.missingParameter("display_name", "a dataset's name for people")
        }
        guard let query = object["query"]?.object else {
            throw KeenError.missingParameter("query", "the dataset's query, with its analysis_type")
        }
        guard let type = query["analysis_type"]?.string else {
            throw KeenError.missingParameter("query.analysis_type", "the analysis the dataset computes")
        }
        guard ![AnalysisType.extraction.rawValue, AnalysisType.funnel.rawValue].contains(type) else {
            throw KeenError.badParameter("query.analysis_type", "a dataset computes an analysis other than \(type)")
        }
        var indexBy: [String] = []
        switch object["index_by"] {
        case .string(let name)?: indexBy = [name]
        case .array(let names)?:
            indexBy = names.compactMap(\.string)
            if indexBy.count != names.count { indexBy = [] }
        default: break
        }
        guard (1...maximumIndexes).contains(indexBy.count), indexBy.allSatisfy({ !$0.isEmpty }) else {
            throw KeenError.badParameter(
                "index_by", "a property name or a list of 1 to \(maximumIndexes) (the values results are asked by)")
        }
        guard case .string(let timeframe)? = query["timeframe"],
            timeframe.hasPrefix("this_") || timeframe.hasPrefix("previous_")
        else {
            throw KeenError.badParameter(
                "query.timeframe", "a dataset's timeframe is relative (this_N_days, previous_N_weeks, ...)")
        }
        let parsed = try KeenQuery.parse(type, parameters: query, now: now)
        guard let interval = parsed.interval else {
            throw KeenError.missingParameter("query.interval", "the buckets a dataset keeps (hourly, daily, ...)")
        }
        // Past Keen's 2,500 intervals now, not at every refresh after (it was accepted, then failed
        // forever).
        if let timeframe = parsed.timeframe { _ = try interval.boundaries(of: timeframe, zone: parsed.zone) }
        for name in indexBy where parsed.groupBy.contains(name) {
            throw KeenError.badParameter("index_by", "\(name) is in the query's group_by too")
        }
        return JSONObject([
            ("display_name", .string(display)), ("query", .object(query)),
            ("index_by", .array(indexBy.map { .string($0) })),
        ])
    }

    /// Computes `dataset`'s buckets: its whole timeframe when it was never computed, else from the
    /// bucket before the one it was last computed in; the buckets that left its timeframe dropped.
    func refreshDataset(_ dataset: CachedDataset, share: String) async throws {
        let started = now()
        let definition = dataset.definition["query"]?.object ?? JSONObject()
        let type = definition["analysis_type"]?.string ?? ""
        let indexBy = dataset.definition["index_by"]?.array?.compactMap(\.string) ?? []
        let base = try KeenQuery.parse(type, parameters: definition, now: started)
        guard let window = base.timeframe, let interval = base.interval else {
            throw KeenError.badParameter("query", "a dataset's query has an interval and a timeframe")
        }
        let boundaries = try interval.boundaries(of: window, zone: base.zone)
        guard let first = boundaries.first, let end = boundaries.last, first < end else { return }
        var from = first
        if let last = dataset.refreshedAt, let index = boundaries.lastIndex(where: { $0 <= last }) {
            from = boundaries[max(0, index - 1)]
        }
        var parameters = definition
        parameters["timeframe"] = ["start": .string(KeenTime.format(from)), "end": .string(KeenTime.format(end))]
        parameters["group_by"] = .array((indexBy + base.groupBy).map { .string($0) })
        parameters["order_by"] = nil
        parameters["limit"] = nil
        let query = try KeenQuery.parse(type, parameters: parameters, now: started)
        let (result, _) = try await execute(query, project: dataset.project, share: share)
        var buckets: [DatasetBucket] = []
        for bucket in result.array ?? [] {
            guard let start = bucket["timeframe"]?["start"]?.string.flatMap(KeenTime.parse),
                let stop = bucket["timeframe"]?["end"]?.string.flatMap(KeenTime.parse)
            else { continue }
            var byIndex: [String: [JSONValue]] = [:]
            var order: [String] = []
            for row in bucket["value"]?.array ?? [] {
                guard case .object(let object) = row else { continue }
                let key = JSONValue.array(indexBy.map { object[$0] ?? .null }).jsonText
                let rest = JSONObject(object.members.filter { !indexBy.contains($0.key) })
                if byIndex[key] == nil { order.append(key) }
                byIndex[key, default: []].append(.object(rest))
            }
            for key in order {
                let rows = byIndex[key] ?? []
                let value: JSONValue
                if !base.groupBy.isEmpty {
                    value = .array(rows)
                } else if base.analysis.type == .multi_analysis {
                    value = rows.first ?? .null
                } else {
                    value = rows.first?["result"] ?? .null
                }
                buckets.append(DatasetBucket(index: key, start: start, end: stop, value: value.jsonText))
            }
        }
        try await store.storeDatasetBuckets(
            project: dataset.project, name: dataset.name, modifiedAt: dataset.modifiedAt, windowStart: first,
            from: from, buckets: buckets, at: started, due: started + Self.datasetRefresh)
    }

    /// `/results`: the dataset's buckets for one index value over `timeframe` (whole buckets within
    /// the dataset's timeframe), each with its value, or the analysis' empty value when no event
    /// had that index value in it.
    func datasetResults(_ dataset: CachedDataset, parameters: JSONObject) async throws -> JSONValue {
        let definition = dataset.definition["query"]?.object ?? JSONObject()
        let type = definition["analysis_type"]?.string ?? ""
        let indexBy = dataset.definition["index_by"]?.array?.compactMap(\.string) ?? []
        let now = now()
        let base = try KeenQuery.parse(type, parameters: definition, now: now)
        guard let window = base.timeframe, let interval = base.interval else { return ["result": []] }
        // The index value: a JSON object of the index properties, or, for one, the value itself.
        guard let asked = parameters["index_by"], asked != .null else {
            throw KeenError.missingParameter(
                "index_by", "the value of \(indexBy.joined(separator: ", ")) to answer (as JSON {\"name\": value})")
        }
        var values: [JSONValue] = []
        if case .string(let text) = asked, case .object(let object)? = try? JSONValue.parse(text) {
            values = indexBy.map { object[$0] ?? .null }
        } else if case .object(let object) = asked {
            values = indexBy.map { object[$0] ?? .null }
        } else if indexBy.count == 1 {
            values = [asked]
        } else {
            throw KeenError.badParameter(
                "index_by", "this dataset is indexed by \(indexBy.joined(separator: ", ")): give {\"name\": value, ...}"
            )
        }
        guard let requested = try base.zone.resolve(parameters["timeframe"], now: now) else {
            throw KeenError.missingParameter("timeframe", "the time the results cover, within the dataset's")
        }
        let kept = Set(try interval.boundaries(of: window, zone: base.zone))
        let boundaries = try interval.boundaries(of: requested, zone: base.zone)
        guard boundaries.count >= 2, boundaries.allSatisfy({ kept.contains($0) }) else {
            throw KeenError.timeframe(
                "the dataset keeps \(definition["interval"]?.string ?? "its") buckets over \(definition["timeframe"]?.string ?? "its timeframe"); ask for whole buckets within it"
            )
        }
        let key = JSONValue.array(values).jsonText
        let stored = try await store.datasetBuckets(
            project: dataset.project, name: dataset.name, index: key, from: boundaries[0],
            to: boundaries[boundaries.count - 1])
        var byStart: [Int64: String] = [:]
        for bucket in stored { byStart[bucket.start] = bucket.value }
        let empty = Self.emptyValue(base)
        let rows: [JSONValue] = (0..<(boundaries.count - 1)).map { index in
            let value = byStart[boundaries[index]].flatMap { try? JSONValue.parse($0) } ?? empty
            return [
                "value": value,
                "timeframe": Timeframe(start: boundaries[index], end: boundaries[index + 1]).json(zone: base.zone),
            ]
        }
        return ["result": .array(rows)]
    }

    /// What a bucket with no events answers for `query`'s analysis.
    static func emptyValue(_ query: KeenQuery) -> JSONValue {
        if !query.groupBy.isEmpty { return .array([]) }
        func empty(_ type: AnalysisType) -> JSONValue {
            switch type {
            case .count, .count_unique, .sum: 0
            case .select_unique: .array([])
            default: .null
            }
        }
        if query.analysis.type == .multi_analysis {
            return .object(JSONObject(query.analyses.map { ($0.label, empty($0.spec.type)) }))
        }
        return empty(query.analysis.type)
    }
}
