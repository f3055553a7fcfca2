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
        lastPlay = moment.lastPlay
        meaning = moment.meaning
        self.occurredAt = occurredAt
    }

    /// The view as a JSON object, for payloads built with `JSONSerialization`: the keys of its
    /// `Codable` form in snake case, as the API's encoder writes them (`occurred_at` left out).
    package var object: [String: Any] {
        var object: [String: Any] = [
            "id": id, "game_id": gameId, "kind": kind.rawValue, "outs": outs, "innings": innings, "inning": inning,
            "half": half, "outs_in_inning": outsInInning, "situation": situation, "pitching_team": pitchingTeam,
            "batting_team": battingTeam, "score": ["away": score.away, "home": score.home], "perfect": perfect,
            "pitchers": pitchers,
        ]
        if let title { object["title"] = title }
        if let body { object["body"] = body }
        if let batter { object["batter"] = batter }
        if let reason { object["reason"] = reason }
        if let lastPlay { object["last_play"] = lastPlay }
        if let meaning { object["meaning"] = meaning }
        if let odds {
            object["odds"] = [
                "outs": odds.outs, "bids": odds.bids, "no_hitters": odds.noHitters, "share": odds.share,
                "since": odds.since, "sentence": odds.sentence,
            ]
            if let pitches = odds.pitches {
                var figure: [String: Any] = [
                    "outs": pitches.outs, "from": pitches.from, "pitches": pitches.pitches, "bids": pitches.bids,
                    "no_hitters": pitches.noHitters, "share": pitches.share, "since": pitches.since,
                    "sentence": pitches.sentence,
                ]
                if let to = pitches.to { figure["to"] = to }
                object["odds"] = (object["odds"] as? [String: Any] ?? [:]).merging(["pitches": figure]) { $1 }
            }
        }
        return object
    }
}
