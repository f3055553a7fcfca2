import Alerts
import Foundation
import GRDB

/// Every store on one SQLite file (WAL), the default: nothing to install, `nohit serve` just
/// works. Writes that belong together (a moment and all its deliveries) are one transaction.
package final class SQLiteStore: DeviceStore, SubscriptionStore, MomentStore, OutboxStore {
    private let database: any DatabaseWriter
    /// Whether the database keeps a write-ahead log (a file; not the in-memory one of tests).
    private let keepsWAL: Bool

    /// Opens (creating and migrating if needed) the database at `path`.
    package init(path: String) throws {
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
        try Self.migrator.migrate(pool)
    }

    /// An in-memory database, for tests.
    package init(inMemory: Void) throws {
        let queue = try DatabaseQueue()
        database = queue
        keepsWAL = false
        try Self.migrator.migrate(queue)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1 devices, moments, outbox") { db in
            try db.execute(
                sql: """
                    CREATE TABLE devices (
                        id TEXT PRIMARY KEY,
                        channel TEXT NOT NULL,
                        address TEXT NOT NULL,
                        environment TEXT,
                        topic TEXT,
                        key1 TEXT,
                        key2 TEXT,
                        preferences TEXT NOT NULL,
                        secret_hash TEXT NOT NULL,
                        registered_at REAL NOT NULL,
                        active INTEGER NOT NULL,
                        status_reason TEXT,
                        status_at REAL
                    );
                    CREATE TABLE favourite_teams (
                        device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
                        team TEXT NOT NULL,
                        PRIMARY KEY (device_id, team)
                    ) WITHOUT ROWID;
                    CREATE INDEX favourite_teams_team ON favourite_teams(team);
                    CREATE TABLE moments (
                        id TEXT PRIMARY KEY,
                        game_id TEXT NOT NULL,
                        occurred_at REAL NOT NULL,
                        body TEXT NOT NULL
                    );
                    CREATE INDEX moments_game ON moments(game_id, occurred_at);
                    CREATE INDEX moments_time ON moments(occurred_at);
                    CREATE TABLE payloads (
                        id INTEGER PRIMARY KEY,
                        key TEXT NOT NULL UNIQUE,
                        body BLOB NOT NULL
                    );
                    CREATE TABLE outbox (
                        id INTEGER PRIMARY KEY,
                        delivery_id TEXT NOT NULL UNIQUE,
                        moment_id TEXT NOT NULL REFERENCES moments(id),
                        device_id TEXT NOT NULL,
                        channel TEXT NOT NULL,
                        payload_id INTEGER NOT NULL REFERENCES payloads(id),
                        bid_key TEXT NOT NULL,
                        moment_kind TEXT NOT NULL,
                        moment_outs INTEGER NOT NULL,
                        created_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        due_at REAL NOT NULL,
                        state INTEGER NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        token_refreshed INTEGER NOT NULL DEFAULT 0,
                        attempt_started_at REAL,
                        finished_at REAL,
                        last_error TEXT,
                        resent_in_doubt INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX outbox_due ON outbox(channel, state, due_at);
                    CREATE INDEX outbox_bid ON outbox(bid_key, device_id);
                    """)
        }
        migrator.registerMigration("2 device changes") { db in
            // A counter every change to the devices table bumps, whichever process makes it: what
            // the in-memory directory of active devices checks before each fan-out.
            try db.execute(
                sql: """
                    CREATE TABLE device_changes (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
                    INSERT INTO device_changes (id, version) VALUES (1, 0);
                    CREATE TRIGGER devices_inserted AFTER INSERT ON devices
                        BEGIN UPDATE device_changes SET version = version + 1; END;
                    CREATE TRIGGER devices_updated AFTER UPDATE ON devices
                        BEGIN UPDATE device_changes SET version = version + 1; END;
                    CREATE TRIGGER devices_deleted AFTER DELETE ON devices
                        BEGIN UPDATE device_changes SET version = version + 1; END;
                    """)
        }
        migrator.registerMigration("3 device versions") { db in
            // Each device row carries the version of its last change, so the directory of active
            // devices reads only what changed since it last looked; removals are counted apart (a
            // removed row leaves nothing to read) and make it read everything again.
            try db.execute(
                sql: """
                    ALTER TABLE devices ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE device_changes ADD COLUMN removals INTEGER NOT NULL DEFAULT 0;
                    DROP TRIGGER devices_inserted;
                    DROP TRIGGER devices_updated;
                    DROP TRIGGER devices_deleted;
                    CREATE TRIGGER devices_inserted AFTER INSERT ON devices BEGIN
                        UPDATE device_changes SET version = version + 1;
                        UPDATE devices SET version = (SELECT version FROM device_changes WHERE id = 1)
                            WHERE id = NEW.id;
                    END;
                    CREATE TRIGGER devices_updated AFTER UPDATE ON devices WHEN NEW.version = OLD.version BEGIN
                        UPDATE device_changes SET version = version + 1;
                        UPDATE devices SET version = (SELECT version FROM device_changes WHERE id = 1)
                            WHERE id = NEW.id;
                    END;
                    CREATE TRIGGER devices_deleted AFTER DELETE ON devices BEGIN
                        UPDATE device_changes SET version = version + 1, removals = removals + 1;
                    END;
                    CREATE INDEX devices_version ON devices(version);
                    """)
        }
        migrator.registerMigration("4 partial outbox indexes") { db in
            // Only the rows a dispatcher looks for are indexed: pending ones by due time, and the
            // ones being sent. The full (channel, state, due_at) index held every row the outbox
            // ever had, and each claim and each finish moved a row's entry in it (a delete and an
            // insert each). Now a claim moves it from the pending index to the sending one and a
            // finish only drops it, in trees no bigger than the work under way.
            try db.execute(
                sql: """
                    DROP INDEX outbox_due;
                    CREATE INDEX outbox_pending ON outbox(channel, due_at) WHERE state = 0;
                    CREATE INDEX outbox_sending ON outbox(state, channel) WHERE state = 1;
                    """)
        }
        migrator.registerMigration("5 devices sending index") { db in
            // Each claimed row looks up its device's current address: with the columns it needs
            // in the index, that is one lookup instead of the id index and then the (wider, with
            // preferences) table row, a random page each.
            try db.execute(
                sql: """
                    CREATE INDEX devices_sending ON devices(
                        id, channel, address, environment, topic, key1, key2, registered_at, active, status_reason);
                    """)
        }
        migrator.registerMigration("6 active devices index") { db in
            // The directory reads every active device in registration order: along this index,
            // rather than sorting them all (SQLite's sorter took about 80 MB for 100,000 devices).
            try db.execute(
                sql: "CREATE INDEX devices_active ON devices(registered_at, id) WHERE active = 1")
        }
        migrator.registerMigration("7 bid followers, outbox unique by moment and device") { db in
            // The outbox grows all season, and each of its indexes keyed by something random (a
            // delivery id, a device id) took a moment's 100,000 inserts all over the tree: nearly
            // every page of it changed, and went through the WAL, at every moment (1.7 s to record
            // a moment with 2 million rows before it, 0.6 s with none). Its unique key is now
            // (moment, device), the pair the delivery id is derived from, so a moment's entries
            // sit together in a new stretch of the index. The delivery id is still each row's (the
            // provider's id for the push), looked up only among the rows being sent.
            //
            // The planner's history of a bid was every outbox row of it, read at each of its
            // moments (400,000 rows by a no-hitter's last out with 100,000 devices): now the
            // devices told the bid is on are kept apart, one row each.
            let progressKinds = Moment.Kind.allCases.filter(\.isProgress).map { "'\($0.rawValue)'" }
                .joined(separator: ", ")
            try db.execute(
                sql: """
                    CREATE TABLE bid_followers (
                        bid_key TEXT NOT NULL,
                        device_id TEXT NOT NULL,
                        PRIMARY KEY (bid_key, device_id)
                    ) WITHOUT ROWID;
                    INSERT OR IGNORE INTO bid_followers (bid_key, device_id)
                        SELECT bid_key, device_id FROM outbox WHERE moment_kind IN (\(progressKinds));
                    CREATE TABLE outbox_keyed (
                        id INTEGER PRIMARY KEY,
                        delivery_id TEXT NOT NULL,
                        moment_id TEXT NOT NULL REFERENCES moments(id),
                        device_id TEXT NOT NULL,
                        channel TEXT NOT NULL,
                        payload_id INTEGER NOT NULL REFERENCES payloads(id),
                        bid_key TEXT NOT NULL,
                        moment_kind TEXT NOT NULL,
                        moment_outs INTEGER NOT NULL,
                        created_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        due_at REAL NOT NULL,
                        state INTEGER NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        token_refreshed INTEGER NOT NULL DEFAULT 0,
                        attempt_started_at REAL,
                        finished_at REAL,
                        last_error TEXT,
                        resent_in_doubt INTEGER NOT NULL DEFAULT 0,
                        UNIQUE (moment_id, device_id)
                    );
                    INSERT INTO outbox_keyed SELECT id, delivery_id, moment_id, device_id, channel, payload_id, bid_key,
                        moment_kind, moment_outs, created_at, expires_at, due_at, state, attempts, token_refreshed,
                        attempt_started_at, finished_at, last_error, resent_in_doubt FROM outbox ORDER BY id;
                    DROP TABLE outbox;
                    ALTER TABLE outbox_keyed RENAME TO outbox;
                    CREATE INDEX outbox_pending ON outbox(channel, due_at) WHERE state = 0;
                    CREATE INDEX outbox_sending ON outbox(state, channel) WHERE state = 1;
                    """)
        }
        return migrator
    }

    /// The dispatchers' outbox queries. A test checks their plans: none of them scans the table
    /// or sorts, so none reads through the finished rows a season piles up.
    enum Queries {
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
    }

    // MARK: Devices

    package func register(_ device: Device) async throws {
        try await register(contentsOf: [device])
    }

    package func register(contentsOf devices: [Device]) async throws {
        guard !devices.isEmpty else { return }
        try await database.write { db in
            let exists = try db.cachedStatement(sql: "SELECT 1 FROM devices WHERE id = ?")
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO devices (id, channel, address, environment, topic, key1, key2, preferences, secret_hash,
                        registered_at, active, status_reason, status_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for device in devices {
                if try Bool.fetchOne(exists, arguments: [device.id.text(uppercase: true)]) == true {
                    throw StoreError.duplicate("device \(device.id)")
                }
                let preferences = try Self.encode(device.preferences)
                let address = Self.address(of: device.channel)
                var (active, reason, at): (Bool, String?, Double?) = (true, nil, nil)
                if case .disabled(let why, let when) = device.status {
                    (active, reason, at) = (false, why, when.timeIntervalSince1970)
                }
                try insert.execute(arguments: [
                    device.id.text(uppercase: true), device.channel.kind.rawValue, address.address, address.environment,
                    address.topic, address.key1, address.key2, preferences, device.secretHash,
                    device.registeredAt.timeIntervalSince1970, active, reason, at,
                ])
                try Self.replaceFavourites(db, deviceID: device.id, teams: device.preferences.favouriteTeams)
            }
        }
    }

    package func device(id: UUID) async throws -> Device? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM devices WHERE id = ?", arguments: [id.text(uppercase: true)]).map {
                try Self.device($0)
            }
        }
    }

    package func updateChannel(id: UUID, to channel: DeviceChannel, at date: Date) async throws -> Bool {
        let address = Self.address(of: channel)
        return try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE devices SET channel = ?, address = ?, environment = ?, topic = ?, key1 = ?, key2 = ?,
                        registered_at = ?, active = 1, status_reason = NULL, status_at = NULL
                    WHERE id = ?
                    """,
                arguments: [
                    channel.kind.rawValue, address.address, address.environment, address.topic, address.key1,
                    address.key2, date.timeIntervalSince1970, id.text(uppercase: true),
                ])
            return db.changesCount > 0
        }
    }

    package func disable(id: UUID, reason: String, at date: Date) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE devices SET active = 0, status_reason = ?, status_at = ? WHERE id = ?",
                arguments: [reason, date.timeIntervalSince1970, id.text(uppercase: true)])
            return db.changesCount > 0
        }
    }

    package func delete(id: UUID) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: "DELETE FROM favourite_teams WHERE device_id = ?", arguments: [id.text(uppercase: true)])
            try db.execute(sql: "DELETE FROM devices WHERE id = ?", arguments: [id.text(uppercase: true)])
            return db.changesCount > 0
        }
    }

    package func activeDevices() async throws -> [Device] {
        try await database.read { db in try Self.devices(db, sql: Queries.activeDevices) }
    }

    package func deviceChanges(after version: Int?) async throws -> DeviceChanges {
        try await database.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT version, removals FROM device_changes WHERE id = 1")
            let current: Int = row?["version"] ?? 0
            let removals: Int = row?["removals"] ?? 0
            let devices =
                if let version {
                    try Self.devices(
                        db, sql: "SELECT * FROM devices WHERE version > ? ORDER BY registered_at, id",
                        arguments: [version])
                } else {
                    try Self.devices(db, sql: Queries.activeDevices)
                }
            return DeviceChanges(version: current, removals: removals, devices: devices)
        }
    }

    /// Devices, read one row at a time: the directory's full read would otherwise hold every
    /// row's copy at once beside the devices made from them (for 100,000 devices, about 90 MB
    /// the allocator kept, in pieces, after it was freed).
    private static func devices(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Device] {
        // Devices share a handful of preference sets: each distinct one is decoded once.
        var decoded: [String: Preferences] = [:]
        var devices: [Device] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            devices.append(
                try device(row) { text in
                    if let known = decoded[text] { return known }
                    let preferences = try decode(Preferences.self, text)
                    decoded[text] = preferences
                    return preferences
                })
        }
        return devices
    }

    package func devicesVersion() async throws -> Int {
        try await database.read { db in
            try Int.fetchOne(db, sql: "SELECT version FROM device_changes WHERE id = 1") ?? 0
        }
    }

    package func deviceCount() async throws -> Int {
        try await database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM devices") ?? 0 }
    }

    // MARK: Subscriptions

    package func preferences(deviceID: UUID) async throws -> Preferences? {
        try await database.read { db in
            guard
                let text = try String.fetchOne(
                    db, sql: "SELECT preferences FROM devices WHERE id = ?", arguments: [deviceID.text(uppercase: true)]
                )
            else { return nil }
            return try Self.decode(Preferences.self, text)
        }
    }

    package func updatePreferences(deviceID: UUID, to preferences: Preferences) async throws -> Bool {
        let text = try Self.encode(preferences)
        return try await database.write { db in
            try db.execute(
                sql: "UPDATE devices SET preferences = ? WHERE id = ?",
                arguments: [text, deviceID.text(uppercase: true)])
            guard db.changesCount > 0 else { return false }
            try Self.replaceFavourites(db, deviceID: deviceID, teams: preferences.favouriteTeams)
            return true
        }
    }

    package func deviceIDs(favouring team: String) async throws -> [UUID] {
        try await database.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT f.device_id FROM favourite_teams f JOIN devices d ON d.id = f.device_id
                    WHERE f.team = ? AND d.active = 1 ORDER BY f.device_id
                    """, arguments: [team.uppercased()]
            ).compactMap { UUID(text: $0) }
        }
    }

    private static func replaceFavourites(_ db: Database, deviceID: UUID, teams: [String]) throws {
        try db.execute(
            sql: "DELETE FROM favourite_teams WHERE device_id = ?", arguments: [deviceID.text(uppercase: true)])
        for team in Set(teams.map { $0.uppercased() }) {
            try db.execute(
                sql: "INSERT INTO favourite_teams (device_id, team) VALUES (?, ?)",
                arguments: [deviceID.text(uppercase: true), team])
        }
    }

    // MARK: Moments

    package func moment(id: String) async throws -> StoredMoment? {
        try await database.read { db in
            try String.fetchOne(db, sql: "SELECT body FROM moments WHERE id = ?", arguments: [id])
                .map { try Self.decode(StoredMoment.self, $0) }
        }
    }

    package func recentMoments(limit: Int) async throws -> [StoredMoment] {
        try await database.read { db in
            try String.fetchAll(
                db, sql: "SELECT body FROM moments ORDER BY occurred_at DESC, rowid DESC LIMIT ?",
                arguments: [max(0, limit)]
            ).map { try Self.decode(StoredMoment.self, $0) }
        }
    }

    package func moments(gameID: String) async throws -> [StoredMoment] {
        try await database.read { db in
            try String.fetchAll(
                db, sql: "SELECT body FROM moments WHERE game_id = ? ORDER BY occurred_at, rowid", arguments: [gameID]
            ).map { try Self.decode(StoredMoment.self, $0) }
        }
    }

    // MARK: Outbox

    /// SQLite copies the WAL back into the database (a checkpoint) at the commit that takes it
    /// past 1,000 pages. A fan-out writes about 120 MB of WAL for 100,000 devices (the rows, then
    /// each claim and each batch of outcomes), so it checkpointed dozens of times, inside its own
    /// transactions, copying the same hot pages again each time. From a moment's record until the
    /// dispatchers are idle, checkpoints wait (up to this many pages, 256 MB, as a backstop); a
    /// dispatcher going idle makes one once no channel has anything being sent or due
    /// (`deliveriesSettled`).
    static let fanOutCheckpointPages = 65536
    static let checkpointPages = 1000

    private final class CheckpointDeferral: @unchecked Sendable {
        // Accessed only inside `database.write` closures, which GRDB runs one at a time.
        var isDeferred = false
    }
    private let checkpoints = CheckpointDeferral()

    package func deliveriesSettled(now: Date) async throws {
        guard keepsWAL else { return }
        let checkpoints = checkpoints
        try await database.writeWithoutTransaction { db in
            guard checkpoints.isDeferred else { return }
            let probe = try db.cachedStatement(sql: Queries.unfinished)
            for channel in ChannelKind.allCases {
                let busy = try Bool.fetchOne(
                    probe, arguments: [channel.rawValue, channel.rawValue, now.timeIntervalSince1970])
                if busy == true { return }
            }
            checkpoints.isDeferred = false
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.checkpointPages)")
            try db.checkpoint(.passive)
        }
    }

    @discardableResult
    package func record(_ moment: StoredMoment, payloads: [StoredPayload], deliveries: [NewDelivery]) async throws
        -> Bool
    {
        let body = try Self.encode(moment)
        let checkpoints = keepsWAL ? checkpoints : nil
        return try await database.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO moments (id, game_id, occurred_at, body) VALUES (?, ?, ?, ?)",
                arguments: [moment.moment.id, moment.moment.gameID, moment.occurredAt.timeIntervalSince1970, body])
            guard db.changesCount > 0 else { return false }
            if let checkpoints, !deliveries.isEmpty, !checkpoints.isDeferred {
                // Before this transaction's commit, which would otherwise be the first to checkpoint.
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.fanOutCheckpointPages)")
                checkpoints.isDeferred = true
            }
            var payloadIDs: [String: Int64] = [:]
            for payload in payloads {
                try db.execute(
                    sql:
                        "INSERT INTO payloads (key, body) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET body = excluded.body",
                    arguments: [payload.key, payload.body])
                payloadIDs[payload.key] = try Int64.fetchOne(
                    db, sql: "SELECT id FROM payloads WHERE key = ?", arguments: [payload.key])
            }
            let insert = try DirectStatement(
                db,
                sql: """
                    INSERT INTO outbox (delivery_id, moment_id, device_id, channel, payload_id, bid_key, moment_kind,
                        moment_outs, created_at, expires_at, due_at, state)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
                    ON CONFLICT(moment_id, device_id) DO NOTHING
                    """)
            let follow = try DirectStatement(
                db, sql: "INSERT INTO bid_followers (bid_key, device_id) VALUES (?, ?) ON CONFLICT DO NOTHING")
            for delivery in deliveries {
                guard let payloadID = payloadIDs[delivery.payloadKey] else {
                    throw StoreError.corrupt("delivery \(delivery.id) names payload \(delivery.payloadKey), not given")
                }
                try insert.execute { row in
                    row.bind(delivery.id)
                    row.bind(moment.moment.id)
                    row.bind(delivery.deviceID)
                    row.bind(delivery.channel.rawValue)
                    row.bind(payloadID)
                    row.bind(delivery.bidKey)
                    row.bind(delivery.momentKind.rawValue)
                    row.bind(delivery.momentOuts)
                    row.bind(moment.occurredAt)
                    row.bind(delivery.expiresAt)
                    row.bind(delivery.notBefore)
                }
                if delivery.momentKind.isProgress {
                    try follow.execute { row in
                        row.bind(delivery.bidKey)
                        row.bind(delivery.deviceID)
                    }
                }
            }
            return true
        }
    }

    package func isRecorded(momentID: String) async throws -> Bool {
        try await database.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM moments WHERE id = ?)", arguments: [momentID])
                ?? false
        }
    }

    package func followers(bidKey: String) async throws -> Set<UUID> {
        try await database.read { db in
            var devices = Set<UUID>()
            let ids = try String.fetchCursor(db, sql: Queries.followers, arguments: [bidKey])
            while let text = try ids.next() {
                guard let id = UUID(text: text) else { throw StoreError.corrupt("bid follower \(text) of \(bidKey)") }
                devices.insert(id)
            }
            return devices
        }
    }

    private final class PayloadCache: @unchecked Sendable {
        // Accessed only inside `database.write` closures, which GRDB runs one at a time.
        var bodies: [Int64: Data] = [:]
    }
    private let payloadCache = PayloadCache()

    /// The row of each delivery this store claimed and has not finished: finishing it then finds
    /// the row by its id (a delivery-id index cost a random probe per delivery, a third of what
    /// finishing cost, and is gone since migration 7). Rows are still checked by delivery id, so
    /// a stale entry changes nothing; a delivery claimed by another store on the file is found
    /// among the rows being sent (`Queries.sendingRow`).
    private final class ClaimedRows: @unchecked Sendable {
        // Accessed only inside `database.write` closures, which GRDB runs one at a time.
        var rowIDs: [UUID: Int64] = [:]

        func take(_ id: UUID, _ db: Database) throws -> Int64? {
            if let rowID = rowIDs.removeValue(forKey: id) { return rowID }
            return try Int64.fetchOne(db, sql: Queries.sendingRow, arguments: [id.text(uppercase: true)])
        }
    }
    private let claimedRows = ClaimedRows()

    package func claim(channel: ChannelKind, now: Date, limit: Int) async throws -> [ClaimedDelivery] {
        let cache = payloadCache
        let claimedRows = claimedRows
        return try await database.write { db in
            let rowIDs = try Int64.fetchAll(
                db, sql: Queries.claim,
                arguments: [now.timeIntervalSince1970, channel.rawValue, now.timeIntervalSince1970, limit])
            guard !rowIDs.isEmpty else { return [] }
            var claimed: [ClaimedDelivery] = []
            claimed.reserveCapacity(rowIDs.count)
            let rows = try Row.fetchCursor(db, sql: Queries.claimed(rowIDs))
            // Alerts queued for a device since deleted or disabled are not sent: they fail here, with
            // the reason (before, a deleted device's rows stayed claimed for ever).
            var unsendable: [(rowID: Int64, reason: String)] = []
            while let row = try rows.next() {
                let active: Int? = row[16]
                guard active == 1 else {
                    let reason = (row[17] as String?).map { "device disabled: \($0)" } ?? "device disabled"
                    unsendable.append((row[15], active == nil ? "device removed" : reason))
                    continue
                }
                let payloadID: Int64 = row[2]
                let payload: Data
                if let cached = cache.bodies[payloadID] {
                    payload = cached
                } else {
                    payload =
                        try Data.fetchOne(db, sql: "SELECT body FROM payloads WHERE id = ?", arguments: [payloadID])
                        ?? Data()
                    if cache.bodies.count > 1024 { cache.bodies.removeAll() }
                    cache.bodies[payloadID] = payload
                }
                guard let id = try Self.uuid(row, 0), let device = try Self.uuid(row, 1),
                    let channel = Self.channel(
                        kind: row[8], address: row[9], environment: row[10], topic: row[11], key1: row[12],
                        key2: row[13])
                else { throw StoreError.corrupt("outbox row \(row[0] as String)") }
                if claimedRows.rowIDs.count >= 100_000 { claimedRows.rowIDs.removeAll() }
                claimedRows.rowIDs[id] = row[15]
                claimed.append(
                    ClaimedDelivery(
                        id: id, deviceID: device, channel: channel, payload: payload, bidKey: row[3],
                        createdAt: Date(timeIntervalSince1970: row[4]), expiresAt: Date(timeIntervalSince1970: row[5]),
                        deviceRegisteredAt: Date(timeIntervalSince1970: row[14]), attempts: row[6],
                        tokenRefreshed: row[7]))
            }
            let drop = try db.cachedStatement(
                sql: "UPDATE outbox SET state = 3, finished_at = ?, last_error = ? WHERE id = ?")
            for (rowID, reason) in unsendable {
                try drop.execute(arguments: [now.timeIntervalSince1970, reason, rowID])
            }
            return claimed
        }
    }

    package func release(_ ids: [UUID]) async throws {
        guard !ids.isEmpty else { return }
        let claimedRows = claimedRows
        try await database.write { db in
            let release = try db.cachedStatement(
                sql:
                    "UPDATE outbox SET state = 0, attempts = attempts - 1 WHERE id = ? AND delivery_id = ? AND state = 1"
            )
            for id in ids {
                guard let rowID = try claimedRows.take(id, db) else { continue }
                try release.execute(arguments: [rowID, id.text(uppercase: true)])
            }
        }
    }

    package func complete(_ results: [DeliveryResult]) async throws {
        guard !results.isEmpty else { return }
        let claimedRows = claimedRows
        try await database.write { db in
            let finishing = try DirectStatement(
                db, sql: "UPDATE outbox SET state = ?, finished_at = ?, last_error = ? WHERE id = ? AND delivery_id = ?"
            )
            let retry = try DirectStatement(
                db,
                sql: """
                    UPDATE outbox SET state = 0, due_at = ?, last_error = ?, token_refreshed = ?
                    WHERE id = ? AND delivery_id = ?
                    """)
            func finish(_ id: UUID, row rowID: Int64, as state: State, at: Date, reason: String?) throws {
                try finishing.execute { row in
                    row.bind(state.rawValue)
                    row.bind(at)
                    row.bind(reason)
                    row.bind(rowID)
                    row.bind(id)
                }
            }
            for result in results {
                guard let rowID = try claimedRows.take(result.id, db) else { continue }
                switch result {
                case .delivered(let id, let at):
                    try finish(id, row: rowID, as: .delivered, at: at, reason: nil)
                case .retry(let id, let at, let reason, let refreshed):
                    try retry.execute { row in
                        row.bind(at)
                        row.bind(reason)
                        row.bind(refreshed)
                        row.bind(rowID)
                        row.bind(id)
                    }
                case .failed(let id, let reason, let at):
                    try finish(id, row: rowID, as: .failed, at: at, reason: reason)
                case .pruned(let id, let device, let reason, let at):
                    try finish(id, row: rowID, as: .failed, at: at, reason: reason)
                    try db.execute(
                        sql: "UPDATE devices SET active = 0, status_reason = ?, status_at = ? WHERE id = ?",
                        arguments: [reason, at.timeIntervalSince1970, device.text(uppercase: true)])
                    // Nothing more goes to a pruned device.
                    try db.execute(
                        sql: Queries.dropPendingOfDevice,
                        arguments: [at.timeIntervalSince1970, "device pruned: \(reason)", device.text(uppercase: true)])
                }
            }
        }
    }

    package func recoverInDoubt(now: Date) async throws -> RecoveryReport {
        try await database.write { db in
            var report = RecoveryReport()
            let rows = try Row.fetchAll(db, sql: Queries.inDoubt)
            for row in rows {
                let rowID: Int64 = row[0]
                guard let id = UUID(text: row[1]) else { throw StoreError.corrupt("outbox row \(rowID)") }
                if row[2] as Bool {
                    report.superseded.append(id)
                    try db.execute(
                        sql: "UPDATE outbox SET state = 4, finished_at = ?, last_error = ? WHERE id = ?",
                        arguments: [
                            now.timeIntervalSince1970,
                            "in doubt after a restart; a later alert of the bid was delivered",
                            rowID,
                        ])
                } else {
                    report.requeued.append(id)
                    try db.execute(
                        sql:
                            "UPDATE outbox SET state = 0, due_at = ?, resent_in_doubt = resent_in_doubt + 1 WHERE id = ?",
                        arguments: [now.timeIntervalSince1970, rowID])
                }
            }
            return report
        }
    }

    package func outboxCounts() async throws -> OutboxCounts {
        try await database.read { db in
            var counts = OutboxCounts()
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) FROM outbox GROUP BY state") {
                let count: Int = row[1]
                switch State(rawValue: row[0]) {
                case .pending: counts.pending = count
                case .sending: counts.sending = count
                case .delivered: counts.delivered = count
                case .failed: counts.failed = count
                case .superseded: counts.superseded = count
                case nil: break
                }
            }
            return counts
        }
    }

    package func hasUnfinished(channels: [ChannelKind], dueBy: Date? = nil) async throws -> Bool {
        let due = dueBy?.timeIntervalSince1970 ?? .infinity
        return try await database.read { db in
            let probe = try db.cachedStatement(sql: Queries.unfinished)
            for channel in channels
            where try Bool.fetchOne(probe, arguments: [channel.rawValue, channel.rawValue, due]) == true {
                return true
            }
            return false
        }
    }

    package func nextDue(channel: ChannelKind) async throws -> Date? {
        try await database.read { db in
            try Double.fetchOne(db, sql: Queries.nextDue, arguments: [channel.rawValue])
                .map(Date.init(timeIntervalSince1970:))
        }
    }

    /// Rows in the outbox, for reports and tests: delivery id, state, attempts, in-doubt resends.
    package func outboxRows() async throws -> [(
        id: UUID, state: Int, attempts: Int, resentInDoubt: Int, error: String?
    )] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT delivery_id, state, attempts, resent_in_doubt, last_error FROM outbox ORDER BY id"
            )
            .compactMap { row in
                UUID(text: row[0]).map { ($0, row[1], row[2], row[3], row[4]) }
            }
        }
    }

    // MARK: Coding

    private struct Address {
        var address: String
        var environment: String?
        var topic: String?
        var key1: String?
        var key2: String?
    }

    private static func address(of channel: DeviceChannel) -> Address {
        switch channel {
        case .apns(let token, let environment, let topic), .liveActivity(let token, let environment, let topic):
            Address(address: token, environment: environment.rawValue, topic: topic)
        case .webPush(let endpoint, let p256dh, let auth):
            Address(address: endpoint, key1: p256dh, key2: auth)
        case .webhook(let url, let secret):
            Address(address: url, key1: secret)
        case .console(let label):
            Address(address: label)
        }
    }

    private static func channel(
        kind: String, address: String, environment: String?, topic: String?, key1: String?, key2: String?
    ) -> DeviceChannel? {
        switch ChannelKind(rawValue: kind) {
        case .apns:
            guard let environment = environment.flatMap(APNsEnvironment.init(rawValue:)), let topic else { return nil }
            return .apns(token: address, environment: environment, topic: topic)
        case .liveActivity:
            guard let environment = environment.flatMap(APNsEnvironment.init(rawValue:)), let topic else { return nil }
            return .liveActivity(token: address, environment: environment, topic: topic)
        case .webPush:
            guard let key1, let key2 else { return nil }
            return .webPush(endpoint: address, p256dh: key1, auth: key2)
        case .webhook:
            guard let key1 else { return nil }
            return .webhook(url: address, secret: key1)
        case .console:
            return .console(label: address)
        case nil:
            return nil
        }
    }

    private static func device(
        _ row: Row, preferences: (String) throws -> Preferences = { try decode(Preferences.self, $0) }
    ) throws -> Device {
        guard let id = UUID(text: row["id"]),
            let channel = channel(
                kind: row["channel"], address: row["address"], environment: row["environment"], topic: row["topic"],
                key1: row["key1"], key2: row["key2"])
        else { throw StoreError.corrupt("device \(row["id"] as String)") }
        let active: Bool = row["active"]
        let status: Device.Status =
            active
            ? .active
            : .disabled(reason: row["status_reason"] ?? "", at: Date(timeIntervalSince1970: row["status_at"] ?? 0))
        return Device(
            id: id, channel: channel, preferences: try preferences(row["preferences"]),
            registeredAt: Date(timeIntervalSince1970: row["registered_at"]), secretHash: row["secret_hash"],
            status: status)
    }

    /// The UUID in a text column, read from SQLite's bytes (no String made on the way).
    private static func uuid(_ row: Row, _ index: Int) throws -> UUID? {
        try row.withUnsafeData(atIndex: index) { data in data?.withUnsafeBytes { UUID(text: $0) } }
    }

    private static func encode<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .secondsSince1970
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError.corrupt("\(type): \(error)")
        }
    }
}
