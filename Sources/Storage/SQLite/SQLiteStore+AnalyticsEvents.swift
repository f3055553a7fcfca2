import Analytics
import Foundation
import GRDB
import JSON
import Synchronization

extension SQLiteStore {
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
            let columns = try CollectionColumns.read(
                collection: collection, paths: paths, beside: kept, from: source, budget: budget)
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

    package func exportPage(
        project: String, collection: String, timeframe: Timeframe, after cursor: EventExport.Cursor?, limit: Int,
        filters: [KeenFilter]
    ) async throws -> [EventExport.Event] {
        let (cache, reader) = (analytics, analyticsReader)
        return try await BlockingBridge.onThread(query: reader is DatabasePool) {
            try reader.read { db in
                // The project's dictionary is written before its events commit: it names every
                // path of the rows this read sees.
                guard let state = try Self.projectState(db, project, cache: cache) else {
                    throw KeenError.notFound("no project \(project)")
                }
                return try EventExport.page(
                    collection: collection, timeframe: timeframe, after: cursor, limit: limit, filters: filters,
                    from: SQLiteEventSource(db: db, state: state))
            }
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
}
