import Alerts
import ArgumentParser
import Baseball
import Foundation
import Retrosheet
import Scores

/// `nohit box [--json] FILE|DIR...`: every game's box score from Retrosheet event files, as
/// Chadwick's `cwbox` prints them: the line score, each side's batters and pitchers, the lines
/// below the table.
struct BoxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "box",
        abstract: "Print every game's box score from Retrosheet event files.",
        discussion: """
            Each game is followed as the server follows a live one (the same engine and lines), so the \
            figures are those of the game page. A game that cannot be read is reported on standard error \
            and skipped; the exit status is then 1.
            """
    )

    @Flag(help: "Print a JSON array of games instead of text.")
    var json = false

    @Argument(help: "Event files (.EVA, .EVN), directories of them, or Retrosheet's season zips (1950eve.zip).")
    var paths: [String]

    /// One game of the JSON output.
    struct Game: Encodable {
        struct Linescore: Encodable {
            var away: [String]
            var home: [String]
        }

        struct Totals: Encodable {
            var runs: Int
            var hits: Int
            var errors: Int
        }

        var gameId: String
        var date: String
        var away: Totals
        var home: Totals
        var linescore: Linescore
        var box: BoxScoreView
    }

    /// What one file gives: its games, and the problems of those that could not be followed.
    struct FileBoxes: Sendable {
        var games: [(game: Game, text: String)] = []
        var problems: [String] = []
    }

    func run() async throws {
        let files = try SeasonInput.files(paths)
        let json = json
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        var first = true
        var skipped = 0
        if json { try StandardStreams.writeOutput(Array("[\n".utf8)) }
        try await EventFiles.forEach(files, { Self.boxes(file: $0, text: !json) }) { boxes in
            for (game, text) in boxes.games {
                if json {
                    let bytes = try encoder.encode(game)
                    try StandardStreams.writeOutput(Array((first ? "" : ",\n").utf8) + Array(bytes))
                } else {
                    try StandardStreams.writeOutput(Array(text.utf8))
                }
                first = false
            }
            for problem in boxes.problems { StandardStreams.writeError("nohit: \(problem)\n") }
            skipped += boxes.problems.count
        }
        if json { try StandardStreams.writeOutput(Array((first ? "]\n" : "\n]\n").utf8)) }
        if skipped > 0 {
            StandardStreams.writeError(
                "nohit: skipped \(skipped) game\(skipped == 1 ? "" : "s") that could not be read\n")
            throw ExitCode(1)
        }
    }

    static func boxes(file: String, text: Bool) -> FileBoxes {
        var boxes = FileBoxes()
        let reader: EventFileReader
        do {
            reader = try EventFileReader(path: file)
        } catch {
            boxes.problems.append("\(error)")
            return boxes
        }
        var teams: [Int: [String: TeamRecord]] = [:]
        for result in reader.games() {
            let record: GameRecord
            let updates: [GameUpdate]
            do {
                record = try result.get()
                updates = try record.updates()
            } catch {
                boxes.problems.append("\(error)")
                continue
            }
            let parts = (record.date ?? "").split(separator: "/").compactMap { Int($0) }
            guard parts.count == 3 else {
                boxes.problems.append("\(record.file): game \(record.id) has no date (info,date)")
                continue
            }
            let season = teams[parts[0]] ?? ReplaySchedule.teamTable(near: [file], year: parts[0])
            teams[parts[0]] = season
            let scheduled = ReplaySchedule.schedule(
                record, updates: updates, teams: season, year: parts[0], month: parts[1], day: parts[2])
            var follower = GameFollower(gameID: record.id)
            _ = follower.follow(.scheduled(scheduled.info, start: scheduled.start))
            _ = follower.follow(.lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst))
            _ = follower.follow(.updates(updates))
            if let problem = follower.problem {
                boxes.problems.append("\(record.file): game \(record.id): \(problem)")
                continue
            }
            _ = follower.follow(.status(GameStatus(.final), result: record.result))
            guard let state = follower.state else { continue }
            let line = follower.linescore
            let game = Game(
                gameId: record.id, date: scheduled.info.date,
                away: .init(
                    runs: state.score.away, hits: state.pitching(.home).hits, errors: state.pitching(.away).errors),
                home: .init(
                    runs: state.score.home, hits: state.pitching(.away).hits, errors: state.pitching(.home).errors),
                linescore: .init(away: line.cells(.away, final: true), home: line.cells(.home, final: true)),
                box: BoxScoreView(follower))
            boxes.games.append((game, text ? Self.text(game, info: scheduled.info) : ""))
        }
        return boxes
    }

    /// The box score in columns, as a newspaper prints it.
    static func text(_ game: Game, info: GameInfo) -> String {
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
        }
        func right(_ value: Any, _ width: Int) -> String {
            let text = "\(value)"
            return String(repeating: " ", count: max(0, width - text.count)) + text
        }
        let box = game.box
        var out =
            "\(game.gameId)  \(game.date)  \(box.away.name) \(game.away.runs), \(box.home.name) \(game.home.runs)\n\n"
        let innings = max(game.linescore.away.count, game.linescore.home.count)
        out += pad("", 6) + (1...max(innings, 1)).map { right($0, 3) }.joined() + "    R  H  E\n"
        for (team, cells, totals) in [
            (box.away, game.linescore.away, game.away), (box.home, game.linescore.home, game.home),
        ] {
            out += pad(team.abbreviation, 6) + cells.map { right($0, 3) }.joined()
            out += String(repeating: " ", count: 3 * (innings - cells.count)) + " "
            out += right(totals.runs, 3) + right(totals.hits, 3) + right(totals.errors, 3) + "\n"
        }
        for team in [box.away, box.home] {
            out += "\n" + pad(team.name, 30) + "  AB   R   H RBI  BB  SO\n"
            for batter in team.batters {
                let indent = batter.sequence > 1 ? "  " : ""
                let entry = batter.enteredInning.map { " (\(Words.ordinal($0)))" } ?? ""
                out += pad("\(indent)\(batter.name), \(batter.position)\(entry)", 30)
                out +=
                    [batter.atBats, batter.runs, batter.hits, batter.runsBattedIn, batter.walks, batter.strikeouts]
                    .map { right($0, 4) }.joined() + "\n"
            }
            let totals = team.totals
            out += pad("Totals", 30)
            out +=
                [totals.atBats, totals.runs, totals.hits, totals.runsBattedIn, totals.walks, totals.strikeouts]
                .map { right($0, 4) }.joined() + "\n"
            for note in team.notes { out += "\(note.label): \(note.text).\n" }
            out += "LOB: \(team.leftOnBase). With runners in scoring position: \(team.withRunnersInScoringPosition).\n"
        }
        for team in [box.away, box.home] {
            out += "\n" + pad(team.name, 30) + "   IP   H   R  ER  BB  SO  HR  BF\n"
            for pitcher in team.pitchers {
                out += pad(pitcher.name, 30) + right(pitcher.inningsPitched, 5)
                out +=
                    [
                        pitcher.hits, pitcher.runs, pitcher.earnedRuns, pitcher.walks, pitcher.strikeouts,
                        pitcher.homeRuns, pitcher.battersFaced,
                    ].map { right($0, 4) }.joined() + "\n"
            }
        }
        return out + "\n"
    }
}
