import Analytics
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Keen-compatible analytics on PostgreSQL, for several instances on one database: the tables of
/// the SQLite store (migration "3 analytics"), with
/// - a project's writes serialized across instances by its row (`FOR UPDATE`), so collection and
///   path numbers stay dense and a uniqueness token is decided once;
/// - each instance's copy of a project's dictionary (collections, paths, schema) checked against
///   the project row's `version` before it is used, so what another instance added is read again;
/// - keys read from the table on every request, never cached: a key deleted or deactivated on one
///   instance stops working on every instance at once;
/// - queries run by the same engine as on SQLite, on a thread of their own that reads the scan page
///   by page (the engine is synchronous; PostgreSQL's client is not).
extension PostgresStore: AnalyticsStore {
    // MARK: Projects and keys

    package func createProject(name: String, id: String?, now: Date) async throws -> NewAnalyticsProject {
        let project = try NewAnalyticsProject(name: name, id: id)
        let (publicID, secrets) = (
            project.id, (master: project.masterKey, write: project.writeKey, read: project.readKey)
        )
        let created = now.timeIntervalSince1970
        let logger = logger
        do {
            try await transaction { connection in
                var rowID: Int64 = 0
                for try await id in try await connection.query(
                    """
                    INSERT INTO analytics_projects (public_id, name, created_at) VALUES (\(publicID), \(name), \(created))
                    RETURNING id
                    """, logger: logger
                ).decode(Int64.self) {
                    rowID = id
                }
                for (kind, secret) in [("master", secrets.master), ("write", secrets.write), ("read", secrets.read)] {
                    let hash = ByteBuffer(bytes: AnalyticsKey.hash(secret))
                    let (label, hint) = ("\(kind) key", String(secret.prefix(6)))
                    _ = try await connection.query(
                        """
                        INSERT INTO analytics_keys (hash, project_id, kind, name, hint, created_at)
                        VALUES (\(hash), \(rowID), \(kind), \(label), \(hint), \(created))
                        """, logger: logger
                    ).collect()
                }
            }
        } catch  where Self.isUniqueViolation(error) {
            throw StoreError.invalid("there is already a project \(publicID)")
        }
        return project
    }

    package func analyticsProjects() async throws -> [(id: String, name: String)] {
        var projects: [(id: String, name: String)] = []
        for try await (id, name) in try await client.query(
            "SELECT public_id, name FROM analytics_projects ORDER BY id", logger: logger
        ).decode((String, String).self) {
            projects.append((id, name))
        }
        return projects
    }

    static let keyColumns = """
        SELECT p.public_id, k.kind, k.name, k.is_active, k.permitted, k.options, k.hint, k.created_at
        FROM analytics_keys k JOIN analytics_projects p ON p.id = k.project_id
        """

    typealias KeyRow = (String, String, String, Bool, String, String, String, Double)

    static func key(_ row: KeyRow) -> AnalyticsKey {
        let permitted = (try? JSONValue.parse(row.4))?.array?.compactMap(\.string) ?? []
        let options = (try? JSONValue.parse(row.5))?.object ?? JSONObject()
        return AnalyticsKey(
            project: row.0, kind: AnalyticsKey.Kind(rawValue: row.1) ?? .access, name: row.2, isActive: row.3,
            permitted: permitted, options: options, hint: row.6, createdAt: Date(timeIntervalSince1970: row.7))
    }

    static func fetchKey(_ connection: PostgresConnection, hash: Data, logger: Logger) async throws -> AnalyticsKey? {
        let bytes = ByteBuffer(bytes: hash)
        for try await row in try await connection.query(
            "\(unescaped: keyColumns) WHERE k.hash = \(bytes)", logger: logger
        ).decode(KeyRow.self) {
            return key(row)
        }
        return nil
    }

    package func key(project: String, secret: String) async throws -> AnalyticsKey? {
        let logger = logger
        let key = try await client.withConnection { connection in
            try await Self.fetchKey(connection, hash: AnalyticsKey.hash(secret), logger: logger)
        }
        return key?.project == project ? key : nil
    }

    package func createAccessKey(
        project: String, name: String, isActive: Bool, permitted: [String], options: JSONObject, now: Date
    ) async throws -> (secret: String, key: AnalyticsKey) {
        let (secret, key) = AnalyticsKey.newAccessKey(
            project: project, name: name, isActive: isActive, permitted: permitted, options: options, now: now)
        let (hash, permittedText) = (
            ByteBuffer(bytes: AnalyticsKey.hash(secret)), JSONValue.array(permitted.map { .string($0) }).jsonText
        )
        let (optionsText, created) = (JSONValue.object(options).jsonText, now.timeIntervalSince1970)
        let inserted = try await client.query(
            """
            INSERT INTO analytics_keys (hash, project_id, kind, name, is_active, permitted, options, hint, created_at)
            SELECT \(hash), id, 'access', \(name), \(isActive), \(permittedText), \(optionsText), \(key.hint), \(created)
            FROM analytics_projects WHERE public_id = \(project)
            RETURNING hint
            """, logger: logger
        ).collect()
        guard !inserted.isEmpty else { throw StoreError.invalid("no project \(project)") }
        return (secret, key)
    }

    package func accessKeys(project: String) async throws -> [AnalyticsKey] {
        var keys: [AnalyticsKey] = []
        for try await row in try await client.query(
            """
            \(unescaped: Self.keyColumns)
            WHERE p.public_id = \(project) AND k.kind = 'access' ORDER BY k.created_at, k.hint
            """, logger: logger
        ).decode(KeyRow.self) {
            keys.append(Self.key(row))
        }
        return keys
    }

    package func updateAccessKey(
        project: String, secret: String, name: String, isActive: Bool, permitted: [String], options: JSONObject
    ) async throws -> AnalyticsKey? {
        let hash = AnalyticsKey.hash(secret)
        let (permittedText, optionsText) = (
            JSONValue.array(permitted.map { .string($0) }).jsonText, JSONValue.object(options).jsonText
        )
        let logger = logger
        return try await transaction { connection -> AnalyticsKey? in
            guard let key = try await Self.fetchKey(connection, hash: hash, logger: logger), key.project == project,
                key.kind == .access
            else { return nil }
            let bytes = ByteBuffer(bytes: hash)
            _ = try await connection.query(
                """
                UPDATE analytics_keys SET name = \(name), is_active = \(isActive), permitted = \(permittedText),
                    options = \(optionsText)
                WHERE hash = \(bytes)
                """, logger: logger
            ).collect()
            return try await Self.fetchKey(connection, hash: hash, logger: logger)
        }
    }

    package func deleteAccessKey(project: String, secret: String) async throws -> Bool {
        let hash = ByteBuffer(bytes: AnalyticsKey.hash(secret))
        let deleted = try await client.query(
            """
            DELETE FROM analytics_keys k USING analytics_projects p
            WHERE k.hash = \(hash) AND k.kind = 'access' AND p.id = k.project_id AND p.public_id = \(project)
            RETURNING k.hint
            """, logger: logger
        ).collect()
        return !deleted.isEmpty
    }

    // MARK: A project's dictionary

    /// The project's dictionary as of `version`: this instance's copy when it has that version, else
    /// read from the tables (what is read may be newer than `version`, never older: entries are only
    /// added, each addition raising the version).
    static func projectState(
        _ connection: PostgresConnection, publicID: String, rowID: Int64, version: Int64, cache: AnalyticsCache,
        logger: Logger
    ) async throws -> AnalyticsCache.Project {
        if let state = cache.projects.withLock({ $0[publicID] }), state.rowID == rowID, state.version == version {
            return state
        }
        var state = AnalyticsCache.Project(rowID: rowID, version: version)
        for try await (id, name) in try await connection.query(
            "SELECT id, name FROM analytics_collections WHERE project_id = \(rowID)", logger: logger
        ).decode((Int64, String).self) {
            state.collections[name] = id
        }
        for try await (id, path) in try await connection.query(
            "SELECT id, path FROM analytics_paths WHERE project_id = \(rowID) ORDER BY id", logger: logger
        ).decode((Int32, String).self) {
            while state.paths.count < Int(id) { state.paths.append("") }
            state.paths.append(path)
            state.pathIDs[path] = Int(id)
        }
        for try await (collection, path, type) in try await connection.query(
            """
            SELECT s.collection_id, s.path_id, s.type FROM analytics_schema s
            JOIN analytics_collections c ON c.id = s.collection_id WHERE c.project_id = \(rowID)
            """, logger: logger
        ).decode((Int64, Int32, String).self) {
            state.schema.insert(AnalyticsCache.SchemaEntry(collection: collection, path: Int(path), type: type))
        }
        cache.projects.withLock { $0[publicID] = state }
        return state
    }

    /// The project's dictionary now, or nil when there is no such project.
    func currentProject(_ publicID: String) async throws -> AnalyticsCache.Project? {
        let (cache, logger) = (analytics, logger)
        return try await client.withConnection { connection in
            for try await (rowID, version) in try await connection.query(
                "SELECT id, version FROM analytics_projects WHERE public_id = \(publicID)", logger: logger
            ).decode((Int64, Int64).self) {
                return try await Self.projectState(
                    connection, publicID: publicID, rowID: rowID, version: version, cache: cache, logger: logger)
            }
            return nil
        }
    }

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
        var deleted = 0
        for start in stride(from: 0, to: rows.count, by: 10_000) {
            let chunk = rows[start..<min(start + 10_000, rows.count)]
            let (times, ids) = (chunk.map(\.timestamp), chunk.map(\.id))
            deleted += try await client.query(
                """
                DELETE FROM analytics_events e USING unnest(\(times)::int8[], \(ids)::int8[]) AS u(t, i)
                WHERE e.collection_id = \(collectionID) AND e.ts_us = u.t AND e.id = u.i
                RETURNING e.id
                """, logger: logger
            ).collect().count
        }
        return deleted
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

    // MARK: Saved and cached queries

    /// The columns of a saved query; `withResult` false leaves its kept result out (a listing).
    static func savedQueryColumns(withResult: Bool = true) -> String {
        """
        SELECT p.public_id, q.name, q.definition, q.created_us, q.modified_us,
            \(withResult ? "q.result" : "NULL::text"), q.result_us, q.due_us
        FROM analytics_saved_queries q JOIN analytics_projects p ON p.id = q.project_id
        """
    }

    typealias SavedQueryRow = (String, String, String, Int64, Int64, String?, Int64?, Int64?)

    static func savedQuery(_ row: SavedQueryRow) throws -> SavedQuery {
        let definition = try JSONValue.parse(Array(row.2.utf8)).object ?? JSONObject()
        let result = try row.5.map { try JSONValue.parse(Array($0.utf8)).object ?? JSONObject() }
        return SavedQuery(
            project: row.0, name: row.1, definition: definition, createdAt: row.3, modifiedAt: row.4, result: result,
            resultAt: row.6, dueAt: row.7)
    }

    package func putSavedQuery(project: String, name: String, definition: JSONObject, now: Int64) async throws
        -> (query: SavedQuery, created: Bool)
    {
        let text = JSONValue.object(definition).jsonText
        var query = SavedQuery(project: project, name: name, definition: definition, createdAt: now, modifiedAt: now)
        let due: Int64? = query.refreshRate > 0 ? now : nil
        var answer: (created: Int64, inserted: Bool)?
        for try await row in try await client.query(
            """
            INSERT INTO analytics_saved_queries (project_id, name, definition, created_us, modified_us, due_us)
            SELECT id, \(name), \(text), \(now), \(now), \(due) FROM analytics_projects WHERE public_id = \(project)
            ON CONFLICT (project_id, name) DO UPDATE SET definition = excluded.definition,
                modified_us = excluded.modified_us, result = NULL, result_us = NULL, due_us = excluded.due_us
            RETURNING created_us, (xmax = 0)
            """, logger: logger
        ).decode((Int64, Bool).self) {
            answer = row
        }
        guard let answer else { throw StoreError.invalid("no project \(project)") }
        query.createdAt = answer.created
        return (query, answer.inserted)
    }

    package func savedQuery(project: String, name: String) async throws -> SavedQuery? {
        for try await row in try await client.query(
            "\(unescaped: Self.savedQueryColumns()) WHERE p.public_id = \(project) AND q.name = \(name)", logger: logger
        ).decode(SavedQueryRow.self) {
            return try Self.savedQuery(row)
        }
        return nil
    }

    package func savedQueries(project: String) async throws -> [SavedQuery] {
        var queries: [SavedQuery] = []
        for try await row in try await client.query(
            "\(unescaped: Self.savedQueryColumns(withResult: false)) WHERE p.public_id = \(project) ORDER BY q.name",
            logger: logger
        ).decode(SavedQueryRow.self) {
            queries.append(try Self.savedQuery(row))
        }
        return queries
    }

    package func deleteSavedQuery(project: String, name: String) async throws -> Bool {
        let deleted = try await client.query(
            """
            DELETE FROM analytics_saved_queries
            WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = \(project)) AND name = \(name)
            RETURNING name
            """, logger: logger
        ).collect()
        return !deleted.isEmpty
    }

    package func cacheSavedQueryResult(
        project: String, name: String, modifiedAt: Int64, result: JSONObject, at: Int64, due: Int64?
    ) async throws {
        let text = JSONValue.object(result).jsonText
        _ = try await client.query(
            """
            UPDATE analytics_saved_queries SET result = \(text), result_us = \(at), due_us = \(due)
            WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = \(project)) AND name = \(name)
                AND modified_us = \(modifiedAt) AND (result_us IS NULL OR result_us <= \(at))
            """, logger: logger
        ).collect()
    }

    package func postponeSavedQuery(project: String, name: String, modifiedAt: Int64, due: Int64) async throws {
        _ = try await client.query(
            """
            UPDATE analytics_saved_queries SET due_us = \(due)
            WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = \(project)) AND name = \(name)
                AND modified_us = \(modifiedAt)
            """, logger: logger
        ).collect()
    }

    package func claimDueSavedQueries(now: Int64, lease: Int64, limit: Int) async throws -> [SavedQuery] {
        let next = now + lease
        var queries: [SavedQuery] = []
        for try await row in try await client.query(
            """
            WITH due AS (
                SELECT project_id, name FROM analytics_saved_queries
                WHERE due_us IS NOT NULL AND due_us <= \(now) ORDER BY due_us LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
            ), taken AS (
                UPDATE analytics_saved_queries q SET due_us = \(next) FROM due
                WHERE q.project_id = due.project_id AND q.name = due.name
                RETURNING q.project_id, q.name, q.definition, q.created_us, q.modified_us, q.result_us, q.due_us
            )
            SELECT p.public_id, t.name, t.definition, t.created_us, t.modified_us, NULL::text, t.result_us, t.due_us
            FROM taken t JOIN analytics_projects p ON p.id = t.project_id
            """, logger: logger
        ).decode(SavedQueryRow.self) {
            queries.append(try Self.savedQuery(row))
        }
        return queries
    }

    // MARK: Cached datasets

    static let datasetColumns = """
        SELECT p.public_id, d.name, d.definition, d.created_us, d.modified_us, d.status, d.refreshed_us, d.due_us,
            d.error
        FROM analytics_datasets d JOIN analytics_projects p ON p.id = d.project_id
        """

    typealias DatasetRow = (String, String, String, Int64, Int64, String, Int64?, Int64?, String?)

    static func dataset(_ row: DatasetRow) throws -> CachedDataset {
        CachedDataset(
            project: row.0, name: row.1, definition: try JSONValue.parse(Array(row.2.utf8)).object ?? JSONObject(),
            createdAt: row.3, modifiedAt: row.4, status: row.5, refreshedAt: row.6, dueAt: row.7, error: row.8)
    }

    package func putDataset(project: String, name: String, definition: JSONObject, now: Int64) async throws
        -> (dataset: CachedDataset, created: Bool)
    {
        let text = JSONValue.object(definition).jsonText
        let logger = logger
        let answer: (Int64, Bool)? = try await transaction { connection in
            var answer: (Int64, Bool)?
            for try await row in try await connection.query(
                """
                INSERT INTO analytics_datasets (project_id, name, definition, created_us, modified_us, status, due_us)
                SELECT id, \(name), \(text), \(now), \(now), 'Created', \(now) FROM analytics_projects
                WHERE public_id = \(project)
                ON CONFLICT (project_id, name) DO UPDATE SET definition = excluded.definition,
                    modified_us = excluded.modified_us, status = 'Created', refreshed_us = NULL,
                    due_us = excluded.due_us, error = NULL
                RETURNING created_us, (xmax = 0)
                """, logger: logger
            ).decode((Int64, Bool).self) {
                answer = row
            }
            _ = try await connection.query(
                """
                DELETE FROM analytics_dataset_buckets
                WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = \(project)) AND dataset = \(name)
                """, logger: logger
            ).collect()
            return answer
        }
        guard let answer else { throw StoreError.invalid("no project \(project)") }
        let dataset = CachedDataset(
            project: project, name: name, definition: definition, createdAt: answer.0, modifiedAt: now, dueAt: now)
        return (dataset, answer.1)
    }

    package func dataset(project: String, name: String) async throws -> CachedDataset? {
        for try await row in try await client.query(
            "\(unescaped: Self.datasetColumns) WHERE p.public_id = \(project) AND d.name = \(name)", logger: logger
        ).decode(DatasetRow.self) {
            return try Self.dataset(row)
        }
        return nil
    }

    package func datasets(project: String) async throws -> [CachedDataset] {
        var datasets: [CachedDataset] = []
        for try await row in try await client.query(
            "\(unescaped: Self.datasetColumns) WHERE p.public_id = \(project) ORDER BY d.name", logger: logger
        ).decode(DatasetRow.self) {
            datasets.append(try Self.dataset(row))
        }
        return datasets
    }

    package func deleteDataset(project: String, name: String) async throws -> Bool {
        let logger = logger
        return try await transaction { connection in
            _ = try await connection.query(
                """
                DELETE FROM analytics_dataset_buckets
                WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = \(project)) AND dataset = \(name)
                """, logger: logger
            ).collect()
            let deleted = try await connection.query(
                """
                DELETE FROM analytics_datasets
                WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = \(project)) AND name = \(name)
                RETURNING name
                """, logger: logger
            ).collect()
            return !deleted.isEmpty
        }
    }

    package func claimDueDatasets(now: Int64, lease: Int64, limit: Int) async throws -> [CachedDataset] {
        let next = now + lease
        var datasets: [CachedDataset] = []
        for try await row in try await client.query(
            """
            WITH due AS (
                SELECT project_id, name FROM analytics_datasets
                WHERE due_us <= \(now) ORDER BY due_us LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
            ), taken AS (
                UPDATE analytics_datasets d SET due_us = \(next),
                    status = CASE WHEN d.refreshed_us IS NULL THEN 'Bootstrapping' ELSE d.status END
                FROM due WHERE d.project_id = due.project_id AND d.name = due.name
                RETURNING d.*
            )
            SELECT p.public_id, t.name, t.definition, t.created_us, t.modified_us, t.status, t.refreshed_us, t.due_us,
                t.error
            FROM taken t JOIN analytics_projects p ON p.id = t.project_id
            """, logger: logger
        ).decode(DatasetRow.self) {
            datasets.append(try Self.dataset(row))
        }
        return datasets
    }

    package func storeDatasetBuckets(
        project: String, name: String, modifiedAt: Int64, windowStart: Int64, from: Int64, buckets: [DatasetBucket],
        at: Int64, due: Int64
    ) async throws {
        let logger = logger
        try await transaction { connection in
            var projectID: Int64?
            for try await id in try await connection.query(
                """
                SELECT d.project_id FROM analytics_datasets d JOIN analytics_projects p ON p.id = d.project_id
                WHERE p.public_id = \(project) AND d.name = \(name) AND d.modified_us = \(modifiedAt)
                FOR UPDATE OF d
                """, logger: logger
            ).decode(Int64.self) {
                projectID = id
            }
            guard let projectID else { return }
            _ = try await connection.query(
                """
                DELETE FROM analytics_dataset_buckets
                WHERE project_id = \(projectID) AND dataset = \(name) AND (start_us < \(windowStart) OR start_us >= \(from))
                """, logger: logger
            ).collect()
            // In pages: one statement's parameters are bounded.
            for page in stride(from: 0, to: buckets.count, by: 1_000) {
                let slice = buckets[page..<min(buckets.count, page + 1_000)]
                _ = try await connection.query(
                    """
                    INSERT INTO analytics_dataset_buckets (project_id, dataset, index_key, start_us, end_us, value)
                    SELECT \(projectID), \(name), * FROM unnest(
                        \(slice.map(\.index))::text[], \(slice.map(\.start))::bigint[], \(slice.map(\.end))::bigint[],
                        \(slice.map(\.value))::text[])
                    ON CONFLICT (project_id, dataset, index_key, start_us) DO UPDATE
                        SET end_us = excluded.end_us, value = excluded.value
                    """, logger: logger
                ).collect()
            }
            _ = try await connection.query(
                """
                UPDATE analytics_datasets SET status = 'OK', refreshed_us = \(at), due_us = \(due), error = NULL
                WHERE project_id = \(projectID) AND name = \(name)
                """, logger: logger
            ).collect()
        }
    }

    package func failDataset(
        project: String, name: String, modifiedAt: Int64, status: String, error: String, due: Int64
    ) async throws {
        _ = try await client.query(
            """
            UPDATE analytics_datasets SET status = \(status), error = \(error), due_us = \(due)
            WHERE project_id = (SELECT id FROM analytics_projects WHERE public_id = \(project)) AND name = \(name)
                AND modified_us = \(modifiedAt)
            """, logger: logger
        ).collect()
    }

    package func datasetBuckets(project: String, name: String, index: String, from: Int64, to: Int64) async throws
        -> [DatasetBucket]
    {
        var buckets: [DatasetBucket] = []
        for try await (key, start, end, value) in try await client.query(
            """
            SELECT b.index_key, b.start_us, b.end_us, b.value FROM analytics_dataset_buckets b
            JOIN analytics_projects p ON p.id = b.project_id
            WHERE p.public_id = \(project) AND b.dataset = \(name) AND b.index_key = \(index)
                AND b.start_us >= \(from) AND b.start_us < \(to)
            ORDER BY b.start_us
            """, logger: logger
        ).decode((String, Int64, Int64, String).self) {
            buckets.append(DatasetBucket(index: key, start: start, end: end, value: value))
        }
        return buckets
    }
}
