/// What an alert says about a game besides the bid: the teams, the players' names, and where to
/// watch or listen when the source knows the broadcasts.
package struct GameInfo: Sendable, Hashable, Codable {
    package struct Team: Sendable, Hashable, Codable {
        /// The source's team code, e.g. `CHA`.
        package var code: String
        /// "Chicago White Sox".
        package var name: String
        /// "White Sox".
        package var nickname: String

        package init(code: String, name: String, nickname: String) {
            self.code = code
            self.name = name
            self.nickname = nickname
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
