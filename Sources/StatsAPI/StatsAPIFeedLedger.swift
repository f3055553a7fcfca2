import Baseball
import Foundation

/// What the Stats API source has said about each game, so that each change is said once: the
/// poller reads whole feeds (and the schedule) again and again, and a game's follower must hear
/// only what is new — the next updates, or the whole list again when a play was re-scored. Pure.
package struct StatsAPIFeedLedger: Sendable {
    private struct Said: Sendable {
        var info: GameInfo?
        var start: Date?
        var starters: [Appearance] = []
        var updates: [GameUpdate] = []
        var status: GameStatus?
        var result: GameResult?
        var atBat: AtBat?
        var abs: ABSChallenges?
    }

    private var games: [String: Said] = [:]

    package init() {}

    /// What a newly read feed says that was not said before, in order.
    package mutating func items(for game: GumboGame, now: Date) -> [GameFeedItem] {
        var said = games[game.gameID] ?? Said()
        var items: [GameFeedItem] = []
        var info = game.info
        // The schedule's broadcasts stay when the feed has none (the feed never carries them).
        if info.broadcasts.isEmpty, let known = said.info?.broadcasts { info.broadcasts = known }
        let start = game.start ?? said.start ?? now
        if info != said.info || start != said.start {
            items.append(.scheduled(info, start: start))
            said.info = info
            said.start = start
        }
        if !game.starters.isEmpty && game.starters != said.starters {
            items.append(.lineups(game.starters, homeBatsFirst: false))
            said.starters = game.starters
            said.atBat = nil  // the follower starts over: the count is said again
        }
        if !said.starters.isEmpty {
            if game.updates.count >= said.updates.count && game.updates.starts(with: said.updates) {
                if game.updates.count > said.updates.count {
                    items.append(.updates(Array(game.updates[said.updates.count...])))
                }
            } else {
                items.append(.revised(game.updates))
                said.atBat = nil
            }
            said.updates = game.updates
        }
        // The count between plays, when it moved (not part of the updates: the log of plays stays
        // as it is).
        if let atBat = game.atBat, !said.starters.isEmpty, atBat != said.atBat {
            items.append(.atBat(atBat))
            said.atBat = atBat
        }
        // The challenges, when they changed (apart from the plays too).
        if let abs = game.abs, !said.starters.isEmpty, abs != said.abs {
            items.append(.challenges(abs))
            said.abs = abs
        }
        let status = game.status
        let result = game.isFinal ? game.result : nil
        if status != said.status || result != said.result {
            items.append(.status(status, result: result))
            said.status = status
            said.result = result
        }
        games[game.gameID] = said
        return items
    }

    /// Takes up a game from what was said of it before (by another instance, into the shared game
    /// log): what a feed or the schedule says next is compared with that, so only what is new is
    /// said.
    package mutating func takeUp(_ gameID: String, said items: [GameFeedItem]) {
        var said = Said()
        for item in items {
            switch item {
            case .scheduled(let info, let start):
                said.info = info
                said.start = start
            case .lineups(let starters, _):
                said.starters = starters
            case .updates(let updates):
                said.updates += updates
            case .revised(let updates):
                said.updates = updates
            case .status(let status, let result):
                said.status = status
                said.result = result
            case .atBat(let atBat):
                said.atBat = atBat
            case .challenges(let abs):
                said.abs = abs
            }
        }
        games[gameID] = said
    }

    /// What a game of the schedule says that was not said before: the game itself until its feed
    /// is read, and the statuses the feed does not give (not started, postponed, suspended,
    /// cancelled) with the new date when there is one.
    package mutating func items(for game: ScheduleGame, now: Date) -> (gameID: String, items: [GameFeedItem])? {
        guard let gameID = game.gameID, let info = game.gameInfo(id: gameID) else { return nil }
        var said = games[gameID] ?? Said()
        var items: [GameFeedItem] = []
        let start = ISO8601DateFormatter().date(from: game.gameDate) ?? said.start ?? now
        if said.info == nil || said.info?.broadcasts != info.broadcasts {
            var merged = said.info ?? info
            merged.broadcasts = info.broadcasts
            items.append(.scheduled(merged, start: start))
            said.info = merged
            said.start = start
        }
        switch game.status.phase {
        case .notStarted, .postponed, .suspended, .cancelled:
            let status = game.status.gameStatus(resumesOn: game.rescheduleDate ?? game.resumeDate)
            // A schedule read before the feed moved on may still say "not started": the feed wins.
            if status != said.status && (game.status.phase != .notStarted || said.updates.isEmpty) {
                items.append(.status(status, result: nil))
                said.status = status
            }
        case .live, .final, .unknown:
            // The feed says these, with the plays.
            break
        }
        games[gameID] = said
        return (gameID, items)
    }
}

extension ScheduleGame {
    /// The service's id of the game: Retrosheet's form, home team code, official date, and the
    /// game's number in a doubleheader (0 for a single game).
    package var gameID: String? {
        let date = officialDate ?? String(gameDate.prefix(10))
        guard let home = TeamDirectory.club(mlbID: teams.home.team.id, on: date) else { return nil }
        let number = doubleHeader.map { $0 == "N" } ?? true ? 0 : (gameNumber ?? 1)
        return home.retrosheet + date.replacingOccurrences(of: "-", with: "") + "\(number)"
    }

    /// The game as the schedule describes it: teams, date, where to watch.
    package func gameInfo(id: String) -> GameInfo? {
        let date = officialDate ?? String(gameDate.prefix(10))
        guard let home = TeamDirectory.club(mlbID: teams.home.team.id, on: date),
            let away = TeamDirectory.club(mlbID: teams.away.team.id, on: date)
        else { return nil }
        var info = GameInfo(
            id: id, date: date, away: GameInfo.Team(club: away), home: GameInfo.Team(club: home),
            broadcasts: carriage)
        info.setProbablePitchers(away: teams.away.probablePitcher, home: teams.home.probablePitcher)
        info.gameType = gameType
        info.venue = venue?.name
        if let innings = scheduledInnings ?? linescore?.scheduledInnings, innings != 9 {
            info.scheduledInnings = innings
        }
        return info
    }
}

extension GameInfo {
    /// Names the probable pitchers (and keeps their names with the game's players).
    mutating func setProbablePitchers(away: Person?, home: Person?) {
        guard away != nil || home != nil else { return }
        probablePitchers = ProbablePitchers(away: away.map { "\($0.id)" }, home: home.map { "\($0.id)" })
        for person in [away, home].compactMap(\.self) {
            if let name = person.fullName { players["\(person.id)"] = name }
        }
    }
}
