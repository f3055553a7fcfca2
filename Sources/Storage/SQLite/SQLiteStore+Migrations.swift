import Alerts
import Foundation
import GRDB

/// The schema, one migration per change, in order: a database of any earlier version is brought
/// up to date when opened.
extension SQLiteStore {
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
        migrator.registerMigration("8 deals: final games and triggers") { db in
            try db.execute(
                sql: """
                    CREATE TABLE deal_games (
                        game_id TEXT PRIMARY KEY NOT NULL,
                        deal_date TEXT NOT NULL,
                        body TEXT NOT NULL
                    );
                    CREATE INDEX deal_games_by_date ON deal_games(deal_date);
                    CREATE TABLE deal_triggers (
                        id TEXT PRIMARY KEY NOT NULL,
                        rule_id TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        game_id TEXT NOT NULL,
                        deal_date TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        body TEXT NOT NULL,
                        revisions TEXT NOT NULL DEFAULT '[]'
                    );
                    CREATE INDEX deal_triggers_by_rule ON deal_triggers(rule_id, deal_date);
                    CREATE INDEX deal_triggers_by_date ON deal_triggers(deal_date);
                    """)
        }
        migrator.registerMigration("9 analytics: projects, keys, events") { db in
            try analyticsMigration(db)
        }
        migrator.registerMigration("10 analytics events clustered by collection and time") { db in
            try analyticsClusteredEvents(db)
        }
        migrator.registerMigration("11 failed deliveries index") { db in
            // The operator's list of failed deliveries, newest first, without reading the others.
            try db.execute(sql: "CREATE INDEX outbox_failed ON outbox(finished_at) WHERE state = 3")
        }
        migrator.registerMigration("12 feedback: pruned devices for the operator's hook") { db in
            try db.execute(
                sql: """
                    CREATE TABLE feedback (
                        id INTEGER PRIMARY KEY,
                        event_id TEXT NOT NULL UNIQUE,
                        device_id TEXT NOT NULL,
                        channel TEXT NOT NULL,
                        address TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        occurred_at REAL NOT NULL,
                        due_at REAL NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        sent_at REAL,
                        last_error TEXT
                    );
                    CREATE INDEX feedback_due ON feedback(due_at) WHERE sent_at IS NULL;
                    """)
        }
        migrator.registerMigration("13 active devices by push address") { db in
            // Registration finds the active device already holding a token or subscription.
            try db.execute(sql: "CREATE INDEX devices_active_address ON devices(address) WHERE active = 1")
            // Before this, a token registered again made a second active device (the phone got
            // each alert twice): of the active devices holding one push address, the newest stays.
            try db.execute(
                sql: """
                    UPDATE devices SET active = 0, status_at = CAST(strftime('%s', 'now') AS REAL),
                        status_reason = 'replaced: the same token or subscription was registered again as a newer '
                            || 'device (found when upgrading)'
                    WHERE active = 1 AND channel IN ('apns', 'live-activity', 'web-push') AND EXISTS (
                        SELECT 1 FROM devices newer
                        WHERE newer.active = 1 AND newer.address = devices.address AND newer.channel = devices.channel
                            AND coalesce(newer.topic, '') = coalesce(devices.topic, '')
                            AND (newer.registered_at > devices.registered_at
                                OR (newer.registered_at = devices.registered_at AND newer.id > devices.id)))
                    """)
            // And never again: one active device per push address (and topic).
            try db.execute(
                sql: """
                    CREATE UNIQUE INDEX devices_one_active_per_address ON devices(channel, address, coalesce(topic, ''))
                    WHERE active = 1 AND channel IN ('apns', 'live-activity', 'web-push')
                    """)
        }
        migrator.registerMigration("14 analytics: saved and cached queries") { db in
            try analyticsSavedQueries(db)
        }
        migrator.registerMigration("15 analytics: cached datasets") { db in
            try analyticsDatasets(db)
        }
        migrator.registerMigration("16 push-to-start: starts by time, one active device per token") { db in
            try db.execute(
                sql: """
                    CREATE INDEX outbox_starts ON outbox(due_at) WHERE channel = 'live-activity-start';
                    DROP INDEX devices_one_active_per_address;
                    CREATE UNIQUE INDEX devices_one_active_per_address ON devices(channel, address, coalesce(topic, ''))
                    WHERE active = 1 AND channel IN ('apns', 'live-activity', 'live-activity-start', 'web-push');
                    """)
        }
        return migrator
    }
}
