import Foundation
import Retrosheet
import TestSupport
import Testing

/// `nohit events` as a user runs it.
@Suite(.ownThreads) struct EventsCommandTests {
    static func temporaryFile(_ name: String, _ contents: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nohit-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// A damaged record read as cwevent reads it: the game is read, each such record is said,
    /// they are counted by kind at the end, and the exit status is 0.
    @Test func damagedRecordsReadAnywayAreSaidAndCounted() throws {
        var lines = try TestData.lines("retrosheet/2020/2020CHA.EVA").map(String.init)
        let ids = lines.indices.filter { lines[$0].hasPrefix("id,") }
        lines = Array(lines[ids[0]..<ids[1]])
        let save = lines.firstIndex { $0.hasPrefix("info,save") }!
        lines[save] = "info,save,,"
        let play = lines.firstIndex { $0.hasPrefix("play,") && !$0.hasSuffix(",NP") }!
        lines[play] += ",x"
        let path = try Self.temporaryFile("2020CHA.EVA", lines.joined(separator: "\n") + "\n")
        let result = try Executable.run("nohit", ["events", path])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.contains("nohit: warning: \(path):\(save + 1): an info record is read from 2 fields"))
        #expect(
            result.standardError.contains("nohit: warning: \(path):\(play + 1): a play record is read from 6 fields"))
        #expect(result.standardError.hasSuffix("nohit: 2 damaged records read as cwevent reads them: 1 info, 1 play\n"))
        #expect(result.standardOutput.split(separator: "\n").count > 50)
    }

    /// A folder with no event file is named with an exit status of 2 (it crashed once, reading
    /// the first of no files); a folder of season folders names one to give.
    @Test func aFolderWithoutEventFilesIsNamed() throws {
        let empty = (try Self.temporaryFile("notes.txt", "nothing here\n") as NSString).deletingLastPathComponent
        let result = try Executable.run("nohit", ["events", empty])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("nohit: \(empty): no Retrosheet event files in it"))
        #expect(!result.standardError.contains("season folders"), "a plain file is not a season")
        let seasons = TestData.packageRoot.appendingPathComponent("Data/retrosheet").path
        let folder = try Executable.run("nohit", ["events", seasons])
        #expect(folder.status == 2)
        #expect(folder.standardError.contains("it holds season folders: give one or more, such as \(seasons)/2020"))
    }

    @Test func printsCwevents2020RowsForARealFile() throws {
        let file = TestData.path("retrosheet/2020/2020CHA.EVA")
        let result = try Executable.run("nohit", ["events", file])
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.first.map { String($0) + "\n" } == CWEventCSV.header)
        let oracle = try TestData.lines("oracle/cwevent-2020.csv").filter { $0.hasPrefix("\"CHA2020") }
        #expect(Array(lines.dropFirst()) == oracle)
    }

    @Test func damagedGameIsReportedSkippedAndCounted() throws {
        let lines = try TestData.lines("retrosheet/2020/2020CHA.EVA").map(String.init)
        let ids = lines.indices.filter { lines[$0].hasPrefix("id,") }
        var firstGame = Array(lines[ids[0]..<ids[1]])
        let secondGame = Array(lines[ids[1]..<ids[2]])
        let damaged = firstGame.firstIndex { $0.hasPrefix("play,") && !$0.hasSuffix(",NP") }!
        firstGame[damaged] = "play,1,0,keplm001,12,,Q8"
        let path = try Self.temporaryFile("2020CHA.EVA", (firstGame + secondGame).joined(separator: "\n") + "\n")

        let result = try Executable.run("nohit", ["events", path])
        #expect(result.status == 1)
        #expect(result.standardError.contains("\(path):\(damaged + 1): malformed event: unknown event code"))
        #expect(result.standardError.contains("play,1,0,keplm001,12,,Q8"))
        #expect(result.standardError.contains("skipped 1 game"))
        let rows = result.standardOutput.split(separator: "\n").dropFirst()
        #expect(!rows.isEmpty)
        #expect(rows.allSatisfy { $0.hasPrefix("\"CHA202007250\"") })
    }

    @Test func missingFileIsAClearError() throws {
        let result = try Executable.run("nohit", ["events", "/nonexistent/2020XXX.EVA"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("nohit: /nonexistent/2020XXX.EVA: no such file or directory\n"))
    }
}
