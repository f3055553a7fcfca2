import ArgumentParser
import Baseball
import Foundation
import Retrosheet

/// `nohit hall-of-fame [--json] [--limit N] FILE...`: every pitching side ranked by how long it
/// stayed hitless.
struct HallOfFameCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hall-of-fame",
        abstract: "Rank every team's pitching in every game by outs recorded before the first hit.",
        discussion: """
            Ties go to fewer batters reached before the first hit, then to the earlier date. Each entry says how \
            the bid ended: the batter, the play, the pitcher, the inning and outs.
            """
    )

    @Flag(help: "Print a JSON array instead of text.")
    var json = false

    @Option(help: "How many to show; 0 for all.")
    var limit = 25

    @Argument(help: "Event files (.EVA, .EVN), directories of them, or Retrosheet's season zips (1950eve.zip).")
    var paths: [String]

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 (all) or more, not \(limit)") }
    }

    struct Entry: Encodable {
        var rank: Int
        var gameID: String
        var date: String
        var pitchingTeam: String
        var battingTeam: String
        var pitchingClub: Club.View
        var battingClub: Club.View
        var outsBeforeFirstHit: Int
        var battersReached: Int
        var pitchers: [String]
        var status: String
        var reason: String?
        var endedBy: Ending?
        var description: String

        struct Ending: Encodable {
            var inning: Int
            var outs: Int
            var batter: String
            var pitcher: String
            var event: String
            var words: String
        }

        enum CodingKeys: String, CodingKey {
            case rank, gameID = "game_id", date, pitchingTeam = "pitching_team", battingTeam = "batting_team",
                pitchingClub = "pitching_club", battingClub = "batting_club",
                outsBeforeFirstHit = "outs_before_first_hit", battersReached = "batters_reached", pitchers, status,
                reason, endedBy = "ended_by", description
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(rank, forKey: .rank)
            try container.encode(gameID, forKey: .gameID)
            try container.encode(date, forKey: .date)
            try container.encode(pitchingTeam, forKey: .pitchingTeam)
            try container.encode(battingTeam, forKey: .battingTeam)
            try container.encode(pitchingClub, forKey: .pitchingClub)
            try container.encode(battingClub, forKey: .battingClub)
            try container.encode(outsBeforeFirstHit, forKey: .outsBeforeFirstHit)
            try container.encode(battersReached, forKey: .battersReached)
            try container.encode(pitchers, forKey: .pitchers)
            try container.encode(status, forKey: .status)
            try container.encode(reason, forKey: .reason)
            try container.encode(endedBy, forKey: .endedBy)
            try container.encode(description, forKey: .description)
        }
    }

    func run() async throws {
        let input = try await SeasonInput.read(paths)
        let ranked = SeasonBids.hallOfFame(input.sides)
        let shown = limit == 0 ? ranked[...] : ranked.prefix(limit)
        if json {
            let entries = shown.enumerated().map { index, side in
                Entry(
                    rank: index + 1, gameID: side.gameID, date: side.date, pitchingTeam: side.pitchingTeam,
                    battingTeam: side.battingTeam, pitchingClub: side.pitchingClub.view,
                    battingClub: side.battingClub.view, outsBeforeFirstHit: side.outsBeforeFirstHit,
                    battersReached: side.battersReachedWhileHitless, pitchers: side.bidPitchers,
                    status: side.official ? "official" : side.firstHit == nil ? "not official" : "broken up",
                    reason: side.unofficialReason?.rawValue,
                    endedBy: side.firstHit.map {
                        Entry.Ending(
                            inning: $0.inning, outs: $0.outs, batter: $0.batter, pitcher: $0.pitcher, event: $0.event,
                            words: $0.words)
                    }, description: side.ending)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.keyEncodingStrategy = .convertToSnakeCase
            try StandardStreams.writeOutput(Array(try encoder.encode(entries)) + [0x0A])
        } else {
            var text = "Closest no-hit bids: \(shown.count) of \(ranked.count) pitching sides\n"
            text += "   #  outs  reached  date        game          pitching vs batting: how it ended\n"
            for (index, side) in shown.enumerated() {
                let rank = String(index + 1).leftPadded(4)
                let outs = String(side.outsBeforeFirstHit).leftPadded(6)
                let reached = String(side.battersReachedWhileHitless).leftPadded(9)
                let pitchers = side.official ? " - " + side.pitcherNames.joined(separator: ", ") : ""
                text +=
                    "\(rank)\(outs)\(reached)  \(side.date)  \(side.gameID)  \(side.pitchingClub.name) vs \(side.battingClub.name): \(side.ending)\(pitchers)\n"
            }
            try StandardStreams.writeOutput(Array(text.utf8))
        }
        try input.finish()
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
