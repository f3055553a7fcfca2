import Foundation
import JSON
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresStore {
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
