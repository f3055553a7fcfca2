import Analytics
import Foundation
import JSON
import NIOCore
import PostgresNIO

/// Columns on PostgreSQL (docs/analytics.md, "Columns on PostgreSQL"). Each instance keeps the
/// collections it was asked about as columns, as the SQLite store does, and before each answer
/// reads what every instance committed since the last event they hold: within a project, event
/// ids commit in order (its writers hold its row to the commit and take ids from a sequence
/// without a cache, migration 11), so what an instance sees committed is every event up to some id
/// and `id > followed` is all it has not read. A delete moves the collection's `deletions`
/// counter in its transaction; columns read at another count are read again.
extension PostgresStore {
    /// The answer from columns holding every event committed before the call, or nil when the
    /// columns cannot answer it (the rows do). When nothing was committed since the last answer,
    /// one statement: the collection's deletions counter and the events after the columns' last.
    func columnarAnswer(project: String, _ query: KeenQuery, budget: QueryBudget) async throws -> JSONValue? {
        guard let byCollection = ColumnarQuery.pathsByCollection(of: query) else { return nil }
        var data: [String: CollectionColumns] = [:]
        var dictionaries: [[String]] = []
        for (collection, wanted) in byCollection {
            guard
                let (columns, paths) = try await followedColumns(
                    project: project, collection: collection, paths: wanted, budget: budget)
            else { return nil }
            data[collection] = columns
            dictionaries.append(paths)
        }
        // The newest dictionary read: it names every path the columns' rows hold.
        let paths = dictionaries.max { $0.count < $1.count } ?? []
        let columns = data
        return try await BlockingBridge.onThread(query: true) { () throws -> JSONValue? in
            if query.analysis.type == .funnel {
                return try ColumnarQuery.funnel(query, on: columns, projectPaths: paths, budget: budget)
            }
            guard let collection = query.collection, let one = columns[collection] else { return nil }
            return try ColumnarQuery.run(query, on: one, projectPaths: paths, budget: budget)
        }
    }

    /// `collection`'s columns holding `paths` and every event committed before the call — the kept
    /// ones with what was committed since added, or read now — and the project's dictionary, which
    /// names every path their rows hold. Nil for a collection without events, past the columns'
    /// bound, or when other queries kept moving them on meanwhile.
    func followedColumns(project: String, collection: String, paths: Set<String>, budget: QueryBudget)
        async throws -> (CollectionColumns, [String])?
    {
        let cache = analytics.columns
        /// The longer of two dictionaries (they only grow): the newer.
        func newer(_ a: [String], _ b: [String]) -> [String] { a.count >= b.count ? a : b }
        // Another query moving the columns on meanwhile is a race, tried three times; a backlog
        // is followed a chunk at a time, as many as it takes.
        var (races, steps) = (0, 0)
        while races < 3 && steps < 100 {
            steps += 1
            // This instance's copy of the dictionary is as new as any it decoded the columns with;
            // a collection it does not know yet is looked up.
            var state = analytics.projects.withLock { $0[project] }
            if state?.collections[collection] == nil { state = try await currentProject(project) }
            guard let state, let collectionID = state.collections[collection] else { return nil }
            let kept = cache.kept(project: project, collection: collection)
            guard let kept, paths.isSubset(of: kept.columns.keys) else {
                let deletions = try await deletionsCount(collectionID)
                let same = kept?.deletions == deletions ? kept : nil
                guard
                    let read = try await readColumns(
                        project: project, collection: collection, id: collectionID, paths: paths, kept: same,
                        deletions: deletions, budget: budget)
                else { return nil }
                // Read up to an id taken at the start: what was committed since is followed next.
                if read.followed == same?.followed { continue }
                return (read, newer(read.pathNames, state.paths))
            }
            // More late rows than a query should sort: read again in order.
            let room = max(100_000, kept.count / 4) - kept.unsorted
            if room <= 0 {
                cache.drop(project: project, collection: collection)
                continue
            }
            let chunk = min(room + 1, Self.followChunk)
            let (deletions, rows) = try await events(of: collectionID, after: kept.followed, limit: chunk)
            if deletions != kept.deletions || rows.count > room {
                cache.drop(project: project, collection: collection)
                continue
            }
            guard let last = rows.last else { return (kept, newer(kept.pathNames, state.paths)) }
            // The dictionary read after the rows names every path they hold.
            guard let fresh = try await currentProject(project) else { return nil }
            let tail = try CollectionColumns.read(
                collection: collection, paths: Set(kept.columns.keys),
                from: FollowedRows(rows: rows, dictionary: fresh.paths), budget: budget)
            guard
                let columns = cache.follow(
                    project: project, collection: collection, rows: tail, from: kept.followed, through: last.id,
                    deletions: deletions, pathNames: fresh.paths)
            else {
                races += 1
                continue
            }
            // A full chunk: more may follow it.
            if rows.count == chunk { continue }
            return (columns, newer(columns.pathNames, fresh.paths))
        }
        return nil
    }

    /// Events read per statement when following (a backlog is read a chunk at a time).
    static let followChunk = 20_000

    /// Reads `collection`'s columns with `paths` (and the kept ones' paths) as of now: every event up
    /// to the highest id committed, in the table's order. Beside kept columns without late rows only
    /// the new paths are read, for the same rows.
    func readColumns(
        project: String, collection: String, id collectionID: Int64, paths: Set<String>, kept: CollectionColumns?,
        deletions: Int64, budget: QueryBudget
    ) async throws -> CollectionColumns? {
        let (cache, logger) = (analytics.columns, logger)
        var through: Int64 = 0
        if let kept, kept.unsorted == 0 {
            through = kept.followed
        } else {
            for try await highest in try await client.query(
                "SELECT coalesce(max(id), 0)::int8 FROM analytics_events WHERE collection_id = \(collectionID)",
                logger: logger
            ).decode(Int64.self) {
                through = highest
            }
        }
        // The dictionary read after the highest id: it names every path of the events up to it.
        guard let state = try await currentProject(project) else { return nil }
        let source = PostgresEventSource(client: client, logger: logger, state: state, through: through)
        let allPaths = paths.union(kept?.columns.keys ?? [:].keys)
        let upTo = through
        return try await BlockingBridge.onThread(query: true) { () throws -> CollectionColumns? in
            let count = try source.count(ScanPlan(collection: collection, timeframe: .allTime))
            guard CollectionColumns.estimate(count: count, paths: allPaths.count) <= cache.maximumBytes else {
                return nil
            }
            var columns = try CollectionColumns.read(
                collection: collection, paths: paths, beside: kept, from: source, budget: budget)
            columns.followed = upTo
            columns.deletions = deletions
            columns.pathNames = state.paths
            return cache.keep(columns, project: project, collection: collection) ? columns : nil
        }
    }

    /// How many deletes `collection` has had.
    func deletionsCount(_ collectionID: Int64) async throws -> Int64 {
        for try await deletions in try await client.query(
            "SELECT deletions FROM analytics_collections WHERE id = \(collectionID)", logger: logger
        ).decode(Int64.self) {
            return deletions
        }
        return 0
    }

    /// The collection's deletions counter and its events committed after id `after`, in id order, at
    /// most `limit`: one statement, so both are of one moment.
    func events(of collectionID: Int64, after: Int64, limit: Int) async throws -> (
        deletions: Int64, rows: [PostgresEventSource.Row]
    ) {
        var (deletions, rows): (Int64, [PostgresEventSource.Row]) = (0, [])
        for try await (count, id, timestamp, createdAt, data) in try await client.query(
            """
            SELECT c.deletions, e.id, e.ts_us, e.created_us, e.data FROM analytics_collections c
            LEFT JOIN LATERAL (
                SELECT id, ts_us, created_us, data FROM analytics_events
                WHERE collection_id = c.id AND id > \(after) ORDER BY id LIMIT \(limit)
            ) e ON true
            WHERE c.id = \(collectionID)
            """, logger: logger
        ).decode((Int64, Int64?, Int64?, Int64?, ByteBuffer?).self) {
            deletions = count
            if let id, let timestamp, let createdAt, let data {
                rows.append(PostgresEventSource.Row(id: id, timestamp: timestamp, createdAt: createdAt, data: data))
            }
        }
        return (deletions, rows)
    }
}

/// Events read by id after what the columns hold, for `CollectionColumns.read`.
struct FollowedRows: EventSource {
    let rows: [PostgresEventSource.Row]
    let dictionary: [String]

    func paths() throws -> [String] { dictionary }

    func scan(_ scan: ScanPlan, _ body: (EventRow) throws -> Bool) throws {
        for row in rows {
            let goOn = try row.data.withUnsafeReadableBytes { bytes in
                try body(EventRow(rowID: row.id, timestamp: row.timestamp, createdAt: row.createdAt, data: bytes))
            }
            if !goOn { return }
        }
    }

    func count(_ scan: ScanPlan) throws -> Int { rows.count }
}
