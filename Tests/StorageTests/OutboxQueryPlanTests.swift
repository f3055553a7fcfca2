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
            "SEARCH later USING INDEX sqlite_autoindex_outbox_1 (moment_id=? AND device_id=?)"
        ),
        ("in doubt, the bid's moments", SQLiteStore.Queries.inDoubt, "SEARCH m USING INDEX moments_game (game_id=?)"),
        (
            "a row being sent, by delivery id", SQLiteStore.Queries.sendingRow,
            "SEARCH outbox USING INDEX outbox_sending (state=?)"
        ),
        ("a bid's followers", SQLiteStore.Queries.followers, "SEARCH bid_followers USING PRIMARY KEY (bid_key=?)"),
    ])
    func usesThePartialIndexes(query: String, sql: String, step: String) throws {
        let steps = try QueryPlan.steps(sql)
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
        let steps = try QueryPlan.steps(SQLiteStore.Queries.activeDevices)
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
        #expect(
            Set(indexes) == [
                "outbox_pending", "outbox_sending", "outbox_failed", "outbox_starts", "sqlite_autoindex_outbox_1",
            ])
    }

    /// A database from before migration 7 (the outbox unique by delivery id, with an index by bid
    /// and device, and no followers kept apart) keeps every row, learns its followers from them,
    /// and still refuses a second row for a (moment, device).
    @Test func anOutboxFromBeforeMigration7KeepsItsRowsAndLearnsItsFollowers() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite")
            .path
        let phones = (0..<3).map { _ in Fixtures.device(Fixtures.apns) }
        let innings = Fixtures.moment(.hitlessInnings, outs: 18)
        let change = Fixtures.moment(.pitchingChange, outs: 19)
        let before: [(id: UUID, state: Int, attempts: Int, resentInDoubt: Int, error: String?)]
        do {
            let store = try SQLiteStore(path: path)
            try await store.register(contentsOf: phones)
            try await store.record(
                innings, payloads: Fixtures.payloads(innings),
                deliveries: Fixtures.deliveries(innings, to: Array(phones[0..<2])))
            try await store.record(
                change, payloads: Fixtures.payloads(change), deliveries: Fixtures.deliveries(change, to: [phones[2]]))
            // phones[0]'s inning delivered, phones[1]'s being sent, phones[2]'s change pending.
            let claimed = try await store.claim(channel: .apns, now: innings.occurredAt, limit: 2)
            try await store.complete([.delivered(id: claimed[0].id, at: innings.occurredAt)])
            before = try await store.outboxRows()
        }
        // The outbox as migrations 1-6 made it, from the migrations themselves (a database from
        // then has none of the later ones that index the outbox either: 11).
        let before7 = try DatabaseQueue()
        try SQLiteStore.migrator.migrate(before7, upTo: "6 active devices index")
        let oldSchema = try await before7.read { db in
            try String.fetchAll(
                db,
                sql: "SELECT sql FROM sqlite_master WHERE tbl_name = 'outbox' AND sql IS NOT NULL ORDER BY type DESC")
        }
        #expect(oldSchema.contains { $0.contains("delivery_id TEXT NOT NULL UNIQUE") })
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            let columns = try db.columns(in: "outbox").map(\.name).joined(separator: ", ")
            try db.execute(
                sql: "CREATE TABLE outbox_old AS SELECT * FROM outbox; DROP TABLE outbox; DROP TABLE bid_followers")
            for statement in oldSchema { try db.execute(sql: statement) }
            try db.execute(
                sql: """
                    INSERT INTO outbox (\(columns)) SELECT \(columns) FROM outbox_old;
                    DROP TABLE outbox_old;
                    DELETE FROM grdb_migrations WHERE identifier LIKE '7 %' OR identifier LIKE '11 %';
                    """)
        }
        try old.close()

        let store = try SQLiteStore(path: path)
        #expect(
            try await store.outboxRows().map { [$0.id.uuidString, "\($0.state)", "\($0.attempts)"] }
                == before.map { [$0.id.uuidString, "\($0.state)", "\($0.attempts)"] })
        #expect(try await store.followers(bidKey: "CHA202008250-home") == [phones[0].id, phones[1].id])
        #expect(try await store.isRecorded(momentID: change.moment.id))
        // The row being sent is in doubt: queued again and sent, with the pending one.
        let recovered = try await store.recoverInDoubt(now: change.occurredAt)
        #expect(recovered.requeued == [.delivery(momentID: innings.moment.id, deviceID: phones[1].id)])
        let claimed = try await store.claim(channel: .apns, now: change.occurredAt, limit: 10)
        #expect(claimed.count == 2)
        try await store.complete(claimed.map { .delivered(id: $0.id, at: change.occurredAt) })
        #expect(try await store.outboxCounts().delivered == 3)
        // The unique key is now (moment, device): a second row for one is refused.
        let again = try DatabaseQueue(path: path)
        #expect(throws: DatabaseError.self) {
            try again.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO outbox (delivery_id, moment_id, device_id, channel, payload_id, bid_key, moment_kind,
                            moment_outs, created_at, expires_at, due_at, state)
                        SELECT 'another id', moment_id, device_id, channel, payload_id, bid_key, moment_kind, moment_outs,
                            created_at, expires_at, due_at, 0 FROM outbox LIMIT 1
                        """)
            }
        }
        let indexes = try await again.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'outbox'")
        }
        #expect(Set(indexes) == ["outbox_pending", "outbox_sending", "outbox_failed", "sqlite_autoindex_outbox_1"])
        try again.close()
    }
}
