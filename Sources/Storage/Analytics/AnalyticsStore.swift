import Analytics
import Crypto
import Foundation
import JSON

/// A project's key, as stored: its SHA-256 (the key itself is shown once, when made), what it
/// may do and, for an access key, its options (query filters added to every query, properties
/// filled into every event written).
package struct AnalyticsKey: Sendable, Hashable {
    package enum Kind: String, Sendable {
        case master, write, read, access
    }

    package var project: String
    package var kind: Kind
    package var name: String
    package var isActive: Bool
    /// For an access key: "writes", "queries", "saved_queries", "cached_queries", "datasets",
    /// "schema".
    package var permitted: [String]
    package var options: JSONObject
    /// The key's first characters, to tell keys apart in listings.
    package var hint: String
    package var createdAt: Date

    package init(
        project: String, kind: Kind, name: String, isActive: Bool = true, permitted: [String] = [],
        options: JSONObject = JSONObject(), hint: String, createdAt: Date
    ) {
        self.project = project
        self.kind = kind
        self.name = name
        self.isActive = isActive
        self.permitted = permitted
        self.options = options
        self.hint = hint
        self.createdAt = createdAt
    }

    /// What a request asks to do with a key.
    package enum Operation: String, Sendable {
        case writes, queries, schema, master
        /// Reading saved (and cached) queries' results.
        case savedQueries = "saved_queries"
        /// Reading cached datasets and their results.
        case datasets
    }

    package func allows(_ operation: Operation) -> Bool {
        guard isActive else { return false }
        switch kind {
        case .master: return true
        case .write: return operation == .writes
        case .read:
            return operation == .queries || operation == .schema || operation == .savedQueries
                || operation == .datasets
        case .access:
            if operation == .savedQueries {
                return permitted.contains("saved_queries") || permitted.contains("cached_queries")
            }
            return operation != .master && permitted.contains(operation.rawValue)
        }
    }

    /// What a key's rate limits count against: the key itself (its hint, kind and name within its
    /// project; the key's secret is not kept).
    package var rateKey: String { "\(project)/\(kind.rawValue)/\(hint)/\(name)" }

    /// Filters an access key adds to every query it makes (`options.queries.filters`).
    package var queryFilters: JSONValue? { options["queries"]?["filters"] }
    /// Properties an access key writes into every event (`options.writes.autofill`).
    package var autofill: JSONObject? { options["writes"]?["autofill"]?.object }

    /// A new key: 32 random bytes in hex.
    package static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    package static func hash(_ secret: String) -> Data { Data(SHA256.hash(data: Data(secret.utf8))) }

    /// A new access key: its secret (shown once) and what is stored of it.
    package static func newAccessKey(
        project: String, name: String, isActive: Bool, permitted: [String], options: JSONObject, now: Date
    ) -> (secret: String, key: AnalyticsKey) {
        let secret = newSecret()
        let key = AnalyticsKey(
            project: project, kind: .access, name: name, isActive: isActive, permitted: permitted, options: options,
            hint: String(secret.prefix(6)), createdAt: now)
        return (secret, key)
    }
}

/// A project with the keys it was made with (shown once).
package struct NewAnalyticsProject: Sendable, Hashable {
    package var id: String
    package var name: String
    package var masterKey: String
    package var writeKey: String
    package var readKey: String

    /// A project to make: its id (`id`, checked, or 12 random bytes in hex) and new keys.
    package init(name: String, id: String?) throws {
        let publicID = id ?? (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        guard publicID.wholeMatch(of: /[A-Za-z0-9_-]{1,64}/) != nil else {
            throw StoreError.invalid("a project id is 1 to 64 letters, digits, '_' or '-', not '\(publicID)'")
        }
        self.id = publicID
        self.name = name
        (masterKey, writeKey, readKey) = (AnalyticsKey.newSecret(), AnalyticsKey.newSecret(), AnalyticsKey.newSecret())
    }
}

/// A collection's properties and their types, as `GET /events` answers.
package struct CollectionSchema: Sendable, Hashable {
    package var name: String
    package var properties: [(path: String, type: String)]

    package static func == (lhs: CollectionSchema, rhs: CollectionSchema) -> Bool {
        lhs.name == rhs.name && lhs.properties.map(\.path) == rhs.properties.map(\.path)
            && lhs.properties.map(\.type) == rhs.properties.map(\.type)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        for property in properties {
            hasher.combine(property.path)
            hasher.combine(property.type)
        }
    }
}

/// A saved query as stored: its definition as Keen keeps it (`refresh_rate`, `query`,
/// `metadata`) and, for a cached query (a refresh rate above 0), its last result.
package struct SavedQuery: Sendable, Hashable {
    package var project: String
    package var name: String
    /// `{"refresh_rate": n, "query": {...}, "metadata": {...}}`.
    package var definition: JSONObject
    /// Microseconds since 1970.
    package var createdAt: Int64
    package var modifiedAt: Int64
    /// The cached result, as the query answered it (`result` and `execution_metadata`).
    package var result: JSONObject?
    package var resultAt: Int64?
    /// When a cached query is next due for a refresh (nil for one that is not cached).
    package var dueAt: Int64?

    package init(
        project: String, name: String, definition: JSONObject, createdAt: Int64, modifiedAt: Int64,
        result: JSONObject? = nil, resultAt: Int64? = nil, dueAt: Int64? = nil
    ) {
        self.project = project
        self.name = name
        self.definition = definition
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.result = result
        self.resultAt = resultAt
        self.dueAt = dueAt
    }

    /// Seconds between refreshes of a cached query; 0 for a saved query that is not cached.
    package var refreshRate: Int { Int(definition["refresh_rate"]?.number ?? 0) }
}

/// A cached dataset as stored: its definition as Keen keeps it (`display_name`, `query` with its
/// `interval` and relative `timeframe`, `index_by`), and the state of its buckets.
package struct CachedDataset: Sendable, Hashable {
    package var project: String
    package var name: String
    /// `{"display_name": ..., "query": {...}, "index_by": [...]}`.
    package var definition: JSONObject
    package var createdAt: Int64
    package var modifiedAt: Int64
    /// Keen's words: "Created", "Bootstrapping", "OK", "BootstrappingFailed", "Failed".
    package var status: String
    /// When the buckets were last computed (the run's start), if ever.
    package var refreshedAt: Int64?
    package var dueAt: Int64?
    /// Why the last run failed, if it did.
    package var error: String?

    package init(
        project: String, name: String, definition: JSONObject, createdAt: Int64, modifiedAt: Int64,
        status: String = "Created", refreshedAt: Int64? = nil, dueAt: Int64? = nil, error: String? = nil
    ) {
        self.project = project
        self.name = name
        self.definition = definition
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.status = status
        self.refreshedAt = refreshedAt
        self.dueAt = dueAt
        self.error = error
    }
}

/// One bucket of a dataset for one index value: its time range and its value (JSON text).
package struct DatasetBucket: Sendable, Hashable {
    /// The index values, as a JSON list in `index_by`'s order.
    package var index: String
    package var start: Int64
    package var end: Int64
    package var value: String

    package init(index: String, start: Int64, end: Int64, value: String) {
        self.index = index
        self.start = start
        self.end = end
        self.value = value
    }
}

/// Keen-compatible analytics: projects and keys, events, queries. The SQLite store keeps them in
/// its own tables of the service's database.
package protocol AnalyticsStore: Sendable {
    func createProject(name: String, id: String?, now: Date) async throws -> NewAnalyticsProject
    /// Every project: id and name.
    func analyticsProjects() async throws -> [(id: String, name: String)]
    /// The key `secret` of `project`, if it is one.
    func key(project: String, secret: String) async throws -> AnalyticsKey?
    func createAccessKey(
        project: String, name: String, isActive: Bool, permitted: [String], options: JSONObject, now: Date
    ) async throws -> (secret: String, key: AnalyticsKey)
    func accessKeys(project: String) async throws -> [AnalyticsKey]
    /// Replaces an access key's name, state, permissions and options; nil when there is no such key.
    func updateAccessKey(
        project: String, secret: String, name: String, isActive: Bool, permitted: [String], options: JSONObject
    ) async throws -> AnalyticsKey?
    func deleteAccessKey(project: String, secret: String) async throws -> Bool
    /// Stores a batch in one transaction: per collection, per event, whether it was stored (false:
    /// a repeat of a uniqueness token within 31 days, dropped).
    func record(project: String, batch: [(collection: String, events: [IncomingEvent])], createdAt: Int64)
        async throws -> [[Bool]]
    /// Runs `query` within `budget` (time, memory, cancellation: the engine stops itself), on
    /// readers of its own, never the ones the service's own reads need.
    func query(project: String, _ query: KeenQuery, budget: QueryBudget) async throws -> JSONValue
    func schema(project: String) async throws -> [CollectionSchema]
    /// Deletes the events of `collection` in `timeframe` that pass `filters`; how many.
    func deleteEvents(
        project: String, collection: String, timeframe: Timeframe?, filters: [KeenFilter], budget: QueryBudget
    ) async throws -> Int
    /// Bytes the analytics tables take (for the benchmark), when the store can tell.
    func analyticsBytes() async throws -> Int?
    /// A page of an export: up to `limit` events of `collection` in `timeframe` after `cursor` that
    /// pass `filters`, in the table's order (`EventExport.page`), each page read on its own.
    func exportPage(
        project: String, collection: String, timeframe: Timeframe, after cursor: EventExport.Cursor?, limit: Int,
        filters: [KeenFilter]
    ) async throws -> [EventExport.Event]

    // MARK: Saved and cached queries

    /// Creates or replaces saved query `name` of `project` at `now` (µs); whether it was new. A
    /// replaced query's cached result is dropped; a cached query is due for a refresh at once.
    func putSavedQuery(project: String, name: String, definition: JSONObject, now: Int64) async throws
        -> (query: SavedQuery, created: Bool)
    func savedQuery(project: String, name: String) async throws -> SavedQuery?
    /// The project's saved queries, by name (without their cached results).
    func savedQueries(project: String) async throws -> [SavedQuery]
    func deleteSavedQuery(project: String, name: String) async throws -> Bool
    /// Keeps `result` (computed at `at` from the definition of `modifiedAt`) as the query's cached
    /// result, due for its next refresh at `due`; dropped when the query changed since, or when a
    /// result computed later is already kept.
    func cacheSavedQueryResult(
        project: String, name: String, modifiedAt: Int64, result: JSONObject, at: Int64, due: Int64?
    ) async throws
    /// Moves a cached query's next refresh to `due`, its kept result untouched (a refresh failed).
    func postponeSavedQuery(project: String, name: String, modifiedAt: Int64, due: Int64) async throws
    /// Takes up to `limit` cached queries due at `now` for a refresh: each one's due time moves on
    /// to `now + lease` as it is taken, so no other instance takes it while this one refreshes it.
    func claimDueSavedQueries(now: Int64, lease: Int64, limit: Int) async throws -> [SavedQuery]

    // MARK: Cached datasets

    /// Creates or replaces dataset `name` (its buckets dropped, due at once, "Created").
    func putDataset(project: String, name: String, definition: JSONObject, now: Int64) async throws
        -> (dataset: CachedDataset, created: Bool)
    func dataset(project: String, name: String) async throws -> CachedDataset?
    func datasets(project: String) async throws -> [CachedDataset]
    /// Deletes a dataset and its buckets.
    func deleteDataset(project: String, name: String) async throws -> Bool
    /// Takes up to `limit` datasets due at `now` (their due time moved on by `lease`; a dataset never
    /// computed is "Bootstrapping" from then).
    func claimDueDatasets(now: Int64, lease: Int64, limit: Int) async throws -> [CachedDataset]
    /// Keeps a run's buckets (for the definition of `modifiedAt` only): the buckets starting before
    /// `windowStart` are dropped, those from `from` on replaced by `buckets`; the dataset is "OK",
    /// computed at `at`, due again at `due`.
    func storeDatasetBuckets(
        project: String, name: String, modifiedAt: Int64, windowStart: Int64, from: Int64, buckets: [DatasetBucket],
        at: Int64, due: Int64
    ) async throws
    /// Records a failed run: the status ("BootstrappingFailed" or "Failed"), why, and when to try again.
    func failDataset(project: String, name: String, modifiedAt: Int64, status: String, error: String, due: Int64)
        async throws
    /// The buckets of `index` starting in `from..<to`, oldest first.
    func datasetBuckets(project: String, name: String, index: String, from: Int64, to: Int64) async throws
        -> [DatasetBucket]
}
