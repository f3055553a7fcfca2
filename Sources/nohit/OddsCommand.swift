import ArgumentParser
import Baseball
import Foundation
import Retrosheet

/// `nohit odds [--json] FILE|DIR|ZIP...`: how often a side hitless through k outs went on to an
/// official no-hitter, in the seasons given, over all and by decade.
struct OddsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "odds",
        abstract: "How often a side hitless through k outs (3 to 27) finished an official no-hitter, in these seasons.",
        discussion: """
            A bid at k outs is a pitching side that recorded k outs before the first hit it allowed; it ended as a \
            no-hitter when the side allowed no hit all game and recorded 27 or more outs. Each figure comes with the \
            number of bids it rests on, over all the seasons read and by decade.
            """
    )

    @Flag(help: "Print JSON: seasons, sides, rows (outs, bids, no_hitters, share) and eras.")
    var json = false

    @Argument(help: "Event files (.EVA, .EVN), directories of them, or Retrosheet's season zips (1950eve.zip).")
    var paths: [String]

    func run() async throws {
        let input = try await SeasonInput.read(paths)
        let odds = BidOdds.table(input.sides)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try StandardStreams.writeOutput(Array(try encoder.encode(odds)) + [0x0A])
        } else {
            try StandardStreams.writeOutput(Array(Self.text(odds).utf8))
        }
        try input.finish()
    }

    static func text(_ odds: BidOdds) -> String {
        let span =
            odds.seasons.count > 1 ? "\(odds.seasons.first!)-\(odds.seasons.last!)" : "\(odds.seasons.first ?? 0)"
        var text =
            "No-hit odds: \(odds.seasons.count) season\(odds.seasons.count == 1 ? "" : "s") (\(span)), "
            + "\(odds.sides.formatted()) pitching sides\n"
        text += "hitless through        bids  no-hitters   share\n"
        for row in odds.rows {
            let innings = "\(row.outs / 3)" + (row.outs % 3 == 0 ? "" : " \(row.outs % 3)/3")
            let through = "\(row.outs) outs (\(innings) inn)".padding(toLength: 21, withPad: " ", startingAt: 0)
            let share = row.share.map { String(format: "%6.2f%%", $0 * 100) } ?? "      -"
            text +=
                through + String(row.bids).leftPadded(6) + String(row.noHitters).leftPadded(12) + "  " + share + "\n"
        }
        let shown = [12, 18, 21, 24, 27]
        text += "\nBy decade: share of bids that ended as no-hitters (bids)\n"
        text += "decade    " + shown.map { "\($0) outs".leftPadded(17) }.joined() + "\n"
        for era in odds.eras {
            var line = era.name.padding(toLength: 10, withPad: " ", startingAt: 0)
            for outs in shown {
                let row = era.rows.first { $0.outs == outs }
                let cell =
                    row.flatMap { row in row.share.map { String(format: "%.1f%% (%d)", $0 * 100, row.bids) } } ?? "-"
                line += cell.leftPadded(17)
            }
            text += line + "\n"
        }
        if let pitches = odds.pitches {
            let span = "\(pitches.seasons.first ?? 0)-\(pitches.seasons.last ?? 0)"
            text += "\nBy pitches thrown so far (\(pitches.sides.formatted()) sides with pitch counts, \(span)): "
            text += "share of bids that ended as no-hitters (bids)\n"
            let ranges = BidOdds.pitchBounds.map { BidOdds.pitchRange($0) }
            text += "pitches   " + BidOdds.pitchOuts.map { "\($0) outs".leftPadded(17) }.joined() + "\n"
            for (from, to) in ranges {
                var line = (to.map { "\(from)-\($0)" } ?? "\(from)+").padding(toLength: 10, withPad: " ", startingAt: 0)
                for outs in BidOdds.pitchOuts {
                    let row = pitches.rows.first { $0.outs == outs && $0.from == from }
                    let cell =
                        row.flatMap { row in
                            row.bids > 0
                                ? String(
                                    format: "%.1f%% (%d)", Double(row.noHitters) / Double(row.bids) * 100, row.bids)
                                : nil
                        } ?? "-"
                    line += cell.leftPadded(17)
                }
                text += line + "\n"
            }
        }
        return text
    }
}
