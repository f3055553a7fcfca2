import Alerts
import Baseball

/// A game's box score as a fan reads it (the game page, `GET /api/games/{id}`, `nohit box`): each
/// side's batters in batting order with substitutes after the player they replaced, the totals,
/// the lines below the table, runners left on base, and the pitchers' lines; built from the one
/// game follower, whatever the source.
package struct BoxScoreView: Sendable, Hashable, Codable {
    package struct Batter: Sendable, Hashable, Codable {
        package var id: String
        package var name: String
        /// Batting order 1-9 (a pitcher who did not bat is not listed).
        package var slot: Int
        /// 1 for the starter of the slot, 2 for the first to replace him ...
        package var sequence: Int
        /// Positions as a scorecard writes them: `SS`, `PH-LF`, `DH`.
        package var position: String
        /// Retrosheet's numbers of the positions, in order (10 DH, 11 PH, 12 PR).
        package var positions: [Int]
        /// `PH` or `PR` for a player who came in to hit or run, with the inning.
        package var entered: String?
        package var enteredInning: Int?
        package var plateAppearances: Int
        package var atBats: Int
        package var runs: Int
        package var hits: Int
        package var doubles: Int
        package var triples: Int
        package var homeRuns: Int
        package var runsBattedIn: Int
        package var walks: Int
        package var intentionalWalks: Int
        package var strikeouts: Int
        package var groundedIntoDoublePlays: Int
        package var hitByPitch: Int
        package var sacrificeHits: Int
        package var sacrificeFlies: Int
        package var stolenBases: Int
        package var caughtStealing: Int
        package var errors: Int
    }

    /// A line below the table: `2B: Moore, Lewis 2`.
    package struct Note: Sendable, Hashable, Codable {
        package var label: String
        package var text: String
    }

    package struct Totals: Sendable, Hashable, Codable {
        package var atBats = 0
        package var runs = 0
        package var hits = 0
        package var runsBattedIn = 0
        package var walks = 0
        package var strikeouts = 0
    }

    package struct Team: Sendable, Hashable, Codable {
        /// MLB's abbreviation (`CWS`).
        package var abbreviation: String
        package var name: String
        package var batters: [Batter]
        package var totals: Totals
        /// The batting notes (2B, 3B, HR, SF, SH, HBP, GIDP, SB, CS) and the fielding one (E).
        package var notes: [Note]
        package var leftOnBase: Int
        package var scoringPositionAtBats: Int
        package var scoringPositionHits: Int
        /// `2-for-9`.
        package var withRunnersInScoringPosition: String
        package var pitchers: [PitcherLineView]
    }

    package var away: Team
    package var home: Team

    package init(_ follower: GameFollower) {
        away = Self.team(.away, follower)
        home = Self.team(.home, follower)
    }

    private static func team(_ side: Side, _ follower: GameFollower) -> Team {
        let info = follower.info
        let lines = follower.battingLines
        let batters = lines.batters(of: side).filter { $0.slot != 0 }.map { entry in
            let line = entry.line
            // A position said twice in a row (a pinch hitter who stays as the designated hitter,
            // then is announced there) is written once: `PH-DH`.
            let positions = entry.positions.enumerated().filter {
                $0.offset == 0 || $0.element != entry.positions[$0.offset - 1]
            }.map(\.element)
            return Batter(
                id: "\(entry.player)", name: info.name(of: entry.player), slot: entry.slot, sequence: entry.sequence,
                position: positions.map(PlayDescription.positionAbbreviation).joined(separator: "-"),
                positions: entry.positions.map(Int.init),
                entered: entry.pinchHitInning != nil ? "PH" : entry.pinchRunInning != nil ? "PR" : nil,
                enteredInning: entry.pinchHitInning ?? entry.pinchRunInning,
                plateAppearances: line.plateAppearances, atBats: line.atBats, runs: line.runs, hits: line.hits,
                doubles: line.doubles, triples: line.triples, homeRuns: line.homeRuns,
                runsBattedIn: line.runsBattedIn, walks: line.walks, intentionalWalks: line.intentionalWalks,
                strikeouts: line.strikeouts, groundedIntoDoublePlays: line.groundedIntoDoublePlays,
                hitByPitch: line.hitByPitch, sacrificeHits: line.sacrificeHits, sacrificeFlies: line.sacrificeFlies,
                stolenBases: line.stolenBases, caughtStealing: line.caughtStealing, errors: line.errors)
        }
        var totals = Totals()
        for batter in batters {
            totals.atBats += batter.atBats
            totals.runs += batter.runs
            totals.hits += batter.hits
            totals.runsBattedIn += batter.runsBattedIn
            totals.walks += batter.walks
            totals.strikeouts += batter.strikeouts
        }
        // Errors by every fielder of the side, pitchers who did not bat included.
        let fielders = lines.batters(of: side).filter { $0.line.errors > 0 }.map {
            (info.name(of: $0.player), $0.line.errors)
        }
        func note(_ label: String, _ value: KeyPath<Batter, Int>) -> Note? {
            let named = batters.filter { $0[keyPath: value] > 0 }.map { ($0.name, $0[keyPath: value]) }
            return named.isEmpty ? nil : Note(label: label, text: Self.list(named))
        }
        let notes = [
            note("2B", \.doubles), note("3B", \.triples), note("HR", \.homeRuns), note("SF", \.sacrificeFlies),
            note("SH", \.sacrificeHits), note("HBP", \.hitByPitch), note("GIDP", \.groundedIntoDoublePlays),
            note("SB", \.stolenBases), note("CS", \.caughtStealing),
            fielders.isEmpty ? nil : Note(label: "E", text: Self.list(fielders)),
        ].compactMap { $0 }
        let team = lines.teams[side]
        return Team(
            abbreviation: info.team(side).abbreviation, name: info.team(side).name, batters: batters,
            totals: totals, notes: notes, leftOnBase: team.leftOnBase,
            scoringPositionAtBats: team.scoringPositionAtBats,
            scoringPositionHits: team.scoringPositionHits,
            withRunnersInScoringPosition: "\(team.scoringPositionHits)-for-\(team.scoringPositionAtBats)",
            pitchers: follower.pitcherLines.lines(of: side).map { PitcherLineView($0, info: info) })
    }

    /// `Moore, Lewis 2`: each name, with the count when more than one.
    private static func list(_ named: [(String, Int)]) -> String {
        named.map { $0.1 > 1 ? "\($0.0) \($0.1)" : $0.0 }.joined(separator: ", ")
    }
}
