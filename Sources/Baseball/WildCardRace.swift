/// How a season's clubs reach the postseason, league by league: the division winners, in 2020
/// the second-place clubs too, and the wild cards, the best records of the rest.
package struct PostseasonFormat: Sendable, Hashable, Codable {
    /// Wild cards per league.
    package var wildCards: Int
    /// 2020: each division's second-place club goes on too.
    package var secondPlaces: Bool
    /// Games each club was scheduled to play: what is left of the season where its schedule is
    /// not known.
    package var scheduledGames: Int
    /// Whether a tie for a place was played off in a game that counts in the standings (game
    /// 163: 1994-2019 and 2021); else it is broken by the rules (head-to-head, then the record
    /// within the division, then within the league; 2020, and from 2022).
    package var playoffGame: Bool
    /// "two wild cards per league (2012-2021)".
    package var description: String

    /// The format of `season`: one wild card per league from 1995 (the 1994 season, which planned
    /// it, ended in August), two from 2012, 2020's eight clubs per league (three division winners,
    /// three second places and two wild cards over 60 games), three wild cards from 2022. Nil
    /// before 1994: no wild card.
    package static func of(season: Int) -> PostseasonFormat? {
        switch season {
        case ..<1994: nil
        case 1994...2011:
            PostseasonFormat(
                wildCards: 1, secondPlaces: false, scheduledGames: season == 1995 ? 144 : 162, playoffGame: true,
                description: "one wild card per league (1994-2011)")
        case 2020:
            PostseasonFormat(
                wildCards: 2, secondPlaces: true, scheduledGames: 60, playoffGame: false,
                description: "eight clubs per league: the division winners, the second places and two wild cards (2020)"
            )
        case 2012...2021:
            PostseasonFormat(
                wildCards: 2, secondPlaces: false, scheduledGames: 162, playoffGame: true,
                description: "two wild cards per league (2012-2021)")
        default:
            PostseasonFormat(
                wildCards: 3, secondPlaces: false, scheduledGames: 162, playoffGame: false,
                description: "three wild cards per league (from 2022)")
        }
    }
}

/// The race for the postseason in each league before a day's games, from the results known: the
/// division leaders (and, in 2020, the second places), then the rest by record with the wild-card
/// places marked, games ahead of the first club out or behind the last club in, and each club's
/// clinching or elimination number. Pure.
package struct WildCardRace: Sendable, Hashable, Codable {
    package struct Entry: Sendable, Hashable, Codable {
        package var club: Club.View
        package var wins: Int
        package var losses: Int
        /// `.550`.
        package var percentage: String
        /// Games still to play: the season's schedule where known, else the format's length.
        package var remaining: Int
        /// `division leader`, `second place` (2020), `wild card` or `out`.
        package var place: String
        /// Wild cards: `+2.5` ahead of the first club out (`-` level with it); clubs out: `1.5`
        /// behind the last club in. Empty for the division leaders and second places.
        package var gamesBehind: String
        /// For a club in a place, its wins and the losses of the clubs below it (the rest of its
        /// division for a leader, every club out for a wild card) that clinch it, against the one
        /// that can reach it longest: 0 once clinched. Ties are not broken here.
        package var clinchNumber: Int?
        /// For a club out, its losses and the other clubs' wins that end its chance of any place:
        /// the larger of the numbers against the last wild card and its division's last place in;
        /// 0 once eliminated.
        package var eliminationNumber: Int?
    }

    package struct League: Sendable, Hashable, Codable {
        /// `AL`, `NL`.
        package var name: String
        /// The division leaders (and 2020's second places), best record first.
        package var leaders: [Entry]
        /// Every other club, the wild cards first.
        package var wildCard: [Entry]

        /// The clubs that go on if the season ended today.
        package var qualifiers: [Entry] { leaders + wildCard.filter { $0.place == "wild card" } }
    }

    /// `yyyy-mm-dd`: the race before that day's games.
    package var date: String
    package var format: PostseasonFormat
    package var leagues: [League]

    /// The race before the games of `date` from `outcomes` (any order; only the season's games
    /// before the day count, a tie for neither club); `clubs` are listed even before a result of
    /// theirs. `wholeSeason`: `outcomes` hold every game of the season (a Retrosheet season), so
    /// its games on and after the day are what is left of each club's schedule; else the format's
    /// length less the games played. Nil for a season without wild cards.
    package init?(asOf date: String, outcomes: [GameOutcome], clubs extra: [Club] = [], wholeSeason: Bool = false) {
        guard let season = Int(date.prefix(4)), let format = PostseasonFormat.of(season: season) else { return nil }
        self.date = date
        self.format = format
        let games = outcomes.filter { $0.date.prefix(4) == date.prefix(4) }.sorted(by: GameOutcome.ordered)
        var table = Table(clubs: extra)
        table.wholeSeason = wholeSeason
        for game in games { table.add(game, counts: game.date < date) }
        let breaker = TieBreaker(table: table, format: format)
        leagues = Set(table.clubs.values.map(\.league)).sorted().compactMap { league in
            let clubs = table.clubs.values.filter { $0.league == league && $0.division != nil }
            guard !clubs.isEmpty else { return nil }
            return Self.league(league, clubs: clubs, table: table, breaker: breaker, format: format)
        }
    }

    private static func league(
        _ name: String, clubs: [Club], table: Table, breaker: TieBreaker, format: PostseasonFormat
    ) -> League {
        var leaders: [(Club, place: String, below: [Club])] = []
        var rest: [Club] = []
        /// Each club out of its division's places: the division's last club in.
        var divisionCut: [String: Club] = [:]
        for division in Set(clubs.compactMap(\.division)).sorted() {
            let ranked = breaker.rank(clubs.filter { $0.division == division })
            leaders.append((ranked[0], "division leader", Array(ranked.dropFirst())))
            let places = format.secondPlaces && ranked.count > 1 ? 2 : 1
            if places == 2 { leaders.append((ranked[1], "second place", Array(ranked.dropFirst(2)))) }
            for club in ranked.dropFirst(places) { divisionCut[club.retrosheet] = ranked[places - 1] }
            rest += ranked.dropFirst(places)
        }
        let ranked = breaker.rank(rest)
        let spots = min(format.wildCards, ranked.count)
        let lastIn = spots > 0 ? ranked[spots - 1] : nil
        let firstOut = ranked.count > spots ? ranked[spots] : nil
        func entry(_ club: Club, place: String) -> Entry {
            let record = table.record(club)
            return Entry(
                club: club.view, wins: record.wins, losses: record.losses,
                percentage: Standings.percentage(record.wins, record.losses),
                remaining: table.remaining(club, format: format), place: place, gamesBehind: "")
        }
        // The division leaders, then the second places, each by record: the seeds.
        let order = breaker.rank(leaders.map(\.0)).map(\.retrosheet)
        leaders.sort { a, b in
            (a.place == "division leader" ? 0 : 1, order.firstIndex(of: a.0.retrosheet)!)
                < (b.place == "division leader" ? 0 : 1, order.firstIndex(of: b.0.retrosheet)!)
        }
        // A place is clinched once no club below it can reach it (each club's own games left).
        let out = ranked.dropFirst(spots)
        func clinch(_ club: Club, over clubs: some Sequence<Club>) -> Int? {
            clubs.map { table.clinchNumber(club, over: $0, format: format) }.max()
        }
        let leaderEntries = leaders.map { club, place, below in
            var entry = entry(club, place: place)
            entry.clinchNumber = clinch(club, over: below)
            return entry
        }
        let wildCard = ranked.enumerated().map { index, club in
            var entry = entry(club, place: index < spots ? "wild card" : "out")
            if index < spots {
                entry.gamesBehind = firstOut.map { Self.games(ahead: table.gamesBetween(club, $0)) } ?? ""
                entry.clinchNumber = clinch(club, over: out) ?? 0
            } else if let lastIn {
                entry.gamesBehind = Self.games(ahead: table.gamesBetween(club, lastIn))
                // Out of every place: the last wild card's and its division's.
                let wildCardNumber = table.clinchNumber(lastIn, over: club, format: format)
                let divisionNumber = divisionCut[club.retrosheet].map {
                    table.clinchNumber($0, over: club, format: format)
                }
                entry.eliminationNumber = max(wildCardNumber, divisionNumber ?? 0)
            }
            return entry
        }
        return League(name: name, leaders: leaderEntries, wildCard: wildCard)
    }

    /// Half-games ahead as a table writes them: `+2.5` ahead, `1.5` behind (negative), `-` level.
    package static func games(ahead halfGames: Int) -> String {
        guard halfGames != 0 else { return "-" }
        let size = abs(halfGames)
        let text = size % 2 == 0 ? "\(size / 2).0" : "\(size / 2).5"
        return halfGames > 0 ? "+" + text : text
    }
}

/// The season's results as the race needs them: each club's record, its record against each
/// other club, and its games in order.
struct Table {
    struct Result {
        var opponent: String
        var won: Bool
    }

    var clubs: [String: Club] = [:]
    /// Results before the day, in order, by club.
    var results: [String: [Result]] = [:]
    /// Games of the season on or after the day, by club.
    var later: [String: Int] = [:]
    /// Whether `later` is the rest of the season's schedule.
    var wholeSeason = false

    init(clubs: [Club]) {
        for club in clubs where self.clubs[club.retrosheet] == nil { self.clubs[club.retrosheet] = club }
    }

    mutating func add(_ game: GameOutcome, counts: Bool) {
        for club in [game.away, game.home] where clubs[club.retrosheet] == nil || counts {
            clubs[club.retrosheet] = club
        }
        guard counts else {
            later[game.away.retrosheet, default: 0] += 1
            later[game.home.retrosheet, default: 0] += 1
            return
        }
        guard game.awayRuns != game.homeRuns else { return }
        let homeWon = game.homeRuns > game.awayRuns
        results[game.home.retrosheet, default: []].append(Result(opponent: game.away.retrosheet, won: homeWon))
        results[game.away.retrosheet, default: []].append(Result(opponent: game.home.retrosheet, won: !homeWon))
    }

    func record(_ club: Club, against: (String) -> Bool = { _ in true }) -> (wins: Int, losses: Int) {
        let games = (results[club.retrosheet] ?? []).filter { against($0.opponent) }
        let wins = games.filter(\.won).count
        return (wins, games.count - wins)
    }

    /// Games still to play: those of the season after the day where the outcomes hold them, else
    /// the format's schedule less those played.
    func remaining(_ club: Club, format: PostseasonFormat) -> Int {
        if wholeSeason { return later[club.retrosheet] ?? 0 }
        let record = record(club)
        return max(0, format.scheduledGames - record.wins - record.losses)
    }

    /// Half-games by which `club` is ahead of `other`.
    func gamesBetween(_ club: Club, _ other: Club) -> Int {
        let (a, b) = (record(club), record(other))
        return (a.wins - b.wins) + (b.losses - a.losses)
    }

    /// Wins of `club` plus losses of `other` that put `club` out of `other`'s reach: `other`'s
    /// most possible wins less `club`'s wins, plus one; 0 once done, and once neither has a game
    /// left (the order is then the rules', ties broken).
    func clinchNumber(_ club: Club, over other: Club, format: PostseasonFormat) -> Int {
        let (a, b) = (record(club), record(other))
        let left = remaining(other, format: format)
        guard left + remaining(club, format: format) > 0 else { return 0 }
        return max(0, b.wins + left - a.wins + 1)
    }
}

/// Orders clubs by winning percentage and breaks a tie as the season's rules do: where a tie
/// was played off (game 163) the tied clubs stay level (more games over .500 first, then by
/// name); from 2020, by the record among the tied clubs, then within the division, then within the
/// league, then over the last half of the games within the league.
struct TieBreaker {
    let table: Table
    let format: PostseasonFormat

    func rank(_ clubs: [Club]) -> [Club] {
        let byPercentage = Dictionary(grouping: clubs) { club -> Fraction in
            let record = table.record(club)
            return Fraction(record.wins, record.wins + record.losses)
        }
        return byPercentage.keys.sorted(by: >).flatMap { broken(byPercentage[$0]!) }
    }

    private func broken(_ tied: [Club]) -> [Club] {
        guard tied.count > 1 else { return tied }
        let names = Set(tied.map(\.retrosheet))
        var keys: [(Club) -> Fraction] = []
        if !format.playoffGame {
            keys = [
                { club in fraction(club) { names.contains($0) } },
                { club in fraction(club) { table.clubs[$0]?.divisionName == club.divisionName } },
                { club in fraction(club) { table.clubs[$0]?.league == club.league } },
                { club in
                    let league = (table.results[club.retrosheet] ?? []).filter {
                        table.clubs[$0.opponent]?.league == club.league
                    }
                    let half = league.suffix((league.count + 1) / 2)
                    return Fraction(half.filter(\.won).count, half.count)
                },
            ]
        }
        return tied.sorted { a, b in
            for key in keys {
                let (ka, kb) = (key(a), key(b))
                if ka != kb { return ka > kb }
            }
            let (ra, rb) = (table.record(a), table.record(b))
            if ra.wins - ra.losses != rb.wins - rb.losses { return ra.wins - ra.losses > rb.wins - rb.losses }
            return a.name < b.name
        }
    }

    private func fraction(_ club: Club, against: (String) -> Bool) -> Fraction {
        let record = table.record(club, against: against)
        return Fraction(record.wins, record.wins + record.losses)
    }
}

/// A winning percentage compared exactly; no games counts as .500.
struct Fraction: Hashable, Comparable {
    let wins: Int
    let games: Int

    init(_ wins: Int, _ games: Int) {
        (self.wins, self.games) = games == 0 ? (1, 2) : (wins, games)
    }

    static func == (lhs: Fraction, rhs: Fraction) -> Bool { lhs.wins * rhs.games == rhs.wins * lhs.games }

    func hash(into hasher: inout Hasher) {
        let divisor = Self.gcd(wins, games)
        hasher.combine(wins / divisor)
        hasher.combine(games / divisor)
    }

    static func < (lhs: Fraction, rhs: Fraction) -> Bool { lhs.wins * rhs.games < rhs.wins * lhs.games }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? max(a, 1) : gcd(b, a % b) }
}
