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
    /// The collections queried so far as columns (SQLite only: one process writes, and appends
    /// each event it writes to them).
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

    // MARK: Projects and keys

    package func createProject(name: String, id: String?, now: Date) async throws -> NewAnalyticsProject {
        let project = try NewAnalyticsProject(name: name, id: id)
        let (publicID, secrets) = (
            project.id, (master: project.masterKey, write: project.writeKey, read: project.readKey)
        )
        try await database.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM analytics_projects WHERE public_id = ?", arguments: [publicID])
                == true
            {
                throw StoreError.invalid("there is already a project \(publicID)")
            }
            try db.execute(
                sql: "INSERT INTO analytics_projects (public_id, name, created_at) VALUES (?, ?, ?)",
                arguments: [publicID, name, now.timeIntervalSince1970])
            let rowID = db.lastInsertedRowID
            for (kind, secret) in [("master", secrets.master), ("write", secrets.write), ("read", secrets.read)] {
                try db.execute(
                    sql: """
                        INSERT INTO analytics_keys (hash, project_id, kind, name, hint, created_at)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        AnalyticsKey.hash(secret), rowID, kind, "\(kind) key", String(secret.prefix(6)),
                        now.timeIntervalSince1970,
                    ])
            }
        }
        return project
    }

    package func analyticsProjects() async throws -> [(id: String, name: String)] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT public_id, name FROM analytics_projects ORDER BY id").map {
                (id: $0[0] as String, name: $0[1] as String)
            }
        }
    }

    package func key(project: String, secret: String) async throws -> AnalyticsKey? {
        let hash = AnalyticsKey.hash(secret)
        if let key = analytics.keys.withLock({ $0[hash] }) { return key.project == project ? key : nil }
        let key = try await database.read { db in try Self.fetchKey(db, hash: hash) }
        guard let key else { return nil }
        analytics.keys.withLock { $0[hash] = key }
        return key.project == project ? key : nil
    }

    static func fetchKey(_ db: Database, hash: Data) throws -> AnalyticsKey? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT p.public_id, k.kind, k.name, k.is_active, k.permitted, k.options, k.hint, k.created_at
                    FROM analytics_keys k JOIN analytics_projects p ON p.id = k.project_id WHERE k.hash = ?
                    """, arguments: [hash])
        else { return nil }
        return try Self.key(row)
    }

    static func key(_ row: Row) throws -> AnalyticsKey {
        let permitted = (try? JSONValue.parse(row[4] as String))?.array?.compactMap(\.string) ?? []
        let options = (try? JSONValue.parse(row[5] as String))?.object ?? JSONObject()
        return AnalyticsKey(
            project: row[0], kind: AnalyticsKey.Kind(rawValue: row[1]) ?? .access, name: row[2], isActive: row[3],
            permitted: permitted, options: options, hint: row[6],
            createdAt: Date(timeIntervalSince1970: row[7]))
    }

    package func createAccessKey(
        project: String, name: String, isActive: Bool, permitted: [String], options: JSONObject, now: Date
    ) async throws -> (secret: String, key: AnalyticsKey) {
        let (secret, key) = AnalyticsKey.newAccessKey(
            project: project, name: name, isActive: isActive, permitted: permitted, options: options, now: now)
        try await database.write { db in
            guard
                let rowID = try Int64.fetchOne(
                    db, sql: "SELECT id FROM analytics_projects WHERE public_id = ?", arguments: [project])
            else { throw StoreError.invalid("no project \(project)") }
            try db.execute(
                sql: """
                    INSERT INTO analytics_keys (hash, project_id, kind, name, is_active, permitted, options, hint, created_at)
                    VALUES (?, ?, 'access', ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    AnalyticsKey.hash(secret), rowID, name, isActive,
                    JSONValue.array(permitted.map { .string($0) }).jsonText,
                    JSONValue.object(options).jsonText, key.hint, now.timeIntervalSince1970,
                ])
        }
        return (secret, key)
    }

    package func accessKeys(project: String) async throws -> [AnalyticsKey] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT p.public_id, k.kind, k.name, k.is_active, k.permitted, k.options, k.hint, k.created_at
                    FROM analytics_keys k JOIN analytics_projects p ON p.id = k.project_id
                    WHERE p.public_id = ? AND k.kind = 'access' ORDER BY k.created_at, k.hint
                    """, arguments: [project]
            ).map(Self.key)
        }
    }

    package func updateAccessKey(
        project: String, secret: String, name: String, isActive: Bool, permitted: [String], options: JSONObject
    ) async throws -> AnalyticsKey? {
        let hash = AnalyticsKey.hash(secret)
        let key = try await database.write { db -> AnalyticsKey? in
            guard let key = try Self.fetchKey(db, hash: hash), key.project == project, key.kind == .access else {
                return nil
            }
            try db.execute(
                sql: "UPDATE analytics_keys SET name = ?, is_active = ?, permitted = ?, options = ? WHERE hash = ?",
                arguments: [
                    name, isActive, JSONValue.array(permitted.map { .string($0) }).jsonText,
                    JSONValue.object(options).jsonText, hash,
                ])
            return try Self.fetchKey(db, hash: hash)
        }
        analytics.keys.withLock { $0[hash] = nil }
        return key
    }

    package func deleteAccessKey(project: String, secret: String) async throws -> Bool {
        let hash = AnalyticsKey.hash(secret)
        let deleted = try await database.write { db -> Bool in
            guard let key = try Self.fetchKey(db, hash: hash), key.project == project, key.kind == .access else {
                return false
            }
            try db.execute(sql: "DELETE FROM analytics_keys WHERE hash = ?", arguments: [hash])
            return true
        }
        analytics.keys.withLock { $0[hash] = nil }
        return deleted
    }

    // MARK: Events

    /// The project's cached state, read from the tables when missing.
    static func projectState(_ db: Database, _ publicID: String, cache: AnalyticsCache) throws -> AnalyticsCache
        .Project?
    {
        if let state = cache.projects.withLock({ $0[publicID] }) { return state }
        guard
            let rowID = try Int64.fetchOne(
                db, sql: "SELECT id FROM analytics_projects WHERE public_id = ?", arguments: [publicID])
        else { return nil }
        var state = AnalyticsCache.Project(rowID: rowID)
        for row in try Row.fetchAll(
            db, sql: "SELECT id, name FROM analytics_collections WHERE project_id = ?", arguments: [rowID])
        {
            state.collections[row[1]] = row[0]
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT id, path FROM analytics_paths WHERE project_id = ? ORDER BY id", arguments: [rowID])
        {
            let id: Int = row[0]
            let path: String = row[1]
            while state.paths.count < id { state.paths.append("") }
            state.paths.append(path)
            state.pathIDs[path] = id
        }
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT s.collection_id, s.path_id, s.type FROM analytics_schema s
                JOIN analytics_collections c ON c.id = s.collection_id WHERE c.project_id = ?
                """, arguments: [rowID])
        {
            state.schema.insert(AnalyticsCache.SchemaEntry(collection: row[0], path: row[1], type: row[2]))
        }
        cache.projects.withLock { $0[publicID] = state }
        return state
    }

    package func record(
        project: String, batch: [(collection: String, events: [IncomingEvent])], createdAt: Int64
    ) async throws -> [[Bool]] {
        let cache = analytics
        do {
            return try await database.write { db in
                guard var state = try Self.projectState(db, project, cache: cache) else {
                    throw StoreError.invalid("no project \(project)")
                }
                let insertEvent = try DirectStatement(
                    db,
                    sql:
                        "INSERT INTO analytics_events (collection_id, ts_us, id, created_us, data) VALUES (?, ?, ?, ?, ?)"
                )
                var nextID =
                    try Int64.fetchOne(db, sql: "SELECT next FROM analytics_counters WHERE name = 'event'") ?? 1
                let insertToken = try DirectStatement(
                    db,
                    sql: """
                        INSERT INTO analytics_tokens (collection_id, token, created_us) VALUES (?, ?, ?)
                        ON CONFLICT (collection_id, token) DO UPDATE SET created_us = excluded.created_us
                        WHERE analytics_tokens.created_us <= excluded.created_us - \(KeenEventRules.tokenLifetime)
                        """)
                var stored: [[Bool]] = []
                var written: [(collection: String, events: [(timestamp: Int64, rowID: Int64, leaves: [EventLeaf])])] =
                    []
                for (collection, events) in batch {
                    var appended: [(timestamp: Int64, rowID: Int64, leaves: [EventLeaf])] = []
                    let collectionID: Int64
                    if let known = state.collections[collection] {
                        collectionID = known
                    } else {
                        try db.execute(
                            sql: "INSERT INTO analytics_collections (project_id, name) VALUES (?, ?)",
                            arguments: [state.rowID, collection])
                        collectionID = db.lastInsertedRowID
                        state.collections[collection] = collectionID
                    }
                    var kept: [Bool] = []
                    kept.reserveCapacity(events.count)
                    for event in events {
                        if let token = event.token {
                            try insertToken.execute {
                                $0.bind(collectionID)
                                $0.bind(token)
                                $0.bind(createdAt)
                            }
                            guard insertToken.changes > 0 else {
                                kept.append(false)
                                continue
                            }
                        }
                        let data = try EventCodec.encode(event.leaves) { (path: String) throws -> Int in
                            if let id = state.pathIDs[path] { return id }
                            let id = state.paths.count
                            state.paths.append(path)
                            state.pathIDs[path] = id
                            try db.execute(
                                sql: "INSERT INTO analytics_paths (project_id, id, path) VALUES (?, ?, ?)",
                                arguments: [state.rowID, id, path])
                            return id
                        }
                        for leaf in event.leaves {
                            let entry = AnalyticsCache.SchemaEntry(
                                collection: collectionID, path: state.pathIDs[leaf.path]!, type: leaf.value.typeName)
                            if state.schema.insert(entry).inserted {
                                try db.execute(
                                    sql:
                                        "INSERT OR IGNORE INTO analytics_schema (collection_id, path_id, type) VALUES (?, ?, ?)",
                                    arguments: [collectionID, entry.path, entry.type])
                            }
                        }
                        try insertEvent.execute {
                            $0.bind(collectionID)
                            $0.bind(event.timestamp)
                            $0.bind(nextID)
                            $0.bind(createdAt)
                            $0.bind(blob: data)
                        }
                        appended.append((event.timestamp, nextID, event.leaves))
                        nextID += 1
                        kept.append(true)
                    }
                    stored.append(kept)
                    written.append((collection, appended))
                }
                try db.execute(
                    sql: "INSERT OR REPLACE INTO analytics_counters (name, next) VALUES ('event', ?)",
                    arguments: [nextID])
                cache.projects.withLock { $0[project] = state }
                // Once committed, still in the writer: a collection's columns being read wait for
                // it, and see these; a transaction rolled back appends nothing.
                let committed = written
                db.afterNextTransaction { _ in
                    for (collection, events) in committed {
                        cache.columns.append(project: project, collection: collection, events: events)
                    }
                }
                return stored
            }
        } catch {
            cache.projects.withLock { $0[project] = nil }
            cache.columns.drop(project: project)
            throw error
        }
    }

    /// One project's events on a read connection, for the query engine.
    struct SQLiteEventSource: EventSource {
        let db: Database
        let state: AnalyticsCache.Project

        func paths() throws -> [String] { state.paths }

        func scan(_ scan: ScanPlan, _ body: (EventRow) throws -> Bool) throws {
            guard let collection = state.collections[scan.collection] else { return }
            let statement = try DirectStatement(db, sql: scan.sql)
            try statement.forEachRow {
                $0.bind(collection)
                $0.bind(scan.timeframe.start)
                $0.bind(scan.timeframe.end)
            } _: { row in
                try body(
                    EventRow(rowID: row.int64(0), timestamp: row.int64(1), createdAt: row.int64(2), data: row.blob(3)))
            }
        }

        func count(_ scan: ScanPlan) throws -> Int {
            guard let collection = state.collections[scan.collection] else { return 0 }
            return try Int.fetchOne(
                db, sql: scan.countSQL,
                arguments: [collection, scan.timeframe.start, scan.timeframe.end]) ?? 0
        }
    }

    package func query(project: String, _ query: KeenQuery, budget: QueryBudget) async throws -> JSONValue {
        let (cache, reader) = (analytics, analyticsReader)
        // What the columns answer, they answer; the rows answer the rest.
        if let byCollection = ColumnarQuery.pathsByCollection(of: query) {
            var data: [String: CollectionColumns] = [:]
            for (collection, wanted) in byCollection {
                guard
                    let columns = try await columns(
                        project: project, collection: collection, paths: wanted, budget: budget)
                else { break }
                data[collection] = columns
            }
            // The project's paths read after its columns: they name every path those rows hold.
            if data.count == byCollection.count, let paths = cache.projects.withLock({ $0[project]?.paths }) {
                let data = data
                let answer = try await BlockingBridge.onThread(query: true) { () throws -> JSONValue? in
                    if query.analysis.type == .funnel {
                        return try ColumnarQuery.funnel(query, on: data, projectPaths: paths, budget: budget)
                    }
                    guard let collection = query.collection, let columns = data[collection] else { return nil }
                    return try ColumnarQuery.run(query, on: columns, projectPaths: paths, budget: budget)
                }
                if let answer { return answer }
            }
        }
        // On a thread of its own (a pool's read runs on the calling thread), where it may pause for
        // another client's query: not on an in-memory store, whose one serial queue that other
        // query would wait for.
        return try await BlockingBridge.onThread(query: reader is DatabasePool) {
            try reader.read { db in
                guard let state = try Self.projectState(db, project, cache: cache) else {
                    throw KeenError.notFound("no project \(project)")
                }
                return try QueryEngine.run(query, on: SQLiteEventSource(db: db, state: state), budget: budget)
            }
        }
    }

    /// `collection`'s columns holding `paths`: kept ones, or read now under the writer (no event is
    /// written meanwhile, so none is missed): the new paths alone beside kept columns without late
    /// rows, else every column again in the table's order. Nil for a collection without events,
    /// or past the columns' bound.
    func columns(project: String, collection: String, paths: Set<String>, budget: QueryBudget = .unlimited)
        async throws -> CollectionColumns?
    {
        let cache = analytics
        if let kept = cache.columns.columns(project: project, collection: collection, paths: paths) { return kept }
        return try await database.write { db -> CollectionColumns? in
            if let kept = cache.columns.columns(project: project, collection: collection, paths: paths) {
                return kept
            }
            guard let state = try Self.projectState(db, project, cache: cache), state.collections[collection] != nil
            else { return nil }
            let source = SQLiteEventSource(db: db, state: state)
            let kept = cache.columns.kept(project: project, collection: collection)
            // Not read at all when they could not be kept.
            let count = try source.count(ScanPlan(collection: collection, timeframe: .allTime))
            let estimate = CollectionColumns.estimate(
                count: count, paths: paths.union(kept?.columns.keys ?? [:].keys).count)
            guard estimate <= cache.columns.maximumBytes else { return nil }
            // Kept columns with no late rows: only the new paths are read (the same rows, in the
            // same order); else every path, in order.
            var columns: CollectionColumns
            if let kept, kept.unsorted == 0,
                let added = try kept.adding(
                    CollectionColumns.read(
                        collection: collection, paths: paths.subtracting(kept.columns.keys), from: source,
                        budget: budget))
            {
                columns = added
            } else {
                columns = try CollectionColumns.read(
                    collection: collection, paths: paths.union(kept?.columns.keys ?? [:].keys), from: source,
                    budget: budget)
            }
            return cache.columns.keep(columns, project: project, collection: collection) ? columns : nil
        }
    }

    package func schema(project: String) async throws -> [CollectionSchema] {
        let cache = analytics
        return try await database.read { db in
            guard let state = try Self.projectState(db, project, cache: cache) else { return [] }
            return state.collections.sorted { $0.key < $1.key }.map { name, id in
                let entries = state.schema.filter { $0.collection == id }
                var properties: [(path: String, type: String)] = entries.map { (state.paths[$0.path], $0.type) }
                properties.sort { a, b in a.path < b.path || (a.path == b.path && a.type < b.type) }
                return CollectionSchema(name: name, properties: properties)
            }
        }
    }

    package func deleteEvents(
        project: String, collection: String, timeframe: Timeframe?, filters: [KeenFilter], budget: QueryBudget
    ) async throws -> Int {
        let cache = analytics
        return try await database.write { db in
            // Its columns are read again at the next query.
            cache.columns.drop(project: project, collection: collection)
            guard let state = try Self.projectState(db, project, cache: cache),
                let collectionID = state.collections[collection]
            else { return 0 }
            let rows = try QueryEngine.matchingRows(
                collection: collection, timeframe: timeframe, filters: filters,
                on: SQLiteEventSource(db: db, state: state), budget: budget)
            let delete = try DirectStatement(
                db, sql: "DELETE FROM analytics_events WHERE collection_id = ? AND ts_us = ? AND id = ?")
            for row in rows {
                try delete.execute {
                    $0.bind(collectionID)
                    $0.bind(row.timestamp)
                    $0.bind(row.id)
                }
            }
            return rows.count
        }
    }

    package func analyticsBytes() async throws -> Int? {
        try await database.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT sum(pgsize) FROM dbstat
                    WHERE name IN ('analytics_events', 'analytics_tokens')
                    """)
        }
    }

    // MARK: Saved and cached queries

    /// A project's saved queries: the definition as Keen keeps it (JSON), and for a cached one
    /// its last result and when it is next due (`due_us`, NULL for a query that is not cached).
    static func analyticsSavedQueries(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE analytics_saved_queries (
                    project_id INTEGER NOT NULL REFERENCES analytics_projects(id),
                    name TEXT NOT NULL,
                    definition TEXT NOT NULL,
                    created_us INTEGER NOT NULL,
                    modified_us INTEGER NOT NULL,
                    result TEXT,
                    result_us INTEGER,
                    due_us INTEGER,
                    PRIMARY KEY (project_id, name)
                ) WITHOUT ROWID;
                CREATE INDEX analytics_saved_queries_due ON analytics_saved_queries(due_us) WHERE due_us IS NOT NULL;
                """)
    }

    /// The columns of a saved query; `withResult` false leaves its kept result out (a listing).
    static func savedQueryColumns(withResult: Bool = true) -> String {
        """
        SELECT p.public_id, q.name, q.definition, q.created_us, q.modified_us, \(withResult ? "q.result" : "NULL"),
            q.result_us, q.due_us
        FROM analytics_saved_queries q JOIN analytics_projects p ON p.id = q.project_id
        """
    }

    static func savedQuery(_ row: Row) throws -> SavedQuery {
        let definition = try JSONValue.parse(Array((row[2] as String).utf8)).object ?? JSONObject()
        let result = try (row[5] as String?).map { try JSONValue.parse(Array($0.utf8)).object ?? JSONObject() }
        return SavedQuery(
            project: row[0], name: row[1], definition: definition, createdAt: row[3], modifiedAt: row[4],
            result: result, resultAt: row[6], dueAt: row[7])
    }

    package func putSavedQuery(project: String, name: String, definition: JSONObject, now: Int64) async throws
        -> (query: SavedQuery, created: Bool)
    {
        try await database.write { db in
            let projectID = try Self.projectRowID(db, project)
            let created =
                try Int64.fetchOne(
                    db, sql: "SELECT created_us FROM analytics_saved_queries WHERE project_id = ? AND name = ?",
                    arguments: [projectID, name])
            var query = SavedQuery(
                project: project, name: name, definition: definition, createdAt: created ?? now, modifiedAt: now)
            let due: Int64? = query.refreshRate > 0 ? now : nil
            try db.execute(
                sql: """
                    INSERT INTO analytics_saved_queries (project_id, name, definition, created_us, modified_us, due_us)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (project_id, name) DO UPDATE SET definition = excluded.definition,
                        modified_us = excluded.modified_us, result = NULL, result_us = NULL, due_us = excluded.due_us
                    """,
                arguments: [projectID, name, JSONValue.object(definition).jsonText, query.createdAt, now, due])
            query.modifiedAt = now
            return (query, created == nil)
        }
    }

    package func savedQuery(project: String, name: String) async throws -> SavedQuery? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "\(Self.savedQueryColumns()) WHERE p.public_id = ? AND q.name = ?",
                arguments: [project, name]
            ).map(Self.savedQuery)
        }
    }

    package func savedQueries(project: String) async throws -> [SavedQuery] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "\(Self.savedQueryColumns(withResult: false)) WHERE p.public_id = ? ORDER BY q.name",
                arguments: [project]
            ).map(Self.savedQuery)
        }
    }

    package func deleteSavedQuery(project: String, name: String) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: """
                    DELETE FROM analytics_saved_queries
                    WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = ?) AND name = ?
                    """, arguments: [project, name])
            return db.changesCount > 0
        }
    }

    package func cacheSavedQueryResult(
        project: String, name: String, modifiedAt: Int64, result: JSONObject, at: Int64, due: Int64?
    ) async throws {
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE analytics_saved_queries SET result = ?, result_us = ?, due_us = ?
                    WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = ?) AND name = ?
                        AND modified_us = ? AND (result_us IS NULL OR result_us <= ?)
                    """,
                arguments: [JSONValue.object(result).jsonText, at, due, project, name, modifiedAt, at])
        }
    }

    package func postponeSavedQuery(project: String, name: String, modifiedAt: Int64, due: Int64) async throws {
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE analytics_saved_queries SET due_us = ?
                    WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = ?) AND name = ?
                        AND modified_us = ?
                    """, arguments: [due, project, name, modifiedAt])
        }
    }

    package func claimDueSavedQueries(now: Int64, lease: Int64, limit: Int) async throws -> [SavedQuery] {
        try await database.write { db in
            let due = try Row.fetchAll(
                db,
                sql: """
                    \(Self.savedQueryColumns(withResult: false))
                    WHERE q.due_us IS NOT NULL AND q.due_us <= ? ORDER BY q.due_us LIMIT ?
                    """, arguments: [now, limit]
            ).map(Self.savedQuery)
            for query in due {
                try db.execute(
                    sql: """
                        UPDATE analytics_saved_queries SET due_us = ?
                        WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = ?) AND name = ?
                        """, arguments: [now + lease, query.project, query.name])
            }
            return due
        }
    }

    // MARK: Cached datasets

    /// A project's datasets and their buckets: one row per index value and bucket.
    static func analyticsDatasets(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE analytics_datasets (
                    project_id INTEGER NOT NULL REFERENCES analytics_projects(id),
                    name TEXT NOT NULL,
                    definition TEXT NOT NULL,
                    created_us INTEGER NOT NULL,
                    modified_us INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    refreshed_us INTEGER,
                    due_us INTEGER,
                    error TEXT,
                    PRIMARY KEY (project_id, name)
                ) WITHOUT ROWID;
                CREATE INDEX analytics_datasets_due ON analytics_datasets(due_us);
                CREATE TABLE analytics_dataset_buckets (
                    project_id INTEGER NOT NULL,
                    dataset TEXT NOT NULL,
                    index_key TEXT NOT NULL,
                    start_us INTEGER NOT NULL,
                    end_us INTEGER NOT NULL,
                    value TEXT NOT NULL,
                    PRIMARY KEY (project_id, dataset, index_key, start_us)
                ) WITHOUT ROWID;
                """)
    }

    static let datasetColumns = """
        SELECT p.public_id, d.name, d.definition, d.created_us, d.modified_us, d.status, d.refreshed_us, d.due_us,
            d.error
        FROM analytics_datasets d JOIN analytics_projects p ON p.id = d.project_id
        """

    static func dataset(_ row: Row) throws -> CachedDataset {
        CachedDataset(
            project: row[0], name: row[1],
            definition: try JSONValue.parse(Array((row[2] as String).utf8)).object ?? JSONObject(), createdAt: row[3],
            modifiedAt: row[4], status: row[5], refreshedAt: row[6], dueAt: row[7], error: row[8])
    }

    static func projectRowID(_ db: Database, _ project: String) throws -> Int64 {
        guard
            let id = try Int64.fetchOne(
                db, sql: "SELECT id FROM analytics_projects WHERE public_id = ?", arguments: [project])
        else { throw StoreError.invalid("no project \(project)") }
        return id
    }

    package func putDataset(project: String, name: String, definition: JSONObject, now: Int64) async throws
        -> (dataset: CachedDataset, created: Bool)
    {
        try await database.write { db in
            let projectID = try Self.projectRowID(db, project)
            let created = try Int64.fetchOne(
                db, sql: "SELECT created_us FROM analytics_datasets WHERE project_id = ? AND name = ?",
                arguments: [projectID, name])
            try db.execute(
                sql: """
                    INSERT INTO analytics_datasets (project_id, name, definition, created_us, modified_us, status, due_us)
                    VALUES (?, ?, ?, ?, ?, 'Created', ?)
                    ON CONFLICT (project_id, name) DO UPDATE SET definition = excluded.definition,
                        modified_us = excluded.modified_us, status = 'Created', refreshed_us = NULL,
                        due_us = excluded.due_us, error = NULL
                    """,
                arguments: [projectID, name, JSONValue.object(definition).jsonText, created ?? now, now, now])
            try db.execute(
                sql: "DELETE FROM analytics_dataset_buckets WHERE project_id = ? AND dataset = ?",
                arguments: [projectID, name])
            let dataset = CachedDataset(
                project: project, name: name, definition: definition, createdAt: created ?? now, modifiedAt: now,
                dueAt: now)
            return (dataset, created == nil)
        }
    }

    package func dataset(project: String, name: String) async throws -> CachedDataset? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "\(Self.datasetColumns) WHERE p.public_id = ? AND d.name = ?", arguments: [project, name]
            ).map(Self.dataset)
        }
    }

    package func datasets(project: String) async throws -> [CachedDataset] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "\(Self.datasetColumns) WHERE p.public_id = ? ORDER BY d.name", arguments: [project]
            ).map(Self.dataset)
        }
    }

    package func deleteDataset(project: String, name: String) async throws -> Bool {
        try await database.write { db in
            guard let projectID = try? Self.projectRowID(db, project) else { return false }
            try db.execute(
                sql: "DELETE FROM analytics_dataset_buckets WHERE project_id = ? AND dataset = ?",
                arguments: [projectID, name])
            try db.execute(
                sql: "DELETE FROM analytics_datasets WHERE project_id = ? AND name = ?", arguments: [projectID, name])
            return db.changesCount > 0
        }
    }

    package func claimDueDatasets(now: Int64, lease: Int64, limit: Int) async throws -> [CachedDataset] {
        try await database.write { db in
            var due = try Row.fetchAll(
                db, sql: "\(Self.datasetColumns) WHERE d.due_us <= ? ORDER BY d.due_us LIMIT ?",
                arguments: [now, limit]
            ).map(Self.dataset)
            for index in due.indices {
                if due[index].refreshedAt == nil { due[index].status = "Bootstrapping" }
                try db.execute(
                    sql: """
                        UPDATE analytics_datasets SET due_us = ?, status = ?
                        WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = ?) AND name = ?
                        """, arguments: [now + lease, due[index].status, due[index].project, due[index].name])
            }
            return due
        }
    }

    package func storeDatasetBuckets(
        project: String, name: String, modifiedAt: Int64, windowStart: Int64, from: Int64, buckets: [DatasetBucket],
        at: Int64, due: Int64
    ) async throws {
        try await database.write { db in
            let projectID = try Self.projectRowID(db, project)
            guard
                try Int64.fetchOne(
                    db, sql: "SELECT modified_us FROM analytics_datasets WHERE project_id = ? AND name = ?",
                    arguments: [projectID, name]) == modifiedAt
            else { return }
            try db.execute(
                sql: """
                    DELETE FROM analytics_dataset_buckets
                    WHERE project_id = ? AND dataset = ? AND (start_us < ? OR start_us >= ?)
                    """, arguments: [projectID, name, windowStart, from])
            let insert = try db.makeStatement(
                sql: """
                    INSERT OR REPLACE INTO analytics_dataset_buckets
                        (project_id, dataset, index_key, start_us, end_us, value) VALUES (?, ?, ?, ?, ?, ?)
                    """)
            for bucket in buckets {
                try insert.execute(arguments: [
                    projectID, name, bucket.index, bucket.start, bucket.end, bucket.value,
                ])
            }
            try db.execute(
                sql: """
                    UPDATE analytics_datasets SET status = 'OK', refreshed_us = ?, due_us = ?, error = NULL
                    WHERE project_id = ? AND name = ?
                    """, arguments: [at, due, projectID, name])
        }
    }

    package func failDataset(
        project: String, name: String, modifiedAt: Int64, status: String, error: String, due: Int64
    ) async throws {
        try await database.write { db in
            try db.execute(
                sql: """
                    UPDATE analytics_datasets SET status = ?, error = ?, due_us = ?
                    WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = ?) AND name = ?
                        AND modified_us = ?
                    """, arguments: [status, error, due, project, name, modifiedAt])
        }
    }

    package func datasetBuckets(project: String, name: String, index: String, from: Int64, to: Int64) async throws
        -> [DatasetBucket]
    {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT b.index_key, b.start_us, b.end_us, b.value FROM analytics_dataset_buckets b
                    JOIN analytics_projects p ON p.id = b.project_id
                    WHERE p.public_id = ? AND b.dataset = ? AND b.index_key = ? AND b.start_us >= ? AND b.start_us < ?
                    ORDER BY b.start_us
                    """, arguments: [project, name, index, from, to]
            ).map { DatasetBucket(index: $0[0], start: $0[1], end: $0[2], value: $0[3]) }
        }
    }
}
