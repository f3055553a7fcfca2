import Foundation
import Retrosheet
import TestSupport
import Testing

/// Damage read by rule, not by instance: every record type with a field too many or too few,
/// every `info` key empty, adjustments that cannot be read, and every note cwevent reads on a
/// runner advance after every kind of play (`Tests/Fixtures/damaged/make.py` generates the 743
/// variants from games of 2020 and ran Chadwick's `cwevent`, built from its source, over them).
@Suite struct DamagedRecordKindsTests {
    @Test func everyVariantIsReadAsCweventReadsIt() throws {
        let labels = try TestData.lines("damaged/variants.txt")
        let games = EventFileReader(file: "variants.EVA", bytes: try TestData.bytes("damaged/variants.EVA")).games()
        #expect(games.count == labels.count)
        var rows: [Substring] = []
        var warnings = ReadingWarnings()
        for (label, result) in zip(labels, games) {
            do {
                let game = try result.get()
                warnings.add(game.warnings)
                rows += String(decoding: try CWEventCSV.rows(of: game), as: UTF8.self).split(separator: "\n")
            } catch {
                Issue.record("variant '\(label)' was not read: \(error)")
            }
        }
        let oracle = Array(try TestData.lines("damaged/cwevent.csv").dropFirst())
        #expect(rows.count == oracle.count)
        let differing = zip(oracle, rows).filter { $0 != $1 }.prefix(5).map {
            CWEventOracleTests.describeDifference(expected: $0, actual: $1)
        }
        #expect(differing.isEmpty, "\(differing)")
        // Each damaged record is said; a note or a flag of the grammar is not damage.
        #expect(warnings.total == 63, "\(warnings.byRecord)")
        #expect(warnings.byRecord["info"] == 33)
        #expect(warnings.summary?.hasPrefix("63 damaged records read as cwevent reads them: 33 info, ") == true)
    }

    /// The first two games of 2020CHA.EVA, read with `change` made to the first.
    static func read(_ change: (inout [String]) -> Void) throws -> (
        pristine: [UInt8], changed: Result<GameRecord, RetrosheetError>
    ) {
        let lines = try TestData.lines("retrosheet/2020/2020CHA.EVA").map(String.init)
        let ids = lines.indices.filter { lines[$0].hasPrefix("id,") }
        let first = Array(lines[ids[0]..<ids[1]])
        func games(_ lines: [String]) -> [Result<GameRecord, RetrosheetError>] {
            EventFileReader(file: "2020CHA.EVA", bytes: Array((lines.joined(separator: "\n") + "\n").utf8)).games()
        }
        var changed = first
        change(&changed)
        return (try CWEventCSV.rows(of: try games(first)[0].get()), games(changed)[0])
    }

    /// A note cwevent does not know on a runner advance: cwevent stops reading the event there
    /// (the rest of it, and its defaults, are lost); here the advance is read without the note,
    /// said in a warning, and the game reads as if the note were not there.
    @Test(arguments: ["OBS", "XYZ", "BOOT", "U"])
    func anUnknownNoteOnAnAdvanceIsReadWithoutIt(note: String) throws {
        var line = 0
        let (pristine, changed) = try Self.read { lines in
            line = lines.firstIndex { $0.hasPrefix("play,") && $0.contains(".1-2") }!
            lines[line] = lines[line].replacingOccurrences(of: ".1-2", with: ".1-2(\(note))")
        }
        let game = try changed.get()
        // The same rows, but for the event's text, which is the file's.
        let rows = String(decoding: try CWEventCSV.rows(of: game), as: UTF8.self)
        #expect(rows.replacingOccurrences(of: "(\(note))", with: "") == String(decoding: pristine, as: UTF8.self))
        #expect(rows.contains(".1-2(\(note))"))
        let warning = try #require(game.warnings.first)
        #expect(game.warnings.count == 1)
        #expect(warning.line == line + 1)
        #expect(warning.reason.hasPrefix("'(\(note))' is not a note a runner advance takes"), "\(warning.reason)")
    }

    /// A record one field short is skipped, as cwevent skips it: the game equals the one read
    /// without that line, and the warning says so.
    @Test(arguments: ["play,", "sub,", "radj,", "version,"])
    func aRecordAFieldShortIsSkipped(record: String) throws {
        let lines = try TestData.lines("retrosheet/2020/2020CHA.EVA").map(String.init)
        let index = try #require(lines.firstIndex { $0.hasPrefix(record) && !$0.hasSuffix(",NP") })
        let ids = lines.indices.filter { lines[$0].hasPrefix("id,") }
        let start = ids.last { $0 < index }!
        let end = ids.first { $0 > index } ?? lines.count
        var game = Array(lines[start..<end])
        let at = index - start
        var short = game
        short[at] = String(game[at][..<game[at].lastIndex(of: ",")!])
        game.remove(at: at)
        func read(_ lines: [String]) throws -> GameRecord {
            try EventFileReader(file: "2020CHA.EVA", bytes: Array((lines.joined(separator: "\n") + "\n").utf8))
                .games()[0].get()
        }
        let skipped = try read(short)
        let without = try read(game)
        let rows = Result { () throws(RetrosheetError) in try CWEventCSV.rows(of: skipped) }
        let rowsWithout = Result { () throws(RetrosheetError) in try CWEventCSV.rows(of: without) }
        #expect(rows.map { $0 } == rowsWithout.map { $0 })
        let warning = try #require(skipped.warnings.first)
        #expect(warning.reason.contains("the record is skipped, as cwevent skips it"), "\(warning.reason)")
        #expect(warning.text == short[at])
    }
}
