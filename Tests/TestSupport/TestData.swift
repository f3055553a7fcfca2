import Foundation
import Testing

/// Real data for the tests, wherever it is: what the repository ships (a bare clone has it), else
/// the shared data beside the checkout (`../shared/data`, or `$NOHIT_SHARED_DATA`).
///
/// Paths are written as `shared/data` lays them out (`retrosheet/2020/2020CHA.EVA`,
/// `oracle/cwevent-2020.csv`, `vectors/...`). The repository ships:
/// - `retrosheet` and `retrosheet/2020/...` in `Data/retrosheet` (the product's own 2020 season);
/// - everything else it ships under `Tests/Fixtures/` with the same layout, large files
///   gzip-compressed (`oracle/cwevent-2020.csv.gz`). Retrosheet's notice is in
///   `Tests/Fixtures/NOTICE.txt`.
///
/// Tests that need anything else (the 2012, 2015 and 2019 seasons, the 2012 oracle, MLB's recorded
/// Stats API responses, which may not be redistributed) are extended suites: they carry
/// ``Testing/Trait/extended`` and are skipped on a bare clone.
package enum TestData {
    /// The package root (`Tests/TestSupport/TestData.swift` → the root).
    package static let packageRoot: URL = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// The shared data folder: `$NOHIT_SHARED_DATA`, else `shared/data` beside the checkout.
    package static let sharedRoot: URL = {
        if let override = ProcessInfo.processInfo.environment["NOHIT_SHARED_DATA"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
    }()

    /// Whether the shared data is there (its Retrosheet seasons, at least): extended suites run.
    package static let isSharedAvailable: Bool = {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(
            atPath: sharedRoot.appendingPathComponent("retrosheet/2012").path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }()

    /// Where the repository ships `relative`, if it does.
    package static func shipped(_ relative: String) -> String? {
        let manager = FileManager.default
        if relative == "retrosheet" || relative.hasPrefix("retrosheet/2020") {
            let path = packageRoot.appendingPathComponent("Data").appendingPathComponent(relative).path
            return manager.fileExists(atPath: path) ? path : nil
        }
        let fixture = packageRoot.appendingPathComponent("Tests/Fixtures").appendingPathComponent(relative).path
        if manager.fileExists(atPath: fixture) { return fixture }
        if manager.fileExists(atPath: fixture + ".gz") { return fixture + ".gz" }
        return nil
    }

    /// The path of `relative`: the repository's copy when it ships one, else the shared one.
    package static func path(_ relative: String) -> String {
        shipped(relative) ?? sharedRoot.appendingPathComponent(relative).path
    }

    /// The bytes of `relative`, decompressing `.gz` with `gzip -dc`.
    package static func bytes(_ relative: String) throws -> [UInt8] {
        let path = path(relative)
        guard path.hasSuffix(".gz") else {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        return try output(of: ["gzip", "-dc", path], reading: path)
    }

    /// The bytes of `entry` inside the zip file `relative` (Retrosheet's season zips), with
    /// `unzip -p`.
    package static func bytes(_ relative: String, entry: String) throws -> [UInt8] {
        let path = path(relative)
        return try output(of: ["unzip", "-p", path, entry], reading: "\(path): \(entry)")
    }

    /// What `arguments` (a command found on the path) writes to standard output; a failure names
    /// `reading`.
    static func output(of arguments: [String], reading: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: reading])
        }
        return Array(data)
    }

    /// A CSV table of `relative` (the ground-truth tables: no quoted fields), a row per line keyed
    /// by the header's column names.
    package static func table(_ relative: String) throws -> [[String: String]] {
        let lines = try Self.lines(relative)
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return lines.dropFirst().map { line in
            let values = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return Dictionary(uniqueKeysWithValues: zip(header, values))
        }
    }

    /// The lines of `relative` (decompressed if needed), without line terminators.
    package static func lines(_ relative: String) throws -> [Substring] {
        let text = String(decoding: try bytes(relative), as: UTF8.self)
        return text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)
    }
}

/// The extended suites: those that need the shared data beside the checkout. Each carries
/// `.extended`; this list names them for the one line a bare clone's test run prints about what
/// it skipped (`ExtendedSuitesTests` checks the list against the sources).
package enum ExtendedSuites {
    package static let names = [
        "AlertsTests.MessageTextTests.Extended",
        "BaseballTests.TeamDirectoryTests.Extended",
        "AlertsTests.MomentTests.Extended",
        "DealsTests.DealEdgeCaseTests.Extended",
        "NoHitCLITests.BoxCommandTests.Extended",
        "NoHitCLITests.DealsCommandTests.Extended",
        "NoHitCLITests.NoHitterCommandsTests.Extended",
        "RetrosheetTests.BidOddsTests.Extended",
        "RetrosheetTests.BidPropertyTests.Extended",
        "RetrosheetTests.CWEventOracleTests.Extended",
        "RetrosheetTests.NoHitGroundTruthTests.Extended",
        "RetrosheetTests.NoHitterHistoryTests",
        "RetrosheetTests.PlayTextTests.Extended",
        "RetrosheetTests.ScoringChangeTests.Extended",
        "RetrosheetTests.SeasonArchiveTests",
        "RetrosheetTests.StandingsTests.Extended",
        "RetrosheetTests.WildCardRaceTests.Extended",
        "RetrosheetTests.WinExpectancyTests.Extended",
        "RetrosheetTests.TeamFileTests.Extended",
        "RetrosheetTests.UnofficialNoHitterTests.Extended",
        "ServerTests.ScoreboardFeedTests",
        "ServerTests.TeamVocabularyTests.Extended",
        "StatsAPITests.ABSChallengesTests.Extended",
        "StatsAPITests.GumboGameTests",
        "StatsAPITests.GumboProblemTests",
        "StatsAPITests.JSONDiffTests.Extended",
        "StatsAPITests.PitcherLineFeedTests",
        "StatsAPITests.RecordedResponseTests",
    ]

    /// The line a test run prints when the shared data is absent.
    package static var skipLine: String {
        "Extended suites skipped (no shared data at \(TestData.sharedRoot.path); put shared/ beside the checkout "
            + "or set NOHIT_SHARED_DATA): \(names.joined(separator: ", "))"
    }
}

extension Trait where Self == ConditionTrait {
    /// An extended suite or test: it needs the shared data beside the checkout, and is skipped
    /// without it (a bare clone). CI runs it.
    package static var extended: Self {
        .enabled(
            if: TestData.isSharedAvailable,
            "extended: needs the shared data (../shared/data or $NOHIT_SHARED_DATA)")
    }
}
