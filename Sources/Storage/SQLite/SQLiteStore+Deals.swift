import Foundation
import GRDB

/// Deal games and triggers (`DealStore`).
extension SQLiteStore: DealStore {
    package func saveDealGame(_ game: StoredDealGame) async throws {
        try await database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO deal_games (game_id, deal_date, body) VALUES (?, ?, ?)
                    ON CONFLICT (game_id) DO UPDATE SET deal_date = excluded.deal_date, body = excluded.body
                    """,
                arguments: [game.gameID, game.dealDate, String(decoding: game.body, as: UTF8.self)])
        }
    }

    package func dealGames(from: String, through: String) async throws -> [StoredDealGame] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT game_id, deal_date, body FROM deal_games WHERE deal_date BETWEEN ? AND ? "
                    + "ORDER BY deal_date, game_id",
                arguments: [from, through]
            ).map { row in
                StoredDealGame(gameID: row[0], dealDate: row[1], body: Data((row[2] as String).utf8))
            }
        }
    }

    package func recordTrigger(_ trigger: StoredDealTrigger) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO deal_triggers (id, rule_id, version, game_id, deal_date, created_at, body)
                    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
                    """,
                arguments: [
                    trigger.id.text(), trigger.ruleID, trigger.version, trigger.gameID, trigger.dealDate,
                    trigger.createdAt.timeIntervalSince1970, String(decoding: trigger.body, as: UTF8.self),
                ])
            return db.changesCount > 0
        }
    }

    package func recordTriggerRevision(id: UUID, revision: Data) async throws {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE deal_triggers SET revisions = json_insert(revisions, '$[#]', json(?)) WHERE id = ?",
                arguments: [String(decoding: revision, as: UTF8.self), id.text()])
        }
    }

    package func dealTriggers(ruleID: String?, from: String, through: String) async throws -> [StoredDealTrigger] {
        try await database.read { db in
            var sql =
                "SELECT id, rule_id, version, game_id, deal_date, created_at, body, revisions FROM deal_triggers "
                + "WHERE deal_date BETWEEN ? AND ?"
            var arguments: StatementArguments = [from, through]
            if let ruleID {
                sql += " AND rule_id = ?"
                arguments += [ruleID]
            }
            sql += " ORDER BY deal_date, created_at, id"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let revisions = (try? JSONSerialization.jsonObject(with: Data((row[7] as String).utf8)) as? [Any]) ?? []
                return StoredDealTrigger(
                    id: UUID(uuidString: row[0]) ?? UUID(), ruleID: row[1], version: row[2], gameID: row[3],
                    dealDate: row[4], createdAt: Date(timeIntervalSince1970: row[5]),
                    body: Data((row[6] as String).utf8),
                    revisions: revisions.compactMap { try? JSONSerialization.data(withJSONObject: $0) })
            }
        }
    }
}
