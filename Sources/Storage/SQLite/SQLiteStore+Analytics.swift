import Analytics
import Foundation
import GRDB
import Synchronization

/// What the analytics tables say about each project, kept in memory: its numbers for
/// collections and property paths, the schema seen so far, and its keys. Filled from the tables
/// on first use; a write that fails drops it (it is read again).
final class AnalyticsCache: Sendable {
    struct Project: Sendable {
        var rowID: Int64
        /// The project row's version this copy matches (PostgreSQL; SQLite keeps one writer).
        var version: Int64 = 0
        var collections: [String: Int64] = [:]
        var paths: [String] = []
        var pathIDs: [String: Int] = [:]
        var schema: Set<SchemaEntry> = []
    }

    struct SchemaEntry: Hashable, Sendable {
        var collection: Int64
        var path: Int
        var type: String
    }

    let projects = Mutex<[String: Project]>([:])
    let keys = Mutex<[Data: AnalyticsKey]>([:])
    /// The collections queried so far as columns: on SQLite the one process that writes appends
    /// each event it writes to them; on PostgreSQL each answer first reads what every instance
    /// committed since (`PostgresStore.followedColumns`).
    let columns = ColumnStore(maximumBytes: 512 << 20)
}

extension SQLiteStore: AnalyticsStore {
    static func analyticsMigration(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE analytics_projects (
                    id INTEGER PRIMARY KEY,
                    public_id TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL,
                    created_at REAL NOT NULL
                );
                CREATE TABLE analytics_keys (
                    hash BLOB PRIMARY KEY NOT NULL,
                    project_id INTEGER NOT NULL REFERENCES analytics_projects(id),
                    kind TEXT NOT NULL,
                    name TEXT NOT NULL,
                    is_active INTEGER NOT NULL DEFAULT 1,
                    permitted TEXT NOT NULL DEFAULT '[]',
                    options TEXT NOT NULL DEFAULT '{}',
                    hint TEXT NOT NULL,
                    created_at REAL NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE analytics_collections (
                    id INTEGER PRIMARY KEY,
                    project_id INTEGER NOT NULL REFERENCES analytics_projects(id),
                    name TEXT NOT NULL,
                    UNIQUE (project_id, name)
                );
                CREATE TABLE analytics_paths (
                    project_id INTEGER NOT NULL,
                    id INTEGER NOT NULL,
                    path TEXT NOT NULL,
                    PRIMARY KEY (project_id, id),
                    UNIQUE (project_id, path)
                ) WITHOUT ROWID;
                CREATE TABLE analytics_schema (
                    collection_id INTEGER NOT NULL,
                    path_id INTEGER NOT NULL,
                    type TEXT NOT NULL,
                    PRIMARY KEY (collection_id, path_id, type)
                ) WITHOUT ROWID;
                CREATE TABLE analytics_events (
                    id INTEGER PRIMARY KEY,
                    project_id INTEGER NOT NULL,
                    collection_id INTEGER NOT NULL,
                    ts_us INTEGER NOT NULL,
                    created_us INTEGER NOT NULL,
                    data BLOB NOT NULL
                );
                CREATE INDEX analytics_events_by_time ON analytics_events (project_id, collection_id, ts_us);
                CREATE TABLE analytics_tokens (
                    collection_id INTEGER NOT NULL,
                    token TEXT NOT NULL,
                    created_us INTEGER NOT NULL,
                    PRIMARY KEY (collection_id, token)
                ) WITHOUT ROWID;
                """)
    }

    /// Events stored in their collection's time order (a table keyed by collection, timestamp and
    /// id), so a query's scan reads pages in sequence instead of looking up each row of a time
    /// index in a table kept in arrival order (a 1,000,000-event scan spent most of its time there).
    /// Ids come from a counter, as `keen.id` is made from them.
    static func analyticsClusteredEvents(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE analytics_events_by_collection (
                    collection_id INTEGER NOT NULL,
                    ts_us INTEGER NOT NULL,
                    id INTEGER NOT NULL,
                    created_us INTEGER NOT NULL,
                    data BLOB NOT NULL,
                    PRIMARY KEY (collection_id, ts_us, id)
                ) WITHOUT ROWID;
                INSERT INTO analytics_events_by_collection (collection_id, ts_us, id, created_us, data)
                    SELECT collection_id, ts_us, id, created_us, data FROM analytics_events;
                CREATE TABLE analytics_counters (
                    name TEXT PRIMARY KEY NOT NULL,
                    next INTEGER NOT NULL
                ) WITHOUT ROWID;
                INSERT INTO analytics_counters (name, next)
                    SELECT 'event', coalesce(max(id), 0) + 1 FROM analytics_events;
                DROP TABLE analytics_events;
                ALTER TABLE analytics_events_by_collection RENAME TO analytics_events;
                """)
    }
}
