import Foundation
import GRDB
import JSON
import Synchronization

extension SQLiteStore {
    // MARK: Projects and keys

    package func createProject(name: String, id: String?, now: Date) async throws -> NewAnalyticsProject {
        let project = try NewAnalyticsProject(name: name, id: id)
        let (publicID, secrets) = (
            project.id, (master: project.masterKey, write: project.writeKey, read: project.readKey)
        )
        try await database.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM analytics_projects WHERE public_id = ?", arguments: [publicID])
                == true
            {
                throw StoreError.invalid("there is already a project \(publicID)")
            }
            try db.execute(
                sql: "INSERT INTO analytics_projects (public_id, name, created_at) VALUES (?, ?, ?)",
                arguments: [publicID, name, now.timeIntervalSince1970])
            let rowID = db.lastInsertedRowID
            for (kind, secret) in [("master", secrets.master), ("write", secrets.write), ("read", secrets.read)] {
                try db.execute(
                    sql: """
                        INSERT INTO analytics_keys (hash, project_id, kind, name, hint, created_at)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        AnalyticsKey.hash(secret), rowID, kind, "\(kind) key", String(secret.prefix(6)),
                        now.timeIntervalSince1970,
                    ])
            }
        }
        return project
    }

    package func analyticsProjects() async throws -> [(id: String, name: String)] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT public_id, name FROM analytics_projects ORDER BY id").map {
                (id: $0[0] as String, name: $0[1] as String)
            }
        }
    }

    package func key(project: String, secret: String) async throws -> AnalyticsKey? {
        let hash = AnalyticsKey.hash(secret)
        if let key = analytics.keys.withLock({ $0[hash] }) { return key.project == project ? key : nil }
        let key = try await database.read { db in try Self.fetchKey(db, hash: hash) }
        guard let key else { return nil }
        analytics.keys.withLock { $0[hash] = key }
        return key.project == project ? key : nil
    }

    static func fetchKey(_ db: Database, hash: Data) throws -> AnalyticsKey? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT p.public_id, k.kind, k.name, k.is_active, k.permitted, k.options, k.hint, k.created_at
                    FROM analytics_keys k JOIN analytics_projects p ON p.id = k.project_id WHERE k.hash = ?
                    """, arguments: [hash])
        else { return nil }
        return try Self.key(row)
    }

    static func key(_ row: Row) throws -> AnalyticsKey {
        let permitted = (try? JSONValue.parse(row[4] as String))?.array?.compactMap(\.string) ?? []
        let options = (try? JSONValue.parse(row[5] as String))?.object ?? JSONObject()
        return AnalyticsKey(
            project: row[0], kind: AnalyticsKey.Kind(rawValue: row[1]) ?? .access, name: row[2], isActive: row[3],
            permitted: permitted, options: options, hint: row[6],
            createdAt: Date(timeIntervalSince1970: row[7]))
    }

    package func createAccessKey(
        project: String, name: String, isActive: Bool, permitted: [String], options: JSONObject, now: Date
    ) async throws -> (secret: String, key: AnalyticsKey) {
        let (secret, key) = AnalyticsKey.newAccessKey(
            project: project, name: name, isActive: isActive, permitted: permitted, options: options, now: now)
        try await database.write { db in
            guard
                let rowID = try Int64.fetchOne(
                    db, sql: "SELECT id FROM analytics_projects WHERE public_id = ?", arguments: [project])
            else { throw StoreError.invalid("no project \(project)") }
            try db.execute(
                sql: """
                    INSERT INTO analytics_keys (hash, project_id, kind, name, is_active, permitted, options, hint, created_at)
                    VALUES (?, ?, 'access', ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    AnalyticsKey.hash(secret), rowID, name, isActive,
                    JSONValue.array(permitted.map { .string($0) }).jsonText,
                    JSONValue.object(options).jsonText, key.hint, now.timeIntervalSince1970,
                ])
        }
        return (secret, key)
    }

    package func accessKeys(project: String) async throws -> [AnalyticsKey] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT p.public_id, k.kind, k.name, k.is_active, k.permitted, k.options, k.hint, k.created_at
                    FROM analytics_keys k JOIN analytics_projects p ON p.id = k.project_id
                    WHERE p.public_id = ? AND k.kind = 'access' ORDER BY k.created_at, k.hint
                    """, arguments: [project]
            ).map(Self.key)
        }
    }

    package func updateAccessKey(
        project: String, secret: String, name: String, isActive: Bool, permitted: [String], options: JSONObject
    ) async throws -> AnalyticsKey? {
        let hash = AnalyticsKey.hash(secret)
        let key = try await database.write { db -> AnalyticsKey? in
            guard let key = try Self.fetchKey(db, hash: hash), key.project == project, key.kind == .access else {
                return nil
            }
            try db.execute(
                sql: "UPDATE analytics_keys SET name = ?, is_active = ?, permitted = ?, options = ? WHERE hash = ?",
                arguments: [
                    name, isActive, JSONValue.array(permitted.map { .string($0) }).jsonText,
                    JSONValue.object(options).jsonText, hash,
                ])
            return try Self.fetchKey(db, hash: hash)
        }
        analytics.keys.withLock { $0[hash] = nil }
        return key
    }

    package func deleteAccessKey(project: String, secret: String) async throws -> Bool {
        let hash = AnalyticsKey.hash(secret)
        let deleted = try await database.write { db -> Bool in
            guard let key = try Self.fetchKey(db, hash: hash), key.project == project, key.kind == .access else {
                return false
            }
            try db.execute(sql: "DELETE FROM analytics_keys WHERE hash = ?", arguments: [hash])
            return true
        }
        analytics.keys.withLock { $0[hash] = nil }
        return deleted
    }
}
