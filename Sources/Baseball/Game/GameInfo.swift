/// What an alert says about a game besides the bid: the teams, the players' names, and where to
/// watch or listen when the source knows the broadcasts.
package struct GameInfo: Sendable, Hashable, Codable {
    /// A side's club as it was on the game's day, and the name fans read for it.
    package struct Team: Sendable, Hashable, Codable {
        /// The club (``TeamDirectory``): its names, codes, league and division that day.
        package var club: Club
        /// "White Sox": the club's nickname, or a device's own name for it.
        package var nickname: String

        package init(club: Club) {
            self.club = club
            nickname = club.nickname
        }

        /// Retrosheet's code, the game's own (`CHA`): an id, not for fans.
        package var code: String { club.retrosheet }
        /// "Chicago White Sox".
        package var name: String { club.name }
        /// MLB's abbreviation, what fans read (`CWS`).
        package var abbreviation: String { club.abbreviation }

        enum CodingKeys: String, CodingKey {
            case club, nickname
            // Before clubs: the code and the names alone.
            case code, name
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let club = try container.decodeIfPresent(Club.self, forKey: .club) {
                self.club = club
            } else {
                // Stored before clubs: the club of the code's latest era (``GameInfo`` sets the
                // game day's when it knows it).
                let code = try container.decode(String.self, forKey: .code)
                club = TeamDirectory.club(code, on: "9999-12-31") ?? .unlisted(code)
            }
            nickname = try container.decodeIfPresent(String.self, forKey: .nickname) ?? club.nickname
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(club, forKey: .club)
            try container.encode(nickname, forKey: .nickname)
        }
    }

    package var id: String
    /// `yyyy-mm-dd`, the official (ballpark) date.
    package var date: String
    package var away: Team
    package var home: Team
    package var broadcasts: [Broadcast]
    /// Display names by player id.
    package var players: [String: String]
    /// The probable starting pitchers the schedule names before the lineups are out (player ids;
    /// their names are in `players`).
    package var probablePitchers: ProbablePitchers?
    /// MLB's game type (`R` regular season, `F` wild card, `D` division series, `L` league
    /// championship, `W` World Series, `S` spring ...); nil when the source does not say (a
    /// Retrosheet regular-season file says `R`).
    package var gameType: String?
    /// The date (`yyyy-mm-dd`) a suspended game was completed on, when that was not `date`.
    package var completedOn: String?
    /// The series this game belongs to, when the source names one (a postseason series:
    /// "2018 World Series").
    package var series: String?
    /// Innings the game is scheduled for (7 for a 2020-2021 doubleheader game), when the source
    /// says so before it ends; nil for the usual nine.
    package var scheduledInnings: Int?
    /// Where it is played (`Guaranteed Rate Field`), when the source names it.
    package var venue: String?

    package struct ProbablePitchers: Sendable, Hashable, Codable {
        package var away: String?
        package var home: String?

        package init(away: String?, home: String?) {
            self.away = away
            self.home = home
        }
    }

    package init(
        id: String, date: String, away: Team, home: Team, broadcasts: [Broadcast] = [], players: [String: String] = [:]
    ) {
        self.id = id
        self.date = date
        self.away = away
        self.home = home
        self.broadcasts = broadcasts
        self.players = players
    }

    enum CodingKeys: String, CodingKey {
        case id, date, away, home, broadcasts, players, probablePitchers, gameType, completedOn, series,
            scheduledInnings, venue
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        date = try container.decode(String.self, forKey: .date)
        away = try container.decode(Team.self, forKey: .away)
        home = try container.decode(Team.self, forKey: .home)
        broadcasts = try container.decode([Broadcast].self, forKey: .broadcasts)
        players = try container.decode([String: String].self, forKey: .players)
        probablePitchers = try container.decodeIfPresent(ProbablePitchers.self, forKey: .probablePitchers)
        gameType = try container.decodeIfPresent(String.self, forKey: .gameType)
        completedOn = try container.decodeIfPresent(String.self, forKey: .completedOn)
        series = try container.decodeIfPresent(String.self, forKey: .series)
        scheduledInnings = try container.decodeIfPresent(Int.self, forKey: .scheduledInnings)
        venue = try container.decodeIfPresent(String.self, forKey: .venue)
        // A game stored before clubs: its clubs as they were on its day.
        for key in [CodingKeys.away, .home] {
            let team = try container.nestedContainer(keyedBy: Team.CodingKeys.self, forKey: key)
            guard !team.contains(.club), !date.isEmpty else { continue }
            let side = key == .away ? away : home
            guard let club = TeamDirectory.club(side.code, on: date) else { continue }
            var resolved = Team(club: club)
            resolved.nickname = side.nickname
            if key == .away { away = resolved } else { home = resolved }
        }
    }

    package func team(_ side: Side) -> Team { side == .away ? away : home }

    /// 1 or 2 in a doubleheader, 0 otherwise (the game id's last digit, as Retrosheet and the
    /// Stats API source write it).
    package var gameNumber: Int { id.last.flatMap { Int(String($0)) } ?? 0 }

    package func name(of player: PlayerID) -> String { players["\(player)"] ?? "\(player)" }
}

/// A television, radio or streaming carriage of a game.
package struct Broadcast: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Hashable, Codable {
        case tv = "TV"
        case radio = "radio"
        case streaming = "streaming"
    }

    package var kind: Kind
    /// "NBC Sports Chicago", "MLB.TV".
    package var name: String
    /// Radio call sign, e.g. "WGN".
    package var callSign: String?
    package var isNational: Bool
    /// The team whose feed it is; nil for national.
    package var side: Side?

    package init(kind: Kind, name: String, callSign: String? = nil, isNational: Bool = false, side: Side? = nil) {
        self.kind = kind
        self.name = name
        self.callSign = callSign
        self.isNational = isNational
        self.side = side
    }
}
