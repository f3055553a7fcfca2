import Alerts
import Foundation
import GRDB
import Testing

@testable import Storage

/// The dispatchers' queries must stay on the partial outbox indexes, which hold only pending and
/// in-flight rows: a plan that scans the table, or sorts, gets slower with every alert of the
/// season. SQLite chooses plans by itself (a `state < 2` partial index once made it sort every
/// pending row for each claim), so the plans are checked here, on the migrated schema.
@Suite struct OutboxQueryPlanTests {
    private func plan(_ sql: String) throws -> [String] {
        let queue = try DatabaseQueue()
        try SQLiteStore.migrator.migrate(queue)
        return try queue.read { db in
            // Any values do: the plan does not depend on them (no literal "?" in these queries).
            let values = [DatabaseValue](repeating: .null, count: sql.filter { $0 == "?" }.count)
            return try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(values)).map {
                $0["detail"] as String
            }
        }
    }

    @Test(arguments: [
        ("claim", SQLiteStore.Queries.claim, "SEARCH outbox USING INDEX outbox_pending (channel=? AND due_at<?)"),
        (
            "unfinished, sending", SQLiteStore.Queries.unfinished,
            "SEARCH outbox USING COVERING INDEX outbox_sending (state=? AND channel=?)"
        ),
        (
            "unfinished, due", SQLiteStore.Queries.unfinished,
            "SEARCH outbox USING INDEX outbox_pending (channel=? AND due_at<?)"
        ),
        ("next due", SQLiteStore.Queries.nextDue, "SEARCH outbox USING INDEX outbox_pending (channel=?)"),
        ("pruning", SQLiteStore.Queries.dropPendingOfDevice, "SCAN outbox USING INDEX outbox_pending"),
        ("claimed rows", SQLiteStore.Queries.claimed([1, 2]), "SEARCH o USING INTEGER PRIMARY KEY (rowid=?)"),
        (
            "claimed rows' devices", SQLiteStore.Queries.claimed([1, 2]),
            "SEARCH d USING COVERING INDEX devices_sending (id=?) LEFT-JOIN"
        ),
        ("in doubt", SQLiteStore.Queries.inDoubt, "SEARCH o USING INDEX outbox_sending (state=?)"),
        (
            "in doubt, later alert", SQLiteStore.Queries.inDoubt,
            "SEARCH later USING INDEX outbox_bid (bid_key=? AND device_id=?)"
        ),
    ])
    func usesThePartialIndexes(query: String, sql: String, step: String) throws {
        let steps = try plan(sql)
        #expect(steps.contains(step), "\(query): \(steps)")
        #expect(!steps.contains { $0.contains("TEMP B-TREE") }, "\(query) sorts: \(steps)")
        let scans = steps.filter {
            $0.hasPrefix("SCAN") && $0 != "SCAN CONSTANT ROW" && !$0.contains("USING INDEX outbox_pending")
        }
        #expect(scans.isEmpty, "\(query) scans: \(steps)")
    }

    /// The directory of active devices is read whole, once per process: along the partial index
    /// of active devices in registration order, not sorted (a sort of every device at once).
    @Test func theDirectoryReadsActiveDevicesInOrderWithoutSorting() throws {
        let steps = try plan(SQLiteStore.Queries.activeDevices)
        #expect(steps == ["SCAN devices USING INDEX devices_active"], "\(steps)")
    }

    /// A database from before the partial indexes, with rows pending, being sent and delivered,
    /// keeps every row through the migration, and each is found where the dispatchers look.
    @Test func anOutboxFromBeforeMigratesWithEveryRowInPlace() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite")
            .path
        let phones = (0..<3).map { _ in Fixtures.device(Fixtures.apns) }
        let moment = Fixtures.moment()
        do {
            let store = try SQLiteStore(path: path)
            try await store.register(contentsOf: phones)
            try await store.record(
                moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: phones))
            let claimed = try await store.claim(channel: .apns, now: moment.occurredAt, limit: 2)
            try await store.complete([.delivered(id: claimed[0].id, at: moment.occurredAt)])
        }
        // Back to the schema of migration 3: the one full index, and migration 4 not yet run.
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(
                sql: """
                    DROP INDEX outbox_pending;
                    DROP INDEX outbox_sending;
                    CREATE INDEX outbox_due ON outbox(channel, state, due_at);
                    DELETE FROM grdb_migrations WHERE identifier = '4 partial outbox indexes';
                    """)
        }
        try old.close()

        let store = try SQLiteStore(path: path)
        var counts = try await store.outboxCounts()
        #expect([counts.pending, counts.sending, counts.delivered] as [Int] == [1, 1, 1])
        #expect(try await store.hasUnfinished(channels: [.apns], dueBy: moment.occurredAt.addingTimeInterval(-1)))
        #expect(try await store.nextDue(channel: .apns) == moment.occurredAt)
        let recovered = try await store.recoverInDoubt(now: moment.occurredAt)
        #expect(recovered.requeued.count == 1)
        let claimed = try await store.claim(channel: .apns, now: moment.occurredAt, limit: 10)
        #expect(claimed.count == 2)
        try await store.complete(claimed.map { .delivered(id: $0.id, at: moment.occurredAt) })
        counts = try await store.outboxCounts()
        #expect([counts.pending, counts.sending, counts.delivered] as [Int] == [0, 0, 3])
        #expect(try await store.hasUnfinished(channels: [.apns], dueBy: nil) == false)
        let indexes = try await DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outbox'")
        }
        #expect(Set(indexes) == ["outbox_pending", "outbox_sending", "outbox_bid", "sqlite_autoindex_outbox_1"])
    }
}
