import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// The odds of a bid finishing: the engine's counts equal counts made without it.
struct BidOddsTests {
    @Test func theSentenceSaysTheShareAndWhatItRestsOn() {
        let odds = BidOdds(
            seasons: [1950, 2020], sides: 1000,
            rows: [
                .init(outs: 21, bids: 412, noHitters: 103), .init(outs: 24, bids: 3, noHitters: 2),
                .init(outs: 25, bids: 0, noHitters: 0), .init(outs: 26, bids: 5, noHitters: 0),
                .init(outs: 27, bids: 2, noHitters: 2), .init(outs: 12, bids: 9191, noHitters: 182),
            ], eras: [])
        #expect(odds.sentence(outs: 12) == "1 in 51 such bids since 1950 ended as no-hitters (9,191 bids)")
        #expect(odds.sentence(outs: 21) == "1 in 4 such bids since 1950 ended as no-hitters (412 bids)")
        #expect(odds.sentence(outs: 24) == "67% of the 3 bids like it since 1950 ended as no-hitters")
        #expect(odds.sentence(outs: 25) == nil)
        #expect(odds.sentence(outs: 26) == "none of the 5 bids like it since 1950 ended as a no-hitter")
        #expect(odds.sentence(outs: 30) == "every one of the 2 bids like it since 1950 ended as a no-hitter")
        #expect(odds.row(outs: 21)?.share == 0.25)
    }

    /// By pitches: the range a count falls in, and the figure of the last complete inning reached.
    @Test func thePitchFigureTakesTheRangeAndTheLastCompleteInning() {
        #expect(BidOdds.pitchRange(12) == (0, 59))
        #expect(BidOdds.pitchRange(60) == (60, 74))
        #expect(BidOdds.pitchRange(104) == (90, 104))
        #expect(BidOdds.pitchRange(131) == (120, nil))
        let odds = BidOdds(
            seasons: [1950, 2020], sides: 1000, rows: [], eras: [],
            pitches: .init(
                seasons: [1988, 2020], sides: 500,
                rows: [
                    .init(outs: 21, from: 90, to: 104, bids: 212, noHitters: 53),
                    .init(outs: 24, from: 120, to: nil, bids: 10, noHitters: 6),
                ]))
        let seventh = odds.pitchChance(outs: 22, pitches: 95)
        #expect(seventh?.outs == 21 && seventh?.bids == 212 && seventh?.since == 1988)
        #expect(
            seventh?.sentence
                == "Through 7 on 90 to 104 pitches: 1 in 4 such bids since 1988 ended as no-hitters (212 bids)")
        #expect(
            odds.pitchChance(outs: 26, pitches: 125)?.sentence
                == "Through 8 on 120 or more pitches: 60% of the 10 bids like it since 1988 ended as no-hitters")
        #expect(odds.pitchChance(outs: 21, pitches: 80) == nil)
        #expect(odds.pitchChance(outs: 11, pitches: 95) == nil)
    }
}

extension BidOddsTests {
    @Suite(.extended, .heavy) struct Extended {
        static let outs = [12, 18, 21, 24, 27]

        static func engine(_ year: Int) async throws -> BidOdds {
            let files = try EventFiles.expand([TestData.path("retrosheet/\(year)")])
            let (sides, problems) = await SeasonBids.summaries(of: files)
            #expect(problems.isEmpty)
            return BidOdds.table(sides)
        }

        /// Each k's bids and no-hitters from a list of (outs before the first hit, official).
        static func counts(_ sides: [(outs: Int, official: Bool)]) -> [[Int]] {
            outs.map { k in
                let bids = sides.filter { $0.outs >= k }
                return [k, bids.count, bids.filter(\.official).count]
            }
        }

        static func counts(_ odds: BidOdds) -> [[Int]] {
            outs.map { k in
                let row = odds.row(outs: k)
                return [k, row?.bids ?? 0, row?.noHitters ?? 0]
            }
        }

        /// The ground-truth sides tables (made from the event files, checked against Retrosheet's
        /// list of no-hitters).
        @Test(arguments: [2012, 2015, 2019, 2020])
        func equalsTheGroundTruthSides(year: Int) async throws {
            let lines = try TestData.lines("groundtruth/sides_\(year).csv")
            let header = lines[0].split(separator: ",").map(String.init)
            let outs = try #require(header.firstIndex(of: "outs_before_first_hit"))
            let official = try #require(header.firstIndex(of: "official_no_hitter"))
            let sides = lines.dropFirst().map { line in
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                return (outs: Int(fields[outs]) ?? -1, official: fields[official] == "1")
            }
            let odds = try await Self.engine(year)
            #expect(odds.sides == sides.count)
            #expect(Self.counts(odds) == Self.counts(sides))
            if year == 2012 { print("odds 2012 (k, bids, no-hitters): \(Self.counts(odds))") }
        }

        /// By pitches, over a season scored with every pitch (2020): each k's ranges add up to the
        /// bids and no-hitters of k; a season scored without pitches (1950) has no such table.
        @Test func thePitchTableAddsUpToTheBids() async throws {
            let odds = try await Self.engine(2020)
            let pitches = try #require(odds.pitches)
            #expect(pitches.sides == odds.sides && pitches.seasons == [2020])
            for k in BidOdds.pitchOuts {
                let rows = pitches.rows.filter { $0.outs == k }
                #expect(rows.reduce(0) { $0 + $1.bids } == odds.row(outs: k)?.bids, "\(k)")
                #expect(rows.reduce(0) { $0 + $1.noHitters } == odds.row(outs: k)?.noHitters, "\(k)")
            }
            let old = try EventFiles.expand([TestData.path("retrosheet/zips/1950eve.zip")])
            #expect(BidOdds.table(await SeasonBids.summaries(of: old).sides).pitches == nil)
        }

        /// From `cwevent`'s rows: each batting side's outs before its first hit (the outs of the
        /// plays before it) and whether it had none all game with 27 or more outs.
        @Test(arguments: [(2012, "oracle/cwevent-2012.csv.gz"), (2020, "oracle/cwevent-2020.csv")])
        func equalsACountFromCWEventsRows(year: Int, oracle: String) async throws {
            var sides: [String: (outs: Int, hit: Bool)] = [:]
            var order: [String] = []
            for line in try TestData.lines(oracle).dropFirst() {
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                let key = "\(fields[0])-\(fields[3])"
                if sides[key] == nil {
                    sides[key] = (0, false)
                    order.append(key)
                }
                guard sides[key]?.hit == false else { continue }
                if (Int(fields[19]) ?? 0) > 0 {
                    sides[key]?.hit = true
                } else {
                    sides[key]?.outs += Int(fields[20]) ?? 0
                }
            }
            let counted = order.compactMap { sides[$0] }.map { (outs: $0.outs, official: !$0.hit && $0.outs >= 27) }
            let odds = try await Self.engine(year)
            #expect(odds.sides == counted.count)
            #expect(Self.counts(odds) == Self.counts(counted))
        }

        static func shipped() throws -> BidOdds {
            try JSONDecoder().decode(
                BidOdds.self,
                from: Data(contentsOf: TestData.packageRoot.appendingPathComponent("Data/odds/bid-odds.json")))
        }

        /// Over all seventy-one seasons (1950–2020, Retrosheet's zips): the shipped table (Data/odds,
        /// the engine's, `theShippedTableIsTheEngines`) equals that of a second, deliberately simple
        /// reader of hits and half-innings in Python (Tests/Independent/simple-odds.py) that shares
        /// no code with the engine. Run by .ci/run (NOHIT_ALL_SEASONS=1): 16 s of one core.
        @Test(.enabled(if: ProcessInfo.processInfo.environment["NOHIT_ALL_SEASONS"] != nil, "run apart by .ci/run"))
        func theShippedTableEqualsASimpleReader() async throws {
            let zips = TestData.path("retrosheet/zips")
            let script = TestData.packageRoot.appendingPathComponent("Tests/Independent/simple-odds.py").path
            let output = try await Executable.onThread {
                try Executable.run("/usr/bin/env", ["python3", script, zips])
            }
            #expect(output.status == 0, "\(output.standardError)")
            struct Simple: Decodable {
                var seasons: Int
                var sides: Int
                var rows: [[Int]]
            }
            let counted = try JSONDecoder().decode(Simple.self, from: Data(output.standardOutput.utf8))
            let odds = try Self.shipped()
            #expect(odds.seasons.count == 71 && counted.seasons == 71)
            #expect(odds.sides == counted.sides)
            #expect(Self.counts(odds) == counted.rows)
            print("odds 1950-2020 (k, bids, no-hitters): \(Self.counts(odds)), \(odds.sides) sides")
        }

        /// The shipped table is what the engine makes of the seventy-one seasons today (pitches
        /// included). Three minutes of both cores in a debug build: run when the engine or the
        /// table changes (NOHIT_ALL_SEASONS=engine swift test --filter theShippedTableIsTheEngines);
        /// CI's 30 minutes leave it out.
        @Test(
            .enabled(
                if: ProcessInfo.processInfo.environment["NOHIT_ALL_SEASONS"] == "engine", "NOHIT_ALL_SEASONS=engine"))
        func theShippedTableIsTheEngines() async throws {
            let files = try EventFiles.expand([TestData.path("retrosheet/zips")])
            let (sides, problems) = await SeasonBids.summaries(of: files)
            #expect(problems.isEmpty)
            #expect(try Self.shipped() == BidOdds.table(sides))
        }
    }
}

/// What a completed no-hitter means, from the seasons read: the club's previous one and its
/// number in the season, from nothing later than the game.
@Suite(.extended) struct NoHitterHistoryTests {
    static func officials(_ years: [Int]) async throws -> [Int: [SideSummary]] {
        var seasons: [Int: [SideSummary]] = [:]
        for year in years {
            let files = try EventFiles.expand([TestData.path("retrosheet/\(year)")])
            seasons[year] = SeasonBids.official(await SeasonBids.summaries(of: files).sides)
        }
        return seasons
    }

    @Test func giolitosNamesHumbersPerfectGameAndTheSeasonsFirst() async throws {
        // 2012 to 2020 from Retrosheet's zips: every season in between is known.
        var seasons: [Int: [SideSummary]] = [:]
        for year in 2012...2020 {
            let files = try EventFiles.expand([TestData.path("retrosheet/zips/\(year)eve.zip")])
            seasons[year] = SeasonBids.official(await SeasonBids.summaries(of: files).sides)
        }
        #expect(
            NoHitterHistory.meaning(
                franchise: "CHA", nickname: "White Sox", date: "2020-08-25", gameID: "CHA202008250", seasons: seasons)
                == "The White Sox's first no-hitter since Philip Humber's perfect game on April 21, 2012; the 1st of 2020."
        )
        // Alec Mills's, the season's second: the Cubs' previous was Jake Arrieta's of 2016.
        #expect(
            NoHitterHistory.meaning(
                franchise: "CHN", nickname: "Cubs", date: "2020-09-13", gameID: "MIL202009130", seasons: seasons)
                == "The Cubs' first no-hitter since Jake Arrieta's no-hitter on April 21, 2016; the 2nd of 2020.")
    }

    @Test func aGapInTheSeasonsIsSaid() async throws {
        let seasons = try await Self.officials([2012, 2015, 2019, 2020])
        #expect(
            NoHitterHistory.meaning(
                franchise: "CHN", nickname: "Cubs", date: "2020-09-13", gameID: "MIL202009130", seasons: seasons)
                == "The Cubs' previous no-hitter in the seasons known was Jake Arrieta's no-hitter on August 30, 2015; the 2nd of 2020."
        )
        // A season alone, and its first no-hitter: nothing later in the season is counted.
        let alone = try await Self.officials([2020])
        #expect(
            NoHitterHistory.meaning(
                franchise: "CHA", nickname: "White Sox", date: "2020-08-25", gameID: "CHA202008250", seasons: alone)
                == "The White Sox's first no-hitter in the seasons known (in 2020); the 1st of 2020.")
    }
}
