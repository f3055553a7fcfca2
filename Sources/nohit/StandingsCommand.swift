import ArgumentParser
import Baseball
import Foundation
import Retrosheet

/// `nohit standings --date YYYY-MM-DD [--json] FILE|DIR...`: each division's standings before the
/// games of a day, from the results in Retrosheet event files.
struct StandingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "standings",
        abstract: "Print the division standings as of the start of a day, from Retrosheet event files.",
        discussion: """
            Counts every game that ended before the day (a suspended game on the day it was completed; a tie \
            for neither club): W, L, PCT, GB (games behind the division's leader), the streak, the last ten, \
            at home and away. Then each league's race for the postseason in the season's format (one wild \
            card per league 1994-2011, two 2012-2021, 2020's eight clubs per league, three from 2022): the \
            division leaders, the rest by record with the wild-card places, games ahead of the first club out \
            or behind the last club in, and each club's clinching or elimination number. GET \
            /api/standings?date= answers the same.
            """
    )

    @Option(help: "The day (YYYY-MM-DD): the standings before its games.")
    var date: String

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Argument(help: "Event files (.EVA, .EVN), directories of them, or Retrosheet's season zips (1950eve.zip).")
    var paths: [String]

    func validate() throws {
        guard Standings.isDay(date) else {
            throw ValidationError("--date must be a day as YYYY-MM-DD (2020-08-25), not '\(date)'")
        }
    }

    func run() async throws {
        let input = try await SeasonInput.read(paths)
        let outcomes = SeasonBids.outcomes(input.sides)
        guard outcomes.contains(where: { $0.date.prefix(4) == date.prefix(4) }) else {
            StandardStreams.writeError("nohit: no games of \(date.prefix(4)) in \(paths.joined(separator: ", "))\n")
            throw ExitCode(1)
        }
        let standings = Standings(asOf: date, outcomes: outcomes)
        let race = WildCardRace(asOf: date, outcomes: outcomes, wholeSeason: true)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.keyEncodingStrategy = .convertToSnakeCase
            let answer = Answer(date: standings.date, divisions: standings.divisions, wildCards: race)
            try StandardStreams.writeOutput(Array(try encoder.encode(answer)) + [0x0A])
        } else {
            try StandardStreams.writeOutput(Array((Self.text(standings) + (race.map(Self.text) ?? "")).utf8))
        }
        try input.finish()
    }

    /// What `--json` prints.
    struct Answer: Encodable {
        var date: String
        var divisions: [Standings.Division]
        var wildCards: WildCardRace?
    }

    static func text(_ race: WildCardRace) -> String {
        func cell(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }
        func row(_ entry: WildCardRace.Entry) -> String {
            let number =
                entry.clinchNumber.map { $0 == 0 ? "clinched" : "clinch \($0)" }
                ?? entry.eliminationNumber.map { $0 == 0 ? "eliminated" : "elim \($0)" } ?? ""
            return entry.club.name.padding(toLength: 24, withPad: " ", startingAt: 0) + cell("\(entry.wins)", 4)
                + cell("\(entry.losses)", 4) + cell(entry.percentage, 6) + cell(entry.gamesBehind, 6)
                + cell("\(entry.remaining)", 5) + "  " + entry.place.padding(toLength: 16, withPad: " ", startingAt: 0)
                + number + "\n"
        }
        var out = "\nThe race for the postseason: \(race.format.description)\n"
        for league in race.leagues {
            out += "\n\(league.name) leaders".padding(toLength: 25, withPad: " ", startingAt: 0)
            out += "   W   L   PCT        LEFT\n"
            out += league.leaders.map(row).joined()
            out += "\(league.name) wild card".padding(toLength: 24, withPad: " ", startingAt: 0)
            out += "   W   L   PCT  WCGB  LEFT\n"
            out += league.wildCard.map(row).joined()
        }
        return out
    }

    static func text(_ standings: Standings) -> String {
        func cell(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }
        var out = "Standings before the games of \(standings.date)\n"
        for division in standings.divisions {
            let name = division.name.padding(toLength: 24, withPad: " ", startingAt: 0)
            out += "\n\(name)   W   L   PCT    GB  STRK   L10   HOME   AWAY\n"
            for team in division.teams {
                out += team.club.name.padding(toLength: 24, withPad: " ", startingAt: 0)
                out += cell("\(team.wins)", 4) + cell("\(team.losses)", 4) + cell(team.percentage, 6)
                out += cell(team.gamesBehind, 6) + cell(team.streak, 6) + cell(team.lastTen, 6)
                out += cell(team.home, 7) + cell(team.away, 7) + "\n"
            }
        }
        return out
    }
}
