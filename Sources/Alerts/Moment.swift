import Baseball

/// Something worth telling fans about a no-hit bid: it went another inning, the perfect game is
/// gone, a new pitcher came in, it was broken up, it was completed.
///
/// The id is built from the game, the pitching side, the kind and the progress of the bid, so
/// deriving the same moment again (after a restart, on another instance, after recomputing a bid
/// for a scoring change) gives the same id, and storing moments by id is idempotent.
package struct Moment: Sendable, Hashable, Codable, Identifiable {
    package enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// The bid completed another inning while hitless (`outs` is a multiple of 3).
        case hitlessInnings = "hitless-innings"
        /// The 25th or 26th out, short of nine complete innings.
        case ninthInningOut = "ninth-inning-out"
        /// The first batter reached base while the bid was hitless.
        case perfectGameLost = "perfect-game-lost"
        /// A new pitcher took over while the bid was hitless.
        case pitchingChange = "pitching-change"
        /// The first hit.
        case brokenUp = "broken-up"
        /// The game is over and the no-hitter is official.
        case completed = "completed"
        /// The game is over without the no-hitter counting (see `reason`).
        case endedNotOfficial = "ended-not-official"
        /// A scoring change took away the hit that had broken the bid up.
        case revived = "revived"
        /// A score alert for fans of either team: the first pitch.
        case gameStart = "game-start"
        /// A score alert: a side took the lead in the 7th inning or later.
        case leadChange = "lead-change"
        /// A score alert: the final score.
        case finalScore = "final-score"
    }

    package var id: String
    package var gameID: String
    package var pitchingSide: Side
    package var kind: Kind
    /// The bid this moment is about: its game and the pitching side ("CHA202008250-home"). Its
    /// alerts share it (APNs collapse and thread ids, the Web Push tag, the planner's followers).
    /// A score alert's key is the game's (`CHA202008250-score`): its alerts replace one another,
    /// not a bid's.
    package var bidKey: String {
        kind.isScore ? "\(gameID)-score" : "\(gameID)-\(pitchingSide == .away ? "away" : "home")"
    }
    /// Outs recorded while hitless when it happened.
    package var outs: Int
    package var inning: Int
    /// The team at bat when it happened.
    package var battingSide: Side
    /// Outs in the inning after the play.
    package var outsInInning: Int
    package var score: PerSide<Int>
    /// Whether the perfect game was still alive after it.
    package var perfect: Bool
    /// The bid's pitchers so far, in order, with the one now pitching last.
    package var pitchers: [PlayerID]
    /// The batter who broke the bid up, or who reached to end the perfect game.
    package var batter: PlayerID?
    /// The play that broke the bid up or ended the perfect game.
    package var eventType: EventType?
    /// Why the no-hitter does not count (`endedNotOfficial`).
    package var reason: UnofficialReason?

    package init(
        id: String, gameID: String, pitchingSide: Side, kind: Kind, outs: Int, inning: Int, battingSide: Side,
        outsInInning: Int, score: PerSide<Int>, perfect: Bool, pitchers: [PlayerID], batter: PlayerID? = nil,
        eventType: EventType? = nil, reason: UnofficialReason? = nil
    ) {
        self.id = id
        self.gameID = gameID
        self.pitchingSide = pitchingSide
        self.kind = kind
        self.outs = outs
        self.inning = inning
        self.battingSide = battingSide
        self.outsInInning = outsInInning
        self.score = score
        self.perfect = perfect
        self.pitchers = pitchers
        self.batter = batter
        self.eventType = eventType
        self.reason = reason
    }

    /// Bids become notable once they are hitless through four innings (12 outs), the earliest
    /// threshold a user can choose; moments before that are not derived.
    package static let notableOuts = 12

    /// The deterministic id: game, pitching side, kind and progress; a pitching change also names
    /// the pitcher (two can happen at the same out count).
    package static func id(gameID: String, side: Side, kind: Kind, outs: Int, pitcher: PlayerID? = nil) -> String {
        let sideName = side == .away ? "away" : "home"
        let suffix = kind == .pitchingChange ? "-\(pitcher.map { "\($0)" } ?? "")" : ""
        return "\(gameID)-\(sideName)-\(kind.rawValue)-\(outs)\(suffix)"
    }
}

extension Moment.Kind {
    /// Whether the bid was alive after a moment of this kind.
    package var bidStillAlive: Bool {
        switch self {
        case .hitlessInnings, .ninthInningOut, .perfectGameLost, .pitchingChange, .revived: true
        case .brokenUp, .completed, .endedNotOfficial, .gameStart, .leadChange, .finalScore: false
        }
    }

    /// A score alert (for fans of a team), not a no-hit bid's moment.
    package var isScore: Bool { self == .gameStart || self == .leadChange || self == .finalScore }

    /// The kinds of a no-hit bid's moments: what `Preferences.kinds` chooses among.
    package static let bidKinds: [Moment.Kind] = allCases.filter { !$0.isScore }
}

extension Moment {
    /// A score alert about `game` as it stands: its id is the game's, the kind's and `detail`
    /// (a lead change's half-inning and score), so deriving it again gives the same id.
    package static func score(
        _ kind: Kind, gameID: String, detail: String? = nil, state: GameState
    ) -> Moment {
        Moment(
            id: "\(gameID)-\(kind.rawValue)\(detail.map { "-\($0)" } ?? "")", gameID: gameID,
            pitchingSide: state.fieldingSide, kind: kind, outs: 0, inning: state.inning,
            battingSide: state.battingSide, outsInInning: state.outs, score: state.score, perfect: false, pitchers: [])
    }
}
