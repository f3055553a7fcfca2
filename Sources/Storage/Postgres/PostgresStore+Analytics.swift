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
    // MARK: A project's dictionary

    /// The project's dictionary as of `version`: this instance's copy when it has that version, else
    /// read from the tables (what is read may be newer than `version`, never older: entries are only
    /// added, each addition raising the version).
    static func projectState(
        _ connection: HeldConnection, publicID: String, rowID: Int64, version: Int64, cache: AnalyticsCache,
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

}
