import Analytics
import Foundation
import GRDB
import JSON
import Testing

@testable import Storage

/// The analytics tables of the SQLite store: how a query's scan reads them, and a database from
/// before the events were kept in time order.
struct AnalyticsStoreTests {
    /// A scan reads one collection's time range along the table's own order, either way, with no
    /// sort and no second lookup per row (what made 1,000,000 events take seconds).
    @Test(arguments: [false, true]) func aScanReadsTheTableInTimeOrder(newestFirst: Bool) throws {
        var scan = ScanPlan(collection: "views", timeframe: .allTime)
        scan.newestFirst = newestFirst
        #expect(
            try QueryPlan.steps(scan.sql) == [
                "SEARCH analytics_events USING PRIMARY KEY (collection_id=? AND ts_us>? AND ts_us<?)"
            ])
        #expect(
            try QueryPlan.steps(scan.countSQL) == [
                "SEARCH analytics_events USING PRIMARY KEY (collection_id=? AND ts_us>? AND ts_us<?)"
            ])
    }

    static func event(_ json: String, at timestamp: Int64) throws -> IncomingEvent {
        try KeenEventRules.normalize(try JSONValue.parse(json), now: timestamp)
    }

    static func extract(_ store: SQLiteStore, project: String, _ parameters: String) async throws -> JSONValue {
        guard case .object(let object) = try JSONValue.parse(parameters) else { throw CocoaError(.coderInvalidValue) }
        return try await store.query(
            project: project, try KeenQuery.parse("extraction", parameters: object, now: 2_000_000_000_000_000),
            budget: .unlimited)
    }

    /// Events stored under migration 9 (a table in arrival order beside a time index) keep their
    /// ids and contents through migration 10, and new ones get ids after them.
    @Test func eventsFromBeforeTheTimeOrderKeepTheirIdsAndNewOnesFollow() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let base: Int64 = 1_790_000_000_000_000
        let project: String
        do {
            let store = try SQLiteStore(path: path)
            project = try await store.createProject(name: "app", id: "app", now: Date()).id
            _ = try await store.record(
                project: project,
                batch: [
                    (
                        "views",
                        [
                            try Self.event(#"{"tab":"live"}"#, at: base + 2_000),
                            try Self.event(#"{"tab":"scores"}"#, at: base + 1_000),
                        ]
                    )
                ], createdAt: base + 3_000)
        }
        // Back to migration 9's table, rows in arrival order with their row ids.
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE events_9 (
                        id INTEGER PRIMARY KEY,
                        project_id INTEGER NOT NULL,
                        collection_id INTEGER NOT NULL,
                        ts_us INTEGER NOT NULL,
                        created_us INTEGER NOT NULL,
                        data BLOB NOT NULL
                    );
                    INSERT INTO events_9 (id, project_id, collection_id, ts_us, created_us, data)
                        SELECT e.id, c.project_id, e.collection_id, e.ts_us, e.created_us, e.data
                        FROM analytics_events e JOIN analytics_collections c ON c.id = e.collection_id;
                    DROP TABLE analytics_events;
                    DROP TABLE analytics_counters;
                    ALTER TABLE events_9 RENAME TO analytics_events;
                    CREATE INDEX analytics_events_by_time ON analytics_events (project_id, collection_id, ts_us);
                    DELETE FROM grdb_migrations WHERE identifier = '10 analytics events clustered by collection and time';
                    """)
        }
        try old.close()

        let store = try SQLiteStore(path: path)
        _ = try await store.record(
            project: project, batch: [("views", [try Self.event(#"{"tab":"deals"}"#, at: base)])],
            createdAt: base + 4_000)
        let extraction = try await Self.extract(
            store, project: project,
            #"{"event_collection":"views","timeframe":{"start":"2026-09-01T00:00:00Z","end":"2026-10-01T00:00:00Z"}}"#)
        let rows = try #require(extraction.array, "\(extraction)")
        #expect(rows.compactMap { $0.object?["tab"]?.string } == ["deals", "scores", "live"])
        let ids = rows.compactMap { $0.object?["keen"]?.object?["id"]?.string }
        #expect(ids.count == 3 && Set(ids).count == 3, "\(ids)")
        // The new event's id comes after both of the old ones (ids are hex of a counter).
        #expect(ids.map { Int($0.suffix(16), radix: 16) ?? -1 } == [3, 2, 1], "\(ids)")
    }
}
