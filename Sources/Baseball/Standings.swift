/// A game's result as standings count it: the two clubs, the final score and the day it ended
/// (a suspended game counts on the day it was completed).
package struct GameOutcome: Sendable, Hashable, Codable {
    package var gameID: String
    /// `yyyy-mm-dd`: the day the game ended.
    package var date: String
    package var away: Club
    package var home: Club
    package var awayRuns: Int
    package var homeRuns: Int

    package init(gameID: String, date: String, away: Club, home: Club, awayRuns: Int, homeRuns: Int) {
        self.gameID = gameID
        self.date = date
        self.away = away
        self.home = home
        self.awayRuns = awayRuns
        self.homeRuns = homeRuns
    }

    /// The games of a day in the order they were played: by date, then by game of the day
    /// (`…2` after `…1`).
    package static func ordered(_ lhs: GameOutcome, _ rhs: GameOutcome) -> Bool {
        (lhs.date, lhs.gameID.suffix(1), lhs.gameID) < (rhs.date, rhs.gameID.suffix(1), rhs.gameID)
    }
}

/// Each club's record and the division standings as of the start of a day, from the results
/// known: W, L, winning percentage, games behind the division's leader, streak, last ten, at
/// home and away. A tie (a game called even) counts for neither. Pure.
package struct Standings: Sendable, Hashable, Codable {
    package struct Record: Sendable, Hashable, Codable {
        package var club: Club.View
        package var wins = 0
        package var losses = 0
        /// `.625`, `1.000`; `.000` before a game.
        package var percentage: String
        /// `-` for the leader (and a club level with him), `2.5` behind, `+0.5` ahead in games
        /// but behind in percentage.
        package var gamesBehind: String
        /// `W3`, `L1`; empty before a game.
        package var streak: String
        /// `7-3`: the last ten games.
        package var lastTen: String
        package var home: String
        package var away: String
        /// `45-30`.
        package var text: String { "\(wins)-\(losses)" }

        package init(
            club: Club.View, wins: Int, losses: Int, percentage: String, gamesBehind: String, streak: String,
            lastTen: String, home: String, away: String
        ) {
            self.club = club
            self.wins = wins
            self.losses = losses
            self.percentage = percentage
            self.gamesBehind = gamesBehind
            self.streak = streak
            self.lastTen = lastTen
            self.home = home
            self.away = away
        }
    }

    package struct Division: Sendable, Hashable, Codable {
        /// `AL East`; the league alone for clubs of no division.
        package var name: String
        package var teams: [Record]
    }

    /// `yyyy-mm-dd`: the standings before that day's games.
    package var date: String
    /// AL before NL, East, Central, West.
    package var divisions: [Division]

    /// The standings before the games of `date`, from `outcomes` (any order; games of other
    /// seasons and of `date` or later are left out). Every club that plays in the season is
    /// listed, with 0-0 before its first game.
    /// `clubs`: clubs to list even without a result yet (a replayed day's clubs before any game
    /// of theirs is over).
    package init(asOf date: String, outcomes: [GameOutcome], clubs extra: [Club] = []) {
        self.date = date
        let season = date.prefix(4)
        let games = outcomes.filter { $0.date.prefix(4) == season }.sorted(by: GameOutcome.ordered)
        // Every club of the season, as it was on its latest game before the day (or its first).
        var clubs: [String: Club] = [:]
        for club in extra where clubs[club.retrosheet] == nil { clubs[club.retrosheet] = club }
        // Each club's results in order: (won, at home).
        var results: [String: [(won: Bool, home: Bool)]] = [:]
        for game in games {
            for club in [game.away, game.home] where clubs[club.retrosheet] == nil || game.date < date {
                clubs[club.retrosheet] = club
            }
            guard game.date < date, game.awayRuns != game.homeRuns else { continue }
            let homeWon = game.homeRuns > game.awayRuns
            results[game.home.retrosheet, default: []].append((homeWon, true))
            results[game.away.retrosheet, default: []].append((!homeWon, false))
        }
        var groups: [String: [Record]] = [:]
        for (code, club) in clubs {
            let list = results[code] ?? []
            let wins = list.filter(\.won).count
            let losses = list.count - wins
            let last = list.last?.won
            let streak = last.map { last in
                "\(last ? "W" : "L")\(list.reversed().prefix { $0.won == last }.count)"
            }
            let ten = list.suffix(10)
            let home = list.filter(\.home)
            let away = list.filter { !$0.home }
            func split(_ games: [(won: Bool, home: Bool)]) -> String {
                let won = games.filter(\.won).count
                return "\(won)-\(games.count - won)"
            }
            let record = Record(
                club: club.view, wins: wins, losses: losses, percentage: Self.percentage(wins, losses),
                gamesBehind: "", streak: streak ?? "", lastTen: split(Array(ten)), home: split(home),
                away: split(away))
            groups[club.divisionName ?? club.league, default: []].append(record)
        }
        divisions = groups.map { name, teams in
            // By percentage; level on it, the club more games over .500 (fewer under) first.
            let sorted = teams.sorted { a, b in
                let (pa, pb) = (Self.fraction(a), Self.fraction(b))
                if pa != pb { return pa > pb }
                if a.wins - a.losses != b.wins - b.losses { return a.wins - a.losses > b.wins - b.losses }
                return a.club.name < b.club.name
            }
            let leader = sorted.first.map { ($0.wins, $0.losses) } ?? (0, 0)
            return Division(
                name: name,
                teams: sorted.map { record in
                    var record = record
                    let behind = (leader.0 - record.wins) + (record.losses - leader.1)
                    // A club ahead in games but behind in percentage (fewer games played) is
                    // written ahead: `+0.5`.
                    let half = { (games: Int) in games % 2 == 0 ? "\(games / 2)" : "\(games / 2).5" }
                    record.gamesBehind = behind == 0 ? "-" : behind < 0 ? "+" + half(-behind) : half(behind)
                    return record
                })
        }.sorted { Self.order($0.name) < Self.order($1.name) }
    }

    /// Each club's record, by MLB's abbreviation as it was that season (`CWS`).
    package var records: [String: Record] {
        Dictionary(
            divisions.flatMap(\.teams).map { ($0.club.abbreviation, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether `text` is a day of the calendar written `yyyy-mm-dd` (not 2020-13-45, not
    /// 2021-02-29).
    package static func isDay(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3,
            parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
            parts[0].count == 4, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month)
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    /// `.625`: three decimals without the leading zero (`1.000` when perfect, `.000` before a game).
    package static func percentage(_ wins: Int, _ losses: Int) -> String {
        let games = wins + losses
        guard games > 0 else { return ".000" }
        let thousandths = (wins * 1000 * 2 + games) / (games * 2)
        if thousandths >= 1000 { return "1.000" }
        let digits = String(thousandths)
        return "." + String(repeating: "0", count: 3 - digits.count) + digits
    }

    private static func fraction(_ record: Record) -> Double {
        let games = record.wins + record.losses
        return games == 0 ? 0 : Double(record.wins) / Double(games)
    }

    private static func order(_ name: String) -> (Int, Int, String) {
        let league = name.hasPrefix("AL") ? 0 : name.hasPrefix("NL") ? 1 : 2
        let division =
            name.hasSuffix("East") ? 0 : name.hasSuffix("Central") ? 1 : name.hasSuffix("West") ? 2 : 3
        return (league, division, name)
    }
}
