import Foundation
import GRDB
import JSON
import Synchronization

extension SQLiteStore {
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
