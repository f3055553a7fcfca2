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
        /// Any other out while hitless (from the 13th): derived only where the odds of history are
        /// known (`Moment.odds`), for devices that choose to hear of a bid when its odds pass a
        /// share (`Preferences.minOdds`) rather than at an inning. Not chosen among `kinds`: it
        /// goes with `hitless-innings`.
        case hitlessOut = "hitless-out"
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
        /// A promotion was triggered (`deal` says which, the reward and when to redeem it).
        case deal = "deal"
    }

    package var id: String
    package var gameID: String
    package var pitchingSide: Side
    package var kind: Kind
    /// The bid this moment is about: its game and the pitching side ("CHA202008250-home"). Its
    /// alerts share it (APNs collapse and thread ids, the Web Push tag, the planner's followers).
    /// A score alert's key is the game's (`CHA202008250-score`): its alerts replace one another,
    /// not a bid's.
    /// A deal's key is the rule's (`deal-papa-johns-dc-nationals`).
    package var bidKey: String {
        if let deal { return "deal-\(deal.ruleID)" }
        return kind.isScore ? "\(gameID)-score" : "\(gameID)-\(pitchingSide == .away ? "away" : "home")"
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
    /// The promotion a `.deal` moment announces.
    package var deal: DealNotice?
    /// How often bids hitless through these outs ended as no-hitters, in the seasons known: on
    /// the moments of a bid still alive, where the service has the table.
    package var odds: BidChance?
    /// A completed no-hitter's last out in words ("Erik González grounded out to shortstop").
    package var lastPlay: String?
    /// What a completed no-hitter means from the seasons known ("The White Sox's first no-hitter
    /// since Philip Humber's perfect game on April 21, 2012; the 1st of 2020.").
    package var meaning: String?

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
        case .hitlessInnings, .ninthInningOut, .hitlessOut, .perfectGameLost, .pitchingChange, .revived: true
        case .brokenUp, .completed, .endedNotOfficial, .gameStart, .leadChange, .finalScore, .deal: false
        }
    }

    /// A score alert (for fans of a team), not a no-hit bid's moment.
    package var isScore: Bool { self == .gameStart || self == .leadChange || self == .finalScore }

    /// A no-hit bid's moment (not a score alert, not a deal).
    package var isBid: Bool { !isScore && self != .deal }

    /// The kinds of a no-hit bid's moments: what `Preferences.kinds` chooses among (an out's
    /// odds moment goes with `hitless-innings`).
    package static let bidKinds: [Moment.Kind] = allCases.filter { $0.isBid && $0 != .hitlessOut }
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

/// What a deal alert says: the rule, the reward and its code, when to redeem it, and why.
package struct DealNotice: Sendable, Hashable, Codable {
    package var ruleID: String
    package var version: Int
    /// "Papa John's (DC area)".
    package var sponsor: String
    /// "50% off online orders".
    package var reward: String
    package var code: String?
    /// The day it counts for (`yyyy-mm-dd`, the rule's time zone).
    package var day: String
    /// "Tuesday, Aug 25, all day (America/New_York)".
    package var window: String
    /// "Nationals 9, Orioles 2: Juan Soto's home run made it 7 in the 6th."
    package var why: String

    package init(
        ruleID: String, version: Int, sponsor: String, reward: String, code: String?, day: String, window: String,
        why: String
    ) {
        self.ruleID = ruleID
        self.version = version
        self.sponsor = sponsor
        self.reward = reward
        self.code = code
        self.day = day
        self.window = window
        self.why = why
    }
}

extension Moment {
    /// A deal alert: one per rule and deal day (a doubleheader's second trigger of the same day
    /// is the same moment), about the game that first triggered it.
    package static func deal(_ notice: DealNotice, gameID: String, score: PerSide<Int>, inning: Int) -> Moment {
        var moment = Moment(
            id: "deal-\(notice.ruleID)-v\(notice.version)-\(notice.day)", gameID: gameID, pitchingSide: .home,
            kind: .deal, outs: 0, inning: inning, battingSide: .home, outsInInning: 3, score: score, perfect: false,
            pitchers: [])
        moment.deal = notice
        return moment
    }
}
