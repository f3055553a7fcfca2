import Alerts
import Baseball
import Foundation

/// What the API and the stream say about a game: teams, status, inning, score, and each
/// pitching side's no-hit bid.
package struct GameSnapshot: Sendable, Hashable, Codable {
    package struct Team: Sendable, Hashable, Codable {
        /// MLB's abbreviation, what a fan reads (`CWS`); the code for a club MLB does not list.
        package var abbreviation: String
        /// The franchise (Retrosheet's id of today): what favourite teams name.
        package var franchise: String
        /// "Chicago White Sox".
        package var name: String
        /// "White Sox".
        package var nickname: String
        package var runs: Int
        package var hits: Int
        package var errors: Int
        /// Runs by inning, `x` for a bottom half not batted in a final game.
        package var linescore: [String]

        package init(
            abbreviation: String, franchise: String, name: String, nickname: String, runs: Int, hits: Int,
            errors: Int, linescore: [String]
        ) {
            self.abbreviation = abbreviation
            self.franchise = franchise
            self.name = name
            self.nickname = nickname
            self.runs = runs
            self.hits = hits
            self.errors = errors
            self.linescore = linescore
        }
    }

    /// Who is on the mound and at the plate in a game under way, and the count.
    package struct Matchup: Sendable, Hashable, Codable {
        package var pitcher: String
        package var batter: String
        /// The pitcher's line so far.
        package var pitcherLine: PitcherLineView?
        /// Balls and strikes on the batter, when the source has them: 0-0 for a batter just up.
        package var balls: Int?
        package var strikes: Int?
        /// The batter's line so far today: `1-for-2, HR, BB`; nil before his first time up.
        package var batterLine: String? = nil
        /// The last pitch of the plate appearance: `Called strike` (a replay), `Slider, 86 mph`
        /// (the Stats API); nil before its first pitch.
        package var lastPitch: String? = nil
        /// The plate appearance's pitches where they crossed the plate, numbered, with the batter's
        /// zone: what the strike zone plot shows; nil where the source does not track pitches.
        package var zone: [PitchMark]? = nil
    }

    /// The game's ABS challenges: each team's counters as the source gives them, and every
    /// challenged pitch.
    package struct Challenges: Sendable, Hashable, Codable {
        package struct Counters: Sendable, Hashable, Codable {
            /// MLB's abbreviation.
            package var team: String
            package var remaining: Int
            package var won: Int
            package var lost: Int
        }

        package struct Pitch: Sendable, Hashable, Codable {
            package var inning: Int
            /// top or bottom.
            package var half: String
            /// The plate appearance (the feed's `atBatIndex`) and the pitch's number in it.
            package var plateAppearance: Int
            package var pitchNumber: Int
            package var batter: String
            package var pitcher: String
            package var challenger: String
            /// batter, pitcher or catcher.
            package var role: String
            /// The challenging team (MLB's abbreviation).
            package var team: String
            /// `ball` or `strike`: the umpire's call, and the call after the review.
            package var callBefore: String
            package var callAfter: String
            package var overturned: Bool
            /// The count after the pitch, as it stands: `2-1`.
            package var count: String
            /// In words: "Top 3rd: Tim Anderson (CWS, batter) challenged the called strike on the
            /// 2nd pitch: overturned, ball (2-1)".
            package var text: String
        }

        package var away: Counters
        package var home: Counters
        package var pitches: [Pitch]
    }

    /// Between halves: the three batters due up for the side that bats next.
    package struct DueUp: Sendable, Hashable, Codable {
        /// MLB's abbreviation of the side coming to bat.
        package var team: String
        package var batters: [String]
    }

    /// The starting pitchers before the first pitch: from the lineups when they are out
    /// (`confirmed`), otherwise the schedule's probable pitchers.
    package struct Starters: Sendable, Hashable, Codable {
        package var away: String?
        package var home: String?
        package var confirmed: Bool
    }

    /// The pitchers of record of a final game, where the source gives them.
    package struct Decisions: Sendable, Hashable, Codable {
        package var winning: String?
        package var losing: String?
        package var save: String?
    }

    package struct Bid: Sendable, Hashable, Codable {
        /// The side in the field: `home` or `away`.
        package var side: String
        /// The team in the field, as a fan reads it (`CWS`).
        package var team: String
        package var pitchers: [String]
        package var currentPitcher: String
        package var outs: Int
        package var innings: Int
        /// The outs as innings in words: "4 1/3 innings".
        package var hitlessText: String
        package var hitless: Bool
        package var perfect: Bool
        /// alive, broken-up, official or not-official.
        package var status: String
        /// The line of each of the bid's pitchers, in order.
        package var lines: [PitcherLineView]
        /// The first hit, once the bid is broken up.
        package var brokenUpBy: BrokenUp?
        /// The bid's one chance of ending as a no-hitter, the figure its alerts give; nil once it is
        /// over, when it cannot count, or where the service has no odds.
        package var chance: ChanceView? = nil
        /// Why it cannot count as an official no-hitter whatever happens ("a 7-inning doubleheader
        /// game"), or why it did not, once over; nil for a bid that can count.
        package var unofficial: String? = nil
    }

    /// The hit that broke up a bid, and its words: "Eric Sogard singles to center field off Kenta
    /// Maeda with nobody out in the top of the 9th".
    package struct BrokenUp: Sendable, Hashable, Codable {
        package var batter: String
        package var pitcher: String
        /// single, double, triple or home run.
        package var hit: String
        package var inning: Int
        /// Outs in the inning before the hit.
        package var outs: Int
        package var text: String
    }

    package enum Status: String, Sendable, Hashable, Codable {
        case scheduled
        case live
        case final
    }

    package var id: String
    package var date: String
    /// 1 or 2 for the games of a doubleheader, nil for a single game.
    package var gameNumber: Int?
    package var startTime: Date
    package var status: Status
    package var away: Team
    package var home: Team
    package var inning: Int
    /// top or bottom.
    package var half: String
    package var outs: Int
    /// What a scoreboard shows for the game's state: `Scheduled`, `Warm-up`, `Top 5th`, `Bot 9th`,
    /// `Mid 5th` and `End 5th` between halves, `Delayed`, `Postponed (to 2020-08-26)`, `Suspended
    /// (resumes 2020-08-26)`, `Final`, or `F/7`, `F/10` for a final game not of its scheduled length.
    package var statusText: String
    /// The status with the outs during a half, in words: "Top 5th, 1 out", "Bot 9th, nobody out",
    /// "Mid 5th", "Final".
    package var situation: String
    package var scheduledInnings: Int
    /// First, second and third: whether a runner is on (all false unless the game is under way).
    package var bases: [Bool]
    package var matchup: Matchup?
    /// Before the first pitch: who is to start.
    package var starters: Starters?
    /// Between halves (`Mid 5th`, `End 5th`): who is due up; nil otherwise.
    package var dueUp: DueUp?
    package var decisions: Decisions?
    package var bids: [Bid]
    package var broadcasts: [String]
    /// The park, where the source names it (the Stats API's venue, Retrosheet's park file).
    package var venue: String? = nil
    /// A game under way: the home team's chance of winning from here, as history gives it
    /// (`WinExpectancy`), and the leverage of the moment (1 is an average play's).
    package var homeWin: Double? = nil
    package var leverage: Double? = nil
    /// ABS challenges, where the game has them (2026 on, where the park has ABS).
    package var challenges: Challenges? = nil
    package var updatedAt: Date

    package init(
        id: String, date: String, gameNumber: Int?, startTime: Date, status: Status, away: Team, home: Team,
        inning: Int, half: String, outs: Int, statusText: String, situation: String, scheduledInnings: Int,
        bases: [Bool], matchup: Matchup?, starters: Starters?, dueUp: DueUp? = nil, decisions: Decisions?,
        bids: [Bid], broadcasts: [String], updatedAt: Date
    ) {
        self.id = id
        self.date = date
        self.gameNumber = gameNumber
        self.startTime = startTime
        self.status = status
        self.away = away
        self.home = home
        self.inning = inning
        self.half = half
        self.outs = outs
        self.statusText = statusText
        self.situation = situation
        self.scheduledInnings = scheduledInnings
        self.bases = bases
        self.matchup = matchup
        self.starters = starters
        self.dueUp = dueUp
        self.decisions = decisions
        self.bids = bids
        self.broadcasts = broadcasts
        self.updatedAt = updatedAt
    }

    /// A side hitless through at least `minimumOuts`, in a game still on or just won without a hit.
    package func attempts(minimumOuts: Int) -> [Bid] {
        bids.filter { $0.hitless && $0.outs >= minimumOuts && ($0.status == "alive" || $0.status == "official") }
    }
}

/// A game's score line, the stream's `score` event: what a scoreboard shows of the game, sent
/// when any of it changes.
package struct ScoreLine: Sendable, Hashable, Codable {
    package struct TeamLine: Sendable, Hashable, Codable {
        /// MLB's abbreviation.
        package var team: String
        package var runs: Int
        package var hits: Int
        package var errors: Int
    }

    package var id: String
    package var status: GameSnapshot.Status
    package var statusText: String
    package var inning: Int
    package var half: String
    package var away: TeamLine
    package var home: TeamLine

    package init(_ game: GameSnapshot) {
        id = game.id
        status = game.status
        statusText = game.statusText
        inning = game.inning
        half = game.half
        away = TeamLine(
            team: game.away.abbreviation, runs: game.away.runs, hits: game.away.hits, errors: game.away.errors)
        home = TeamLine(
            team: game.home.abbreviation, runs: game.home.runs, hits: game.home.hits, errors: game.home.errors)
    }
}

/// One pitcher's line as the API gives it.
package struct PitcherLineView: Sendable, Hashable, Codable {
    package var id: String
    package var name: String
    /// `6.2`: six innings and two outs.
    package var inningsPitched: String
    package var outs: Int
    package var hits: Int
    package var runs: Int
    package var earnedRuns: Int
    package var walks: Int
    package var strikeouts: Int
    package var homeRuns: Int
    package var battersFaced: Int
    /// Nil when the source does not give pitches.
    package var pitches: Int?

    package init(_ line: PitcherLine, info: GameInfo) {
        id = "\(line.pitcher)"
        name = info.name(of: line.pitcher)
        inningsPitched = line.inningsPitched
        outs = line.outs
        hits = line.hits
        runs = line.runs
        earnedRuns = line.earnedRuns
        walks = line.walks
        strikeouts = line.strikeouts
        homeRuns = line.homeRuns
        battersFaced = line.battersFaced
        pitches = line.pitches
    }
}

/// A game in full: the board's snapshot, each side's pitchers, the box score, the scoring plays
/// and the play-by-play.
package struct GameDetail: Sendable, Codable {
    package struct Pitchers: Sendable, Codable {
        package var away: [PitcherLineView]
        package var home: [PitcherLineView]
    }

    package var game: GameSnapshot
    package var pitchers: Pitchers
    package var box: BoxScoreView
    /// The plays on which runs scored, in words, with the inning and the score after each.
    package var scoring: [PlayByPlayEntry]
    package var plays: [PlayByPlayEntry]
}
