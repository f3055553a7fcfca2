import Foundation
import Retrosheet
import TestSupport
import Testing

/// Bids of every side of complete seasons against the ground-truth tables, which were derived from
/// the same event files and checked against Retrosheet's list of no-hitters: the 2020 season (which
/// the repository ships) here, all four shared seasons in the extended suite.
@Suite struct NoHitGroundTruthTests {

    /// The columns of `sides_YYYY.csv`, from our summary.
    static func row(_ side: SideSummary) -> [String: String] {
        [
            "game_id": side.gameID, "date": side.date, "home": side.homeTeam, "away": side.awayTeam,
            "defense": side.pitchingTeam, "defense_is_home": side.pitchingSide == .home ? "1" : "0",
            "max_inning": "\(side.maxInning)", "def_outs": "\(side.outs)", "hits_allowed": "\(side.hitsAllowed)",
            "outs_before_first_hit": "\(side.outsBeforeFirstHit)",
            "first_hit_inning": side.firstHit.map { "\($0.inning)" } ?? "",
            "first_hit_batter": side.firstHit?.batter ?? "", "first_hit_pitcher": side.firstHit?.pitcher ?? "",
            "first_hit_event": side.firstHit?.event ?? "",
            "outs_before_first_runner": "\(side.outsBeforeFirstBaserunner)",
            "first_runner_event": side.firstBaserunnerEvent ?? "", "pitchers": side.pitchers.joined(separator: "+"),
            "official_no_hitter": side.official ? "1" : "0", "perfect_game": side.perfect ? "1" : "0",
            "final_away": "\(side.finalAway)", "final_home": "\(side.finalHome)",
        ]
    }

    static func table(_ relative: String) throws -> [[String: String]] {
        try TestData.table(relative)
    }

    static func summaries(_ year: String) async throws -> [SideSummary] {
        let files = try EventFiles.expand([TestData.path("retrosheet/\(year)")])
        let (sides, problems) = await SeasonBids.summaries(of: files)
        #expect(problems.isEmpty)
        return sides
    }

    @Test(arguments: ["2020"])
    func everySideAgreesWithTheGroundTruth(year: String) async throws {
        try await Self.checkSides(year: year)
    }

    static func checkSides(year: String) async throws {
        let expected = try Self.table("groundtruth/sides_\(year).csv")
        let ours = Dictionary(
            try await Self.summaries(year).map { ("\($0.gameID)/\($0.pitchingTeam)", Self.row($0)) },
            uniquingKeysWith: { first, _ in first })
        #expect(ours.count == expected.count)
        var differences: [String] = []
        for row in expected {
            let key = "\(row["game_id"]!)/\(row["defense"]!)"
            guard let mine = ours[key] else {
                differences.append("\(key): missing")
                continue
            }
            for (column, value) in row.sorted(by: { $0.key < $1.key }) where mine[column] != value {
                differences.append("\(key) \(column): expected \(value), ours \(mine[column] ?? "nil")")
            }
        }
        #expect(differences.isEmpty, "\(differences.count) differences: \(differences.prefix(12))")
    }

    @Test func officialNoHittersOfTheSeasonAreExactlyTheList() async throws {
        try await Self.checkOfficial(seasons: ["2020"], count: 2)
    }

    /// The game ids of `seasons` (Retrosheet's: the year is characters 4-7).
    static func inSeasons(_ seasons: [String]) -> ([String: String]) -> Bool {
        { row in seasons.contains(String(row["game_id"]!.dropFirst(3).prefix(4))) }
    }

    static func checkOfficial(seasons: [String], count: Int) async throws {
        var official: [SideSummary] = []
        var unofficial: [SideSummary] = []
        for year in seasons {
            let sides = try await Self.summaries(year)
            official += SeasonBids.official(sides)
            unofficial += SeasonBids.unofficial(sides)
        }
        let expected = try Self.table("groundtruth/nohitters_official.csv").filter(Self.inSeasons(seasons))
        func line(_ gameID: String, _ pitchers: String, _ combined: Bool, _ perfect: Bool) -> String {
            "\(gameID) \(pitchers) combined=\(combined) perfect=\(perfect)"
        }
        let ours = Set(official.map { line($0.gameID, $0.pitchers.joined(separator: "+"), $0.combined, $0.perfect) })
        let theirs = Set(
            expected.map { line($0["game_id"]!, $0["pitchers"]!, $0["combined"] == "1", $0["perfect"] == "1") })
        #expect(ours == theirs)
        #expect(official.count == count)
        let expectedUnofficial = try Self.table("groundtruth/nohit_unofficial.csv")
        #expect(expectedUnofficial.isEmpty)
        #expect(unofficial.isEmpty)
    }

    @Test func nearNoHittersAreTheTopOfTheHallOfFame() async throws {
        try await Self.checkHallOfFame(seasons: ["2020"], official: 2)
    }

    static func checkHallOfFame(seasons: [String], official: Int) async throws {
        var sides: [SideSummary] = []
        for year in seasons { sides += try await Self.summaries(year) }
        let ranked = SeasonBids.hallOfFame(sides)
        // The top: official no-hitters, then every side whose first hit came with 24 or more outs.
        let top = ranked.prefix { $0.outsBeforeFirstHit >= 24 }
        let topOfficial = top.prefix(official).allSatisfy { $0.official }
        #expect(topOfficial)
        let near = top.filter { !$0.official }
        let expected = try Self.table("groundtruth/near_nohitters.csv").filter(Self.inSeasons(seasons))
        let expectedKeys = Set(
            expected.map {
                "\($0["game_id"]!) \($0["defense"]!) \($0["outs_before_first_hit"]!) \($0["first_hit_event"]!)"
            })
        #expect(near.count == expected.count)
        #expect(
            Set(near.map { "\($0.gameID) \($0.pitchingTeam) \($0.outsBeforeFirstHit) \($0.firstHit?.event ?? "")" })
                == expectedKeys)
        // Ranked by outs before the first hit, then fewer batters reached, then date.
        for (first, second) in zip(ranked, ranked.dropFirst()) {
            #expect(
                first.outsBeforeFirstHit > second.outsBeforeFirstHit
                    || (first.outsBeforeFirstHit == second.outsBeforeFirstHit
                        && (first.battersReachedWhileHitless < second.battersReachedWhileHitless
                            || (first.battersReachedWhileHitless == second.battersReachedWhileHitless
                                && first.date <= second.date)))
            )
        }
    }
}

extension NoHitGroundTruthTests {
    /// The four shared seasons: 2012, 2015, 2019 and 2020.
    @Suite(.extended, .heavy) struct Extended {
        @Test(arguments: ["2012", "2015", "2019"])
        func everySideAgreesWithTheGroundTruth(year: String) async throws {
            try await NoHitGroundTruthTests.checkSides(year: year)
        }

        @Test func officialNoHittersOfFourSeasonsAreExactlyTheList() async throws {
            try await NoHitGroundTruthTests.checkOfficial(seasons: ["2012", "2015", "2019", "2020"], count: 20)
        }

        @Test func nearNoHittersAreTheTopOfTheHallOfFame() async throws {
            try await NoHitGroundTruthTests.checkHallOfFame(seasons: ["2012", "2015", "2019", "2020"], official: 20)
        }
    }
}
