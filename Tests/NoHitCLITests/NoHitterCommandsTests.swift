import Foundation
import TestSupport
import Testing

/// `nohit nohitters` and `nohit hall-of-fame` as a user runs them.
@Suite(.ownThreads) struct NoHitterCommandsTests {
    static let seasons = ["2012", "2015", "2019", "2020"].map { TestData.path("retrosheet/\($0)") }

    @Test func nohittersJSONListsTheSeasonsNoHittersWithTheDocumentedKeys() throws {
        let entries = try Self.officialNoHitters(in: [TestData.path("retrosheet/2020")], count: 2)
        let mills = try #require(entries.first { $0["game_id"] as? String == "MIL202009130" })
        #expect(mills["pitching_team"] as? String == "CHN")
        #expect(mills["combined"] as? Bool == false)
    }

    /// `nohit nohitters --json` over `seasons`: `count` entries, each official and with the
    /// documented keys, Giolito's among them as written.
    static func officialNoHitters(in seasons: [String], count: Int) throws -> [[String: Any]] {
        let result = try Executable.run("nohit", ["nohitters", "--json"] + seasons)
        #expect(result.status == 0)
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
        #expect(entries.count == count)
        #expect(entries.allSatisfy { Set($0.keys) == Self.expectedKeys })
        #expect(entries.allSatisfy { $0["official"] as? Bool == true && $0["reason"] is NSNull })
        let giolito = try #require(entries.first { $0["game_id"] as? String == "CHA202008250" })
        #expect(giolito["pitchers"] as? [String] == ["gioll001"])
        #expect(giolito["pitching_team"] as? String == "CHA")
        #expect(giolito["batting_team"] as? String == "PIT")
        #expect(giolito["date"] as? String == "2020-08-25")
        let score = try #require(giolito["final_score"] as? [String: Any])
        #expect(score["away"] as? String == "PIT")
        #expect(score["away_runs"] as? Int == 0)
        #expect(score["home_runs"] as? Int == 4)
        return entries
    }

    static let expectedKeys: Set<String> = [
        "game_id", "date", "pitching_team", "batting_team", "pitchers", "perfect", "combined", "official", "reason",
        "final_score",
    ]

    @Test func nohittersTextNamesThePitchers() throws {
        let result = try Executable.run("nohit", ["nohitters", TestData.path("retrosheet/2020")])
        #expect(result.status == 0)
        #expect(result.standardOutput.hasPrefix("Official no-hitters: 2\n"))
        #expect(result.standardOutput.contains("CHA202008250  PIT at CWS  no-hitter"))
        #expect(result.standardOutput.contains("Lucas Giolito (gioll001)"))
        #expect(result.standardOutput.contains("Hitless, not official: 0"))
    }

    @Test func hallOfFameTellsHowBidsEnded() throws {
        let text = try Executable.run("nohit", ["hall-of-fame", "--limit", "0", TestData.path("retrosheet/2020")])
        #expect(text.status == 0)
        #expect(text.standardOutput.hasPrefix("Closest no-hit bids: 1796 of 1796 pitching sides\n"))
        #expect(
            text.standardOutput.contains(
                "Minnesota Twins vs Milwaukee Brewers: broken up: Eric Sogard singles to center field off Kenta Maeda with nobody out in the top of the 9th"
            ))
    }

    @Test func badLimitIsRefused() throws {
        let result = try Executable.run("nohit", ["hall-of-fame", "--limit=-3", TestData.path("retrosheet/2020")])
        #expect(result.status != 0)
        #expect(result.standardError.contains("--limit must be 0 (all) or more, not -3"))
    }
}

extension NoHitterCommandsTests {
    /// Four seasons: 2012, 2015, 2019, 2020.
    @Suite(.extended) struct Extended {
        @Test func nohittersJSONListsTheOfficialNoHittersWithTheDocumentedKeys() throws {
            let entries = try NoHitterCommandsTests.officialNoHitters(in: NoHitterCommandsTests.seasons, count: 20)
            let seattle = try #require(entries.first { $0["game_id"] as? String == "SEA201206080" })
            #expect(seattle["combined"] as? Bool == true)
            #expect((seattle["pitchers"] as? [String])?.count == 6)
            #expect(entries.filter { $0["perfect"] as? Bool == true }.count == 3)
        }

        @Test func hallOfFameRanksAndTellsHowBidsEnded() throws {
            let result = try Executable.run(
                "nohit", ["hall-of-fame", "--json", "--limit", "26"] + NoHitterCommandsTests.seasons)
            #expect(result.status == 0)
            let entries = try #require(
                try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]])
            #expect(entries.count == 26)
            #expect(entries.map { $0["rank"] as? Int } == Array(1...26))
            #expect(entries.prefix(20).allSatisfy { $0["status"] as? String == "official" })
            let bour = entries[20]
            #expect(bour["game_id"] as? String == "MIA201505170")
            #expect(bour["outs_before_first_hit"] as? Int == 26)
            let ended = try #require(bour["ended_by"] as? [String: Any])
            #expect(ended["batter"] as? String == "bourj002")
            #expect(ended["pitcher"] as? String == "mills001")
            #expect(ended["event"] as? String == "S8/G+")
            #expect(ended["inning"] as? Int == 9)
            #expect(ended["outs"] as? Int == 2)
        }
    }
}
