import Baseball
import Foundation
import Retrosheet
import TestSupport
import Testing

/// Win expectancy counted from history, against a deliberately simple count that shares no code
/// with the engine: Chadwick's `cwevent` rows of the season (the state before each play, the
/// score after the last), read as text.
@Suite struct WinExpectancyTests {
    /// Per cell (inning 1-10, half, outs, bases, lead -10...10 as the table lays them out):
    /// plays and home wins, from cwevent's columns.
    static func simpleCount(_ oracle: String, season: String) throws -> (
        games: [Int: Int], wins: [Int: Int], counted: Int
    ) {
        // Each game's scheduled innings from its `info,innings` line, read as text: a 7-inning
        // game's innings count as the 3rd to the 9th.
        var innings: [String: Int] = [:]
        let folder = TestData.path("retrosheet/\(season)")
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasPrefix(season) {
            var id = ""
            let text = try String(contentsOfFile: "\(folder)/\(file)", encoding: .isoLatin1)
            for line in text.split(whereSeparator: \.isNewline) {
                if line.hasPrefix("id,") { id = String(line.dropFirst(3)) }
                if line.hasPrefix("info,innings,") { innings[id] = Int(line.dropFirst(13)) }
            }
        }
        let lines = try TestData.lines(oracle)
        let header = lines[0].split(separator: ",").map { $0.replacingOccurrences(of: "\"", with: "") }
        let at = { (name: String) in header.firstIndex(of: name)! }
        var byGame: [String: [[String]]] = [:]
        var order: [String] = []
        for line in lines.dropFirst() {
            // cwevent quotes a text field whole: its first and last characters.
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.first == "\"" ? String($0.dropFirst().dropLast()) : String($0)
            }
            let id = fields[at("GAME_ID")]
            if byGame[id] == nil { order.append(id) }
            byGame[id, default: []].append(fields)
        }
        var games: [Int: Int] = [:]
        var wins: [Int: Int] = [:]
        var counted = 0
        for id in order {
            let rows = byGame[id]!
            // The home team batted first: left out, as the table leaves it out.
            if rows[0][at("BAT_HOME_ID")] == "1" { continue }
            let last = rows[rows.count - 1]
            let scored = ["BAT_DEST_ID", "RUN1_DEST_ID", "RUN2_DEST_ID", "RUN3_DEST_ID"].filter {
                Int(last[at($0)])! >= 4
            }.count
            var home = Int(last[at("HOME_SCORE_CT")])!
            var away = Int(last[at("AWAY_SCORE_CT")])!
            if last[at("BAT_HOME_ID")] == "1" { home += scored } else { away += scored }
            if home == away { continue }
            counted += 1
            let shift = max(0, 9 - (innings[id] ?? 9))
            for row in rows {
                let inning = min(Int(row[at("INN_CT")])! + shift, 10)
                let half = Int(row[at("BAT_HOME_ID")])!
                let outs = Int(row[at("OUTS_CT")])!
                let bases =
                    (row[at("BASE1_RUN_ID")].isEmpty ? 0 : 1) + (row[at("BASE2_RUN_ID")].isEmpty ? 0 : 2)
                    + (row[at("BASE3_RUN_ID")].isEmpty ? 0 : 4)
                let lead = min(max(Int(row[at("HOME_SCORE_CT")])! - Int(row[at("AWAY_SCORE_CT")])!, -10), 10)
                let cell = ((((inning - 1) * 2 + half) * 3 + outs) * 8 + bases) * 21 + lead + 10
                games[cell, default: 0] += 1
                if home > away { wins[cell, default: 0] += 1 }
            }
        }
        return (games, wins, counted)
    }

    static func check(season: String, oracle: String) async throws {
        let files = try EventFiles.expand([TestData.path("retrosheet/\(season)")])
        let (table, problems, _) = await WinExpectancyCount.table(of: files)
        #expect(problems.isEmpty)
        let expected = try simpleCount(oracle, season: season)
        #expect(table.gamesCounted == expected.counted)
        var differing: [String] = []
        for cell in 0..<WinExpectancy.cells
        where table.games[cell] != expected.games[cell] ?? 0 || table.wins[cell] != expected.wins[cell] ?? 0 {
            differing.append(
                "cell \(cell): \(table.games[cell])/\(table.wins[cell]) against \(expected.games[cell] ?? 0)/\(expected.wins[cell] ?? 0)"
            )
        }
        #expect(differing.isEmpty, "\(differing.count) cells differ: \(differing.prefix(5))")
        #expect(table.games.reduce(0, +) > 10_000)
    }

    @Test func theCountOf2020EqualsASimpleCountOfCweventsRows() async throws {
        try await Self.check(season: "2020", oracle: "oracle/cwevent-2020.csv")
    }

    /// The layout the shipped file says, both ways; the smoothing pulls a thin cell toward its
    /// group and leaves a thick one as counted; leverage averages 1 over every play.
    @Test func cellsSmoothingAndLeverage() throws {
        for cell in [0, 1234, WinExpectancy.cells - 1] {
            #expect(WinExpectancy.State(cell: cell).cell == cell)
        }
        let state = WinExpectancy.State(inning: 12, battingSide: .home, outs: 2, bases: 5, homeLead: -14)
        #expect(
            WinExpectancy.State(cell: state.cell)
                == WinExpectancy.State(inning: 10, battingSide: .home, outs: 2, bases: 5, homeLead: -10))
        var counter = WinExpectancy.Counter()
        let start = WinExpectancy.State(inning: 1, battingSide: .away, outs: 0, bases: 0, homeLead: 0)
        let later = WinExpectancy.State(inning: 1, battingSide: .away, outs: 1, bases: 0, homeLead: 0)
        for index in 0..<1000 { counter.add(season: 2020, states: [start], homeWon: index % 4 != 0) }
        counter.add(season: 2020, states: [later], homeWon: false)
        let table = counter.table()
        #expect(table.games[start.cell] == 1000 && table.wins[start.cell] == 750)
        // 750 of 1000, pulled toward its group (750 of 1001) by 20: still .750.
        #expect(abs(table.homeWin(start) - (750 + 20 * 750.0 / 1001) / 1020) < 0.0001)
        // One play, lost: (0 + 20 * 750/1001) / 21, not 0.
        #expect(abs(table.homeWin(later) - (20 * 750.0 / 1001) / 21) < 0.0001)
        #expect(table.gamesCounted == 1001 && table.seasons == [2020])
        let plays = Double(table.games.reduce(0, +))
        let mean = zip(table.leverage, table.games).map { $0 * Double($1) }.reduce(0, +) / plays
        #expect(abs(mean - 1) < 0.01)
    }

    /// The shipped table: 1950-2020, every cell as the layout says, the start of the 9th tied.
    @Test func theShippedTable() throws {
        let path = ShippedData.path("Data/winexp/win-expectancy.json")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let table = try decoder.decode(WinExpectancy.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(table.seasons.first == 1950 && table.seasons.last == 2020 && table.seasons.count == 71)
        #expect(
            [table.games.count, table.wins.count, table.homeWin.count, table.leverage.count].allSatisfy {
                $0 == WinExpectancy.cells
            })
        let ninth = WinExpectancy.State(inning: 9, battingSide: .away, outs: 0, bases: 0, homeLead: 0)
        #expect(table.games[ninth.cell] == 14_833 && table.wins[ninth.cell] == 7_713)
        #expect(abs(table.homeWin(ninth) - 0.52) < 0.001)
        // Bases loaded, nobody out, bottom of the 9th, tied: the home team nearly always wins.
        let loaded = WinExpectancy.State(inning: 9, battingSide: .home, outs: 0, bases: 7, homeLead: 0)
        #expect(table.homeWin(loaded) > 0.9)
        #expect(
            table.leverage(loaded)
                > table.leverage(WinExpectancy.State(inning: 1, battingSide: .away, outs: 0, bases: 0, homeLead: 0)))
    }
}

extension WinExpectancyTests {
    @Suite(.extended) struct Extended {
        @Test func theCountOf2012EqualsASimpleCountOfCweventsRows() async throws {
            try await WinExpectancyTests.check(season: "2012", oracle: "oracle/cwevent-2012.csv.gz")
        }
    }
}
