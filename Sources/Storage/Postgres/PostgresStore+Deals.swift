import Foundation
import PostgresNIO

/// Deal games and triggers (`DealStore`).
extension PostgresStore: DealStore {
    package func saveDealGame(_ game: StoredDealGame) async throws {
        try await execute(
            """
            INSERT INTO deal_games (game_id, deal_date, body)
            VALUES (\(game.gameID), \(game.dealDate), \(String(decoding: game.body, as: UTF8.self)))
            ON CONFLICT (game_id) DO UPDATE SET deal_date = excluded.deal_date, body = excluded.body
            """)
    }

    package func dealGames(from: String, through: String) async throws -> [StoredDealGame] {
        var games: [StoredDealGame] = []
        for try await (id, date, body) in try await client.query(
            """
            SELECT game_id, deal_date, body FROM deal_games WHERE deal_date BETWEEN \(from) AND \(through)
            ORDER BY deal_date, game_id
            """, logger: logger
        ).decode((String, String, String).self) {
            games.append(StoredDealGame(gameID: id, dealDate: date, body: Data(body.utf8)))
        }
        return games
    }

    package func recordTrigger(_ trigger: StoredDealTrigger) async throws -> Bool {
        try await changed(
            """
            INSERT INTO deal_triggers (id, rule_id, version, game_id, deal_date, created_at, body)
            VALUES (\(trigger.id), \(trigger.ruleID), \(trigger.version), \(trigger.gameID), \(trigger.dealDate),
                \(trigger.createdAt.timeIntervalSince1970), \(String(decoding: trigger.body, as: UTF8.self)))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """)
    }

    package func recordTriggerRevision(id: UUID, revision: Data) async throws {
        // The revisions are a JSON array kept as text, the bytes of each revision as given.
        let text = String(decoding: revision, as: UTF8.self)
        try await execute(
            """
            UPDATE deal_triggers SET revisions =
                CASE WHEN revisions = '[]' THEN '[' || \(text) || ']' ELSE left(revisions, -1) || ',' || \(text) || ']' END
            WHERE id = \(id)
            """)
    }

    package func dealTriggers(ruleID: String?, from: String, through: String) async throws -> [StoredDealTrigger] {
        let query: PostgresQuery =
            if let ruleID {
                """
                SELECT id, rule_id, version, game_id, deal_date, created_at, body, revisions FROM deal_triggers
                WHERE deal_date BETWEEN \(from) AND \(through) AND rule_id = \(ruleID)
                ORDER BY deal_date, created_at, id
                """
            } else {
                """
                SELECT id, rule_id, version, game_id, deal_date, created_at, body, revisions FROM deal_triggers
                WHERE deal_date BETWEEN \(from) AND \(through) ORDER BY deal_date, created_at, id
                """
            }
        var triggers: [StoredDealTrigger] = []
        for try await row in try await client.query(query, logger: logger).decode(
            (UUID, String, Int, String, String, Double, String, String).self)
        {
            let revisions = (try? JSONSerialization.jsonObject(with: Data(row.7.utf8)) as? [Any]) ?? []
            triggers.append(
                StoredDealTrigger(
                    id: row.0, ruleID: row.1, version: row.2, gameID: row.3, dealDate: row.4,
                    createdAt: Date(timeIntervalSince1970: row.5), body: Data(row.6.utf8),
                    revisions: revisions.compactMap { try? JSONSerialization.data(withJSONObject: $0) }))
        }
        return triggers
    }
}
