import ArgumentParser
import Baseball
import Foundation
import Retrosheet

/// `nohit winexp [--json] FILE|DIR|ZIP...`: how often the home team went on to win from each
/// state of a game, in the seasons given.
struct WinExpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "winexp",
        abstract: "Win expectancy: how often the home team won from each inning, half, outs, bases and score.",
        discussion: """
            Every game of the files is replayed; each play's state before it (inning 1 to 9, extra innings as one; \
            top or bottom; outs; runners; the home team's lead, -10 to +10) counts once, with whether the home team \
            won (a game that ended tied, or whose home team batted first, is left out). Each cell gives what was counted and the probability, pulled \
            toward its inning, half and lead over every base-out state by the weight of 20 plays; and its leverage, \
            how far a play from there moves the probability against an average play. The text shows leads of -3 to \
            +3; --json gives every cell (what Data/winexp/win-expectancy.json ships).
            """
    )

    @Flag(help: "Print JSON: provenance, seasons, games_counted, layout, and per cell games, wins, home_win, leverage.")
    var json = false

    @Argument(help: "Event files (.EVA, .EVN), directories of them, or Retrosheet's season zips (1950eve.zip).")
    var paths: [String]

    func run() async throws {
        let files = try SeasonInput.files(paths)
        let (table, problems, warnings) = await WinExpectancyCount.table(of: files)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.keyEncodingStrategy = .convertToSnakeCase
            try StandardStreams.writeOutput(Array(try encoder.encode(table)) + [0x0A])
        } else {
            try StandardStreams.writeOutput(Array(Self.text(table).utf8))
        }
        try SeasonInput(sides: [], problems: problems, warnings: warnings).finish()
    }

    static func text(_ table: WinExpectancy) -> String {
        let bases = ["___", "1__", "_2_", "12_", "__3", "1_3", "_23", "123"]
        func cell(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }
        func share(_ value: Double) -> String {
            value >= 0.9995 ? "1.000" : "." + String(format: "%03d", Int((value * 1000).rounded()))
        }
        let ninth = WinExpectancy.State(inning: 9, battingSide: .away, outs: 0, bases: 0, homeLead: 0)
        var out = "Win expectancy of the home team. \(table.provenance)\n"
        out +=
            "Start of the 9th, tied: \(share(table.homeWin(ninth))) (\(table.games[ninth.cell]) plays, "
            + "the home team won \(table.wins[ninth.cell]))\n"
        for inning in 1...WinExpectancy.innings {
            for side in [Side.away, .home] {
                let name = inning == WinExpectancy.innings ? "Extra innings" : "Inning \(inning)"
                let heading = "\(name), \(side == .away ? "top" : "bottom") (home lead)"
                out += "\n" + heading.padding(toLength: 34, withPad: " ", startingAt: 0)
                out += (-3...3).map { cell($0 > 0 ? "+\($0)" : "\($0)", 6) }.joined() + "\n"
                for outs in 0...2 {
                    for base in 0..<8 {
                        let label = "  \(outs) out\(outs == 1 ? "" : "s"), \(bases[base])"
                        out += label.padding(toLength: 34, withPad: " ", startingAt: 0)
                        out +=
                            (-3...3).map { lead in
                                let state = WinExpectancy.State(
                                    inning: inning, battingSide: side, outs: outs, bases: base, homeLead: lead)
                                return cell(table.games[state.cell] == 0 ? "-" : share(table.homeWin(state)), 6)
                            }.joined() + "\n"
                    }
                }
            }
        }
        return out
    }
}
