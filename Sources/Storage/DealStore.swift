import Foundation

/// The deals' records: each final game as the deals saw it, and each trigger, kept once by its
/// deterministic id. The bodies are the deals' own JSON (the store does not read them).
package protocol DealStore: Sendable {
    /// Keeps the game's latest final state (a re-scoring replaces it).
    func saveDealGame(_ game: StoredDealGame) async throws
    /// Final games whose deal date is in `range` (inclusive `yyyy-mm-dd` strings), by date.
    func dealGames(from: String, through: String) async throws -> [StoredDealGame]
    /// Stores a trigger unless one with its id is stored; true when it was new.
    func recordTrigger(_ trigger: StoredDealTrigger) async throws -> Bool
    /// Appends a revision (JSON) to a stored trigger: a scoring change after it triggered.
    func recordTriggerRevision(id: UUID, revision: Data) async throws
    /// Triggers whose deal date is in the range, optionally of one rule, by date.
    func dealTriggers(ruleID: String?, from: String, through: String) async throws -> [StoredDealTrigger]
}

package struct StoredDealGame: Sendable, Hashable {
    package var gameID: String
    package var dealDate: String
    package var body: Data

    package init(gameID: String, dealDate: String, body: Data) {
        self.gameID = gameID
        self.dealDate = dealDate
        self.body = body
    }
}

package struct StoredDealTrigger: Sendable, Hashable {
    package var id: UUID
    package var ruleID: String
    package var version: Int
    package var gameID: String
    package var dealDate: String
    package var createdAt: Date
    package var body: Data
    /// The revisions recorded after it triggered, each a JSON object, in order.
    package var revisions: [Data]

    package init(
        id: UUID, ruleID: String, version: Int, gameID: String, dealDate: String, createdAt: Date, body: Data,
        revisions: [Data] = []
    ) {
        self.id = id
        self.ruleID = ruleID
        self.version = version
        self.gameID = gameID
        self.dealDate = dealDate
        self.createdAt = createdAt
        self.body = body
        self.revisions = revisions
    }
}
