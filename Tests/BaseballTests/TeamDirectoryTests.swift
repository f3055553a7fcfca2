import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// Clubs as they were on a day, from Retrosheet's franchise history and MLB's ids: what every
/// surface names a club by.
@Suite struct TeamDirectoryTests {
    @Test func theWhiteSoxOf2020AreCWSToAFan() throws {
        let club = try #require(TeamDirectory.club("CHA", on: "2020-08-25"))
        #expect(club.abbreviation == "CWS")
        #expect(club.name == "Chicago White Sox")
        #expect(club.mlbID == 145)
        #expect(club.divisionName == "AL Central")
        #expect(club.timeZone == "America/Chicago")
    }

    @Test func clevelandIsTheIndiansThrough2021AndTheGuardiansFrom2022() throws {
        #expect(TeamDirectory.club("CLE", on: "2020-09-10")?.name == "Cleveland Indians")
        #expect(TeamDirectory.club("CLE", on: "2021-10-03")?.name == "Cleveland Indians")
        #expect(TeamDirectory.club("CLE", on: "2022-04-08")?.name == "Cleveland Guardians")
        #expect(TeamDirectory.club(mlbID: 114, on: "2020-09-10")?.nickname == "Indians")
        #expect(TeamDirectory.club(mlbID: 114, on: "2022-04-08")?.nickname == "Guardians")
        #expect(TeamDirectory.club("CLE", on: "2022-04-08")?.abbreviation == "CLE")
    }

    @Test func oaklandIsOAKUntilItMoved() throws {
        #expect(TeamDirectory.club("OAK", on: "2020-08-01")?.abbreviation == "OAK")
        #expect(TeamDirectory.club("OAK", on: "2020-08-01")?.name == "Oakland Athletics")
        let moved = try #require(TeamDirectory.club(mlbID: 133, on: "2025-06-01"))
        #expect(moved.abbreviation == "ATH")
        #expect(moved.name == "Athletics")
        #expect(moved.franchise == "OAK")
    }

    @Test func theAngelsByEra() {
        #expect(TeamDirectory.club("LAA", on: "1961-06-01")?.name == "Los Angeles Angels")
        #expect(TeamDirectory.club("CAL", on: "1970-06-01")?.name == "California Angels")
        #expect(TeamDirectory.club("ANA", on: "2000-06-01")?.name == "Anaheim Angels")
        #expect(TeamDirectory.club("ANA", on: "2020-06-01")?.name == "Los Angeles Angels")
        #expect(TeamDirectory.club("ANA", on: "2020-06-01")?.abbreviation == "LAA")
        #expect(TeamDirectory.club(mlbID: 108, on: "1965-09-20")?.name == "California Angels")
        #expect(TeamDirectory.club(mlbID: 108, on: "1965-06-01")?.name == "Los Angeles Angels")
    }

    @Test func historicFranchises() {
        #expect(TeamDirectory.club("WS2", on: "1961-06-01")?.name == "Washington Senators")
        #expect(TeamDirectory.club("WS2", on: "1961-06-01")?.franchise == "TEX")
        #expect(TeamDirectory.club("WS1", on: "1960-06-01")?.franchise == "MIN")
        #expect(TeamDirectory.club("HOU", on: "1963-06-01")?.nickname == "Colt .45's")
        #expect(TeamDirectory.club("HOU", on: "1965-06-01")?.nickname == "Astros")
        #expect(TeamDirectory.club("MON", on: "1994-06-01")?.divisionName == "NL East")
        #expect(TeamDirectory.club(mlbID: 120, on: "2004-06-01")?.name == "Montreal Expos")
        #expect(TeamDirectory.club(mlbID: 120, on: "2005-06-01")?.name == "Washington Nationals")
        #expect(TeamDirectory.club("XYZ", on: "2020-06-01") == nil)
    }

    @Test func aClubTheHistoryDoesNotKnowIsNamedFromItsTeamFile() {
        let club = TeamDirectory.club("ZZZ", on: "1914-06-01", teamFile: ("F", "Brooklyn", "Tip-Tops"))
        #expect(club.name == "Brooklyn Tip-Tops")
        #expect(club.league == "FL")
        #expect(club.abbreviation == "ZZZ")
    }

    @Test func thirtyClubsToday() {
        #expect(TeamDirectory.clubs(on: "2020-08-25").count == 30)
        #expect(TeamDirectory.clubs(on: "1961-06-01").count == 18)
        #expect(Set(TeamDirectory.clubs(on: "2020-08-25").compactMap(\.mlbID)).count == 30)
    }
}

extension TeamDirectoryTests {
    /// Every club of every TEAM file 1950-2020 (Retrosheet's zips and folders): known to the
    /// directory on its season's opening week, in the file's league, by the file's nickname.
    @Suite(.extended, .heavy) struct Extended {
        @Test func everyTeamFileFrom1950To2020Resolves() async throws {
            // 71 unzip processes waited for on a thread of their own, not on one of Swift's
            // cooperative threads (two on a two-core machine), which the tests beside it need.
            let seasons = try await Executable.onThread {
                try (1950...2020).map { year in
                    let bytes = try TestData.bytes("retrosheet/zips/\(year)eve.zip", entry: "TEAM\(year)")
                    let (teams, problems) = TeamFile.teams(file: "TEAM\(year)", bytes: bytes)
                    return (year, teams, problems.count)
                }
            }
            #expect(seasons.count == 71)
            var checked = 0
            for (year, teams, problems) in seasons {
                #expect(problems == 0, "TEAM\(year)")
                #expect(teams.count >= 16)
                for team in teams {
                    // The last day of the season: a club renamed in the season (the 1965 Angels)
                    // has its final name there, as its TEAM file does.
                    let club = TeamDirectory.club(team.id, on: "\(year)-09-28")
                    #expect(club != nil, "\(year) \(team.id) is not in the team directory")
                    guard let club else { continue }
                    #expect(club.league == ["A": "AL", "N": "NL"][team.league], "\(year) \(team.id) league")
                    // The TEAM files keep two informal names where the franchise history has the
                    // official ones: the Cincinnati "Reds" of 1954-1958 were the Redlegs, the
                    // Houston "Colts" of 1962-1964 the Colt .45's.
                    let informal = ["Redlegs": "Reds", "Colt .45's": "Colts"]
                    #expect(
                        club.nickname == team.nickname || informal[club.nickname] == team.nickname,
                        "\(year) \(team.id): \(club.nickname) vs \(team.nickname)")
                    #expect(club.mlbID != nil, "\(year) \(team.id) has no MLB id")
                    checked += 1
                }
            }
            #expect(checked > 1_500)
        }
    }
}
