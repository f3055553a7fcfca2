import ArgumentParser
import Foundation
import Retrosheet

/// `nohit nohitters [--json] FILE...`: the official no-hitters, and the hitless games that do
/// not count, with the reason.
struct NoHittersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nohitters",
        abstract: "List the official no-hitters in Retrosheet event files, and hitless games that do not count.",
        discussion: """
            A no-hitter is official when the game is complete and the team without a hit batted in at least \
            nine complete innings (MLB's rule since 1991). Shortened games, 7-inning doubleheader games, bids \
            broken up in extra innings and road teams that lose without the home team batting in the 9th are \
            listed apart with the reason.
            """
    )

    @Flag(help: "Print a JSON array instead of text.")
    var json = false

    @Argument(help: "Event files (.EVA, .EVN), directories of them, or Retrosheet's season zips (1950eve.zip).")
    var paths: [String]

    /// One entry of the JSON output.
    struct Entry: Encodable {
        var gameID: String
        var date: String
        var pitchingTeam: String
        var battingTeam: String
        var pitchers: [String]
        var perfect: Bool
        var combined: Bool
        var official: Bool
        var reason: String?
        var finalScore: FinalScore

        struct FinalScore: Encodable {
            var away: String
            var home: String
            var awayRuns: Int
            var homeRuns: Int

            enum CodingKeys: String, CodingKey {
                case away, home
                case awayRuns = "away_runs"
                case homeRuns = "home_runs"
            }
        }

        enum CodingKeys: String, CodingKey {
            case gameID = "game_id", date, pitchingTeam = "pitching_team", battingTeam = "batting_team", pitchers,
                perfect, combined, official, reason, finalScore = "final_score"
        }

        init(_ side: SideSummary) {
            gameID = side.gameID
            date = side.date
            pitchingTeam = side.pitchingTeam
            battingTeam = side.battingTeam
            pitchers = side.bidPitchers
            perfect = side.perfect
            combined = side.combined
            official = side.official
            reason = side.unofficialReason?.rawValue
            finalScore = FinalScore(
                away: side.awayTeam, home: side.homeTeam, awayRuns: side.finalAway, homeRuns: side.finalHome)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(gameID, forKey: .gameID)
            try container.encode(date, forKey: .date)
            try container.encode(pitchingTeam, forKey: .pitchingTeam)
            try container.encode(battingTeam, forKey: .battingTeam)
            try container.encode(pitchers, forKey: .pitchers)
            try container.encode(perfect, forKey: .perfect)
            try container.encode(combined, forKey: .combined)
            try container.encode(official, forKey: .official)
            try container.encode(reason, forKey: .reason)  // null when official
            try container.encode(finalScore, forKey: .finalScore)
        }
    }

    func run() async throws {
        let input = try await SeasonInput.read(paths)
        let official = SeasonBids.official(input.sides)
        let unofficial = SeasonBids.unofficial(input.sides)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode((official + unofficial).map(Entry.init))
            try StandardStreams.writeOutput(Array(data) + [0x0A])
        } else {
            var text = "Official no-hitters: \(official.count)\n"
            for side in official { text += Self.line(side) }
            text += "\nHitless, not official: \(unofficial.count)\n"
            for side in unofficial {
                text += Self.line(side) + "    not official: \(side.unofficialReason?.rawValue ?? "")\n"
            }
            try StandardStreams.writeOutput(Array(text.utf8))
        }
        try input.finish()
    }

    static func line(_ side: SideSummary) -> String {
        let kind = side.perfect ? "perfect game" : side.combined ? "combined" : "no-hitter"
        let pitchers = zip(side.bidPitchers, side.pitcherNames).map { "\($1) (\($0))" }.joined(separator: ", ")
        // Clubs by MLB's abbreviation as of that day (`CWS`), not Retrosheet's code (`CHA`).
        let (away, home) =
            side.pitchingSide == .home
            ? (side.battingClub.abbreviation, side.pitchingClub.abbreviation)
            : (side.pitchingClub.abbreviation, side.battingClub.abbreviation)
        return
            "  \(side.date)  \(side.gameID)  \(away) at \(home)  \(kind.padding(toLength: 12, withPad: " ", startingAt: 0))  \(away) \(side.finalAway), \(home) \(side.finalHome)  \(pitchers)\n"
    }
}
