import Alerts
import Foundation
import GRDB

/// Every store on one SQLite file (WAL), the default: nothing to install, `nohit serve` just
/// works. Writes that belong together (a moment and all its deliveries) are one transaction.
package final class SQLiteStore: DeviceStore, SubscriptionStore, MomentStore, OutboxStore {
    let database: any DatabaseWriter
    /// Where analytics queries read: connections of their own (a read-only pool on the same file),
    /// so a slow query never holds a reader the service's own reads (devices, the outbox) wait for.
    let analyticsReader: any DatabaseReader
    /// Whether the database keeps a write-ahead log (a file; not the in-memory one of tests).
    let keepsWAL: Bool
    /// Seals the secrets kept for sending (webhook and Web Push auth secrets).
    let secrets: SecretBox

    final class CheckpointDeferral: @unchecked Sendable {
        // Accessed only inside `database.write` closures, which GRDB runs one at a time.
        var isDeferred = false
    }
    let checkpoints = CheckpointDeferral()
    final class PayloadCache: @unchecked Sendable {
        // Accessed only inside `database.write` closures, which GRDB runs one at a time.
        var bodies: [Int64: Data] = [:]
    }
    let payloadCache = PayloadCache()
    /// The row of each delivery this store claimed and has not finished: finishing it then finds
    /// the row by its id (a delivery-id index cost a random probe per delivery, a third of what
    /// finishing cost, and is gone since migration 7). Rows are still checked by delivery id, so
    /// a stale entry changes nothing; a delivery claimed by another store on the file is found
    /// among the rows being sent (`Queries.sendingRow`).
    final class ClaimedRows: @unchecked Sendable {
        // Accessed only inside `database.write` closures, which GRDB runs one at a time.
        var rowIDs: [UUID: Int64] = [:]

        func take(_ id: UUID, _ db: Database) throws -> Int64? {
            if let rowID = rowIDs.removeValue(forKey: id) { return rowID }
            return try Int64.fetchOne(db, sql: Queries.sendingRow, arguments: [id.text(uppercase: true)])
        }
    }
    let claimedRows = ClaimedRows()
    /// The analytics tables' numbers and keys, in memory.
    let analytics = AnalyticsCache()

    /// Opens (creating and migrating if needed) the database at `path`, readable by its owner only
    /// (0600). `secrets` seals the secrets it keeps; without it the key is read from
    /// `secretsKeyFile` (by default `secrets.key` beside the database), a file of its own which an
    /// operator may keep elsewhere. A missing key file is created (0600) only when the database
    /// holds no secret sealed with a key: a new key could not open them.
    ///
    /// A database that a newer nohit migrated (a migration this one does not know) is refused.
    package init(path: String, secrets: SecretBox? = nil, secretsKeyFile: String? = nil) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let keyPath =
            secretsKeyFile
            ?? ((directory.isEmpty ? "." : directory) as NSString).appendingPathComponent("secrets.key")
        let existingKey = try secrets ?? SecretBox.existingKeyFile(at: keyPath)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // A committed transaction survives the process being killed (it is in the OS's
            // cache); fsync per commit would only guard against power loss.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // A fan-out touches every page of the outbox's indexes: read them through a memory map
            // and keep more of them cached than SQLite's 2 MB default, instead of a pread per page.
            try db.execute(sql: "PRAGMA mmap_size = 268435456")
            try db.execute(sql: "PRAGMA cache_size = -32768")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        database = pool
        keepsWAL = true
        let migrator = Self.migrator
        let unknown = try pool.read { db in try migrator.appliedIdentifiers(db).subtracting(migrator.migrations) }
        if let newest = unknown.sorted().last {
            throw StoreError.configuration(
                "the database \(path) was migrated by a newer nohit (its migration '\(newest)' is unknown to this "
                    + "one): run that version, or restore a backup made before the upgrade")
        }
        try migrator.migrate(pool)
        if let existingKey {
            self.secrets = existingKey
        } else {
            let sealed = try pool.read { db in try Int.fetchOne(db, sql: Queries.sealedSecrets) ?? 0 }
            guard sealed == 0 else { throw SecretBox.missingKey(keyPath, sealed: sealed, database: path) }
            self.secrets = try SecretBox.newKeyFile(at: keyPath)
        }
        var readOnly = configuration
        readOnly.readonly = true
        // A reader for every query the settings let run at once (`analytics.concurrent-queries`,
        // at most 256) and four more, for the queries paused while other clients' take their turn
        // (`AnalyticsQueries.maximumPaused`): a query never waits for a reader a paused one holds.
        // Readers are opened as they are needed.
        readOnly.maximumReaderCount = 260
        analyticsReader = try DatabasePool(path: path, configuration: readOnly)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
        try sealPlaintextSecrets()
    }

    /// An in-memory database, for tests.
    package init(inMemory: Void, secrets: SecretBox = .ephemeral()) throws {
        let queue = try DatabaseQueue()
        database = queue
        analyticsReader = queue
        keepsWAL = false
        self.secrets = secrets
        try Self.migrator.migrate(queue)
    }

    /// Secrets stored before they were sealed (an older database) are sealed now, in one
    /// transaction. Cheap when there are none: it reads only webhook and Web Push rows.
    func sealPlaintextSecrets() throws {
        try database.write { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, channel, key1, key2 FROM devices WHERE channel IN ('webhook', 'web-push')")
            for row in rows {
                let id: String = row["id"]
                let column = (row["channel"] as String) == "webhook" ? "key1" : "key2"
                guard let stored: String = row[column], !SecretBox.isSealed(stored) else { continue }
                try db.execute(
                    sql: "UPDATE devices SET \(column) = ? WHERE id = ?", arguments: [try secrets.seal(stored), id])
            }
        }
    }

    /// The dispatchers' outbox queries. A test checks their plans: none of them scans the table
    /// or sorts, so none reads through the finished rows a season piles up.
    enum Queries {
        /// Stored secrets sealed with the secrets key.
        static let sealedSecrets = """
            SELECT count(*) FROM devices
            WHERE (channel = 'webhook' AND key1 LIKE 'enc1:%') OR (channel = 'web-push' AND key2 LIKE 'enc1:%')
            """
        /// Due pending rows of a channel, oldest first, marked as being sent.
        static let claim = """
            UPDATE outbox SET state = 1, attempts = attempts + 1, attempt_started_at = ?
            WHERE id IN (SELECT id FROM outbox WHERE channel = ? AND state = 0 AND due_at <= ?
                         ORDER BY due_at, id LIMIT ?)
            RETURNING id
            """
        /// What a dispatcher needs of claimed rows, with their devices' current addresses (from
        /// the covering index `devices_sending`: one lookup per row, not an index and a table;
        /// SQLite would pick the id index). In row order, which the IN list walks: all of them are
        /// due, and sorting them by due time cost a sort per claim.
        static func claimed(_ rowIDs: [Int64]) -> String {
            """
            SELECT o.delivery_id, o.device_id, o.payload_id, o.bid_key, o.created_at, o.expires_at, o.attempts,
                o.token_refreshed, d.channel, d.address, d.environment, d.topic, d.key1, d.key2, d.registered_at,
                o.id, d.active, d.status_reason
            FROM outbox o LEFT JOIN devices d INDEXED BY devices_sending ON d.id = o.device_id
            WHERE o.id IN (\(rowIDs.map(String.init).joined(separator: ",")))
            ORDER BY o.id
            """
        }
        /// Whether a channel has rows being sent, or pending rows due by a time: one probe each.
        static let unfinished = """
            SELECT EXISTS (SELECT 1 FROM outbox WHERE channel = ? AND state = 1)
                OR EXISTS (SELECT 1 FROM outbox WHERE channel = ? AND state = 0 AND due_at <= ?)
            """
        static let nextDue = "SELECT MIN(due_at) FROM outbox WHERE channel = ? AND state = 0"
        /// The active devices in the directory's order, along `devices_active` (no sort).
        static let activeDevices = "SELECT * FROM devices WHERE active = 1 ORDER BY registered_at, id"
        /// A pruned device's queued alerts fail with it (a scan of the pending rows only).
        static let dropPendingOfDevice =
            "UPDATE outbox SET state = 3, finished_at = ?, last_error = ? WHERE device_id = ? AND state = 0"
        /// Rows left being sent by a process that stopped without finishing them, and whether a
        /// later alert of the same bid reached the device since: among the moments of the row's
        /// game (a bid is a game's side), the device's row of each, found by (moment, device).
        static let inDoubt = """
            SELECT o.id, o.delivery_id,
                EXISTS (SELECT 1 FROM moments this
                        JOIN moments m ON m.game_id = this.game_id
                        JOIN outbox later ON later.moment_id = m.id AND later.device_id = o.device_id
                        WHERE this.id = o.moment_id AND later.bid_key = o.bid_key AND later.state = 2
                            AND later.created_at > o.created_at)
            FROM outbox o WHERE o.state = 1
            """
        /// A row being sent, by its delivery id: among the rows being sent only (the delivery id
        /// has no index of its own; see migration 7).
        static let sendingRow = "SELECT id FROM outbox WHERE state = 1 AND delivery_id = ?"
        /// The devices told a bid is on.
        static let followers = "SELECT device_id FROM bid_followers WHERE bid_key = ?"
    }

    /// Outbox row states.
    enum State: Int {
        case pending = 0
        case sending = 1
        case delivered = 2
        case failed = 3
        case superseded = 4
        /// Refused for the server's configuration; pending again at the next start.
        case held = 5
    }
}
