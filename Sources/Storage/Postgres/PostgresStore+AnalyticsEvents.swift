import Analytics
import Foundation
import JSON
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresStore {
    // MARK: Events

    struct TokenKey: Hashable {
        var collection: Int64
        var token: String
    }

    package func record(
        project: String, batch: [(collection: String, events: [IncomingEvent])], createdAt: Int64
    ) async throws -> [[Bool]] {
        let (cache, logger) = (analytics, logger)
        do {
            let (stored, state) = try await transaction { connection -> ([[Bool]], AnalyticsCache.Project) in
                // The project's row, held to the commit: its writers on every instance go one at a time.
                var found: (rowID: Int64, version: Int64)?
                for try await row in try await connection.query(
                    "SELECT id, version FROM analytics_projects WHERE public_id = \(project) FOR UPDATE", logger: logger
                ).decode((Int64, Int64).self) {
                    found = row
                }
                guard let (rowID, version) = found else { throw StoreError.invalid("no project \(project)") }
                var state = try await Self.projectState(
                    connection, publicID: project, rowID: rowID, version: version, cache: cache, logger: logger)
                var added = false
                var collectionIDs: [Int64] = []
                for (collection, _) in batch {
                    if let id = state.collections[collection] {
                        collectionIDs.append(id)
                        continue
                    }
                    var id: Int64 = 0
                    for try await inserted in try await connection.query(
                        "INSERT INTO analytics_collections (project_id, name) VALUES (\(rowID), \(collection)) RETURNING id",
                        logger: logger
                    ).decode(Int64.self) {
                        id = inserted
                    }
                    state.collections[collection] = id
                    collectionIDs.append(id)
                    added = true
                }

                // Uniqueness tokens: each new one (or one older than 31 days) taken in one statement;
                // within the batch, the first event with a token has it, a repeat after it is dropped.
                var asked = Set<TokenKey>()
                var (tokenCollections, tokens) = ([Int64](), [String]())
                for (index, entry) in batch.enumerated() {
                    for event in entry.events {
                        guard let token = event.token,
                            asked.insert(TokenKey(collection: collectionIDs[index], token: token)).inserted
                        else { continue }
                        tokenCollections.append(collectionIDs[index])
                        tokens.append(token)
                    }
                }
                var fresh = Set<TokenKey>()
                if !tokens.isEmpty {
                    for try await (collection, token) in try await connection.query(
                        """
                        INSERT INTO analytics_tokens (collection_id, token, created_us)
                        SELECT c, t, \(createdAt) FROM unnest(\(tokenCollections)::int8[], \(tokens)::text[]) AS u(c, t)
                        ON CONFLICT (collection_id, token) DO UPDATE SET created_us = excluded.created_us
                        WHERE analytics_tokens.created_us <= excluded.created_us - \(KeenEventRules.tokenLifetime)
                        RETURNING collection_id, token
                        """, logger: logger
                    ).decode((Int64, String).self) {
                        fresh.insert(TokenKey(collection: collection, token: token))
                    }
                }

                var (newPathIDs, newPaths) = ([Int32](), [String]())
                var (schemaCollections, schemaPaths, schemaTypes) = ([Int64](), [Int32](), [String]())
                var (eventCollections, times, bodies) = ([Int64](), [Int64](), [ByteBuffer]())
                var stored: [[Bool]] = []
                for (index, entry) in batch.enumerated() {
                    let collectionID = collectionIDs[index]
                    var kept: [Bool] = []
                    kept.reserveCapacity(entry.events.count)
                    for event in entry.events {
                        if let token = event.token {
                            guard fresh.remove(TokenKey(collection: collectionID, token: token)) != nil else {
                                kept.append(false)
                                continue
                            }
                        }
                        let data = EventCodec.encode(event.leaves) { (path: String) -> Int in
                            if let id = state.pathIDs[path] { return id }
                            let id = state.paths.count
                            state.paths.append(path)
                            state.pathIDs[path] = id
                            newPathIDs.append(Int32(id))
                            newPaths.append(path)
                            return id
                        }
                        for leaf in event.leaves {
                            let entry = AnalyticsCache.SchemaEntry(
                                collection: collectionID, path: state.pathIDs[leaf.path]!, type: leaf.value.typeName)
                            if state.schema.insert(entry).inserted {
                                schemaCollections.append(collectionID)
                                schemaPaths.append(Int32(entry.path))
                                schemaTypes.append(entry.type)
                            }
                        }
                        eventCollections.append(collectionID)
                        times.append(event.timestamp)
                        bodies.append(ByteBuffer(bytes: data))
                        kept.append(true)
                    }
                    stored.append(kept)
                }
                if !newPaths.isEmpty {
                    _ = try await connection.query(
                        """
                        INSERT INTO analytics_paths (project_id, id, path)
                        SELECT \(rowID), i, p FROM unnest(\(newPathIDs)::int4[], \(newPaths)::text[]) AS u(i, p)
                        """, logger: logger
                    ).collect()
                }
                if !schemaTypes.isEmpty {
                    _ = try await connection.query(
                        """
                        INSERT INTO analytics_schema (collection_id, path_id, type)
                        SELECT * FROM unnest(\(schemaCollections)::int8[], \(schemaPaths)::int4[], \(schemaTypes)::text[])
                        ON CONFLICT DO NOTHING
                        """, logger: logger
                    ).collect()
                }
                if added || !newPaths.isEmpty || !schemaTypes.isEmpty {
                    for try await version in try await connection.query(
                        "UPDATE analytics_projects SET version = version + 1 WHERE id = \(rowID) RETURNING version",
                        logger: logger
                    ).decode(Int64.self) {
                        state.version = version
                    }
                }
                if !bodies.isEmpty {
                    _ = try await connection.query(
                        """
                        INSERT INTO analytics_events (collection_id, ts_us, created_us, data)
                        SELECT c, t, \(createdAt), d FROM unnest(\(eventCollections)::int8[], \(times)::int8[],
                            \(bodies)::bytea[]) AS u(c, t, d)
                        """, logger: logger
                    ).collect()
                }
                return (stored, state)
            }
            cache.projects.withLock { $0[project] = state }
            return stored
        } catch {
            cache.projects.withLock { $0[project] = nil }
            throw error
        }
    }

    // MARK: Queries

    package func query(project: String, _ query: KeenQuery, budget: QueryBudget) async throws -> JSONValue {
        // What the columns answer, they answer; the rows answer the rest.
        if let answer = try await columnarAnswer(project: project, query, budget: budget) { return answer }
        return try await rowsAnswer(project: project, query, budget: budget)
    }

    /// The answer read from the rows (the reference the columns are tested against).
    package func rowsAnswer(project: String, _ query: KeenQuery, budget: QueryBudget) async throws -> JSONValue {
        guard let state = try await currentProject(project) else { throw KeenError.notFound("no project \(project)") }
        let source = PostgresEventSource(client: client, logger: logger, state: state)
        return try await BlockingBridge.onThread(query: true) { try QueryEngine.run(query, on: source, budget: budget) }
    }

    package func schema(project: String) async throws -> [CollectionSchema] {
        guard let state = try await currentProject(project) else { return [] }
        return state.collections.sorted { $0.key < $1.key }.map { name, id in
            var properties: [(path: String, type: String)] = state.schema.filter { $0.collection == id }.map {
                (state.paths[$0.path], $0.type)
            }
            properties.sort { a, b in a.path < b.path || (a.path == b.path && a.type < b.type) }
            return CollectionSchema(name: name, properties: properties)
        }
    }

    package func deleteEvents(
        project: String, collection: String, timeframe: Timeframe?, filters: [KeenFilter], budget: QueryBudget
    ) async throws -> Int {
        guard let state = try await currentProject(project), let collectionID = state.collections[collection] else {
            return 0
        }
        let source = PostgresEventSource(client: client, logger: logger, state: state)
        let rows = try await BlockingBridge.onThread {
            try QueryEngine.matchingRows(
                collection: collection, timeframe: timeframe, filters: filters, on: source, budget: budget)
        }
        // Nothing to delete: every instance's columns stay as they are.
        guard !rows.isEmpty else { return 0 }
        let logger = logger
        // One transaction with the collection's deletions counter moved: every instance's columns
        // read before it are read again.
        let deleted = try await transaction { connection -> Int in
            _ = try await connection.query(
                "UPDATE analytics_collections SET deletions = deletions + 1 WHERE id = \(collectionID)",
                logger: logger
            ).collect()
            var deleted = 0
            for start in stride(from: 0, to: rows.count, by: 10_000) {
                let chunk = rows[start..<min(start + 10_000, rows.count)]
                let (times, ids) = (chunk.map(\.timestamp), chunk.map(\.id))
                deleted += try await connection.query(
                    """
                    DELETE FROM analytics_events e USING unnest(\(times)::int8[], \(ids)::int8[]) AS u(t, i)
                    WHERE e.collection_id = \(collectionID) AND e.ts_us = u.t AND e.id = u.i
                    RETURNING e.id
                    """, logger: logger
                ).collect().count
            }
            return deleted
        }
        analytics.columns.drop(project: project, collection: collection)
        return deleted
    }

    package func exportPage(
        project: String, collection: String, timeframe: Timeframe, after cursor: EventExport.Cursor?, limit: Int,
        filters: [KeenFilter]
    ) async throws -> [EventExport.Event] {
        // An event written by another instance after the dictionary was read may hold a path it
        // does not name yet: the page is read again with the dictionary read after it.
        for _ in 0..<3 {
            guard let state = try await currentProject(project) else {
                throw KeenError.notFound("no project \(project)")
            }
            let source = PostgresEventSource(client: client, logger: logger, state: state)
            let page = try await BlockingBridge.onThread(query: true) {
                try EventExport.page(
                    collection: collection, timeframe: timeframe, after: cursor, limit: limit, filters: filters,
                    from: source)
            }
            if !page.contains(where: { $0.leaves.contains { $0.path == EventExport.unknownPath } }) { return page }
        }
        throw StoreError.invalid("the events of \(collection) name properties the project's dictionary does not")
    }

    package func analyticsBytes() async throws -> Int? {
        for try await bytes in try await client.query(
            """
            SELECT (pg_total_relation_size('analytics_events') + pg_total_relation_size('analytics_tokens'))::int8
            """, logger: logger
        ).decode(Int.self) {
            return bytes
        }
        return nil
    }
}
