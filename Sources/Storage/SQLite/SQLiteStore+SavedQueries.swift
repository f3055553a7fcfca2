import Foundation
import GRDB
import JSON
import Synchronization

extension SQLiteStore {
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
}
