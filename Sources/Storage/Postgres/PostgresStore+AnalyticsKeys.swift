import Foundation
import JSON
import Logging
import NIOCore
import PostgresNIO
import Synchronization

extension PostgresStore {
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

    static func fetchKey(_ connection: HeldConnection, hash: Data, logger: Logger) async throws -> AnalyticsKey? {
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
}
