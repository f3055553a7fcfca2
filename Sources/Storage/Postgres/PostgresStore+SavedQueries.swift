import Foundation
import JSON
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresStore {
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
}
