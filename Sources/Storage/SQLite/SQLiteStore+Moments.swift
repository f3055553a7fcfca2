import Alerts
import Foundation
import GRDB

/// Moments, stored once each (`MomentStore`).
extension SQLiteStore {
    package func moment(id: String) async throws -> StoredMoment? {
        try await database.read { db in
            try String.fetchOne(db, sql: "SELECT body FROM moments WHERE id = ?", arguments: [id])
                .map { try Self.decode(StoredMoment.self, $0) }
        }
    }

    package func recentMoments(limit: Int) async throws -> [StoredMoment] {
        try await database.read { db in
            try String.fetchAll(
                db,
                sql: "SELECT body FROM moments WHERE \(Self.bidMoment) ORDER BY occurred_at DESC, rowid DESC LIMIT ?",
                arguments: [max(0, limit)]
            ).map { try Self.decode(StoredMoment.self, $0) }
        }
    }

    package func moments(gameID: String, scoreAlerts: Bool) async throws -> [StoredMoment] {
        try await database.read { db in
            try String.fetchAll(
                db,
                sql: "SELECT body FROM moments WHERE game_id = ? \(scoreAlerts ? "" : "AND \(Self.bidMoment)") "
                    + "ORDER BY occurred_at, rowid",
                arguments: [gameID]
            ).map { try Self.decode(StoredMoment.self, $0) }
        }
    }

    /// A no-hit bid's moment, not a score alert (the stored JSON's kind).
    static let bidMoment =
        "json_extract(body, '$.moment.kind') NOT IN ("
        + Moment.Kind.allCases.filter { !$0.isBid }.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")"

}
