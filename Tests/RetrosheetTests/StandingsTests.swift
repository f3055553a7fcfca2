import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// Records and division standings as of the start of a day, from a season's results.
@Suite struct StandingsTests {
    static func club(_ code: String, league: String = "AL", division: String? = "East") -> Club {
        Club(
            retrosheet: code, franchise: code, abbreviation: code, mlbID: nil, location: "", nickname: code,
            league: league, division: division, timeZone: "America/New_York")
    }

    static func game(_ id: String, _ date: String, _ away: String, _ awayRuns: Int, _ home: String, _ homeRuns: Int)
        -> GameOutcome
    {
        GameOutcome(
            gameID: id, date: date, away: club(away), home: club(home), awayRuns: awayRuns, homeRuns: homeRuns)
    }

    /// A game of the day itself does not count yet; a tie counts for neither club; games behind
    /// in halves, a club ahead in games but behind in percentage written `+0.5`; streak, last
    /// ten, home and away.
    @Test func countsGamesBeforeTheDayOnly() {
        let games = [
            Self.game("AAA202007240", "2020-07-24", "BBB", 1, "AAA", 2),
            Self.game("AAA202007250", "2020-07-25", "BBB", 3, "AAA", 2),
            Self.game("AAA202007261", "2020-07-26", "BBB", 4, "AAA", 4),
            Self.game("CCC202007260", "2020-07-26", "DDD", 0, "CCC", 5),
            Self.game("CCC202007262", "2020-07-26", "DDD", 1, "CCC", 5),
            Self.game("AAA202007270", "2020-07-27", "BBB", 0, "AAA", 9),
        ]
        let before = Standings(asOf: "2020-07-26", outcomes: games).records
        #expect(before["AAA"]?.text == "1-1")
        #expect(before["BBB"]?.streak == "W1")
        #expect(before["CCC"]?.text == "0-0")
        #expect(before["CCC"]?.percentage == ".000")
        let after = Standings(asOf: "2020-07-27", outcomes: games)
        let records = after.records
        #expect(records["AAA"]?.text == "1-1")  // the tie counts for neither
        #expect(records["CCC"]?.text == "2-0")
        #expect(records["CCC"]?.streak == "W2")
        #expect(records["CCC"]?.home == "2-0")
        #expect(records["DDD"]?.away == "0-2")
        #expect(records["DDD"]?.lastTen == "0-2")
        #expect(after.divisions.map(\.name) == ["AL East"])
        #expect(after.divisions.first?.teams.map(\.club.abbreviation) == ["CCC", "AAA", "BBB", "DDD"])
        #expect(after.divisions.first?.teams.map(\.gamesBehind) == ["-", "1", "1", "2"])
        #expect(Standings.percentage(2, 1) == ".667")
        #expect(Standings.percentage(1, 0) == "1.000")
        #expect(Standings.percentage(19, 41) == ".317")
        let uneven = Standings(
            asOf: "2020-08-01",
            outcomes: (0..<3).map { Self.game("EEE20200720\($0)", "2020-07-2\($0)", "FFF", 0, "EEE", 1) }
                + (0..<2).map { Self.game("GGG20200720\($0)", "2020-07-2\($0)", "FFF", 1, "GGG", 0) }
                + [Self.game("HHH202007200", "2020-07-20", "GGG", 0, "HHH", 1)])
        // EEE 3-0 and HHH 1-0 have the same percentage: the one with more wins leads.
        #expect(uneven.divisions.first?.teams.first?.club.abbreviation == "EEE")
        #expect(uneven.records["HHH"]?.gamesBehind == "1")
    }

    /// Level on percentage below .500, the club fewer games under leads: 1-3 ahead of 2-6.
    @Test func levelOnPercentageTheClubFewerGamesUnderLeads() {
        let games =
            [Self.game("AAA202007200", "2020-07-20", "BBB", 0, "AAA", 1)]
            + (1...3).map { Self.game("CCC20200721\($0)", "2020-07-2\($0)", "AAA", 0, "CCC", 1) }
            + (1...2).map { Self.game("BBB20200722\($0)", "2020-07-2\($0)", "DDD", 0, "BBB", 1) }
            + (1...5).map { Self.game("DDD20200723\($0)", "2020-07-2\($0)", "BBB", 0, "DDD", 1) }
        let records = Standings(asOf: "2020-08-01", outcomes: games)
        let order = records.divisions.first?.teams.map(\.club.abbreviation) ?? []
        #expect(records.records["AAA"]?.text == "1-3")
        #expect(records.records["BBB"]?.text == "2-6")
        #expect(order.firstIndex(of: "AAA")! < order.firstIndex(of: "BBB")!)
        #expect(records.records["BBB"]?.gamesBehind != records.records["AAA"]?.gamesBehind)
    }

    @Test func daysOfTheCalendar() {
        #expect(Standings.isDay("2020-08-25"))
        #expect(Standings.isDay("2020-02-29"))
        #expect(!Standings.isDay("2021-02-29"))
        #expect(!Standings.isDay("2020-13-45"))
        #expect(!Standings.isDay("2020-8-25"))
        #expect(!Standings.isDay("２０２０-08-25"))
    }

    /// The 2020 season's final records, as MLB gives them (the bundled season).
    @Test func finalRecordsOf2020() async throws {
        let (sides, problems) = await SeasonBids.summaries(
            of: try EventFiles.expand([TestData.path("retrosheet/2020")]))
        #expect(problems.isEmpty)
        let standings = Standings(asOf: "2020-09-28", outcomes: SeasonBids.outcomes(sides))
        let records = standings.records
        #expect(records["LAD"]?.text == "43-17")
        #expect(records["TB"]?.text == "40-20")
        #expect(records["PIT"]?.text == "19-41")
        #expect(records["CWS"]?.text == "35-25")
        #expect(
            standings.divisions.map(\.name) == [
                "AL East", "AL Central", "AL West", "NL East", "NL Central", "NL West",
            ])
        #expect(standings.divisions.allSatisfy { $0.teams.count == 5 })
        // The NL Central, with its games behind.
        let central = try #require(standings.divisions.first { $0.name == "NL Central" })
        #expect(central.teams.map(\.club.abbreviation) == ["CHC", "STL", "CIN", "MIL", "PIT"])
        #expect(central.teams.map(\.gamesBehind) == ["-", "3", "3", "5", "15"])
    }
}

extension StandingsTests {
    /// Every day of 2020 against an independent count: each game's final score from
    /// `groundtruth/sides_2020.csv`, a suspended game on the day its `Suspend=` comment says it
    /// was completed (read from the event files' text).
    @Suite(.extended) struct Extended {
        @Test func everyDayOf2020EqualsTheCountFromTheFinalScores() async throws {
            let lines = try TestData.lines("groundtruth/sides_2020.csv")
            let header = lines[0].split(separator: ",").map(String.init)
            let column = { (name: String) in header.firstIndex(of: name)! }
            var games: [String: (date: String, home: String, away: String, homeRuns: Int, awayRuns: Int)] = [:]
            for line in lines.dropFirst() {
                let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                games[fields[column("game_id")]] = (
                    fields[column("date")], fields[column("home")], fields[column("away")],
                    Int(fields[column("final_home")])!, Int(fields[column("final_away")])!
                )
            }
            #expect(games.count == 898)
            // Suspended games: `com,"Suspend=yyyymmdd,...` in the game's records.
            var completed: [String: String] = [:]
            for file in try FileManager.default.contentsOfDirectory(atPath: TestData.path("retrosheet/2020"))
            where file.hasPrefix("2020") {
                let text = try String(
                    contentsOfFile: TestData.path("retrosheet/2020/\(file)"), encoding: .isoLatin1)
                var id = ""
                for line in text.split(whereSeparator: \.isNewline) {
                    if line.hasPrefix("id,") { id = String(line.dropFirst(3)) }
                    if line.hasPrefix("com,\"Suspend=") {
                        let digits = Array(line.dropFirst(13).prefix(8))
                        completed[id] = "\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))"
                    }
                }
            }
            #expect(completed.count == 2)
            let (sides, _) = await SeasonBids.summaries(of: try EventFiles.expand([TestData.path("retrosheet/2020")]))
            let outcomes = SeasonBids.outcomes(sides)
            var differences: [String] = []
            var day = "2020-07-23"
            var days = 0
            while day <= "2020-09-28" {
                var expected: [String: (wins: Int, losses: Int)] = [:]
                for (id, game) in games where game.homeRuns != game.awayRuns {
                    guard (completed[id] ?? game.date) < day else { continue }
                    let homeWon = game.homeRuns > game.awayRuns
                    expected[game.home, default: (0, 0)].wins += homeWon ? 1 : 0
                    expected[game.home, default: (0, 0)].losses += homeWon ? 0 : 1
                    expected[game.away, default: (0, 0)].wins += homeWon ? 0 : 1
                    expected[game.away, default: (0, 0)].losses += homeWon ? 1 : 0
                }
                let records = Standings(asOf: day, outcomes: outcomes).records
                #expect(records.count == 30)
                for code in Set(games.values.map(\.home)) {
                    let abbreviation = TeamDirectory.club(code, on: day)?.abbreviation ?? code
                    let mine = records[abbreviation].map { "\($0.wins)-\($0.losses)" } ?? "absent"
                    let theirs = expected[code].map { "\($0.wins)-\($0.losses)" } ?? "0-0"
                    if mine != theirs { differences.append("\(day) \(code): \(mine) ≠ \(theirs)") }
                }
                days += 1
                day = Self.next(day)
            }
            #expect(days == 68)
            #expect(differences.isEmpty, "\(differences.count) differences: \(differences.prefix(12))")
        }

        static func next(_ day: String) -> String {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = .gmt
            let formatter = DateFormatter()
            formatter.calendar = calendar
            formatter.timeZone = .gmt
            formatter.dateFormat = "yyyy-MM-dd"
            return formatter.string(from: calendar.date(byAdding: .day, value: 1, to: formatter.date(from: day)!)!)
        }
    }
}
