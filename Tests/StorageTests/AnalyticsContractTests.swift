import Analytics
import Foundation
import JSON
import TestSupport
import Testing

@testable import Storage

/// Keen-compatible analytics on every store (SQLite, and PostgreSQL when a server is given): projects
/// and keys, events with their uniqueness tokens, queries, the schema and deletes give the same
/// answers; and on PostgreSQL, two instances on one database see each other's keys, properties and
/// events at once.
@Suite struct AnalyticsContractTests {
    static let base: Int64 = 1_790_000_000_000_000
    static let now: Int64 = 2_000_000_000_000_000

    static func analytics(_ store: any ContractStore) throws -> any AnalyticsStore {
        try #require(store as? any AnalyticsStore, "\(type(of: store)) keeps no analytics")
    }

    static func event(_ json: String, at timestamp: Int64) throws -> IncomingEvent {
        try KeenEventRules.normalize(try JSONValue.parse(json), now: timestamp)
    }

    static func query(_ store: any AnalyticsStore, project: String, _ analysis: String, _ parameters: String)
        async throws -> JSONValue
    {
        guard case .object(let object) = try JSONValue.parse(parameters) else { throw CocoaError(.coderInvalidValue) }
        let query = try KeenQuery.parse(analysis, parameters: object, now: now)
        return try await store.query(project: project, query, budget: .unlimited)
    }

    @Test(arguments: StoreFactory.available)
    func projectsAndKeysAreKeptWithTheirPowers(_ factory: StoreFactory) async throws {
        try await factory.withStore { contract in
            let store = try Self.analytics(contract)
            let made = try await store.createProject(name: "app", id: "app", now: Date())
            #expect(made.id == "app")
            await #expect(throws: StoreError.self) {
                try await store.createProject(name: "again", id: "app", now: Date())
            }
            await #expect(throws: StoreError.self) {
                try await store.createProject(name: "bad", id: "a b", now: Date())
            }
            let other = try await store.createProject(name: "other", id: nil, now: Date())
            #expect(try await store.analyticsProjects().map(\.id) == ["app", other.id])

            let write = try #require(try await store.key(project: "app", secret: made.writeKey))
            #expect(write.kind == .write && write.allows(.writes) && !write.allows(.queries))
            let read = try #require(try await store.key(project: "app", secret: made.readKey))
            #expect(read.allows(.queries) && !read.allows(.writes))
            #expect(try await store.key(project: "app", secret: made.masterKey)?.allows(.master) == true)
            // A key of another project, or no key at all.
            #expect(try await store.key(project: other.id, secret: made.writeKey) == nil)
            #expect(try await store.key(project: "app", secret: "nope") == nil)

            let (secret, access) = try await store.createAccessKey(
                project: "app", name: "dashboard", isActive: true, permitted: ["queries"],
                options: try #require(JSONValue.parse(#"{"queries":{"filters":[]}}"#).object), now: Date())
            #expect(try await store.key(project: "app", secret: secret)?.allows(.queries) == true)
            #expect(try await store.accessKeys(project: "app").map(\.name) == ["dashboard"])
            let updated = try await store.updateAccessKey(
                project: "app", secret: secret, name: "writer", isActive: true, permitted: ["writes"],
                options: JSONObject())
            #expect(updated?.name == "writer" && updated?.allows(.writes) == true && updated?.allows(.queries) == false)
            #expect(try await store.key(project: "app", secret: secret)?.allows(.writes) == true)
            // Another project's access key is not this one's to change or delete.
            #expect(try await store.deleteAccessKey(project: other.id, secret: secret) == false)
            #expect(try await store.deleteAccessKey(project: "app", secret: made.writeKey) == false)
            #expect(try await store.deleteAccessKey(project: "app", secret: secret))
            #expect(try await store.key(project: "app", secret: secret) == nil)
            #expect(access.hint == String(secret.prefix(6)))
            await #expect(throws: StoreError.self) {
                try await store.createAccessKey(
                    project: "missing", name: "x", isActive: true, permitted: [], options: JSONObject(), now: Date())
            }
        }
    }

    /// 10,000 events (more than a page of PostgreSQL's scan) over two collections, a repeated
    /// uniqueness token within a batch and across batches; then each kind of query, the schema, and
    /// a delete with a filter.
    @Test(arguments: StoreFactory.available)
    func eventsAreStoredOnceAndAnsweredAlike(_ factory: StoreFactory) async throws {
        try await factory.withStore { contract in
            let store = try Self.analytics(contract)
            _ = try await store.createProject(name: "app", id: "app", now: Date())
            var views: [IncomingEvent] = []
            for index in 0..<10_000 {
                views.append(
                    try Self.event(
                        #"{"tab":"\#(["live", "scores", "deals"][index % 3])","device":"d\#(index % 250)","ms":\#(index % 100),"keen":{"uniqueness_token":"t\#(index)"}}"#,
                        at: Self.base + Int64(index) * 1_000_000))
            }
            // The same token again in the same batch: dropped.
            views.append(try Self.event(#"{"tab":"live","keen":{"uniqueness_token":"t7"}}"#, at: Self.base))
            let opens = [
                try Self.event(#"{"channel":"apns","device":"d1"}"#, at: Self.base + 5),
                try Self.event(#"{"channel":"webpush","device":"d2","extra":{"deep":true}}"#, at: Self.base + 6),
            ]
            let stored = try await store.record(
                project: "app", batch: [("views", views), ("opens", opens)], createdAt: Self.base)
            #expect(stored[0].count == 10_001 && stored[0].prefix(10_000).allSatisfy { $0 } && stored[0].last == false)
            #expect(stored[1] == [true, true])
            // Across batches: a repeat dropped, a new token kept.
            let again = try await store.record(
                project: "app",
                batch: [
                    (
                        "views",
                        [
                            try Self.event(#"{"tab":"live","keen":{"uniqueness_token":"t42"}}"#, at: Self.base),
                            try Self.event(#"{"tab":"live","keen":{"uniqueness_token":"new"}}"#, at: Self.base),
                        ]
                    )
                ], createdAt: Self.base + 1)
            #expect(again == [[false, true]])

            let all = #""timeframe":{"start":"2026-09-01T00:00:00Z","end":"2027-09-01T00:00:00Z"}"#
            #expect(
                try await Self.query(store, project: "app", "count", #"{"event_collection":"views",\#(all)}"#)
                    == 10_001)
            #expect(
                try await Self.query(
                    store, project: "app", "count_unique",
                    #"{"event_collection":"views","target_property":"device",\#(all)}"#)
                    == 250)
            #expect(
                try await Self.query(
                    store, project: "app", "median",
                    #"{"event_collection":"views","target_property":"ms",\#(all),"filters":[{"property_name":"tab","operator":"eq","property_value":"deals"}]}"#
                ) == 50)  // the median of index % 100 over indices ≡ 2 (mod 3) below 10,000
            let grouped = try await Self.query(
                store, project: "app", "count", #"{"event_collection":"views","group_by":"tab",\#(all)}"#)
            let groups = try #require(grouped.array, "\(grouped)")
            #expect(
                Dictionary(
                    uniqueKeysWithValues: groups.compactMap { group -> (String, Double)? in
                        guard let tab = group["tab"]?.string, let count = group["result"]?.number else { return nil }
                        return (tab, count)
                    }) == ["live": 3_335, "scores": 3_333, "deals": 3_333])
            let latest = try await Self.query(
                store, project: "app", "extraction", #"{"event_collection":"views","latest":2,\#(all)}"#)
            // The last two events, in time order.
            #expect(latest.array?.compactMap { $0["ms"]?.number } == [98, 99], "\(latest)")
            let funnel = try await Self.query(
                store, project: "app", "funnel",
                #"{"steps":[{"event_collection":"views","actor_property":"device",\#(all)},{"event_collection":"opens","actor_property":"device",\#(all)}]}"#
            )
            #expect(funnel.object?["result"] == .array([.number(250), .number(2)]), "\(funnel)")

            let schema = try await store.schema(project: "app")
            #expect(schema.map(\.name) == ["opens", "views"])
            #expect(schema[0].properties.map(\.path).contains("extra.deep"))
            #expect(schema[1].properties.contains { $0.path == "ms" && $0.type == "num" })

            let deleted = try await store.deleteEvents(
                project: "app", collection: "views", timeframe: nil,
                filters: [KeenFilter(path: "tab", op: .eq, value: .string("scores"))], budget: .unlimited)
            #expect(deleted == 3_333)
            #expect(
                try await Self.query(store, project: "app", "count", #"{"event_collection":"views",\#(all)}"#)
                    == 6_668)
            #expect(
                try await store.deleteEvents(
                    project: "app", collection: "absent", timeframe: nil, filters: [], budget: .unlimited) == 0)
            await #expect(throws: KeenError.self) {
                try await Self.query(store, project: "missing", "count", #"{"event_collection":"views",\#(all)}"#)
            }
            await #expect(throws: StoreError.self) {
                try await store.record(project: "missing", batch: [("views", views)], createdAt: Self.base)
            }
            #expect(try await store.analyticsBytes() ?? 1 > 0)
        }
    }

    /// Two instances on one PostgreSQL database: a key deleted on one stops working on the other at
    /// once; a property and a collection one adds are used by the other's queries and writes (the
    /// path numbers stay one dictionary); writers of one project on both, with the same tokens at the
    /// same time, store each token once.
    @Test(.postgres) func twoInstancesShareKeysDictionaryAndTokens() async throws {
        let url = try #require(TestPostgres.url(schema: "analytics"))
        let location = try PostgresStore.Location(url: url)
        try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "a") { a in
            try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "b") { b in
                _ = try await a.createProject(name: "app", id: "app", now: Date())
                let (secret, _) = try await a.createAccessKey(
                    project: "app", name: "k", isActive: true, permitted: ["writes"], options: JSONObject(),
                    now: Date())
                #expect(try await b.key(project: "app", secret: secret) != nil)
                #expect(try await a.deleteAccessKey(project: "app", secret: secret))
                #expect(try await b.key(project: "app", secret: secret) == nil)

                _ = try await a.record(
                    project: "app", batch: [("views", [try Self.event(#"{"tab":"live"}"#, at: Self.base)])],
                    createdAt: Self.base)
                // b caches the dictionary, then a adds a property and a collection.
                #expect(try await b.schema(project: "app").map(\.name) == ["views"])
                _ = try await a.record(
                    project: "app",
                    batch: [
                        ("views", [try Self.event(#"{"tab":"live","screen":"game"}"#, at: Self.base + 1)]),
                        ("opens", [try Self.event(#"{"channel":"apns"}"#, at: Self.base + 2)]),
                    ], createdAt: Self.base)
                #expect(try await b.schema(project: "app").map(\.name) == ["opens", "views"])
                let all = #""timeframe":{"start":"2026-09-01T00:00:00Z","end":"2027-09-01T00:00:00Z"}"#
                #expect(
                    try await Self.query(
                        b, project: "app", "count",
                        #"{"event_collection":"views",\#(all),"filters":[{"property_name":"screen","operator":"eq","property_value":"game"}]}"#
                    ) == 1)
                // b writes with its copy refreshed: a new property of its own gets the next number.
                _ = try await b.record(
                    project: "app", batch: [("views", [try Self.event(#"{"tab":"x","zone":"z"}"#, at: Self.base + 3)])],
                    createdAt: Self.base)
                let paths = try await a.currentProject("app")?.paths ?? []
                #expect(Set(paths).count == paths.count, "\(paths)")
                #expect(paths.contains("zone") && paths.contains("screen"))

                // Both write the same 200 tokens at once: each is stored once.
                let tokens = (0..<200).map { "same-\($0)" }
                let events = try tokens.map {
                    try Self.event(#"{"tab":"live","keen":{"uniqueness_token":"\#($0)"}}"#, at: Self.base + 10)
                }
                async let first = a.record(project: "app", batch: [("views", events)], createdAt: Self.base)
                async let second = b.record(project: "app", batch: [("views", events)], createdAt: Self.base)
                let (one, two) = try await (first, second)
                #expect(zip(one[0], two[0]).allSatisfy { $0 != $1 }, "each token stored by exactly one")
                #expect(
                    try await Self.query(
                        a, project: "app", "count",
                        #"{"event_collection":"views",\#(all),"filters":[{"property_name":"keen.timestamp","operator":"exists","property_value":true}]}"#
                    ) == 203)
                try await a.dropSchema()
            }
        }
    }

    /// Saved queries on every store: created, read, listed, replaced (a replaced cached query's
    /// result is dropped and it is due again), deleted; a cached query is taken for a refresh once
    /// until its lease runs out, and a result computed from an older definition is not kept.
    @Test(arguments: StoreFactory.available)
    func savedQueriesAreKeptAndCachedOnesTakenForRefreshOnce(_ factory: StoreFactory) async throws {
        try await factory.withStore { contract in
            let store = try Self.analytics(contract)
            _ = try await store.createProject(name: "app", id: "app", now: Date())
            let count = JSONObject([
                ("refresh_rate", 0), ("query", ["analysis_type": "count", "event_collection": "views"]),
            ])
            let (made, created) = try await store.putSavedQuery(
                project: "app", name: "views", definition: count, now: 10)
            #expect(created && made.createdAt == 10 && made.refreshRate == 0)
            #expect(try await store.savedQuery(project: "app", name: "views")?.definition == count)
            var cached = count
            cached["refresh_rate"] = 14_400
            let (daily, new) = try await store.putSavedQuery(project: "app", name: "daily", definition: cached, now: 20)
            #expect(new && daily.refreshRate == 14_400)
            #expect(try await store.savedQueries(project: "app").map(\.name) == ["daily", "views"])
            #expect(try await store.savedQueries(project: "other").isEmpty)

            // Due at once; taken once; due again when its lease runs out.
            #expect(try await store.claimDueSavedQueries(now: 19, lease: 100, limit: 10).isEmpty)
            #expect(try await store.claimDueSavedQueries(now: 30, lease: 100, limit: 10).map(\.name) == ["daily"])
            #expect(try await store.claimDueSavedQueries(now: 31, lease: 100, limit: 10).isEmpty)
            #expect(try await store.claimDueSavedQueries(now: 130, lease: 100, limit: 10).map(\.name) == ["daily"])
            // Its result kept, due after its rate.
            let result = JSONObject([("result", 3), ("execution_metadata", ["events_scanned": 3])])
            try await store.cacheSavedQueryResult(
                project: "app", name: "daily", modifiedAt: 20, result: result, at: 140, due: 140 + 14_400_000_000)
            let kept = try #require(try await store.savedQuery(project: "app", name: "daily"))
            #expect(kept.result == result && kept.resultAt == 140)
            #expect(try await store.claimDueSavedQueries(now: 14_400_000_139, lease: 100, limit: 10).isEmpty)
            #expect(
                try await store.claimDueSavedQueries(now: 14_400_000_140, lease: 100, limit: 10).map(\.name) == [
                    "daily"
                ])

            // Replaced: created date kept, result dropped, due at once; a result of the old one is not kept.
            var changed = cached
            changed["metadata"] = ["display_name": "Daily views"]
            let (replaced, again) = try await store.putSavedQuery(
                project: "app", name: "daily", definition: changed, now: 200)
            #expect(!again && replaced.createdAt == 20 && replaced.modifiedAt == 200)
            let fresh = try #require(try await store.savedQuery(project: "app", name: "daily"))
            #expect(fresh.result == nil && fresh.definition == changed && fresh.createdAt == 20)
            try await store.cacheSavedQueryResult(
                project: "app", name: "daily", modifiedAt: 20, result: result, at: 210, due: 999)
            #expect(try await store.savedQuery(project: "app", name: "daily")?.result == nil)
            #expect(try await store.claimDueSavedQueries(now: 200, lease: 100, limit: 10).map(\.name) == ["daily"])

            #expect(try await store.deleteSavedQuery(project: "app", name: "daily"))
            #expect(try await !store.deleteSavedQuery(project: "app", name: "daily"))
            #expect(try await store.savedQuery(project: "app", name: "daily") == nil)
            await #expect(throws: StoreError.self) {
                try await store.putSavedQuery(project: "nope", name: "x", definition: count, now: 1)
            }
        }
    }

    /// Answers follow every write and delete, whichever way a store answers them (on SQLite, the
    /// columns read at the first query, appended to by each write after, dropped by a delete):
    /// events written after a query count in the next, a repeated uniqueness token does not, a
    /// delete takes its events away, and late events count where they belong.
    @Test(arguments: StoreFactory.available)
    func answersFollowWritesAndDeletes(_ factory: StoreFactory) async throws {
        try await factory.withStore { contract in
            let store = try Self.analytics(contract)
            _ = try await store.createProject(name: "app", id: "app", now: Date())
            func write(_ events: [(String, Int64)], token: String? = nil) async throws {
                let batch = try events.map { user, time in
                    try Self.event(
                        token.map { #"{"user":"\#(user)","keen":{"uniqueness_token":"\#($0)"}}"# }
                            ?? #"{"user":"\#(user)"}"#,
                        at: time)
                }
                _ = try await store.record(project: "app", batch: [("views", batch)], createdAt: Self.base)
            }
            func unique(_ extra: String = "") async throws -> JSONValue {
                try await Self.query(
                    store, project: "app", "count_unique",
                    #"{"event_collection":"views","target_property":"user"\#(extra)}"#)
            }
            try await write([("a", Self.base), ("b", Self.base + 10)])
            #expect(try await unique() == 2)
            // On SQLite that answer came from the collection's columns, kept since.
            if let sqlite = contract as? SQLiteStore {
                #expect(sqlite.analytics.columns.kept(project: "app", collection: "views")?.count == 2)
            }
            // Later, and earlier than the first (a phone's queue), and a token sent twice.
            try await write([("c", Self.base + 20), ("d", Self.base - 1_000)])
            try await write([("e", Self.base + 30)], token: "once")
            try await write([("f", Self.base + 40)], token: "once")
            #expect(try await unique() == 5)
            #expect(
                try await unique(#","timeframe":{"start":"2026-09-21T14:13:19Z","end":"2100-01-01T00:00:00Z"}"#) == 5)
            try await store.deleteEvents(
                project: "app", collection: "views", timeframe: nil,
                filters: [KeenFilter(path: "user", op: .eq, value: "c")], budget: .unlimited)
            #expect(try await unique() == 4)
            // Many late events (older than those the columns were read with): the same answers.
            let late = (0..<300).map { ("late\($0 % 50)", Self.base - Int64($0) * 1_000_000) }
            for chunk in stride(from: 0, to: late.count, by: 100) {
                try await write(Array(late[chunk..<(chunk + 100)]))
            }
            #expect(try await unique() == 54)
            #expect(
                try await Self.query(
                    store, project: "app", "count",
                    #"{"event_collection":"views","group_by":"user","order_by":[{"property_name":"result","direction":"DESC"}],"limit":1}"#
                )
                    == [["user": "late0", "result": 6]])
        }
    }

    /// Cached datasets on every store: created ("Created", due at once), taken once while its lease
    /// runs ("Bootstrapping" until first computed), buckets kept per index value (the ones before
    /// the window dropped, those from a run's start replaced), none kept for a replaced definition.
    @Test(arguments: StoreFactory.available)
    func datasetsKeepTheirBucketsPerIndexValue(_ factory: StoreFactory) async throws {
        try await factory.withStore { contract in
            let store = try Self.analytics(contract)
            _ = try await store.createProject(name: "app", id: "app", now: Date())
            let definition = JSONObject([
                ("display_name", "Views"), ("index_by", ["tab"]),
                ("query", ["analysis_type": "count", "event_collection": "views", "interval": "daily"]),
            ])
            let (made, created) = try await store.putDataset(
                project: "app", name: "views", definition: definition, now: 10)
            #expect(created && made.status == "Created")
            let taken = try await store.claimDueDatasets(now: 10, lease: 100, limit: 5)
            #expect(taken.map(\.name) == ["views"] && taken.first?.status == "Bootstrapping")
            #expect(try await store.claimDueDatasets(now: 50, lease: 100, limit: 5).isEmpty)
            #expect(try await store.dataset(project: "app", name: "views")?.status == "Bootstrapping")
            let day: Int64 = 86_400_000_000
            func bucket(_ tab: String, _ index: Int64, _ value: Int) -> DatasetBucket {
                DatasetBucket(index: "[\"\(tab)\"]", start: index * day, end: (index + 1) * day, value: "\(value)")
            }
            try await store.storeDatasetBuckets(
                project: "app", name: "views", modifiedAt: 10, windowStart: 0, from: 0,
                buckets: [bucket("live", 0, 1), bucket("live", 1, 2), bucket("live", 2, 3), bucket("scores", 2, 4)],
                at: 60, due: 1_000)
            let ok = try #require(try await store.dataset(project: "app", name: "views"))
            #expect(ok.status == "OK" && ok.refreshedAt == 60 && ok.dueAt == 1_000)
            #expect(
                try await store.datasetBuckets(project: "app", name: "views", index: #"["live"]"#, from: 0, to: 3 * day)
                    .map(\.value) == ["1", "2", "3"])
            // A later run from day 2 on, its window starting on day 1.
            try await store.storeDatasetBuckets(
                project: "app", name: "views", modifiedAt: 10, windowStart: day, from: 2 * day,
                buckets: [bucket("live", 2, 5), bucket("live", 3, 1)], at: 2_000, due: 3_000)
            #expect(
                try await store.datasetBuckets(project: "app", name: "views", index: #"["live"]"#, from: .min, to: .max)
                    .map(\.value) == ["2", "5", "1"])
            #expect(
                try await store.datasetBuckets(
                    project: "app", name: "views", index: #"["scores"]"#, from: .min, to: .max
                )
                .isEmpty)
            // A failed run is recorded; a run of a replaced definition keeps nothing.
            try await store.failDataset(
                project: "app", name: "views", modifiedAt: 10, status: "OK", error: "too slow", due: 4_000)
            #expect(try await store.dataset(project: "app", name: "views")?.error == "too slow")
            _ = try await store.putDataset(project: "app", name: "views", definition: definition, now: 5_000)
            try await store.storeDatasetBuckets(
                project: "app", name: "views", modifiedAt: 10, windowStart: 0, from: 0, buckets: [bucket("live", 0, 9)],
                at: 5_001, due: 6_000)
            let replaced = try #require(try await store.dataset(project: "app", name: "views"))
            #expect(replaced.status == "Created" && replaced.refreshedAt == nil && replaced.error == nil)
            #expect(
                try await store.datasetBuckets(project: "app", name: "views", index: #"["live"]"#, from: .min, to: .max)
                    .isEmpty)
            #expect(try await store.datasets(project: "app").map(\.name) == ["views"])
            #expect(try await store.deleteDataset(project: "app", name: "views"))
            #expect(try await store.dataset(project: "app", name: "views") == nil)
            #expect(try await !store.deleteDataset(project: "app", name: "views"))
        }
    }

    /// On PostgreSQL, instances taking due cached queries at the same time take each one once.
    @Test(.postgres) func instancesTakeEachDueCachedQueryOnce() async throws {
        let url = try #require(TestPostgres.url(schema: "saved_queries"))
        let location = try PostgresStore.Location(url: url)
        try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "a") { a in
            try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "b") { b in
                _ = try await a.createProject(name: "app", id: "app", now: Date())
                let cached = JSONObject([
                    ("refresh_rate", 14_400), ("query", ["analysis_type": "count", "event_collection": "views"]),
                ])
                for index in 0..<40 {
                    _ = try await a.putSavedQuery(project: "app", name: "q\(index)", definition: cached, now: 10)
                }
                let taken = try await withThrowingTaskGroup(of: [String].self) { group in
                    for store in [a, b, a, b] {
                        group.addTask {
                            var names: [String] = []
                            while true {
                                let batch = try await store.claimDueSavedQueries(now: 50, lease: 1_000, limit: 3)
                                if batch.isEmpty { return names }
                                names += batch.map(\.name)
                            }
                        }
                    }
                    var all: [String] = []
                    for try await names in group { all += names }
                    return all
                }
                #expect(taken.count == 40 && Set(taken).count == 40, "\(taken.sorted())")
                try await a.dropSchema()
            }
        }
    }
}
