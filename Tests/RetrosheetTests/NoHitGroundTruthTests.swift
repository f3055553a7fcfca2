import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// Bids of every side of four complete seasons against the ground-truth tables, which were
/// derived from the same event files and checked against Retrosheet's list of no-hitters.
@Suite struct NoHitGroundTruthTests {
    static let seasons = ["2012", "2015", "2019", "2020"]

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
        let lines = try SharedData.lines(relative)
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return lines.dropFirst().map { line in
            let values = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return Dictionary(uniqueKeysWithValues: zip(header, values))
        }
    }

    static func summaries(_ year: String) async throws -> [SideSummary] {
        let files = try EventFiles.expand([SharedData.path("retrosheet/\(year)")])
        let (sides, problems) = await SeasonBids.summaries(of: files)
        #expect(problems.isEmpty)
        return sides
    }

    @Test(arguments: seasons)
    func everySideAgreesWithTheGroundTruth(year: String) async throws {
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

    @Test func officialNoHittersOfFourSeasonsAreExactlyTheList() async throws {
        var official: [SideSummary] = []
        var unofficial: [SideSummary] = []
        for year in Self.seasons {
            let sides = try await Self.summaries(year)
            official += SeasonBids.official(sides)
            unofficial += SeasonBids.unofficial(sides)
        }
        let expected = try Self.table("groundtruth/nohitters_official.csv")
        func line(_ gameID: String, _ pitchers: String, _ combined: Bool, _ perfect: Bool) -> String {
            "\(gameID) \(pitchers) combined=\(combined) perfect=\(perfect)"
        }
        let ours = Set(official.map { line($0.gameID, $0.pitchers.joined(separator: "+"), $0.combined, $0.perfect) })
        let theirs = Set(
            expected.map { line($0["game_id"]!, $0["pitchers"]!, $0["combined"] == "1", $0["perfect"] == "1") })
        #expect(ours == theirs)
        #expect(official.count == 20)
        let expectedUnofficial = try Self.table("groundtruth/nohit_unofficial.csv")
        #expect(expectedUnofficial.isEmpty)
        #expect(unofficial.isEmpty)
    }

    @Test func nearNoHittersAreTheTopOfTheHallOfFame() async throws {
        var sides: [SideSummary] = []
        for year in Self.seasons { sides += try await Self.summaries(year) }
        let ranked = SeasonBids.hallOfFame(sides)
        // The top: official no-hitters, then every side whose first hit came with 24 or more outs.
        let top = ranked.prefix { $0.outsBeforeFirstHit >= 24 }
        let topTwentyOfficial = top.prefix(20).allSatisfy { $0.official }
        #expect(topTwentyOfficial)
        let near = top.filter { !$0.official }
        let expected = try Self.table("groundtruth/near_nohitters.csv")
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
