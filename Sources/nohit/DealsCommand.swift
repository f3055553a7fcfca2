import ArgumentParser
import Deals
import Foundation

/// `nohit deals [--json] [--rule ID] [--deals FILE] FILE|DIR...`: every rule's deal days in
/// Retrosheet seasons, by month and by franchise, through the same evaluation as live games.
struct DealsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deals",
        abstract: "List the deal days of sports-triggered promotions in Retrosheet seasons.",
        discussion: """
            Each rule (the shipped ones in Data/deals/rules.json, and any --deals FILE) is evaluated on every final \
            game of the files, with the version in force on the game's date. A deal day is a day the reward can be \
            had (for most rules the day after the game); a doubleheader that qualifies twice is one day, and a \
            suspended game counts on the day it was completed.
            """
    )

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Option(help: "Only this rule (its id).")
    var rule: String?

    @Option(name: .customLong("deals"), help: "A rule file to add to the shipped rules (repeatable).")
    var dealFiles: [String] = []

    @Argument(help: "Event files (.EVA, .EVN), directories of them, or Retrosheet's season zips (1950eve.zip).")
    var paths: [String]

    func run() async throws {
        let rules: [DealRule]
        do {
            rules = try DealRuleFile.load(adding: dealFiles)
        } catch {
            StandardStreams.writeError("nohit: \(error)\n")
            throw ExitCode(2)
        }
        if let rule, !rules.contains(where: { $0.id == rule }) {
            let known = Set(rules.map(\.id)).sorted().joined(separator: ", ")
            StandardStreams.writeError("nohit: no rule \"\(rule)\" (rules: \(known))\n")
            throw ExitCode(2)
        }
        let files = try SeasonInput.files(paths)
        let (games, problems) = await SeasonDeals.games(of: files)
        let triggers = SeasonDeals.triggers(games, rules: rules)
        let seasons = Set(games.map(\.season)).sorted()
        let ids = rule.map { [$0] } ?? Set(rules.map(\.id)).sorted()
        let histories = ids.flatMap { id in seasons.map { DealHistory(triggers: triggers, season: $0, rule: id) } }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.keyEncodingStrategy = .convertToSnakeCase
            try StandardStreams.writeOutput(Array(try encoder.encode(histories)) + [0x0A])
        } else {
            let byID = Dictionary(grouping: rules, by: \.id)
            var text = "Deal days in \(games.count) final games (\(seasons.map(String.init).joined(separator: ", ")))\n"
            for history in histories {
                let sponsor = byID[history.rule ?? ""]?.first?.sponsor ?? ""
                text += "\n\(history.rule ?? "all") (\(sponsor)), \(history.season): \(history.totalDays) deal days\n"
                guard history.totalDays > 0 else { continue }
                text += "  by month: " + history.byMonth.map { "\($0.key) \($0.days)" }.joined(separator: ", ") + "\n"
                text +=
                    "  by franchise: " + history.byFranchise.map { "\($0.key) \($0.days)" }.joined(separator: ", ")
                    + "\n"
                for day in history.days {
                    for trigger in day.triggers {
                        text += "  \(day.date)  \(trigger.gameID)  \(trigger.why)\n"
                    }
                }
            }
            try StandardStreams.writeOutput(Array(text.utf8))
        }
        if !problems.isEmpty {
            for problem in problems { StandardStreams.writeError("nohit: \(problem)\n") }
            StandardStreams.writeError(
                "nohit: skipped \(problems.count) game\(problems.count == 1 ? "" : "s") that could not be read\n")
            throw ExitCode(1)
        }
    }
}
