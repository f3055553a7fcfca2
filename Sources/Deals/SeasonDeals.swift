import Alerts
import Baseball
import Foundation
import Retrosheet

/// Deal games read from Retrosheet event files, through the same follower as a live game: each
/// game's lineups, updates and end (`info` records: game type, pitchers of record, the date a
/// suspended game was completed).
package enum SeasonDeals {
    /// The final games of `files` in the order they count (deal date, then doubleheader game
    /// number, then id), with the games that could not be read.
    package static func games(of files: [String]) async -> (games: [DealGame], problems: [RetrosheetError]) {
        var games: [DealGame] = []
        var problems: [RetrosheetError] = []
        // Each season's TEAM file, read once (event files are named yyyyTTT.EV?); a file named
        // otherwise reads the one beside it for its games' year.
        var tables: [Int: [String: TeamRecord]] = [:]
        for file in files {
            guard let year = Int((file as NSString).lastPathComponent.prefix(4)), tables[year] == nil else { continue }
            tables[year] = ReplaySchedule.teamTable(near: [file], year: year)
        }
        let known = tables
        await EventFiles.forEach(
            files,
            { file -> ([DealGame], [RetrosheetError]) in
                let reader: EventFileReader
                do throws(RetrosheetError) {
                    reader = try EventFileReader(path: file)
                } catch {
                    return ([], [error])
                }
                var games: [DealGame] = []
                var problems: [RetrosheetError] = []
                var teams = known
                reader.forEachGame { result in
                    do throws(RetrosheetError) {
                        let record = try result.get()
                        let parts = (record.date ?? "").split(separator: "/").compactMap { Int($0) }
                        guard parts.count == 3 else {
                            throw RetrosheetError(
                                file: record.file, line: record.line, text: "id,\(record.id)",
                                reason: "the game has no info,date yyyy/mm/dd", gameID: record.id)
                        }
                        if teams[parts[0]] == nil {
                            teams[parts[0]] = ReplaySchedule.teamTable(near: [file], year: parts[0])
                        }
                        let updates = try record.updates()
                        let scheduled = ReplaySchedule.schedule(
                            record, updates: updates, teams: teams[parts[0]] ?? [:], year: parts[0], month: parts[1],
                            day: parts[2])
                        if let game = follow(scheduled, record: record) { games.append(game) }
                    } catch {
                        problems.append(error)
                    }
                }
                return (games, problems)
            }
        ) { file in
            games += file.0
            problems += file.1
        }
        return (games.sorted(by: order), problems)
    }

    /// A game through the follower to its end.
    static func follow(_ game: ReplayGame, record: GameRecord) -> DealGame? {
        var follower = GameFollower(gameID: record.id)
        _ = follower.follow(.scheduled(game.info, start: game.start))
        _ = follower.follow(.lineups(record.startingAppearances, homeBatsFirst: record.homeBatsFirst))
        _ = follower.follow(.updates(game.updates.map(\.1)))
        _ = follower.follow(.status(GameStatus(.final), result: record.result))
        return DealGame(follower: follower)
    }

    /// The order games count in: deal date, doubleheader game number, id.
    package static func order(_ a: DealGame, _ b: DealGame) -> Bool {
        (a.dealDate, a.gameNumber, a.gameID) < (b.dealDate, b.gameNumber, b.gameID)
    }

    /// Every trigger of `games` (in order) under `rules`.
    package static func triggers(_ games: [DealGame], rules: [DealRule]) -> [DealTrigger] {
        var book = DealBook(rules: rules)
        return games.flatMap { book.evaluate($0) }
    }
}
