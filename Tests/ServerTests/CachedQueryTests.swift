import Analytics
import Clocks
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JSON
import NIOCore
import Storage
import Testing

@testable import Server

/// A cached query (a saved query with a `refresh_rate`) through Keen's routes on an injected
/// clock: its first result is computed and kept; later ones are answered from the cache (its
/// `execution_metadata` says so) while new events come in, until the refresh rate has passed and
/// the refresher runs it again.
@Suite struct CachedQueryTests {
    /// A project "app" on a new SQLite store, Keen's routes on an injected clock.
    struct Fixture {
        let directory: String
        let store: SQLiteStore
        let clock: ManualWallClock
        let project: NewAnalyticsProject
        let api: AnalyticsAPI

        init(limits: AnalyticsLimits = AnalyticsLimits()) async throws {
            // No test of the fixture times its queries: a loaded machine's run (CI's once starved
            // the tests' threads for over a minute) must not meet the 30 s limit or the 10 s wait
            // for a turn, which count real time. (A test of those limits sets its own.)
            var limits = limits
            let defaults = AnalyticsLimits()
            if limits.querySeconds == defaults.querySeconds { limits.querySeconds = 3600 }
            if limits.queryWaitSeconds == defaults.queryWaitSeconds { limits.queryWaitSeconds = 3600 }
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("analytics-\(UUID())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try SQLiteStore(path: directory + "/nohit.sqlite")
            let start = Date(timeIntervalSince1970: 1_795_530_600)
            clock = ManualWallClock(start)
            project = try await store.createProject(name: "app", id: "app", now: start)
            api = AnalyticsAPI(store: store, clock: clock, queries: AnalyticsQueries(limits: limits))
        }

        /// Records `count` views now.
        func record(_ count: Int) async throws {
            let now = api.now()
            let events = try (0..<count).map { _ in try KeenEventRules.normalize(["tab": "live"], now: now) }
            _ = try await store.record(project: "app", batch: [("views", events)], createdAt: now)
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    @Test func aCachedQueryIsAnsweredFromItsCacheAndRefreshedAfterItsRate() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let (project, api, clock) = (fixture.project, fixture.api, fixture.clock)
        let refresher = SavedQueryRefresher(api: api)
        let router = Router(context: APIRequestContext.self)
        api.add(to: router)
        try await Application(router: router).test(.router) { client in
            func result() async throws -> (value: JSONValue?, metadata: JSONValue?) {
                try await client.execute(
                    uri: "/3.0/projects/app/queries/saved/views/result", method: .get,
                    headers: [.authorization: project.readKey]
                ) { response in
                    #expect(response.status == .ok, "\(String(buffer: response.body))")
                    let body = try JSONValue.parse(Array(buffer: response.body))
                    return (body["result"], body["execution_metadata"])
                }
            }
            try await fixture.record(3)
            let definition =
                #"{"refresh_rate": 14400, "query": {"analysis_type": "count", "event_collection": "views"}}"#
            try await client.execute(
                uri: "/3.0/projects/app/queries/saved/views", method: .put,
                headers: [.authorization: project.masterKey], body: ByteBuffer(string: definition)
            ) { response in
                #expect(response.status == .created, "\(String(buffer: response.body))")
            }
            let first = try await result()
            #expect(first.value == 3 && first.metadata?["from_cache"] == nil)
            #expect(first.metadata?["events_scanned"] == 3)

            // New events: still the cached answer, and it says how old it is.
            try await fixture.record(2)
            clock.advance(by: 3_600)
            let cached = try await result()
            #expect(cached.value == 3 && cached.metadata?["from_cache"] == true)
            #expect(cached.metadata?["age_seconds"] == 3_600)
            #expect(try await refresher.refreshDue() == 0)

            // Past its rate (4 hours after it was computed) the refresher runs it again.
            clock.advance(by: 14_400 - 3_600 - 1)
            #expect(try await refresher.refreshDue() == 0)
            clock.advance(by: 1)
            #expect(try await refresher.refreshDue() == 1)
            let refreshed = try await result()
            #expect(refreshed.value == 5 && refreshed.metadata?["from_cache"] == true)
            #expect(refreshed.metadata?["computed_at"] == .string(KeenTime.format(api.now())))
            #expect(try await refresher.refreshDue() == 0)

            // The listing tells when it ran and when it runs next.
            try await client.execute(
                uri: "/3.0/projects/app/queries/saved/views", method: .get, headers: [.authorization: project.masterKey]
            ) { response in
                let body = try JSONValue.parse(Array(buffer: response.body))
                #expect(body["run_information"]?["last_run_date"] == .string(KeenTime.format(api.now())))
                #expect(
                    body["run_information"]?["next_run_date"]
                        == .string(KeenTime.format(api.now() + 14_400_000_000)))
            }
            // A read key cannot change it; a bad definition says what is wrong.
            try await client.execute(
                uri: "/3.0/projects/app/queries/saved/views", method: .delete,
                headers: [.authorization: project.readKey]
            ) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(
                uri: "/3.0/projects/app/queries/saved/bad%20name", method: .put,
                headers: [.authorization: project.masterKey], body: ByteBuffer(string: definition)
            ) { response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(
                uri: "/3.0/projects/app/queries/saved/nope", method: .put,
                headers: [.authorization: project.masterKey],
                body: ByteBuffer(string: #"{"query": {"analysis_type": "sum", "event_collection": "views"}}"#)
            ) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("target_property"))
            }
        }
    }

    /// `max_age` on an ad-hoc query: a result no older than it answers; an older one is run again.
    @Test func maxAgeAnswersARecentResultOfTheSameQuery() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let (project, api, clock) = (fixture.project, fixture.api, fixture.clock)
        let router = Router(context: APIRequestContext.self)
        api.add(to: router)
        try await Application(router: router).test(.router) { client in
            func count(_ query: String) async throws -> (JSONValue?, JSONValue?) {
                try await client.execute(
                    uri: "/3.0/projects/app/queries/count?event_collection=views&include_metadata=true" + query,
                    method: .get, headers: [.authorization: project.readKey]
                ) { response in
                    let body = try JSONValue.parse(Array(buffer: response.body))
                    return (body["result"], body["execution_metadata"]?["from_cache"])
                }
            }
            try await fixture.record(2)
            #expect(try await count("&max_age=300") == (2, nil))
            try await fixture.record(1)
            // Without max_age, always run; with it, the kept result while young enough.
            #expect(try await count("") == (3, nil))
            #expect(try await count("&max_age=300") == (2, true))
            clock.advance(by: 301)
            #expect(try await count("&max_age=300") == (3, nil))
            #expect(try await count("&max_age=300") == (3, true))
        }
    }

    /// A key past its queries a minute gets Keen's 429 (`TooManyRequestsError`, with Retry-After)
    /// and nothing runs; another key's queries still run.
    @Test func aKeyOverItsQueryRateGetsKeens429() async throws {
        var limits = AnalyticsLimits()
        limits.queriesPerMinutePerKey = 3
        limits.queriesPerMinutePerClient = 1_000
        let fixture = try await Fixture(limits: limits)
        defer { fixture.remove() }
        let project = fixture.project
        try await fixture.record(2)
        let router = Router(context: APIRequestContext.self)
        fixture.api.add(to: router)
        try await Application(router: router).test(.router) { client in
            func count(_ key: String) async throws -> (HTTPResponse.Status, String, String?) {
                try await client.execute(
                    uri: "/3.0/projects/app/queries/count?event_collection=views", method: .get,
                    headers: [.authorization: key]
                ) { response in
                    (response.status, String(buffer: response.body), response.headers[.retryAfter])
                }
            }
            for _ in 0..<3 { #expect(try await count(project.readKey).0 == .ok) }
            let refused = try await count(project.readKey)
            #expect(refused.0 == .tooManyRequests, "\(refused.1)")
            let body = try JSONValue.parse(Array(refused.1.utf8))
            #expect(body["error_code"] == "TooManyRequestsError")
            #expect(body["message"]?.string?.contains("3 a minute with one key") == true, "\(refused.1)")
            #expect(refused.2.flatMap(Int.init).map { (1...60).contains($0) } == true)
            // The master key is another key: its own three.
            #expect(try await count(project.masterKey).0 == .ok)
        }
    }

    /// Which saved queries an access key reads: `saved_queries` within its allowed and blocked
    /// names, `cached_queries` only cached ones; a key whose queries are filtered reads none; a
    /// key's options that are not lists of names are refused when the key is made.
    @Test func accessKeysReadOnlyTheSavedQueriesTheirOptionsAllow() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let (store, project) = (fixture.store, fixture.project)
        try await fixture.record(2)
        let count = JSONObject([("query", ["analysis_type": "count", "event_collection": "views"])])
        var cached = count
        cached["refresh_rate"] = 14_400
        _ = try await store.putSavedQuery(project: "app", name: "open", definition: count, now: fixture.api.now())
        _ = try await store.putSavedQuery(project: "app", name: "daily", definition: cached, now: fixture.api.now())
        func key(_ permitted: [String], _ options: JSONValue = [:]) async throws -> String {
            try await store.createAccessKey(
                project: "app", name: "k", isActive: true, permitted: permitted,
                options: options.object ?? JSONObject(),
                now: Date()
            ).secret
        }
        let cases: [(String, open: Bool, daily: Bool)] = [
            (try await key(["saved_queries"], ["saved_queries": ["allowed": ["open"]]]), true, false),
            (try await key(["saved_queries"], ["saved_queries": ["blocked": ["daily"]]]), true, false),
            (try await key(["saved_queries"]), true, true),
            (try await key(["cached_queries"]), false, true),
            (try await key(["cached_queries"], ["cached_queries": ["allowed": ["other"]]]), false, false),
            // Reading by `saved_queries` does not pass what `cached_queries` leaves out (it did).
            (
                try await key(["saved_queries", "cached_queries"], ["cached_queries": ["allowed": ["other"]]]), true,
                false
            ),
            (try await key(["saved_queries"], ["cached_queries": ["blocked": ["daily"]]]), true, false),
            // Each permission by its own options: `saved_queries` leaving it out, `cached_queries` reads it.
            (try await key(["saved_queries", "cached_queries"], ["saved_queries": ["allowed": ["open"]]]), true, true),
            (
                try await key(
                    ["queries", "saved_queries"],
                    ["queries": ["filters": [["property_name": "tab", "operator": "eq", "property_value": "x"]]]]),
                false, false
            ),
            (try await key(["queries"]), false, false),
            (project.readKey, true, true),
        ]
        let router = Router(context: APIRequestContext.self)
        fixture.api.add(to: router)
        try await Application(router: router).test(.router) { client in
            for (index, (secret, open, daily)) in cases.enumerated() {
                for (name, allowed) in [("open", open), ("daily", daily)] {
                    try await client.execute(
                        uri: "/3.0/projects/app/queries/saved/\(name)/result", method: .get,
                        headers: [.authorization: secret]
                    ) { response in
                        #expect(
                            response.status == (allowed ? .ok : .unauthorized),
                            "key \(index), \(name): \(String(buffer: response.body))")
                        if allowed {
                            let body = try JSONValue.parse(Array(buffer: response.body))
                            #expect(body["result"] == 2)
                        }
                    }
                }
            }
            // Options that are not lists of names are refused when the key is made.
            for options in [#"{"saved_queries": {"allowed": "open"}}"#, #"{"cached_queries": ["daily"]}"#] {
                try await client.execute(
                    uri: "/3.0/projects/app/keys", method: .post, headers: [.authorization: project.masterKey],
                    body: ByteBuffer(
                        string: #"{"name": "bad", "permitted": ["saved_queries"], "options": \#(options)}"#)
                ) { response in
                    #expect(response.status == .badRequest, "\(options): \(String(buffer: response.body))")
                }
            }
        }
    }

    /// A refresh that fails (here past the query's memory) keeps no result, is tried again after
    /// five minutes, and a kept result of an earlier run stays.
    @Test func aFailedRefreshIsTriedAgainLaterAndKeepsNoFalseResult() async throws {
        var limits = AnalyticsLimits()
        limits.queryMemoryBytes = 2_000
        let fixture = try await Fixture(limits: limits)
        defer { fixture.remove() }
        let (store, api, clock) = (fixture.store, fixture.api, fixture.clock)
        let now = api.now()
        let events = try (0..<10).map { try KeenEventRules.normalize(["user": .string("u\($0)")], now: now) }
        _ = try await store.record(project: "app", batch: [("views", events)], createdAt: now)
        let definition = JSONObject([
            ("refresh_rate", 14_400),
            // (A `contains` filter: the rows answer it, holding each distinct value, so many of them
            // pass the query's memory; the columns would hold a bit each.)
            (
                "query",
                [
                    "analysis_type": "count_unique", "event_collection": "views", "target_property": "user",
                    "filters": [["property_name": "user", "operator": "contains", "property_value": "u"]],
                ]
            ),
        ])
        _ = try await store.putSavedQuery(project: "app", name: "users", definition: definition, now: now)
        let refresher = SavedQueryRefresher(api: api)
        #expect(try await refresher.refreshDue() == 1)
        #expect(try await store.savedQuery(project: "app", name: "users")?.result?["result"] == 10)

        // Many more users: past the query's memory, the next refresh fails.
        let more = try (10..<200).map { try KeenEventRules.normalize(["user": .string("u\($0)")], now: now) }
        _ = try await store.record(project: "app", batch: [("views", more)], createdAt: now)
        clock.advance(by: 14_400)
        #expect(try await refresher.refreshDue() == 0)
        let after = try #require(try await store.savedQuery(project: "app", name: "users"))
        #expect(after.result?["result"] == 10 && after.resultAt == now)
        #expect(after.dueAt == api.now() + refresher.retry)
        #expect(try await refresher.refreshDue() == 0)
        clock.advance(by: 300)
        #expect(try await refresher.refreshDue() == 0)
        #expect(try await store.savedQuery(project: "app", name: "users")?.dueAt == api.now() + refresher.retry)
    }

    /// A cached dataset on the injected clock: "Created", computed by the refresher ("OK"), answered
    /// per index value and day from its buckets (a day with none of that value answers 0); new
    /// events reach its latest bucket at the next refresh, not before; days that leave its
    /// timeframe are dropped; an access key needs `datasets`.
    @Test func aDatasetIsComputedAheadAndItsLatestBucketsRefreshed() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let (store, project, api, clock) = (fixture.store, fixture.project, fixture.api, fixture.clock)
        @Sendable func view(_ tab: String, _ count: Int = 1) async throws {
            let now = api.now()
            let events = try (0..<count).map { _ in try KeenEventRules.normalize(["tab": .string(tab)], now: now) }
            _ = try await store.record(project: "app", batch: [("views", events)], createdAt: now)
        }
        let refresher = SavedQueryRefresher(api: api)
        let reader = try await store.createAccessKey(
            project: "app", name: "datasets", isActive: true, permitted: ["datasets"], options: JSONObject(),
            now: Date()
        ).secret
        let writer = try await store.createAccessKey(
            project: "app", name: "writes", isActive: true, permitted: ["writes"], options: JSONObject(), now: Date()
        ).secret
        // A key whose queries are filtered reads no dataset's results: they are not filtered (it
        // read them whole).
        let filtered = try await store.createAccessKey(
            project: "app", name: "filtered", isActive: true, permitted: ["datasets", "queries"],
            options: JSONObject([
                ("queries", ["filters": [["property_name": "tab", "operator": "eq", "property_value": "live"]]])
            ]), now: Date()
        ).secret
        try await view("live", 3)
        try await view("scores")
        let router = Router(context: APIRequestContext.self)
        api.add(to: router)
        try await Application(router: router).test(.router) { client in
            func results(_ tab: String, key: String? = nil) async throws -> [JSONValue] {
                try await client.execute(
                    uri: "/3.0/projects/app/datasets/by-tab/results?index_by=\(tab)&timeframe=this_3_days",
                    method: .get, headers: [.authorization: key ?? project.readKey]
                ) { response in
                    #expect(response.status == .ok, "\(String(buffer: response.body))")
                    return try JSONValue.parse(Array(buffer: response.body))["result"]?.array ?? []
                }
            }
            func status() async throws -> String? {
                try await client.execute(
                    uri: "/3.0/projects/app/datasets/by-tab", method: .get, headers: [.authorization: project.readKey]
                ) { response in try JSONValue.parse(Array(buffer: response.body))["status"]?.string }
            }
            let definition = #"""
                {"display_name": "Views by tab", "index_by": "tab",
                 "query": {"analysis_type": "count", "event_collection": "views", "timeframe": "this_3_days",
                           "interval": "daily", "timezone": "UTC"}}
                """#
            try await client.execute(
                uri: "/3.0/projects/app/datasets/by-tab", method: .put, headers: [.authorization: project.masterKey],
                body: ByteBuffer(string: definition)
            ) { response in
                #expect(response.status == .created, "\(String(buffer: response.body))")
            }
            #expect(try await status() == "Created")
            #expect(try await refresher.refreshDueDatasets() == 1)
            #expect(try await status() == "OK")
            #expect(try await results("live").map { $0["value"] } == [0, 0, 3])
            #expect(try await results("scores").map { $0["value"] } == [0, 0, 1])
            #expect(try await results("settings").map { $0["value"] } == [0, 0, 0])
            #expect(try await results("live", key: reader).count == 3)
            try await client.execute(
                uri: "/3.0/projects/app/datasets/by-tab/results?index_by=live&timeframe=this_3_days", method: .get,
                headers: [.authorization: writer]
            ) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(
                uri: "/3.0/projects/app/datasets/by-tab/results?index_by=scores&timeframe=this_3_days", method: .get,
                headers: [.authorization: filtered]
            ) { response in
                #expect(response.status == .unauthorized, "\(String(buffer: response.body))")
                #expect(String(buffer: response.body).contains("filtered"))
            }

            // New views: the kept day until the next refresh (15 minutes on).
            try await view("live", 2)
            #expect(try await refresher.refreshDueDatasets() == 0)
            #expect(try await results("live").map { $0["value"] } == [0, 0, 3])
            clock.advance(by: 15 * 60)
            #expect(try await refresher.refreshDueDatasets() == 1)
            #expect(try await results("live").map { $0["value"] } == [0, 0, 5])

            // Two days on: the days slide, the ones before the timeframe are dropped.
            clock.advance(by: 2 * 86_400)
            try await view("live")
            #expect(try await refresher.refreshDueDatasets() == 1)
            #expect(try await results("live").map { $0["value"] } == [5, 0, 1])
            let kept = try await store.datasetBuckets(
                project: "app", name: "by-tab", index: #"["live"]"#, from: .min, to: .max)
            #expect(kept.count == 2)

            // What is refused, and why.
            for (body, why) in [
                (
                    #"{"display_name": "x", "index_by": "tab", "query": {"analysis_type": "count", "event_collection": "views", "timeframe": "this_3_days"}}"#,
                    "interval"
                ),
                (
                    #"{"display_name": "x", "index_by": "tab", "query": {"analysis_type": "count", "event_collection": "views", "interval": "daily", "timeframe": {"start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}}}"#,
                    "relative"
                ),
                (
                    #"{"display_name": "x", "query": {"analysis_type": "count", "event_collection": "views", "interval": "daily", "timeframe": "this_3_days"}}"#,
                    "index_by"
                ),
                (
                    #"{"display_name": "x", "index_by": "tab", "query": {"analysis_type": "extraction", "event_collection": "views", "interval": "daily", "timeframe": "this_3_days"}}"#,
                    "extraction"
                ),
            ] {
                try await client.execute(
                    uri: "/3.0/projects/app/datasets/bad", method: .put, headers: [.authorization: project.masterKey],
                    body: ByteBuffer(string: body)
                ) { response in
                    #expect(response.status == .badRequest)
                    #expect(String(buffer: response.body).contains(why), "\(String(buffer: response.body))")
                }
            }
            try await client.execute(
                uri: "/3.0/projects/app/datasets/by-tab/results?index_by=live&timeframe=this_4_days", method: .get,
                headers: [.authorization: project.readKey]
            ) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("TimeframeDefinitionError"))
            }
        }
    }
}
