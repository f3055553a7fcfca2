import Analytics
import Clocks
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
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

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("analytics-\(UUID())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try SQLiteStore(path: directory + "/nohit.sqlite")
            let start = Date(timeIntervalSince1970: 1_795_530_600)
            clock = ManualWallClock(start)
            project = try await store.createProject(name: "app", id: "app", now: start)
            api = AnalyticsAPI(store: store, clock: clock)
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
}
