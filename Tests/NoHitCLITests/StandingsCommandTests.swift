import Foundation
import TestSupport
import Testing

/// `nohit standings` as a user runs it, on the 2020 season that comes with nohit.
@Suite(.ownThreads) struct StandingsCommandTests {
    @Test func theFinalStandingsOf2020() throws {
        let result = try Executable.run(
            "nohit", ["standings", "--json", "--date", "2020-09-28", TestData.path("retrosheet/2020")])
        #expect(result.status == 0, "\(result.standardError)")
        let answer = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(answer["date"] as? String == "2020-09-28")
        let divisions = try #require(answer["divisions"] as? [[String: Any]])
        let west = try #require(divisions.first { $0["name"] as? String == "NL West" })
        let leader = try #require((west["teams"] as? [[String: Any]])?.first)
        #expect((leader["club"] as? [String: Any])?["abbreviation"] as? String == "LAD")
        #expect(leader["wins"] as? Int == 43)
        #expect(leader["losses"] as? Int == 17)
        #expect(leader["games_behind"] as? String == "-")
        #expect(leader["home"] as? String == "21-9")
    }

    @Test func textHasEveryDivision() throws {
        let result = try Executable.run(
            "nohit", ["standings", "--date", "2020-08-25", TestData.path("retrosheet/2020")])
        #expect(result.status == 0)
        for division in ["AL East", "AL Central", "AL West", "NL East", "NL Central", "NL West"] {
            #expect(result.standardOutput.contains("\n\(division) "), "\(division)")
        }
        #expect(result.standardOutput.contains("Chicago White Sox         17  12  .586   2.5"))
    }

    @Test func aDayNotOfTheCalendarOrOfNoSeasonIsSaid() throws {
        let bad = try Executable.run("nohit", ["standings", "--date", "2020-02-30", TestData.path("retrosheet/2020")])
        #expect(bad.status != 0)
        #expect(bad.standardError.contains("--date must be a day as YYYY-MM-DD (2020-08-25), not '2020-02-30'"))
        let other = try Executable.run(
            "nohit", ["standings", "--date", "2019-06-01", TestData.path("retrosheet/2020")])
        #expect(other.status == 1)
        #expect(other.standardError.contains("no games of 2019"))
    }
}
