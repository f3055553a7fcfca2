import Foundation

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
    package var status: FeedStatus
    package var teams: FeedTeams
    package var probablePitchers: ProbablePitchers?
    package var flags: GameFlags?
    /// Everyone on either roster, keyed "ID<person id>".
    package var players: [String: Person]?
    /// The ballpark.
    package var venue: Venue? = nil
    /// Automated ball-strike challenges (2026 on): an empty object where the park has none.
    package var absChallenges: ABSChallengesBlock? = nil

    /// `{hasChallenges, away: {usedSuccessful, usedFailed, remaining}, home: …}`.
    package struct ABSChallengesBlock: Codable, Sendable, Hashable {
        package var hasChallenges: Bool?
        package var away: TeamChallenges?
        package var home: TeamChallenges?

        package struct TeamChallenges: Codable, Sendable, Hashable {
            package var usedSuccessful: Int?
            package var usedFailed: Int?
            package var remaining: Int?

            package init(usedSuccessful: Int? = nil, usedFailed: Int? = nil, remaining: Int? = nil) {
                self.usedSuccessful = usedSuccessful
                self.usedFailed = usedFailed
                self.remaining = remaining
            }
        }

        package init(hasChallenges: Bool? = nil, away: TeamChallenges? = nil, home: TeamChallenges? = nil) {
            self.hasChallenges = hasChallenges
            self.away = away
            self.home = home
        }
    }

    package struct Venue: Codable, Sendable, Hashable {
        package var id: Int?
        package var name: String?
    }

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
        game: GameInfoBlock, datetime: DateTimeBlock, status: FeedStatus, teams: FeedTeams,
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
    /// The pitchers of record, once the game is over.
    package var decisions: Decisions?

    package struct Decisions: Codable, Sendable, Hashable {
        package var winner: Person?
        package var loser: Person?
        package var save: Person?

        package init(winner: Person? = nil, loser: Person? = nil, save: Person? = nil) {
            self.winner = winner
            self.loser = loser
            self.save = save
        }
    }

    package init(plays: Plays, linescore: Linescore? = nil, boxscore: Boxscore? = nil, decisions: Decisions? = nil) {
        self.plays = plays
        self.linescore = linescore
        self.boxscore = boxscore
        self.decisions = decisions
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
