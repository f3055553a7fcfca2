/// One team's no-hit bid in one game: how far it has gone while hitless, whether it is still
/// perfect, which pitchers have taken part, and how it ended.
///
/// A bid is a function of the plays: `BidTracker` builds it play by play and
/// `NoHitBid.computed(for:from:)` rebuilds it from scratch, and the two always agree. A scoring
/// change is handled by recomputing, which revives or kills the bid as the plays now say.
package struct NoHitBid: Sendable, Hashable {
    /// The team in the field, whose pitchers have the bid.
    package let pitchingSide: Side
    /// Outs recorded while hitless (all outs, for a bid never broken).
    package internal(set) var outs = 0
    /// Batters who reached base while hitless; zero means the perfect game is alive.
    package internal(set) var battersReached = 0
    /// Pitchers who were on the mound for a play while the bid was alive, in order (the one who
    /// gave up the hit included).
    package internal(set) var pitchers: [PlayerID]
    /// The pitcher on the mound now (he may not have thrown yet).
    package internal(set) var currentPitcher: PlayerID
    /// The first batter to end a play on base (or score): the first baserunner of the game, which
    /// may come after the bid was broken (a hit on which the batter is thrown out).
    package internal(set) var firstBaserunner: BidPlay?
    /// The play on which the first batter reached base while the bid was hitless: the end of the
    /// perfect game.
    package internal(set) var perfectGameLostOn: BidPlay?
    /// The first hit, when there has been one.
    package internal(set) var firstHit: BidPlay?
    /// How the game ended for the bid; nil while the game is on.
    package internal(set) var ending: Ending?

    package init(pitchingSide: Side, startingPitcher: PlayerID) {
        self.pitchingSide = pitchingSide
        self.pitchers = []
        self.currentPitcher = startingPitcher
    }

    /// No hit allowed so far.
    package var isHitless: Bool { firstHit == nil }
    /// Hitless and the game is not over.
    package var isAlive: Bool { firstHit == nil && ending == nil }
    /// No batter has reached base (the extra-inning runner placed on second never batted and does
    /// not count).
    package var isPerfect: Bool { battersReached == 0 }
    /// More than one pitcher has taken part.
    package var isCombined: Bool { pitchers.count > 1 }
    /// Complete innings pitched while hitless.
    package var hitlessInnings: Int { outs / 3 }

    /// Where the bid stands.
    package var status: Status {
        switch ending {
        case .official: return .official
        case .notOfficial(let reason): return .notOfficial(reason)
        case nil: return firstHit == nil ? .alive : .brokenUp
        }
    }

    package enum Status: Sendable, Hashable {
        case alive
        case brokenUp
        /// The game is over and the no-hitter counts.
        case official
        /// The game is over and the no-hitter does not count.
        case notOfficial(UnofficialReason)
    }

    package enum Ending: Sendable, Hashable {
        case official
        case notOfficial(UnofficialReason)
    }
}

/// Why a game without hits (or hitless through nine) is not an official no-hitter, by MLB's
/// definition since 1991.
package enum UnofficialReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The game ended (weather, curfew) before the batting team had nine complete innings.
    case shortenedGame = "shortened game"
    /// A seven-inning game of a doubleheader (2020-2021).
    case sevenInningDoubleheader = "7-inning doubleheader game"
    /// Hitless through nine, but the first hit came in extra innings.
    case brokenInExtraInnings = "broken up in extra innings"
    /// The road team no-hit the home team and lost, so it pitched only eight innings.
    case roadTeamLostInEightInnings = "road team lost and pitched only 8 innings"
}

/// A play that marks a bid: the first baserunner, the first hit.
package struct BidPlay: Sendable, Hashable {
    /// 1-based number of the play in the game.
    package var playNumber: Int
    package var inning: Int
    package var battingSide: Side
    /// Outs in the inning before the play.
    package var outsInInning: Int
    /// Outs the pitching team had recorded before the play (while hitless, the bid's outs).
    package var outsBefore: Int
    package var batter: PlayerID
    package var pitcher: PlayerID
    package var eventType: EventType
    /// The fielder who first played the ball (0 when none did: a walk, a strikeout), for its
    /// words ("singles to center field").
    package var fielder: UInt8 = 0
}
