import Foundation
import Retrosheet
import TestSupport
import Testing

/// Retrosheet's seasons as it publishes them (`../shared/data/retrosheet/zips`, 1950–2020): read
/// straight from the zip files, every game of every season, the damaged fields read as `cwevent`
/// reads them and said with file and line.
@Suite(.extended, .heavy) struct SeasonArchiveTests {
    static let zips = TestData.path("retrosheet/zips")

    /// A season from its zip reads exactly as from its folder: the same files, the same rows.
    @Test func aZippedSeasonReadsAsItsFolder() throws {
        let zipped = try EventFiles.expand(["\(Self.zips)/2020eve.zip"])
        let folder = try EventFiles.expand([TestData.path("retrosheet/2020")])
        #expect(zipped.count == 30)
        #expect(zipped.map { ($0 as NSString).lastPathComponent } == folder.map { ($0 as NSString).lastPathComponent })
        for (archived, plain) in zip(zipped, folder) {
            let fromZip = EventFileExport.export(archived)
            let fromFolder = EventFileExport.export(plain)
            #expect(fromZip.problems.isEmpty && fromZip.games == fromFolder.games && fromZip.games > 0)
            #expect(fromZip.rows == fromFolder.rows, "\(archived)")
        }
        // The TEAM file beside the event files, inside the zip.
        #expect(try FileBytes.read("\(Self.zips)/2020eve.zip/TEAM2020").count > 500)
        // A season of a directory of zips, by its year.
        #expect(EventFiles.season(1956, in: Self.zips) == "\(Self.zips)/1956eve.zip")
    }

    /// A day's season held in two places (the bundled folder and Retrosheet's zip): each game
    /// is played once.
    @Test func aSeasonInTwoPlacesIsPlayedOnce() throws {
        let folder = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let both = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet"), Self.zips])
        #expect(folder.count == 16)
        #expect(both.map(\.record.id) == folder.map(\.record.id))
    }

    /// Each kind of damaged field the seasons hold, from the real record: the game is read, with
    /// a warning naming the file, line and what was made of it.
    @Test(arguments: [
        ("1988", "1988TEX.EVA", "play,9,1,kemps001,22.,BFBFS,K", "count '22.' is not two digits or ??; read as 2-2"),
        ("1973", "1973CHN.EVN", "play,9,1,kessd101,100,,NP", "count '100' is not two digits or ??; read as 1-0"),
        (
            "1969", "1969PHI.EVN", "play,4,1,ryanm101,??00,,K",
            "count '??00' is not two digits or ??; read as an unknown count"
        ),
        (
            "1988", "1988TOR.EVA", "play,8,1,grubk001,.00,,NP",
            "count '.00' is not two digits or ??; read as an unknown count"
        ),
        (
            "2018", "2018MIA.EVN", "play,8,1,sierm002,00,.X,16(1)/FO/BG/DP.BX1(63/RINT)",
            "'/RINT' is not a modifier a fielding credit takes; the credit is read without it"
        ),
        (
            "1950", "1950SLN.EVN", #"info,inputter,""David W. Smith, Wayne Townsend""#,
            "an info record is read from 2 fields, found 3; the rest is ignored, as cwevent ignores them"
        ),
    ])
    func aDamagedFieldIsReadAsCWEventReadsItAndSaid(season: String, file: String, record: String, warning: String)
        throws
    {
        let path = "\(Self.zips)/\(season)eve.zip/\(file)"
        let export = EventFileExport.export(path)
        #expect(export.problems.isEmpty, "\(export.problems)")
        let said = try #require(export.warnings.first { $0.text == record }, "\(export.warnings)")
        #expect(said.file == path && said.line > 0)
        #expect(said.reason.contains(warning), "\(said.reason)")
        #expect(said.description.hasPrefix("\(path):\(said.line): "))
    }

    /// Every game of the seventy-one seasons is read (none skipped), the warnings are the damaged
    /// records above and their like, and the plays equal an independent count of the files' play
    /// records (each `play,` line that is not `NP`), file by file.
    /// Two minutes of both cores, which the timing tests beside it cannot spare: .ci/run runs it
    /// apart, at the lowest priority beside the suite (NOHIT_ALL_SEASONS=1).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["NOHIT_ALL_SEASONS"] != nil, "run apart by .ci/run"))
    func everySeasonIsReadWhole() async throws {
        let files = try EventFiles.expand([Self.zips])
        #expect(files.count > 71 * 16)
        let exports = await EventFiles.map(files) {
            file -> (plays: Int, counted: Int, problems: Int, warnings: Int) in
            let export = EventFileExport.export(file)
            let text = (try? FileBytes.read(file)) ?? []
            var counted = 0
            for line in text.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("play,".utf8)) {
                var end = line.endIndex
                while end > line.startIndex, line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let body = line[..<end]
                if !(body.count >= 3 && body.suffix(3).elementsEqual(",NP".utf8)) { counted += 1 }
            }
            return (export.plays, counted, export.problems.count, export.warnings.count)
        }
        #expect(exports.reduce(0) { $0 + $1.problems } == 0)
        #expect(exports.reduce(0) { $0 + $1.warnings } == 16)
        for (file, export) in zip(files, exports) where export.plays != export.counted {
            Issue.record("\(file): \(export.plays) plays read, \(export.counted) play records")
        }
        let plays = exports.reduce(0) { $0 + $1.plays }
        print("seasons: \(files.count) event files, \(plays) plays, 0 games skipped")
        #expect(plays > 10_000_000)
    }
}
