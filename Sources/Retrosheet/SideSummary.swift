import Baseball

/// One team's pitching in one game, told as a no-hit bid: how long it stayed hitless, who broke
/// it up and how, and whether it ended as an official no-hitter. The columns follow
/// `shared/data/groundtruth/sides_YYYY.csv`.
package struct SideSummary: Sendable, Hashable, Codable {
    package struct Play: Sendable, Hashable, Codable {
        package var inning: Int
        /// Outs in the inning before the play.
        package var outs: Int
        package var batter: String
        package var batterName: String
        package var pitcher: String
        package var pitcherName: String
        /// The event as written in the file, e.g. `S8/G`.
        package var event: String
        /// The play in words: "Eric Sogard singles to center field off Kenta Maeda with nobody out
        /// in the top of the 9th".
        package var words: String
    }

    package var gameID: String
    /// `yyyy-mm-dd`.
    package var date: String
    package var homeTeam: String
    package var awayTeam: String
    /// Retrosheet's codes of the clubs (`CHA`), as the ground-truth tables write them.
    package var pitchingTeam: String
    package var battingTeam: String
    /// The clubs as they were that day: what a fan reads.
    package var pitchingClub: Club
    package var battingClub: Club
    package var pitchingSide: Side
    /// The last inning played.
    package var maxInning: Int
    /// All outs the pitching team recorded.
    package var outs: Int
    package var hitsAllowed: Int
    /// Outs recorded before the first hit (all outs when there was none).
    package var outsBeforeFirstHit: Int
    /// Batters who reached base before the first hit.
    package var battersReachedWhileHitless: Int
    package var firstHit: Play?
    /// Outs recorded before the first batter reached base (all outs when none did).
    package var outsBeforeFirstBaserunner: Int
    /// The event that put the first batter on base.
    package var firstBaserunnerEvent: String?
    /// Every pitcher who pitched for the team, in order.
    package var pitchers: [String]
    /// The pitchers who took part in the bid (to the one who gave up the first hit).
    package var bidPitchers: [String]
    package var pitcherNames: [String]
    package var official: Bool
    package var perfect: Bool
    /// Why a hitless (or hitless-through-nine) game is not official.
    package var unofficialReason: UnofficialReason?
    package var finalAway: Int
    package var finalHome: Int
    /// The side's pitches thrown when it recorded its 1st, 2nd, ... out (to its 27th); nil where
    /// the game's pitch sequences do not say.
    package var pitchesAtOut: [Int]? = nil
    /// `yyyy-mm-dd` a suspended game was completed on; nil for a game played in one day.
    package var completedOn: String? = nil
    /// The side's pitchers' outs and earned runs in the game, and the game's pitchers of record:
    /// what a pitcher's W-L and ERA as of a day are counted from.
    package var pitching: [PitcherGame]? = nil
    package var winningPitcher: String? = nil
    package var losingPitcher: String? = nil
    /// The innings the game was scheduled for (7 in a 2020-21 doubleheader game); nil: 9.
    package var scheduledInnings: Int? = nil

    /// Why a no-hitter by this side could not have counted whatever happened (a 7-inning
    /// doubleheader game), or why the one it pitched does not: nil when it could.
    package var cannotCount: UnofficialReason? {
        if let unofficialReason, unofficialReason != .brokenInExtraInnings { return unofficialReason }
        if let scheduledInnings, scheduledInnings < 9 { return .sevenInningDoubleheader }
        return nil
    }

    package struct PitcherGame: Sendable, Hashable, Codable {
        package var pitcher: String
        package var outs: Int
        package var earnedRuns: Int
    }

    package var combined: Bool { bidPitchers.count > 1 }

    /// Both sides of a replayed game, visitors' pitching first.
    /// `teams` is the season's `TEAMyyyy` file, for a club the team directory does not know.
    package static func sides(of bids: GameBids, teams: [String: TeamRecord] = [:]) -> [SideSummary] {
        let clubs = PerSide(away: bids.club(.away, teams: teams), home: bids.club(.home, teams: teams))
        return [Side.away, .home].map { summary(of: bids, pitchingSide: $0, clubs: clubs) }
    }

    static func summary(of bids: GameBids, pitchingSide side: Side, clubs: PerSide<Club>) -> SideSummary {
        let bid = bids.tracker[side]
        let line = bids.final.pitching(side)
        func play(_ mark: BidPlay) -> Play {
            Play(
                inning: mark.inning, outs: mark.outsInInning, batter: "\(mark.batter)",
                batterName: bids.name(of: mark.batter), pitcher: "\(mark.pitcher)",
                pitcherName: bids.name(of: mark.pitcher), event: bids.eventText(ofPlay: mark.playNumber),
                words: PlayDescription.bidPlay(mark, name: bids.name(of:)))
        }
        var reason: UnofficialReason?
        if case .notOfficial(let why) = bid.status { reason = why }
        let official = bid.status == .official
        return SideSummary(
            gameID: bids.game.id, date: bids.date, homeTeam: bids.team(.home), awayTeam: bids.team(.away),
            pitchingTeam: bids.team(side), battingTeam: bids.team(side.opponent), pitchingClub: clubs[side],
            battingClub: clubs[side.opponent], pitchingSide: side,
            maxInning: bids.lastInning, outs: line.outs, hitsAllowed: line.hits,
            outsBeforeFirstHit: bid.firstHit?.outsBefore ?? line.outs, battersReachedWhileHitless: bid.battersReached,
            firstHit: bid.firstHit.map(play),
            outsBeforeFirstBaserunner: bid.firstBaserunner?.outsBefore ?? line.outs,
            firstBaserunnerEvent: bid.firstBaserunner.map { bids.eventText(ofPlay: $0.playNumber) },
            pitchers: bids.pitchersOfPlays[side].map(\.description), bidPitchers: bid.pitchers.map(\.description),
            pitcherNames: bids.pitchersOfPlays[side].map { bids.name(of: $0) }, official: official,
            perfect: official && bid.isPerfect, unofficialReason: reason, finalAway: bids.final.score.away,
            finalHome: bids.final.score.home, pitchesAtOut: bids.pitchesAtOut[side].map { Array($0.prefix(27)) },
            completedOn: bids.game.completionDate,
            pitching: bids.pitcherLines.lines(of: side).map {
                PitcherGame(pitcher: "\($0.pitcher)", outs: $0.outs, earnedRuns: $0.earnedRuns)
            },
            winningPitcher: bids.game.result.winningPitcher.map(\.description),
            losingPitcher: bids.game.result.losingPitcher.map(\.description),
            scheduledInnings: bids.game.scheduledInnings == 9 ? nil : bids.game.scheduledInnings)
    }

    /// How the bid ended, in words: "perfect game", "no-hitter", "broken up: Eric Sogard singles to
    /// center field off Kenta Maeda with nobody out in the top of the 9th", "hitless, not official:
    /// rain after 5 innings".
    package var ending: String {
        if official { return perfect ? "perfect game" : combined ? "combined no-hitter" : "no-hitter" }
        if let hit = firstHit {
            let extra = unofficialReason == .brokenInExtraInnings ? " (hitless through 9, not official)" : ""
            return "broken up: \(hit.words)\(extra)"
        }
        return "hitless, not official: \(unofficialReason?.rawValue ?? "game not over")"
    }
}

/// A pitcher's season so far: wins, losses and earned run average.
package struct PitcherRecord: Sendable, Hashable, Codable {
    package var wins = 0
    package var losses = 0
    package var outs = 0
    package var earnedRuns = 0

    package init() {}

    /// `3.45`: earned runs per nine innings; `-.--` before he has recorded an out.
    package var era: String {
        guard outs > 0 else { return "-.--" }
        let hundredths = (earnedRuns * 27 * 100 * 2 + outs) / (outs * 2)
        return "\(hundredths / 100)." + (hundredths % 100 < 10 ? "0" : "") + "\(hundredths % 100)"
    }

    /// `5-2, 3.45 ERA`.
    package var text: String { "\(wins)-\(losses), \(era) ERA" }
}

/// The season views built from side summaries.
package enum SeasonBids {
    /// Each pitcher's record (by Retrosheet id) from the games that ended before `date`
    /// (`yyyy-mm-dd`): his decisions, outs and earned runs.
    package static func pitcherRecords(_ sides: [SideSummary], before date: String) -> [String: PitcherRecord] {
        var records: [String: PitcherRecord] = [:]
        // By index: a side is a large value, and copying each one to read three fields was most
        // of the work.
        for index in sides.indices where (sides[index].completedOn ?? sides[index].date) < date {
            guard let pitching = sides[index].pitching else { continue }
            let (winner, loser) = (sides[index].winningPitcher, sides[index].losingPitcher)
            for game in pitching {
                records[game.pitcher, default: PitcherRecord()].outs += game.outs
                records[game.pitcher]!.earnedRuns += game.earnedRuns
                if game.pitcher == winner { records[game.pitcher]!.wins += 1 }
                if game.pitcher == loser { records[game.pitcher]!.losses += 1 }
            }
        }
        return records
    }

    /// Each game's result once (its two sides say the same), for standings: a suspended game on
    /// the day it was completed.
    package static func outcomes(_ sides: [SideSummary]) -> [GameOutcome] {
        var seen: Set<String> = []
        return sides.compactMap { side in
            guard seen.insert(side.gameID).inserted else { return nil }
            let (away, home) =
                side.pitchingSide == .away
                ? (side.pitchingClub, side.battingClub) : (side.battingClub, side.pitchingClub)
            return GameOutcome(
                gameID: side.gameID, date: side.completedOn ?? side.date, away: away, home: home,
                awayRuns: side.finalAway, homeRuns: side.finalHome)
        }
    }

    /// Every side of every game in `files`, with the games that could not be read.
    package static func summaries(of files: [String]) async -> (sides: [SideSummary], problems: [RetrosheetError]) {
        let read = await read(files)
        return (read.sides, read.problems)
    }

    /// Every side of every game in `files`, with the games that could not be read and the damaged
    /// records of those that were.
    package static func read(_ files: [String]) async -> (
        sides: [SideSummary], problems: [RetrosheetError], warnings: ReadingWarnings
    ) {
        var sides: [SideSummary] = []
        var problems: [RetrosheetError] = []
        var warnings = ReadingWarnings()
        await EventFiles.forEach(
            files,
            { file -> ([SideSummary], [RetrosheetError], ReadingWarnings) in
                var sides: [SideSummary] = []
                var problems: [RetrosheetError] = []
                var warnings = ReadingWarnings()
                let reader: EventFileReader
                do throws(RetrosheetError) {
                    reader = try EventFileReader(path: file)
                } catch {
                    return ([], [error], warnings)
                }
                var teams: [String: TeamRecord]?
                reader.forEachGame { result in
                    do throws(RetrosheetError) {
                        let game = try result.get()
                        warnings.add(game.warnings)
                        let bids = try GameBids.replay(game)
                        // The season's TEAM file, read once, only for a club the directory does
                        // not know (the Federal League's).
                        if teams == nil,
                            Side.allCases.contains(where: { TeamDirectory.club(bids.team($0), on: bids.date) == nil })
                        {
                            teams = ReplaySchedule.teamTable(near: [file], year: Int(bids.date.prefix(4)) ?? 0)
                        }
                        sides += SideSummary.sides(of: bids, teams: teams ?? [:])
                    } catch {
                        problems.append(error)
                    }
                }
                return (sides, problems, warnings)
            }
        ) { file in
            sides += file.0
            problems += file.1
            warnings.add(file.2)
        }
        return (sides, problems, warnings)
    }

    /// Official no-hitters, by date.
    package static func official(_ sides: [SideSummary]) -> [SideSummary] {
        sides.filter(\.official).sorted { ($0.date, $0.gameID) < ($1.date, $1.gameID) }
    }

    /// Hitless games, or games hitless through nine innings, that are not official no-hitters.
    package static func unofficial(_ sides: [SideSummary]) -> [SideSummary] {
        sides.filter {
            !$0.official && $0.unofficialReason != nil && ($0.hitsAllowed == 0 || $0.outsBeforeFirstHit >= 27)
        }
        .sorted { ($0.date, $0.gameID) < ($1.date, $1.gameID) }
    }

    /// Every side ranked by outs recorded before the first hit, then fewest batters reached
    /// before it, then date.
    package static func hallOfFame(_ sides: [SideSummary]) -> [SideSummary] {
        sides.sorted {
            if $0.outsBeforeFirstHit != $1.outsBeforeFirstHit { return $0.outsBeforeFirstHit > $1.outsBeforeFirstHit }
            if $0.battersReachedWhileHitless != $1.battersReachedWhileHitless {
                return $0.battersReachedWhileHitless < $1.battersReachedWhileHitless
            }
            return ($0.date, $0.gameID, $0.pitchingSide.rawValue) < ($1.date, $1.gameID, $1.pitchingSide.rawValue)
        }
    }
}
