import Foundation

/// `v1/schedule?sportId=1&date=...&hydrate=linescore,flags,broadcasts(all),probablePitcher`.
package struct Schedule: Codable, Sendable, Hashable {
    package var totalGames: Int?
    package var dates: [ScheduleDate]

    package var games: [ScheduleGame] { dates.flatMap(\.games) }

    package init(totalGames: Int? = nil, dates: [ScheduleDate]) {
        self.totalGames = totalGames
        self.dates = dates
    }
}

package struct ScheduleDate: Codable, Sendable, Hashable {
    package var date: String
    package var games: [ScheduleGame]

    package init(date: String, games: [ScheduleGame]) {
        self.date = date
        self.games = games
    }
}

package struct ScheduleGame: Codable, Sendable, Hashable {
    /// The ballpark.
    package var venue: GameData.Venue? = nil
    /// Innings scheduled (7 for a 2020-2021 doubleheader game).
    package var scheduledInnings: Int? = nil
    package var gamePk: Int
    package var gameGuid: String?
    package var gameType: String?
    package var season: String?
    /// The first pitch (UTC).
    package var gameDate: String
    /// The ballpark-local date the game counts for.
    package var officialDate: String?
    package var status: FeedStatus
    package var teams: ScheduleTeams
    package var doubleHeader: String?
    package var gameNumber: Int?
    package var rescheduleDate: String?
    package var rescheduleGameDate: String?
    package var rescheduledFrom: String?
    package var rescheduledFromDate: String?
    package var resumeDate: String?
    package var resumedFrom: String?
    package var linescore: Linescore?
    package var flags: GameFlags?
    package var broadcasts: [ScheduleBroadcast]?

    package init(
        gamePk: Int, gameGuid: String? = nil, gameType: String? = nil, season: String? = nil, gameDate: String,
        officialDate: String? = nil, status: FeedStatus, teams: ScheduleTeams, doubleHeader: String? = nil,
        gameNumber: Int? = nil, rescheduleDate: String? = nil, rescheduleGameDate: String? = nil,
        rescheduledFrom: String? = nil, rescheduledFromDate: String? = nil, resumeDate: String? = nil,
        resumedFrom: String? = nil, linescore: Linescore? = nil, flags: GameFlags? = nil,
        broadcasts: [ScheduleBroadcast]? = nil
    ) {
        self.gamePk = gamePk
        self.gameGuid = gameGuid
        self.gameType = gameType
        self.season = season
        self.gameDate = gameDate
        self.officialDate = officialDate
        self.status = status
        self.teams = teams
        self.doubleHeader = doubleHeader
        self.gameNumber = gameNumber
        self.rescheduleDate = rescheduleDate
        self.rescheduleGameDate = rescheduleGameDate
        self.rescheduledFrom = rescheduledFrom
        self.rescheduledFromDate = rescheduledFromDate
        self.resumeDate = resumeDate
        self.resumedFrom = resumedFrom
        self.linescore = linescore
        self.flags = flags
        self.broadcasts = broadcasts
    }
}

package struct ScheduleTeams: Codable, Sendable, Hashable {
    package var away: ScheduleTeam
    package var home: ScheduleTeam

    package init(away: ScheduleTeam, home: ScheduleTeam) {
        self.away = away
        self.home = home
    }
}

package struct ScheduleTeam: Codable, Sendable, Hashable {
    package var team: Team
    package var score: Int?
    package var isWinner: Bool?
    package var probablePitcher: Person?

    package init(team: Team, score: Int? = nil, isWinner: Bool? = nil, probablePitcher: Person? = nil) {
        self.team = team
        self.score = score
        self.isWinner = isWinner
        self.probablePitcher = probablePitcher
    }
}

package struct GameFlags: Codable, Sendable, Hashable {
    package var noHitter: Bool?
    package var perfectGame: Bool?
    package var awayTeamNoHitter: Bool?
    package var awayTeamPerfectGame: Bool?
    package var homeTeamNoHitter: Bool?
    package var homeTeamPerfectGame: Bool?

    package init(
        noHitter: Bool? = nil, perfectGame: Bool? = nil, awayTeamNoHitter: Bool? = nil,
        awayTeamPerfectGame: Bool? = nil, homeTeamNoHitter: Bool? = nil, homeTeamPerfectGame: Bool? = nil
    ) {
        self.noHitter = noHitter
        self.perfectGame = perfectGame
        self.awayTeamNoHitter = awayTeamNoHitter
        self.awayTeamPerfectGame = awayTeamPerfectGame
        self.homeTeamNoHitter = homeTeamNoHitter
        self.homeTeamPerfectGame = homeTeamPerfectGame
    }
}

/// One broadcast from the schedule's `broadcasts(all)` hydrate.
package struct ScheduleBroadcast: Codable, Sendable, Hashable {
    package var id: Int?
    package var name: String
    /// TV, AM, FM (and streaming types the API adds).
    package var type: String?
    package var callSign: String?
    package var language: String?
    /// "home" or "away".
    package var homeAway: String?
    package var isNational: Bool?
    package var availableForStreaming: Bool?
    package var availability: Availability?

    package struct Availability: Codable, Sendable, Hashable {
        package var availabilityCode: String?
        package var availabilityText: String?

        package init(availabilityCode: String? = nil, availabilityText: String? = nil) {
            self.availabilityCode = availabilityCode
            self.availabilityText = availabilityText
        }
    }

    package init(
        id: Int? = nil, name: String, type: String? = nil, callSign: String? = nil, language: String? = nil,
        homeAway: String? = nil, isNational: Bool? = nil, availableForStreaming: Bool? = nil,
        availability: Availability? = nil
    ) {
        self.id = id
        self.name = name
        self.type = type
        self.callSign = callSign
        self.language = language
        self.homeAway = homeAway
        self.isNational = isNational
        self.availableForStreaming = availableForStreaming
        self.availability = availability
    }
}
