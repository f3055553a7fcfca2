import Baseball
import Foundation

/// A moment in one shape for every surface: the API's `/api/moments`, the live stream, and the
/// `moment` object of APNs, Web Push and webhook payloads. Words and numbers only: teams by MLB's
/// abbreviation as of the game's day (`CWS`), players by name, the situation in words.
package struct MomentView: Sendable, Hashable, Codable {
    package struct Score: Sendable, Hashable, Codable {
        package var away: Int
        package var home: Int
    }

    package var id: String
    package var gameId: String
    package var kind: Moment.Kind
    /// The alert's words (absent inside a push payload, whose alert carries them).
    package var title: String?
    package var body: String?
    /// Outs the pitching team has recorded; `innings` is the whole innings of them.
    package var outs: Int
    package var innings: Int
    package var inning: Int
    /// "top" or "bottom".
    package var half: String
    package var outsInInning: Int
    /// "2 outs in the bottom of the 7th".
    package var situation: String
    package var pitchingTeam: String
    package var battingTeam: String
    package var score: Score
    package var perfect: Bool
    package var pitchers: [String]
    package var batter: String?
    package var reason: String?
    /// How often bids like it ended as no-hitters (a bid still alive, where the odds are known).
    package var odds: BidChance?
    /// The same figure as every surface shows it ("54%", and what it rests on).
    package var chance: ChanceView?
    /// A completed no-hitter's last out in words, and what it means from the seasons known.
    package var lastPlay: String?
    package var meaning: String?
    package var occurredAt: Date?

    /// `moment` of `game`, with the alert's words when `message` is given.
    package init(_ moment: Moment, game: GameInfo, message: AlertMessage? = nil, occurredAt: Date? = nil) {
        id = moment.id
        gameId = moment.gameID
        kind = moment.kind
        title = message?.title
        body = message?.body
        outs = moment.outs
        innings = moment.outs / 3
        inning = moment.inning
        half = Words.half(moment.battingSide)
        outsInInning = moment.outsInInning
        situation = Words.situation(outs: moment.outsInInning, inning: moment.inning, battingSide: moment.battingSide)
        pitchingTeam = game.team(moment.pitchingSide).abbreviation
        battingTeam = game.team(moment.pitchingSide.opponent).abbreviation
        score = Score(away: moment.score.away, home: moment.score.home)
        perfect = moment.perfect
        pitchers = moment.pitchers.map { game.name(of: $0) }
        batter = moment.batter.map { game.name(of: $0) }
        reason = moment.reason?.rawValue
        odds = moment.odds
        chance = moment.odds.flatMap { $0.basis == nil ? nil : ChanceView($0) }
        lastPlay = moment.lastPlay
        meaning = moment.meaning
        self.occurredAt = occurredAt
    }
}

/// A bid's one chance as every surface shows it: the figure ("54%"), what it rests on ("42 of 78
/// bids since 1988 through 8 innings on 90 to 104 pitches"), and the share it is ranked by.
package struct ChanceView: Sendable, Hashable, Codable {
    package var text: String
    package var base: String
    package var share: Double

    package init(_ chance: BidChance) {
        text = chance.text
        base = chance.base
        share = chance.share
    }
}
