import Foundation

/// `liveData.linescore` (also `v1/game/{pk}/linescore`).
package struct Linescore: Codable, Sendable, Hashable {
    package var currentInning: Int?
    package var inningState: String?
    package var inningHalf: String?
    package var isTopInning: Bool?
    package var scheduledInnings: Int?
    package var teams: Teams?
    package var outs: Int?
    package var balls: Int?
    package var strikes: Int?

    package struct Teams: Codable, Sendable, Hashable {
        package var home: Line
        package var away: Line

        package init(home: Line, away: Line) {
            self.home = home
            self.away = away
        }
    }

    /// A team's line: `hits` are hits **by** its batters.
    package struct Line: Codable, Sendable, Hashable {
        package var runs: Int?
        package var hits: Int?
        package var errors: Int?
        package var leftOnBase: Int?

        package init(runs: Int? = nil, hits: Int? = nil, errors: Int? = nil, leftOnBase: Int? = nil) {
            self.runs = runs
            self.hits = hits
            self.errors = errors
            self.leftOnBase = leftOnBase
        }
    }

    package init(
        currentInning: Int? = nil, inningState: String? = nil, inningHalf: String? = nil, isTopInning: Bool? = nil,
        scheduledInnings: Int? = nil, teams: Teams? = nil, outs: Int? = nil, balls: Int? = nil, strikes: Int? = nil
    ) {
        self.currentInning = currentInning
        self.inningState = inningState
        self.inningHalf = inningHalf
        self.isTopInning = isTopInning
        self.scheduledInnings = scheduledInnings
        self.teams = teams
        self.outs = outs
        self.balls = balls
        self.strikes = strikes
    }
}
