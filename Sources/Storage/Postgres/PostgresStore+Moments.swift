import Alerts
import Foundation
import PostgresNIO

/// Moments, stored once each (`MomentStore`).
extension PostgresStore: MomentStore {
    /// Kinds of moments that are not a no-hit bid's (score alerts, deals), for the `moments` queries
    /// that leave them out.
    static let nonBidKinds = Moment.Kind.allCases.filter { !$0.isBid }.map(\.rawValue)

    package func moment(id: String) async throws -> StoredMoment? {
        try await single("SELECT body FROM moments WHERE id = \(id)", as: String.self).map {
            try StoredJSON.decode(StoredMoment.self, $0)
        }
    }

    package func recentMoments(limit: Int) async throws -> [StoredMoment] {
        try await moments(
            """
            SELECT body FROM moments WHERE kind <> ALL(\(Self.nonBidKinds))
            ORDER BY occurred_at DESC, seq DESC LIMIT \(max(0, limit))
            """)
    }

    package func moments(gameID: String, scoreAlerts: Bool) async throws -> [StoredMoment] {
        try await moments(
            scoreAlerts
                ? "SELECT body FROM moments WHERE game_id = \(gameID) ORDER BY occurred_at, seq"
                : """
                SELECT body FROM moments WHERE game_id = \(gameID) AND kind <> ALL(\(Self.nonBidKinds))
                ORDER BY occurred_at, seq
                """)
    }

    func moments(_ query: PostgresQuery) async throws -> [StoredMoment] {
        var moments: [StoredMoment] = []
        for try await body in try await client.query(query, logger: logger).decode(String.self) {
            moments.append(try StoredJSON.decode(StoredMoment.self, body))
        }
        return moments
    }
}
