import Foundation
import Retrosheet
import TestSupport
import Testing

/// Every play of two complete seasons, replayed through the engine, against the output of
/// Chadwick's `cwevent` (the reference reader of the format) on the same files.
@Suite(.heavy) struct CWEventOracleTests {
    struct Season: Sendable, CustomTestStringConvertible {
        var year: String
        var oracle: String
        var rows: Int
        var testDescription: String { year }
    }

    @Test(arguments: [Season(year: "2020", oracle: "oracle/cwevent-2020.csv", rows: 68_599)])
    func everyPlayAgreesWithCwevent(season: Season) async throws {
        try await Self.check(season)
    }

    static func check(_ season: Season) async throws {
        let files = try EventFiles.expand([TestData.path("retrosheet/\(season.year)")])
        #expect(files.count == 30)
        let exports = await EventFiles.map(files) { EventFileExport.export($0) }
        let problems = exports.flatMap(\.problems)
        #expect(problems.isEmpty, "games that could not be read: \(problems.prefix(5))")

        var ours: [Substring] = []
        for export in exports {
            ours += String(decoding: export.rows, as: UTF8.self).split(separator: "\n")
        }
        let oracle = try TestData.lines(season.oracle)
        #expect(oracle.first.map(String.init) == CWEventCSV.header.trimmingCharacters(in: .newlines))
        let expected = Array(oracle.dropFirst())
        #expect(expected.count == season.rows)
        #expect(ours.count == season.rows)

        // Compare row by row, keyed by game and event so one missing row does not hide the rest.
        func key(_ row: Substring) -> Substring {
            let fields = row.split(separator: ",", omittingEmptySubsequences: false)
            return fields.first.map { $0 + ":" + (fields.last ?? "") } ?? row
        }
        let ourRows = Dictionary(ours.map { (key($0), $0) }, uniquingKeysWith: { first, _ in first })
        var mismatches: [String] = []
        for row in expected {
            guard let mine = ourRows[key(row)] else {
                mismatches.append("missing row: \(row)")
                continue
            }
            if mine != row {
                mismatches.append(Self.describeDifference(expected: row, actual: mine))
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) rows differ from cwevent; first: \(mismatches.prefix(10))")
    }

    /// Names the columns that differ.
    static func describeDifference(expected: Substring, actual: Substring) -> String {
        let want = expected.split(separator: ",", omittingEmptySubsequences: false)
        let got = actual.split(separator: ",", omittingEmptySubsequences: false)
        var columns: [String] = []
        for (index, name) in CWEventCSV.columns.enumerated() where index < want.count && index < got.count {
            if want[index] != got[index] { columns.append("\(name): cwevent \(want[index]), ours \(got[index])") }
        }
        return "\(want.first ?? "") event \(want.last ?? ""): " + columns.joined(separator: "; ")
    }
}

extension CWEventOracleTests {
    @Suite(.extended, .heavy) struct Extended {
        @Test(arguments: [Season(year: "2012", oracle: "oracle/cwevent-2012.csv.gz", rows: 190_774)])
        func everyPlayAgreesWithCwevent(season: Season) async throws {
            try await CWEventOracleTests.check(season)
        }
    }
}
