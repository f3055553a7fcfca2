import Baseball
import Retrosheet
import TestSupport
import Testing

@Suite struct TeamFileTests {
    @Test(arguments: ["2020"])
    func seasonTeamFileHasThirtyTeams(year: String) throws {
        try Self.checkTeamFile(year: year)
    }

    static func checkTeamFile(year: String) throws {
        let (teams, problems) = TeamFile.teams(
            file: "TEAM\(year)", bytes: try TestData.bytes("retrosheet/\(year)/TEAM\(year)"))
        #expect(problems.isEmpty)
        #expect(teams.count == 30)
        #expect(Set(teams.map(\.league)) == ["A", "N"])
        #expect(teams.first { $0.id == "CHA" }?.name == "Chicago White Sox")
    }

    @Test func rosterOfARealTeam() throws {
        let (players, problems) = TeamFile.roster(
            file: "CHA2020.ROS", bytes: try TestData.bytes("retrosheet/2020/CHA2020.ROS"))
        #expect(problems.isEmpty)
        let giolito = try #require(players.first { $0.player == PlayerID("gioll001") })
        #expect(giolito.name == "Lucas Giolito")
        #expect(giolito.throwingHand == "R")
        #expect(giolito.team == "CHA")
        #expect(giolito.position == "P")
    }

    @Test func damagedRosterLinesAreReportedAndTheRestRead() throws {
        var lines = try TestData.lines("retrosheet/2020/CHA2020.ROS").map(String.init)
        let total = lines.count
        lines[2] = String(lines[2].split(separator: ",").prefix(4).joined(separator: ","))
        lines[5] = lines[5].replacingOccurrences(of: ",R,", with: ",X,")
        let (players, problems) = TeamFile.roster(file: "CHA2020.ROS", bytes: Array(lines.joined(separator: "\n").utf8))
        #expect(players.count == total - 2)
        #expect(problems.map(\.line) == [3, 6])
        #expect(problems[0].reason.contains("needs 7 fields"))
        #expect(problems[0].text == lines[2])
        #expect(problems[1].reason.contains("must be L, R, B or ?"))
    }

    @Test func damagedTeamLineIsReported() {
        let (teams, problems) = TeamFile.teams(file: "TEAM2020", bytes: Array("ANA,A,Anaheim,Angels\nBAL,A\n".utf8))
        #expect(teams.map(\.id) == ["ANA"])
        #expect(problems.count == 1)
        #expect(
            problems.first?.description
                == "TEAM2020:2: a team line needs 4 fields (code, league, city, nickname), found 2: BAL,A")
    }
}

extension TeamFileTests {
    @Suite(.extended, .heavy) struct Extended {
        @Test(arguments: ["2012", "2015", "2019"])
        func seasonTeamFileHasThirtyTeams(year: String) throws {
            try TeamFileTests.checkTeamFile(year: year)
        }
    }
}
