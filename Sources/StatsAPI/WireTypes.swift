import Foundation

// The Stats API's documents, as far as the service reads them. Fields the service does not use are
// not modelled; fields that real responses sometimes leave out are optional; enumerations keep
// values they do not know (`rawValue`) rather than failing the whole feed.

/// `{"id": 123, "fullName": "..."}`.
package struct Person: Codable, Sendable, Hashable {
    package var id: Int
    package var fullName: String?

    package init(id: Int, fullName: String? = nil) {
        self.id = id
        self.fullName = fullName
    }
}

package struct NamedCode: Codable, Sendable, Hashable {
    package var code: String?
    package var description: String?

    package init(code: String? = nil, description: String? = nil) {
        self.code = code
        self.description = description
    }
}

package struct Team: Codable, Sendable, Hashable {
    package var id: Int
    package var name: String?
    package var abbreviation: String?
    package var teamName: String?
    package var locationName: String?

    package init(
        id: Int, name: String? = nil, abbreviation: String? = nil, teamName: String? = nil, locationName: String? = nil
    ) {
        self.id = id
        self.name = name
        self.abbreviation = abbreviation
        self.teamName = teamName
        self.locationName = locationName
    }
}

/// `gameData.status` / a schedule game's `status`.
package struct GameStatus: Codable, Sendable, Hashable {
    package var abstractGameState: String?
    package var codedGameState: String
    package var detailedState: String?
    package var statusCode: String?
    package var reason: String?
    package var startTimeTBD: Bool?

    /// What the service does with a game in this state.
    package enum Phase: Sendable, Hashable {
        /// S scheduled, P pre-game, PW warm-up: not live yet.
        case notStarted
        /// I in progress, M/N under review: poll it.
        case live
        /// F final, O game over, FR/OR completed early, FT final tied.
        case final
        /// D postponed.
        case postponed
        /// C cancelled.
        case cancelled
        /// U/T suspended: resumes another day.
        case suspended
        /// A code the service does not know: polled as if live, and logged.
        case unknown(String)
    }

    package var phase: Phase {
        let code = codedGameState
        switch code {
        case "S", "P": return .notStarted
        case "I", "M", "N": return .live
        case "F", "O": return .final
        case "D": return .postponed
        case "C": return .cancelled
        case "U", "T": return .suspended
        default:
            // Two-letter codes: the first letter is the state, the second the reason.
            if code == "PW" || code.hasPrefix("P") { return .notStarted }
            if code.hasPrefix("F") || code.hasPrefix("O") { return .final }
            if code.hasPrefix("I") || code.hasPrefix("M") || code.hasPrefix("N") { return .live }
            if code.hasPrefix("D") { return .postponed }
            if code.hasPrefix("C") { return .cancelled }
            if code.hasPrefix("U") || code.hasPrefix("T") { return .suspended }
            return .unknown(code)
        }
    }

    package init(
        abstractGameState: String? = nil, codedGameState: String, detailedState: String? = nil,
        statusCode: String? = nil, reason: String? = nil, startTimeTBD: Bool? = nil
    ) {
        self.abstractGameState = abstractGameState
        self.codedGameState = codedGameState
        self.detailedState = detailedState
        self.statusCode = statusCode
        self.reason = reason
        self.startTimeTBD = startTimeTBD
    }
}

// MARK: Schedule

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
    package var gamePk: Int
    package var gameGuid: String?
    package var gameType: String?
    package var season: String?
    /// The first pitch (UTC).
    package var gameDate: String
    /// The ballpark-local date the game counts for.
    package var officialDate: String?
    package var status: GameStatus
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
    package var broadcasts: [Broadcast]?

    package init(
        gamePk: Int, gameGuid: String? = nil, gameType: String? = nil, season: String? = nil, gameDate: String,
        officialDate: String? = nil, status: GameStatus, teams: ScheduleTeams, doubleHeader: String? = nil,
        gameNumber: Int? = nil, rescheduleDate: String? = nil, rescheduleGameDate: String? = nil,
        rescheduledFrom: String? = nil, rescheduledFromDate: String? = nil, resumeDate: String? = nil,
        resumedFrom: String? = nil, linescore: Linescore? = nil, flags: GameFlags? = nil, broadcasts: [Broadcast]? = nil
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
package struct Broadcast: Codable, Sendable, Hashable {
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

// MARK: Live feed

/// `v1.1/game/{pk}/feed/live` (GUMBO).
package struct GameFeed: Codable, Sendable, Hashable {
    package var gamePk: Int
    package var metaData: MetaData
    package var gameData: GameData
    package var liveData: LiveData

    package init(gamePk: Int, metaData: MetaData, gameData: GameData, liveData: LiveData) {
        self.gamePk = gamePk
        self.metaData = metaData
        self.gameData = gameData
        self.liveData = liveData
    }
}

package struct MetaData: Codable, Sendable, Hashable {
    /// Seconds the server asks clients to wait before the next poll.
    package var wait: Int?
    /// `yyyyMMdd_HHmmss`: the feed's timecode, for `diffPatch?startTimecode=`.
    package var timeStamp: String
    package var gameEvents: [String]?
    package var logicalEvents: [String]?

    package init(wait: Int? = nil, timeStamp: String, gameEvents: [String]? = nil, logicalEvents: [String]? = nil) {
        self.wait = wait
        self.timeStamp = timeStamp
        self.gameEvents = gameEvents
        self.logicalEvents = logicalEvents
    }
}

package struct GameData: Codable, Sendable, Hashable {
    package var game: GameInfoBlock
    package var datetime: DateTimeBlock
    package var status: GameStatus
    package var teams: FeedTeams
    package var probablePitchers: ProbablePitchers?
    package var flags: GameFlags?
    /// Everyone on either roster, keyed "ID<person id>".
    package var players: [String: Person]?

    package struct GameInfoBlock: Codable, Sendable, Hashable {
        package var pk: Int
        package var type: String?
        package var doubleHeader: String?
        package var gameNumber: Int?
        package var season: String?

        package init(
            pk: Int, type: String? = nil, doubleHeader: String? = nil, gameNumber: Int? = nil, season: String? = nil
        ) {
            self.pk = pk
            self.type = type
            self.doubleHeader = doubleHeader
            self.gameNumber = gameNumber
            self.season = season
        }
    }

    package struct DateTimeBlock: Codable, Sendable, Hashable {
        package var dateTime: String?
        package var originalDate: String?
        package var officialDate: String?

        package init(dateTime: String? = nil, originalDate: String? = nil, officialDate: String? = nil) {
            self.dateTime = dateTime
            self.originalDate = originalDate
            self.officialDate = officialDate
        }
    }

    package struct FeedTeams: Codable, Sendable, Hashable {
        package var away: Team
        package var home: Team

        package init(away: Team, home: Team) {
            self.away = away
            self.home = home
        }
    }

    package struct ProbablePitchers: Codable, Sendable, Hashable {
        package var away: Person?
        package var home: Person?

        package init(away: Person? = nil, home: Person? = nil) {
            self.away = away
            self.home = home
        }
    }

    package init(
        game: GameInfoBlock, datetime: DateTimeBlock, status: GameStatus, teams: FeedTeams,
        probablePitchers: ProbablePitchers? = nil, flags: GameFlags? = nil, players: [String: Person]? = nil
    ) {
        self.game = game
        self.datetime = datetime
        self.status = status
        self.teams = teams
        self.probablePitchers = probablePitchers
        self.flags = flags
        self.players = players
    }
}

package struct LiveData: Codable, Sendable, Hashable {
    package var plays: Plays
    package var linescore: Linescore?
    package var boxscore: Boxscore?

    package init(plays: Plays, linescore: Linescore? = nil, boxscore: Boxscore? = nil) {
        self.plays = plays
        self.linescore = linescore
        self.boxscore = boxscore
    }
}

package struct Plays: Codable, Sendable, Hashable {
    package var allPlays: [PlayRecord]
    package var currentPlay: PlayRecord?

    package init(allPlays: [PlayRecord], currentPlay: PlayRecord? = nil) {
        self.allPlays = allPlays
        self.currentPlay = currentPlay
    }
}

/// One plate appearance of `allPlays` (complete or in progress).
package struct PlayRecord: Codable, Sendable, Hashable {
    package var result: Result
    package var about: About
    package var count: Count
    package var matchup: Matchup
    package var runners: [Runner]
    /// Pitches and actions (substitutions among them). Each is read on its own: one that does
    /// not decode is kept as a `Malformed` entry naming what is wrong, not a failed feed.
    package var playEvents: [Lenient<PlayEvent>]
    package var atBatIndex: Int?

    package struct Result: Codable, Sendable, Hashable {
        package var type: String?
        package var event: String?
        /// `single`, `double`, `triple`, `home_run` are the hits; absent until the play completes.
        package var eventType: String?
        package var description: String?
        package var rbi: Int?
        package var awayScore: Int?
        package var homeScore: Int?
        package var isOut: Bool?

        package init(
            type: String? = nil, event: String? = nil, eventType: String? = nil, description: String? = nil,
            rbi: Int? = nil, awayScore: Int? = nil, homeScore: Int? = nil, isOut: Bool? = nil
        ) {
            self.type = type
            self.event = event
            self.eventType = eventType
            self.description = description
            self.rbi = rbi
            self.awayScore = awayScore
            self.homeScore = homeScore
            self.isOut = isOut
        }
    }

    package struct About: Codable, Sendable, Hashable {
        package var atBatIndex: Int
        /// "top" or "bottom".
        package var halfInning: String
        package var isTopInning: Bool?
        package var inning: Int
        package var startTime: String?
        package var endTime: String?
        package var isComplete: Bool
        package var isScoringPlay: Bool?
        package var hasReview: Bool?
        package var hasOut: Bool?

        package init(
            atBatIndex: Int, halfInning: String, isTopInning: Bool? = nil, inning: Int, startTime: String? = nil,
            endTime: String? = nil, isComplete: Bool, isScoringPlay: Bool? = nil, hasReview: Bool? = nil,
            hasOut: Bool? = nil
        ) {
            self.atBatIndex = atBatIndex
            self.halfInning = halfInning
            self.isTopInning = isTopInning
            self.inning = inning
            self.startTime = startTime
            self.endTime = endTime
            self.isComplete = isComplete
            self.isScoringPlay = isScoringPlay
            self.hasReview = hasReview
            self.hasOut = hasOut
        }
    }

    package struct Count: Codable, Sendable, Hashable {
        package var balls: Int
        package var strikes: Int
        /// Outs in the half-inning **after** the play.
        package var outs: Int

        package init(balls: Int, strikes: Int, outs: Int) {
            self.balls = balls
            self.strikes = strikes
            self.outs = outs
        }
    }

    package struct Matchup: Codable, Sendable, Hashable {
        package var batter: Person
        /// Whoever finished the plate appearance.
        package var pitcher: Person
        package var batSide: NamedCode?
        package var pitchHand: NamedCode?

        package init(batter: Person, pitcher: Person, batSide: NamedCode? = nil, pitchHand: NamedCode? = nil) {
            self.batter = batter
            self.pitcher = pitcher
            self.batSide = batSide
            self.pitchHand = pitchHand
        }
    }

    package struct Runner: Codable, Sendable, Hashable {
        package var movement: Movement
        package var details: Details

        package struct Movement: Codable, Sendable, Hashable {
            /// "1B", "2B", "3B"; null for the batter.
            package var originBase: String?
            package var start: String?
            /// "1B", "2B", "3B", "score"; null when out.
            package var end: String?
            package var outBase: String?
            package var isOut: Bool?
            package var outNumber: Int?

            package init(
                originBase: String? = nil, start: String? = nil, end: String? = nil, outBase: String? = nil,
                isOut: Bool? = nil, outNumber: Int? = nil
            ) {
                self.originBase = originBase
                self.start = start
                self.end = end
                self.outBase = outBase
                self.isOut = isOut
                self.outNumber = outNumber
            }
        }

        package struct Details: Codable, Sendable, Hashable {
            package var event: String?
            package var eventType: String?
            package var movementReason: String?
            package var runner: Person
            package var responsiblePitcher: Person?
            package var isScoringEvent: Bool?
            package var rbi: Bool?
            package var earned: Bool?
            package var playIndex: Int?

            package init(
                event: String? = nil, eventType: String? = nil, movementReason: String? = nil, runner: Person,
                responsiblePitcher: Person? = nil, isScoringEvent: Bool? = nil, rbi: Bool? = nil, earned: Bool? = nil,
                playIndex: Int? = nil
            ) {
                self.event = event
                self.eventType = eventType
                self.movementReason = movementReason
                self.runner = runner
                self.responsiblePitcher = responsiblePitcher
                self.isScoringEvent = isScoringEvent
                self.rbi = rbi
                self.earned = earned
                self.playIndex = playIndex
            }
        }

        package init(movement: Movement, details: Details) {
            self.movement = movement
            self.details = details
        }
    }

    package init(
        result: Result, about: About, count: Count, matchup: Matchup, runners: [Runner],
        playEvents: [Lenient<PlayEvent>], atBatIndex: Int? = nil
    ) {
        self.result = result
        self.about = about
        self.count = count
        self.matchup = matchup
        self.runners = runners
        self.playEvents = playEvents
        self.atBatIndex = atBatIndex
    }
}

/// A pitch, pickoff or action within a plate appearance.
package struct PlayEvent: Codable, Sendable, Hashable {
    package var index: Int
    /// "pitch", "action", "pickoff", "no_pitch", "stepoff".
    package var type: String
    package var isPitch: Bool?
    package var isSubstitution: Bool?
    package var details: Details
    package var count: PlayRecord.Count?
    package var player: Person?
    package var position: FieldPosition?
    package var replacedPlayer: Person?
    package var battingOrder: String?
    package var pitchData: PitchData?

    package struct Details: Codable, Sendable, Hashable {
        package var description: String?
        package var event: String?
        package var eventType: String?
        package var call: NamedCode?
        package var code: String?
        package var isInPlay: Bool?
        package var isStrike: Bool?
        package var isBall: Bool?
        package var isOut: Bool?
        /// The pitch type: a pitch's type always has a code.
        package var type: PitchType?

        package init(
            description: String? = nil, event: String? = nil, eventType: String? = nil, call: NamedCode? = nil,
            code: String? = nil, isInPlay: Bool? = nil, isStrike: Bool? = nil, isBall: Bool? = nil, isOut: Bool? = nil,
            type: PitchType? = nil
        ) {
            self.description = description
            self.event = event
            self.eventType = eventType
            self.call = call
            self.code = code
            self.isInPlay = isInPlay
            self.isStrike = isStrike
            self.isBall = isBall
            self.isOut = isOut
            self.type = type
        }
    }

    package struct PitchType: Codable, Sendable, Hashable {
        package var code: String
        package var description: String?

        package init(code: String, description: String? = nil) {
            self.code = code
            self.description = description
        }
    }

    package struct PitchData: Codable, Sendable, Hashable {
        package var startSpeed: Double?
        package var endSpeed: Double?
        package var zone: Int?

        package init(startSpeed: Double? = nil, endSpeed: Double? = nil, zone: Int? = nil) {
            self.startSpeed = startSpeed
            self.endSpeed = endSpeed
            self.zone = zone
        }
    }

    package init(
        index: Int, type: String, isPitch: Bool? = nil, isSubstitution: Bool? = nil, details: Details,
        count: PlayRecord.Count? = nil, player: Person? = nil, position: FieldPosition? = nil,
        replacedPlayer: Person? = nil, battingOrder: String? = nil, pitchData: PitchData? = nil
    ) {
        self.index = index
        self.type = type
        self.isPitch = isPitch
        self.isSubstitution = isSubstitution
        self.details = details
        self.count = count
        self.player = player
        self.position = position
        self.replacedPlayer = replacedPlayer
        self.battingOrder = battingOrder
        self.pitchData = pitchData
    }
}

package struct FieldPosition: Codable, Sendable, Hashable {
    package var code: String?
    package var name: String?
    package var abbreviation: String?

    package init(code: String? = nil, name: String? = nil, abbreviation: String? = nil) {
        self.code = code
        self.name = name
        self.abbreviation = abbreviation
    }
}

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

/// `liveData.boxscore` (also `v1/game/{pk}/boxscore`).
package struct Boxscore: Codable, Sendable, Hashable {
    package var teams: Teams

    package struct Teams: Codable, Sendable, Hashable {
        package var away: TeamBox
        package var home: TeamBox

        package init(away: TeamBox, home: TeamBox) {
            self.away = away
            self.home = home
        }
    }

    package struct TeamBox: Codable, Sendable, Hashable {
        package var team: Team
        /// The side's pitchers in order; the first is the starter.
        package var pitchers: [Int]
        package var battingOrder: [Int]?
        /// Keyed "ID<person id>".
        package var players: [String: Player]?

        package init(team: Team, pitchers: [Int], battingOrder: [Int]? = nil, players: [String: Player]? = nil) {
            self.team = team
            self.pitchers = pitchers
            self.battingOrder = battingOrder
            self.players = players
        }
    }

    package struct Player: Codable, Sendable, Hashable {
        package var person: Person
        package var position: FieldPosition?
        /// Every position played, in order: the first is where he started.
        package var allPositions: [FieldPosition]?
        /// "100" for the first slot's starter, "101" for its first substitute...
        package var battingOrder: String?

        package init(
            person: Person, position: FieldPosition? = nil, allPositions: [FieldPosition]? = nil,
            battingOrder: String? = nil
        ) {
            self.person = person
            self.position = position
            self.allPositions = allPositions
            self.battingOrder = battingOrder
        }
    }

    package init(teams: Teams) {
        self.teams = teams
    }
}

// MARK: diffPatch, push, play-by-play, game changes

/// `feed/live/diffPatch?startTimecode=T`: patches since T, or a whole feed when the server
/// decides that is simpler.
package enum DiffPatchResponse: Sendable, Hashable {
    case patches([JSONPatch])
    case feed(JSONValue)

    package init(_ document: JSONValue) throws {
        switch document {
        case .array(let items):
            var patches: [JSONPatch] = []
            for (index, item) in items.enumerated() {
                guard let diff = item["diff"] else {
                    throw StatsAPIError.unexpectedShape("diffPatch response item \(index) has no \"diff\"")
                }
                patches.append(try JSONPatch(diff))
            }
            self = .patches(patches)
        case .object(let object) where object["gamePk"] != nil && object["liveData"] != nil:
            self = .feed(document)
        default:
            throw StatsAPIError.unexpectedShape("a diffPatch response is an array of {\"diff\": [...]} or a live feed")
        }
    }
}

/// One message of the Gameday websocket push: only says that the game changed.
package struct PushMessage: Codable, Sendable, Hashable {
    package var timeStamp: String
    /// A string in real messages.
    package var gamePk: String
    package var updateId: String?
    package var wait: Int?
    package var logicalEvents: [String]?
    package var gameEvents: [String]?
    package var isDelay: Bool?

    private enum CodingKeys: String, CodingKey {
        case timeStamp, gamePk, updateId, wait, logicalEvents, gameEvents, isDelay
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        timeStamp = try container.decode(String.self, forKey: .timeStamp)
        // A string in the messages seen; a number would do as well.
        if let number = try? container.decode(Int.self, forKey: .gamePk) {
            gamePk = String(number)
        } else {
            gamePk = try container.decode(String.self, forKey: .gamePk)
        }
        updateId = try container.decodeIfPresent(String.self, forKey: .updateId)
        wait = try container.decodeIfPresent(Int.self, forKey: .wait)
        logicalEvents = try container.decodeIfPresent([String].self, forKey: .logicalEvents)
        gameEvents = try container.decodeIfPresent([String].self, forKey: .gameEvents)
        isDelay = try container.decodeIfPresent(Bool.self, forKey: .isDelay)
    }
}

/// `v1/game/{pk}/playByPlay`.
package struct PlayByPlay: Codable, Sendable, Hashable {
    package var allPlays: [PlayRecord]
    package var currentPlay: PlayRecord?

    package init(allPlays: [PlayRecord], currentPlay: PlayRecord? = nil) {
        self.allPlays = allPlays
        self.currentPlay = currentPlay
    }
}

/// Problems with a Stats API response that are not JSON syntax or a missing field.
package enum StatsAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    case unexpectedShape(String)

    package var description: String {
        switch self {
        case .unexpectedShape(let what): what
        }
    }
}

/// A value read on its own: a malformed one is kept as the reason rather than failing its parent.
package enum Lenient<Value: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    case value(Value)
    case malformed(String)

    package var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    package init(from decoder: any Decoder) throws {
        do {
            self = .value(try Value(from: decoder))
        } catch {
            // Named from the value itself: its own place is the parent's to say.
            self = .malformed(Self.describe(error, droppingFirst: decoder.codingPath.count))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        switch self {
        case .value(let value): try value.encode(to: encoder)
        case .malformed(let reason):
            var container = encoder.singleValueContainer()
            try container.encode(["malformed": reason])
        }
    }

    /// A decoding error as "what, where": `missing details.type.code`.
    package static func describe(_ error: any Error, droppingFirst prefix: Int = 0) -> String {
        func path(_ all: [any CodingKey]) -> String {
            let keys = Array(all.dropFirst(prefix))
            return keys.isEmpty
                ? "the value"
                : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                    .replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context): return "missing \(path(context.codingPath + [key]))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        default: return "\(error)"
        }
    }
}

extension PlayRecord {
    /// The play events that did not decode, with their place: "playEvents[1]: missing ...".
    package var malformedEvents: [String] {
        playEvents.enumerated().compactMap { index, event in
            if case .malformed(let reason) = event { return "playEvents[\(index)]: \(reason)" }
            return nil
        }
    }
}
