import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// The race for the postseason in each season's format.
@Suite struct WildCardRaceTests {
    static func club(_ code: String, league: String = "AL", division: String) -> Club {
        Club(
            retrosheet: code, franchise: code, abbreviation: code, mlbID: nil, location: "", nickname: code,
            league: league, division: division, timeZone: "America/New_York")
    }

    @Test func theFormatOfEachSeason() {
        #expect(PostseasonFormat.of(season: 1993) == nil)
        #expect(PostseasonFormat.of(season: 1995)?.wildCards == 1)
        #expect(PostseasonFormat.of(season: 1995)?.scheduledGames == 144)
        #expect(PostseasonFormat.of(season: 2011)?.wildCards == 1)
        #expect(PostseasonFormat.of(season: 2012)?.wildCards == 2)
        let short = PostseasonFormat.of(season: 2020)
        #expect(short?.wildCards == 2 && short?.secondPlaces == true && short?.scheduledGames == 60)
        #expect(PostseasonFormat.of(season: 2021)?.playoffGame == true)
        #expect(
            PostseasonFormat.of(season: 2022)?.wildCards == 3 && PostseasonFormat.of(season: 2022)?.playoffGame == false
        )
        #expect(PostseasonFormat.of(season: 2026)?.wildCards == 3)
        #expect(WildCardRace(asOf: "1990-09-01", outcomes: []) == nil)
    }

    /// From 2022, by the format: three division leaders and three wild cards per league; a tie
    /// broken by the clubs' games against each other, then within the division; games ahead of
    /// the first club out and behind the last club in; clinching and elimination numbers from
    /// what is left of the format's 162 games. Counted by hand below.
    @Test func threeWildCardsFrom2022WithTiesBrokenByTheRules() throws {
        let divisions = ["East": ["E1", "E2", "E3"], "Central": ["C1", "C2", "C3"], "West": ["W1", "W2", "W3"]]
        var clubs: [String: Club] = [:]
        for (division, codes) in divisions {
            for code in codes { clubs[code] = Self.club(code, division: division) }
        }
        var games: [GameOutcome] = []
        var day = 0
        /// `winner` beats `loser` `count` times.
        func beats(_ winner: String, _ loser: String, _ count: Int) {
            for _ in 0..<count {
                day += 1
                let date = String(format: "2022-%02d-%02d", 4 + day / 28, 1 + day % 28)
                games.append(
                    GameOutcome(
                        gameID: "\(winner)\(date.replacingOccurrences(of: "-", with: ""))0", date: date,
                        away: clubs[loser]!, home: clubs[winner]!, awayRuns: 1, homeRuns: 2))
            }
        }
        // Leaders: E1 10-0, C1 9-1, W1 8-2 (against the clubs of their division's bottom).
        beats("E1", "E3", 10)
        beats("C1", "C3", 9)
        beats("C3", "C1", 1)
        beats("W1", "W3", 8)
        beats("W3", "W1", 2)
        // E2 and C2 level at 6-4: C2 beat E2 in their one game, so C2 ranks first.
        beats("E2", "E3", 6)
        beats("W3", "E2", 3)
        beats("C2", "E2", 1)
        beats("C2", "C3", 5)
        beats("W3", "C2", 4)
        // W2 5-5 against W3, which ends 14-13: W3 the third wild card, W2 the first club out.
        beats("W2", "W3", 5)
        beats("W3", "W2", 5)
        let race = try #require(WildCardRace(asOf: "2022-09-01", outcomes: games))
        let league = try #require(race.leagues.first)
        #expect(race.leagues.map(\.name) == ["AL"])
        #expect(league.leaders.map(\.club.abbreviation) == ["E1", "C1", "W1"])
        #expect(league.leaders.map(\.place) == ["division leader", "division leader", "division leader"])
        let records = league.wildCard.map { "\($0.club.abbreviation) \($0.wins)-\($0.losses) \($0.place)" }
        // W3: 2 + 3 + 4 + 5 = 14 wins, 8 + 5 = 13 losses.
        #expect(
            records == [
                "C2 6-4 wild card", "E2 6-4 wild card", "W3 14-13 wild card", "W2 5-5 out", "C3 1-14 out",
                "E3 0-16 out",
            ])
        let entries = Dictionary(uniqueKeysWithValues: league.wildCard.map { ($0.club.abbreviation, $0) })
        // W3 (14-13) and W2 (5-5): W3 ahead by ((14-5) + (5-13)) / 2 = 0.5.
        #expect(entries["W3"]?.gamesBehind == "+0.5")
        #expect(entries["W2"]?.gamesBehind == "0.5")
        #expect(entries["C2"]?.gamesBehind == "+1.0")
        // 162 games: W2 has 152 left; W3 clinches over every club out, the one that can reach it
        // longest W2: 5 + 152 - 14 + 1 = 144 (C3: 1 + 147 - 14 + 1, E3: 0 + 146 - 14 + 1).
        #expect(entries["W2"]?.remaining == 152)
        #expect(entries["W3"]?.clinchNumber == 144)
        // W2 is out of W3's reach after 144 of its losses and W3's wins, but still in its
        // division's race: W1 (8-2) needs 5 + 152 - 8 + 1 = 150. Out of every place at 150.
        #expect(entries["W2"]?.eliminationNumber == 150)
        // E3: the wild card 0 + 146 - 14 + 1 = 133, its division's E1 0 + 146 - 10 + 1 = 137.
        #expect(entries["E3"]?.eliminationNumber == 137)
        // The division leader clinches over the rest of its division: E1 over E2 (6-4, 152 left)
        // 6 + 152 - 10 + 1 = 149, over E3 137.
        #expect(league.leaders.first?.clinchNumber == 149)
        #expect(WildCardRace.games(ahead: 3) == "+1.5" && WildCardRace.games(ahead: -4) == "2.0")
        #expect(WildCardRace.games(ahead: 0) == "-")
    }

    /// The clubs that went on in 2020: the division winners, the second places (Cleveland over
    /// Chicago, level at 35-25, on their games against each other) and two wild cards (Milwaukee
    /// over San Francisco, level at 29-31, on the record within the division).
    @Test func theLastDayOf2020GivesTheClubsThatQualified() async throws {
        let (sides, problems) = await SeasonBids.summaries(
            of: try EventFiles.expand([TestData.path("retrosheet/2020")]))
        #expect(problems.isEmpty)
        let race = try #require(
            WildCardRace(asOf: "2020-09-28", outcomes: SeasonBids.outcomes(sides), wholeSeason: true))
        let qualifiers = race.leagues.map { $0.qualifiers.map(\.club.abbreviation) }
        #expect(
            qualifiers == [
                ["TB", "OAK", "MIN", "CLE", "NYY", "HOU", "CWS", "TOR"],
                ["LAD", "ATL", "CHC", "SD", "STL", "MIA", "CIN", "MIL"],
            ])
        #expect(race.leagues.allSatisfy { $0.qualifiers.allSatisfy { $0.clinchNumber == 0 } })
        #expect(
            race.leagues.allSatisfy {
                $0.wildCard.filter { $0.place == "out" }.allSatisfy { $0.eliminationNumber == 0 }
            })
        // A month before the end, the race is on.
        let september = try #require(
            WildCardRace(asOf: "2020-09-01", outcomes: SeasonBids.outcomes(sides), wholeSeason: true))
        #expect(september.leagues.flatMap(\.wildCard).contains { ($0.eliminationNumber ?? 0) > 0 })
        #expect(september.leagues.flatMap(\.wildCard).allSatisfy { $0.remaining > 0 })
    }

}

extension WildCardRaceTests {
    @Suite(.extended) struct Extended {
        /// The last day of 2012 and of 2019 (two wild cards per league): the clubs that went on.
        @Test(arguments: [
            (
                "2012", "2012-10-04",
                [["NYY", "OAK", "DET", "BAL", "TEX"], ["WSH", "CIN", "SF", "ATL", "STL"]]
            ),
            (
                "2019", "2019-09-30",
                [["HOU", "NYY", "MIN", "OAK", "TB"], ["LAD", "ATL", "STL", "WSH", "MIL"]]
            ),
        ])
        func theLastDayGivesTheClubsThatQualified(season: String, day: String, expected: [[String]]) async throws {
            let files = try EventFiles.expand([TestData.path("retrosheet/\(season)")])
            let (sides, problems) = await SeasonBids.summaries(of: files)
            #expect(problems.isEmpty)
            let race = try #require(WildCardRace(asOf: day, outcomes: SeasonBids.outcomes(sides), wholeSeason: true))
            #expect(race.leagues.map { $0.qualifiers.map(\.club.abbreviation) } == expected)
            #expect(race.format.wildCards == 2)
        }
    }
}
