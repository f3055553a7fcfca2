import Alerts
import Baseball
import Foundation

/// Moments, stored once each.
package protocol MomentStore: Sendable {
    func moment(id: String) async throws -> StoredMoment?
    /// The most recent moments of no-hit bids, newest first (score alerts are left out).
    func recentMoments(limit: Int) async throws -> [StoredMoment]
    /// A game's moments in order; score alerts (`Moment.Kind.isScore`) only when asked for.
    func moments(gameID: String, scoreAlerts: Bool) async throws -> [StoredMoment]
}

/// A moment as stored, with the game it belongs to and when it happened.
package struct StoredMoment: Sendable, Hashable, Codable {
    package var moment: Moment
    package var game: GameInfo
    package var occurredAt: Date

    package init(moment: Moment, game: GameInfo, occurredAt: Date) {
        self.moment = moment
        self.game = game
        self.occurredAt = occurredAt
    }
}
