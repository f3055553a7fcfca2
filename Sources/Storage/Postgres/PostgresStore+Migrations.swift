import Alerts
import Foundation
import PostgresNIO

/// The PostgreSQL schema, one migration per change, in order. Instances starting together run
/// them once: the first takes a session advisory lock and migrates, the others wait for the lock
/// and then find nothing left to do.
extension PostgresStore {
    /// The advisory lock of migrations: this number ("nohi" in ASCII) and the schema's hash.
    static let migrationLock: Int32 = 0x6E6F_6869

    package static let migrations: [(name: String, sql: String)] = [
        (
            "1 devices, moments, outbox, deals",
            """
            CREATE TABLE devices (
                id uuid PRIMARY KEY,
                channel text NOT NULL,
                address text NOT NULL,
                environment text,
                topic text,
                key1 text,
                key2 text,
                preferences text NOT NULL,
                secret_hash text NOT NULL,
                registered_at double precision NOT NULL,
                active boolean NOT NULL,
                status_reason text,
                status_at double precision,
                version bigint NOT NULL DEFAULT 0
            );
            -- The directory of active devices reads them in registration order, and what changed
            -- since a version.
            CREATE INDEX devices_active ON devices (registered_at, id) WHERE active;
            CREATE INDEX devices_version ON devices (version);
            CREATE TABLE favourite_teams (
                device_id uuid NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
                team text NOT NULL,
                PRIMARY KEY (device_id, team)
            );
            CREATE INDEX favourite_teams_team ON favourite_teams (team);

            -- A counter every change to a device moves, whichever instance makes it; a row's
            -- version is the counter at its last change. Taken under the row's lock, so versions
            -- commit in order: a reader that sees version N sees every change up to N.
            CREATE TABLE device_changes (
                id int PRIMARY KEY CHECK (id = 1),
                version bigint NOT NULL,
                removals bigint NOT NULL
            );
            INSERT INTO device_changes (id, version, removals) VALUES (1, 0, 0);
            CREATE FUNCTION devices_versioned() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    UPDATE device_changes SET version = version + 1, removals = removals + 1 WHERE id = 1;
                    RETURN OLD;
                END IF;
                -- A registration of many devices numbers them itself (one counter update, not one
                -- per row).
                IF TG_OP = 'INSERT' AND NEW.version > 0 THEN
                    RETURN NEW;
                END IF;
                UPDATE device_changes SET version = version + 1 WHERE id = 1 RETURNING version INTO NEW.version;
                RETURN NEW;
            END $$;
            CREATE TRIGGER devices_versioned BEFORE INSERT OR UPDATE OR DELETE ON devices
                FOR EACH ROW EXECUTE FUNCTION devices_versioned();

            CREATE TABLE moments (
                seq bigserial UNIQUE,
                id text PRIMARY KEY,
                game_id text NOT NULL,
                kind text NOT NULL,
                occurred_at double precision NOT NULL,
                body text NOT NULL
            );
            CREATE INDEX moments_game ON moments (game_id, occurred_at, seq);
            CREATE INDEX moments_time ON moments (occurred_at, seq);
            CREATE TABLE payloads (
                id bigserial PRIMARY KEY,
                key text NOT NULL UNIQUE,
                body bytea NOT NULL
            );
            -- No foreign keys to the moment and the payload: both are written in the same
            -- transaction as the rows (`record`, which refuses a delivery naming a payload it was
            -- not given), and neither is ever deleted; checking them cost a 100,000-row fan-out 0.5 s
            -- of its 1.3 s commit.
            CREATE TABLE outbox (
                id bigserial PRIMARY KEY,
                delivery_id uuid NOT NULL,
                moment_id text NOT NULL,
                device_id uuid NOT NULL,
                channel text NOT NULL,
                payload_id bigint NOT NULL,
                bid_key text NOT NULL,
                moment_kind text NOT NULL,
                moment_outs int NOT NULL,
                created_at double precision NOT NULL,
                expires_at double precision NOT NULL,
                due_at double precision NOT NULL,
                state smallint NOT NULL,
                attempts int NOT NULL DEFAULT 0,
                token_refreshed boolean NOT NULL DEFAULT false,
                attempt_started_at double precision,
                finished_at double precision,
                last_error text,
                resent_in_doubt int NOT NULL DEFAULT 0,
                -- The instance sending the row (state 1) and until when, by the database's clock.
                lease_owner text,
                lease_expires timestamptz,
                UNIQUE (moment_id, device_id)
            );
            -- Only the rows a dispatcher looks for are indexed by state, as in the SQLite store: the
            -- pending ones by due time, and those being sent by instance (an outcome finds its row
            -- among its instance's, a few hundred; renewing a lease changes no indexed column, so
            -- it updates the row in place).
            CREATE INDEX outbox_pending ON outbox (channel, due_at, id) WHERE state = 0;
            CREATE INDEX outbox_sending ON outbox (lease_owner) WHERE state = 1;
            CREATE INDEX outbox_pending_device ON outbox (device_id) WHERE state = 0;
            CREATE TABLE bid_followers (
                bid_key text NOT NULL,
                device_id uuid NOT NULL,
                PRIMARY KEY (bid_key, device_id)
            );

            CREATE TABLE deal_games (
                game_id text PRIMARY KEY,
                deal_date text NOT NULL,
                body text NOT NULL
            );
            CREATE INDEX deal_games_by_date ON deal_games (deal_date);
            CREATE TABLE deal_triggers (
                id uuid PRIMARY KEY,
                rule_id text NOT NULL,
                version int NOT NULL,
                game_id text NOT NULL,
                deal_date text NOT NULL,
                created_at double precision NOT NULL,
                body text NOT NULL,
                revisions text NOT NULL DEFAULT '[]'
            );
            CREATE INDEX deal_triggers_by_rule ON deal_triggers (rule_id, deal_date);
            CREATE INDEX deal_triggers_by_date ON deal_triggers (deal_date);
            """
        ),
        (
            "2 instances: heartbeats, runs, game leases, the shared game log",
            """
            CREATE TABLE instances (
                id text PRIMARY KEY,
                about text NOT NULL,
                started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            -- What a set of instances follows together: a replayed day on a shared clock, or the
            -- Stats API. The first instance starts it; the others join.
            CREATE TABLE runs (
                id text PRIMARY KEY,
                key text NOT NULL,
                epoch double precision NOT NULL,
                created_at timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE INDEX runs_key ON runs (key, created_at);
            -- Which instance follows which game now (one at a time), by the database's clock.
            CREATE TABLE game_leases (
                run text NOT NULL,
                game_id text NOT NULL,
                owner text,
                expires_at timestamptz NOT NULL,
                PRIMARY KEY (run, game_id)
            );
            -- Every lease taken, for the record: when, by whom, until when it was last renewed, and
            -- when it was given up.
            CREATE TABLE game_follows (
                id bigserial PRIMARY KEY,
                run text NOT NULL,
                game_id text NOT NULL,
                owner text NOT NULL,
                acquired_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                renewed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                released_at timestamptz
            );
            CREATE INDEX game_follows_game ON game_follows (run, game_id, acquired_at);
            -- What the sources said, numbered in the order every instance applies it. Appended under
            -- a transaction advisory lock, so sequence numbers commit in order (a reader never
            -- passes a number that commits later).
            CREATE TABLE game_items (
                seq bigserial PRIMARY KEY,
                run text NOT NULL,
                game_id text NOT NULL,
                index int NOT NULL,
                at double precision NOT NULL,
                item text NOT NULL,
                instance text NOT NULL,
                written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                UNIQUE (run, game_id, index)
            );
            CREATE INDEX game_items_run ON game_items (run, seq);
            """
        ),
        (
            "3 analytics: projects, keys, collections, property paths, schema, events, uniqueness tokens",
            PostgresStore.analyticsTables
        ),
        (
            "4 outbox: the instance a delivery in doubt was taken back from",
            """
            -- Set when a row's lease lapsed under an instance (it was killed, or stalled past its
            -- lease) and another took the row back: who had it in flight, for the operator's log
            -- and for checks that every repeat or drop was in doubt.
            ALTER TABLE outbox ADD COLUMN taken_from text;
            """
        ),
        (
            "5 failed deliveries index",
            """
            -- The operator's list of failed deliveries, newest first, without reading the others.
            CREATE INDEX outbox_failed ON outbox(finished_at) WHERE state = 3;
            """
        ),
        (
            "6 feedback: pruned devices for the operator's hook",
            """
            CREATE TABLE feedback (
                id bigserial PRIMARY KEY,
                event_id uuid NOT NULL UNIQUE,
                device_id uuid NOT NULL,
                channel text NOT NULL,
                address text NOT NULL,
                reason text NOT NULL,
                occurred_at double precision NOT NULL,
                due_at double precision NOT NULL,
                attempts int NOT NULL DEFAULT 0,
                sent_at double precision,
                last_error text
            );
            CREATE INDEX feedback_due ON feedback (due_at) WHERE sent_at IS NULL;
            """
        ),
        (
            "7 active devices by push address",
            """
            -- Registration finds the active device already holding a token or subscription.
            CREATE INDEX devices_active_address ON devices (address) WHERE active;
            -- Before this, a token registered again made a second active device (the phone got each
            -- alert twice): of the active devices holding one push address, the newest stays.
            UPDATE devices d SET active = false, status_at = extract(epoch FROM now()),
                status_reason = 'replaced: the same token or subscription was registered again as a newer '
                    || 'device (found when upgrading)'
            WHERE d.active AND d.channel IN ('apns', 'live-activity', 'web-push') AND EXISTS (
                SELECT 1 FROM devices newer
                WHERE newer.active AND newer.address = d.address AND newer.channel = d.channel
                    AND coalesce(newer.topic, '') = coalesce(d.topic, '')
                    AND (newer.registered_at > d.registered_at
                        OR (newer.registered_at = d.registered_at AND newer.id > d.id)));
            -- And never again: one active device per push address (and topic). Two registrations of
            -- one token at once: the second to commit meets this and runs again, replacing the first.
            CREATE UNIQUE INDEX devices_one_active_per_address ON devices (channel, address, coalesce(topic, ''))
                WHERE active AND channel IN ('apns', 'live-activity', 'web-push');
            """
        ),
        (
            "8 analytics: saved and cached queries",
            PostgresStore.analyticsSavedQueries
        ),
        (
            "9 analytics: cached datasets",
            PostgresStore.analyticsDatasets
        ),
        (
            "10 instances: the run each follows",
            """
            -- The run an instance joined: a run is still being played while an instance in it is
            -- alive, whatever its clock says (a replacement started late joins it).
            ALTER TABLE instances ADD COLUMN run text;
            """
        ),
        (
            "11 analytics: columns that follow every instance's writes",
            PostgresStore.analyticsFollowedColumns
        ),
        (
            "12 push-to-start: starts by time, one active device per token",
            """
            -- A device's start budget reads the starts of the last window.
            CREATE INDEX outbox_starts ON outbox (due_at) WHERE channel = 'live-activity-start';
            DROP INDEX devices_one_active_per_address;
            CREATE UNIQUE INDEX devices_one_active_per_address ON devices (channel, address, coalesce(topic, ''))
                WHERE active AND channel IN ('apns', 'live-activity', 'live-activity-start', 'web-push');
            """
        ),
    ]

    /// The statements of a migration, one by one (the extended query protocol takes one at a time):
    /// split at semicolons outside quotes, `$$` bodies and `--` comments.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var inQuote = false
        var inBody = false
        var inComment = false
        var previous: Character = " "
        for character in sql {
            if inComment {
                if character == "\n" { inComment = false }
                current.append(character)
                previous = character
                continue
            }
            if !inQuote && !inBody && character == "-" && previous == "-" { inComment = true }
            if !inBody && character == "'" { inQuote.toggle() }
            if !inQuote && character == "$" && previous == "$" { inBody.toggle() }
            if character == ";" && !inQuote && !inBody {
                let statement = current.trimmingCharacters(in: .whitespacesAndNewlines)
                if !statement.isEmpty { statements.append(statement) }
                current = ""
                previous = " "
                continue
            }
            current.append(character)
            previous = character
        }
        let statement = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !statement.isEmpty { statements.append(statement) }
        return statements
    }

    /// Applies the migrations not applied yet, each in a transaction, holding the migration lock.
    func migrate(existing: Bool = false) async throws {
        let logger = logger
        let schema = location.schema
        try await client.withConnection { connection in
            // Migrating waits as long as another instance's migration takes (not the statements'
            // lock timeout, nor their deadline), for that schema only.
            var connection = connection
            connection.deadline = nil
            _ = try await connection.query("SET lock_timeout = 0", logger: logger).collect()
            _ = try await connection.query(
                "SELECT pg_advisory_lock(\(Self.migrationLock), hashtext(\(schema)))", logger: logger
            ).collect()
            do {
                if existing {
                    let found = try await connection.query(
                        "SELECT to_regclass(\(schema + ".schema_migrations")) IS NOT NULL", logger: logger
                    ).decode(Bool.self).first { _ in true }
                    guard found == true else {
                        throw StoreError.configuration(
                            "no nohit database at \(location) (schema \(schema) holds none): give the database the "
                                + "service uses; this command only reads and creates none")
                    }
                }
                if schema != "public" {
                    _ = try await connection.query(
                        "CREATE SCHEMA IF NOT EXISTS \(unescaped: schema)", logger: logger
                    ).collect()
                }
                _ = try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())
                    """, logger: logger
                ).collect()
                var applied = Set<String>()
                for try await name in try await connection.query(
                    "SELECT name FROM schema_migrations", logger: logger
                ).decode(String.self) {
                    applied.insert(name)
                }
                let known = Set(Self.migrations.map(\.name))
                if let newest = applied.subtracting(known).sorted().last {
                    throw StoreError.configuration(
                        "the database \(location) was migrated by a newer nohit (its migration '\(newest)' is unknown "
                            + "to this one): run that version, or restore a backup made before the upgrade")
                }
                for migration in Self.migrations where !applied.contains(migration.name) {
                    _ = try await connection.query("BEGIN", logger: logger).collect()
                    do {
                        for statement in Self.statements(migration.sql) {
                            _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                                .collect()
                        }
                        _ = try await connection.query(
                            "INSERT INTO schema_migrations (name) VALUES (\(migration.name))", logger: logger
                        ).collect()
                        _ = try await connection.query("COMMIT", logger: logger).collect()
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: logger).collect()
                        throw StoreError.configuration(
                            "migration '\(migration.name)' failed: \(Self.describe(error))")
                    }
                }
            } catch {
                _ = try? await connection.query(
                    "SELECT pg_advisory_unlock(\(Self.migrationLock), hashtext(\(schema)))", logger: logger
                ).collect()
                throw error
            }
            _ = try await connection.query(
                "SELECT pg_advisory_unlock(\(Self.migrationLock), hashtext(\(schema)))", logger: logger
            ).collect()
            _ = try await connection.query("RESET lock_timeout", logger: logger).collect()
        }
    }

    /// The migrations applied, in order (tests: two stores opened together apply each once).
    package func appliedMigrations() async throws -> [String] {
        var names: [String] = []
        for try await name in try await client.query(
            "SELECT name FROM schema_migrations ORDER BY applied_at, name", logger: logger
        ).decode(String.self) {
            names.append(name)
        }
        return names
    }

    /// Drops this store's schema and everything in it (tests give each store a schema of their own).
    /// Refuses `public`.
    package func dropSchema() async throws {
        guard location.schema != "public" else { throw StoreError.configuration("the public schema is not dropped") }
        try await execute("DROP SCHEMA \(unescaped: location.schema) CASCADE")
    }
}
