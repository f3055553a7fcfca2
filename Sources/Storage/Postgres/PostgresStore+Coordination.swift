import Baseball
import Foundation
import PostgresNIO

/// What instances agree through PostgreSQL (`CoordinationStore`): heartbeats, runs, game leases
/// (by the database's clock, so instances whose clocks differ still agree), and the shared game
/// log with its `NOTIFY`.
extension PostgresStore: CoordinationStore {
    /// The channel a `NOTIFY` names when an item is appended (its payload: the run).
    static let itemsChannel = "nohit_items"
    /// The transaction advisory lock appends to a run's log take (with the run's hash), so that its
    /// numbers commit in order.
    static let appendLock: Int32 = 0x6C6F_6773

    package func heartbeat(about: String) async throws -> [String] {
        try await execute(
            """
            INSERT INTO instances (id, about) VALUES (\(instanceID), \(about))
            ON CONFLICT (id) DO UPDATE SET heartbeat_at = clock_timestamp(), about = excluded.about
            """)
        var alive: [String] = []
        for try await id in try await client.query(
            """
            SELECT id FROM instances
            WHERE heartbeat_at > clock_timestamp() - make_interval(secs => \(leaseSeconds)) ORDER BY id
            """, logger: logger
        ).decode(String.self) {
            alive.append(id)
        }
        return alive
    }

    package func leave() async throws {
        try await transaction { connection in
            _ = try await connection.query(
                """
                UPDATE game_follows f SET released_at = clock_timestamp()
                FROM game_leases l
                WHERE l.owner = \(self.instanceID) AND f.run = l.run AND f.game_id = l.game_id
                    AND f.owner = l.owner AND f.released_at IS NULL
                """, logger: self.logger
            ).collect()
            _ = try await connection.query(
                """
                UPDATE game_leases SET owner = NULL, expires_at = clock_timestamp() WHERE owner = \(self.instanceID)
                """, logger: self.logger
            ).collect()
            _ = try await connection.query("DELETE FROM instances WHERE id = \(self.instanceID)", logger: self.logger)
                .collect()
        }
    }

    package func joinRun(key: String, epoch: Double, notBefore: Date) async throws -> SharedRun {
        try await transaction { connection in
            // One instance at a time decides, so instances starting together join one run.
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext(\(key)))", logger: self.logger
            ).collect()
            // The latest run of the key, while it is still being played: begun within `notBefore`,
            // or with an instance in it alive (its day's clock may be over while they deliver).
            var run: SharedRun?
            for try await (id, started) in try await connection.query(
                """
                SELECT r.id, r.epoch FROM runs r
                WHERE r.key = \(key) AND (
                    r.created_at >= to_timestamp(\(notBefore.timeIntervalSince1970))
                    OR EXISTS (
                        SELECT 1 FROM instances i
                        WHERE i.run = r.id AND i.id <> \(self.instanceID)
                            AND i.heartbeat_at > clock_timestamp() - make_interval(secs => \(self.leaseSeconds))))
                ORDER BY r.created_at DESC LIMIT 1
                """, logger: self.logger
            ).decode((String, Double).self) {
                run = SharedRun(id: id, epoch: started)
            }
            let joined: SharedRun
            if let run {
                joined = run
            } else {
                let id = "\(key)#\(UUID().uuidString.prefix(8).lowercased())"
                _ = try await connection.query(
                    "INSERT INTO runs (id, key, epoch) VALUES (\(id), \(key), \(epoch))", logger: self.logger
                ).collect()
                joined = SharedRun(id: id, epoch: epoch)
            }
            // This instance is in it from now on (its heartbeats keep it so).
            _ = try await connection.query(
                """
                INSERT INTO instances (id, about, run) VALUES (\(self.instanceID), \(key), \(joined.id))
                ON CONFLICT (id) DO UPDATE SET run = excluded.run, heartbeat_at = clock_timestamp()
                """, logger: self.logger
            ).collect()
            return joined
        }
    }

    package func acquireGame(run: String, gameID: String) async throws -> Bool {
        try await transaction { connection in
            let logger = self.logger
            var previous: String?
            var acquired = false
            // Taken when free, lapsed, or already this instance's; the row's lock decides between
            // instances asking at once.
            for try await (owner, taken) in try await connection.query(
                """
                WITH before AS (
                    SELECT owner FROM game_leases WHERE run = \(run) AND game_id = \(gameID) FOR UPDATE
                ), taken AS (
                    INSERT INTO game_leases (run, game_id, owner, expires_at)
                    VALUES (\(run), \(gameID), \(self.instanceID),
                        clock_timestamp() + make_interval(secs => \(self.leaseSeconds)))
                    ON CONFLICT (run, game_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
                    WHERE game_leases.owner IS NULL OR game_leases.owner = excluded.owner
                        OR game_leases.expires_at < clock_timestamp()
                    RETURNING game_id
                )
                SELECT (SELECT owner FROM before), (SELECT count(*) FROM taken)
                """, logger: logger
            ).decode((String?, Int).self) {
                previous = owner
                acquired = taken > 0
            }
            guard acquired else { return false }
            if previous != self.instanceID {
                // The holder before (if any) stopped: its follow ended at its last renewal.
                if let previous {
                    _ = try await connection.query(
                        """
                        UPDATE game_follows SET released_at = renewed_at
                        WHERE run = \(run) AND game_id = \(gameID) AND owner = \(previous) AND released_at IS NULL
                        """, logger: logger
                    ).collect()
                }
                _ = try await connection.query(
                    "INSERT INTO game_follows (run, game_id, owner) VALUES (\(run), \(gameID), \(self.instanceID))",
                    logger: logger
                ).collect()
            }
            return true
        }
    }

    package func renewGames(run: String) async throws -> Set<String> {
        try await transaction { connection in
            var held = Set<String>()
            for try await game in try await connection.query(
                """
                UPDATE game_leases SET expires_at = clock_timestamp() + make_interval(secs => \(self.leaseSeconds))
                WHERE run = \(run) AND owner = \(self.instanceID) RETURNING game_id
                """, logger: self.logger
            ).decode(String.self) {
                held.insert(game)
            }
            _ = try await connection.query(
                """
                UPDATE game_follows SET renewed_at = clock_timestamp()
                WHERE run = \(run) AND owner = \(self.instanceID) AND released_at IS NULL
                """, logger: self.logger
            ).collect()
            return held
        }
    }

    package func releaseGame(run: String, gameID: String) async throws {
        try await transaction { connection in
            let released = try await connection.query(
                """
                UPDATE game_leases SET owner = NULL, expires_at = clock_timestamp()
                WHERE run = \(run) AND game_id = \(gameID) AND owner = \(self.instanceID) RETURNING game_id
                """, logger: self.logger
            ).collect()
            guard !released.isEmpty else { return }
            _ = try await connection.query(
                """
                UPDATE game_follows SET released_at = clock_timestamp(), renewed_at = clock_timestamp()
                WHERE run = \(run) AND game_id = \(gameID) AND owner = \(self.instanceID) AND released_at IS NULL
                """, logger: self.logger
            ).collect()
        }
    }

    package func gameOwners(run: String) async throws -> [String: String] {
        var owners: [String: String] = [:]
        for try await (game, owner) in try await client.query(
            """
            SELECT game_id, owner FROM game_leases
            WHERE run = \(run) AND owner IS NOT NULL AND expires_at > clock_timestamp()
            """, logger: logger
        ).decode((String, String).self) {
            owners[game] = owner
        }
        return owners
    }

    package func append(run: String, gameID: String, index: Int, time: Date, item: GameFeedItem) async throws
        -> GameLogAppend
    {
        let text = String(decoding: try JSONEncoder().encode(item), as: UTF8.self)
        return try await transaction { connection in
            let logger = self.logger
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(\(Self.appendLock), hashtext(\(run)))", logger: logger
            ).collect()
            // Written only under this instance's live lease on the game: an instance that stalled
            // past its lease cannot write after another took the game over.
            for try await sequence in try await connection.query(
                """
                INSERT INTO game_items (run, game_id, index, at, item, instance)
                SELECT \(run), \(gameID), \(index), \(time.timeIntervalSince1970), \(text), \(self.instanceID)
                WHERE EXISTS (SELECT 1 FROM game_leases WHERE run = \(run) AND game_id = \(gameID)
                              AND owner = \(self.instanceID) AND expires_at > clock_timestamp())
                ON CONFLICT (run, game_id, index) DO NOTHING
                RETURNING seq
                """, logger: logger
            ).decode(Int64.self) {
                _ = try await connection.query("SELECT pg_notify(\(Self.itemsChannel), \(run))", logger: logger)
                    .collect()
                return .appended(sequence)
            }
            for try await _ in try await connection.query(
                "SELECT 1 FROM game_items WHERE run = \(run) AND game_id = \(gameID) AND index = \(index)",
                logger: logger
            ) {
                return .present
            }
            return .notHeld
        }
    }

    typealias ItemRow = (Int64, String, Int, Double, String, String)

    package func items(run: String, after sequence: Int64, limit: Int) async throws -> [LoggedGameItem] {
        try await items(
            """
            SELECT seq, game_id, index, at, item, instance FROM game_items
            WHERE run = \(run) AND seq > \(sequence) ORDER BY seq LIMIT \(limit)
            """)
    }

    package func items(run: String, gameID: String) async throws -> [LoggedGameItem] {
        try await items(
            """
            SELECT seq, game_id, index, at, item, instance FROM game_items
            WHERE run = \(run) AND game_id = \(gameID) ORDER BY seq
            """)
    }

    func items(_ query: PostgresQuery) async throws -> [LoggedGameItem] {
        let decoder = JSONDecoder()
        var items: [LoggedGameItem] = []
        for try await row in try await client.query(query, logger: logger).decode(ItemRow.self) {
            let item: GameFeedItem
            do {
                item = try decoder.decode(GameFeedItem.self, from: Data(row.4.utf8))
            } catch {
                throw StoreError.corrupt("game log item", key: "\(row.0) (\(row.1) #\(row.2))", reason: "\(error)")
            }
            items.append(
                LoggedGameItem(
                    sequence: row.0, gameID: row.1, index: row.2, time: Date(timeIntervalSince1970: row.3), item: item,
                    instance: row.5))
        }
        return items
    }

    package func itemCount(run: String, gameID: String) async throws -> Int {
        try await single("SELECT count(*) FROM game_items WHERE run = \(run) AND game_id = \(gameID)", as: Int.self)
            ?? 0
    }

    package func lastSequence(run: String) async throws -> Int64 {
        try await single("SELECT coalesce(max(seq), 0) FROM game_items WHERE run = \(run)", as: Int64.self) ?? 0
    }

    package func startSequence(run: String, since: Date) async throws -> Int64 {
        if let first = try await single(
            "SELECT min(seq) FROM game_items WHERE run = \(run) AND at >= \(since.timeIntervalSince1970)",
            as: Int64?.self
        ).flatMap({ $0 }) {
            return first - 1
        }
        return try await lastSequence(run: run)
    }

    package func watchItems(run: String, _ onAppend: @escaping @Sendable () -> Void) async throws {
        try await listen(Self.itemsChannel) { payload in
            if payload == run { onAppend() }
        }
    }

    package func watchOutbox(_ onDue: @escaping @Sendable (String) -> Void) async throws {
        try await listen(Self.outboxChannel, onDue)
    }

    /// Holds a connection listening on `channel` until the task is cancelled (or the connection
    /// fails: the caller listens again).
    func listen(_ channel: String, _ onNotify: @escaping @Sendable (String) -> Void) async throws {
        let logger = logger
        // A link cut silently tells a listening connection nothing, and it would wait for good,
        // hearing nothing: it is asked something every half minute, and one that does not answer
        // in time is closed (``HeldConnection``). A listening connection ends with an error when it
        // closes (the caller listens again).
        let every = min(Duration.seconds(30), client.deadline)
        let deadline = min(Duration.seconds(15), client.deadline)
        try await client.pool.withConnection { connection in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await connection.listen(on: channel) { notifications in
                        for try await notification in notifications { onNotify(notification.payload) }
                    }
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: every)
                        try await HeldConnection(connection, deadline: deadline).answered("SELECT 1", logger: logger)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    package func gameFollows(run: String) async throws -> [GameFollow] {
        var follows: [GameFollow] = []
        for try await row in try await client.query(
            """
            SELECT game_id, owner, extract(epoch FROM acquired_at)::float8, extract(epoch FROM renewed_at)::float8,
                extract(epoch FROM released_at)::float8
            FROM game_follows WHERE run = \(run) ORDER BY id
            """, logger: logger
        ).decode((String, String, Double, Double, Double?).self) {
            follows.append(
                GameFollow(
                    gameID: row.0, owner: row.1, acquiredAt: Date(timeIntervalSince1970: row.2),
                    renewedAt: Date(timeIntervalSince1970: row.3),
                    releasedAt: row.4.map(Date.init(timeIntervalSince1970:))))
        }
        return follows
    }

    /// Every run, oldest first (tests, reports).
    package func runIDs() async throws -> [String] {
        var runs: [String] = []
        for try await id in try await client.query("SELECT id FROM runs ORDER BY created_at", logger: logger)
            .decode(String.self)
        {
            runs.append(id)
        }
        return runs
    }

    /// The games the run's log has items of (tests, reports).
    package func gameIDs(run: String) async throws -> [String] {
        var games: [String] = []
        for try await id in try await client.query(
            "SELECT DISTINCT game_id FROM game_items WHERE run = \(run) ORDER BY game_id", logger: logger
        ).decode(String.self) {
            games.append(id)
        }
        return games
    }
}
