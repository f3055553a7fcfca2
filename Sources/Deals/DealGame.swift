import Alerts
import Baseball
import Foundation

/// What the deals need of a final game, from its follower (the one engine path, whatever the
/// source): teams, official date, the date a suspended game was completed, game type and number,
/// runs, innings, who saved it, and the counted plays.
package struct DealGame: Sendable, Hashable, Codable {
    package var gameID: String
    /// The official date (`yyyy-mm-dd`): a game that ends after midnight keeps it.
    package var date: String
    /// The date a suspended game was completed on, when later than `date`.
    package var completedOn: String?
    package var gameType: String
    /// 1 or 2 in a doubleheader, else 0.
    package var gameNumber: Int
    /// Retrosheet codes and nicknames.
    package var teams: PerSide<String>
    package var names: PerSide<String>
    package var runs: PerSide<Int>
    package var innings: Int
    package var scheduledInnings: Int
    /// A forfeit is nobody's win here.
    package var forfeit: Bool
    /// The side whose pitcher earned the save, and his name.
    package var saveBy: Side?
    package var savePitcher: String?
    package var tally: GameTally
    /// Names of the players the tally's plays name.
    package var players: [String: String]

    package init(
        gameID: String, date: String, completedOn: String?, gameType: String, gameNumber: Int, teams: PerSide<String>,
        names: PerSide<String>, runs: PerSide<Int>, innings: Int, scheduledInnings: Int, forfeit: Bool, saveBy: Side?,
        savePitcher: String?, tally: GameTally, players: [String: String]
    ) {
        self.gameID = gameID
        self.date = date
        self.completedOn = completedOn
        self.gameType = gameType
        self.gameNumber = gameNumber
        self.teams = teams
        self.names = names
        self.runs = runs
        self.innings = innings
        self.scheduledInnings = scheduledInnings
        self.forfeit = forfeit
        self.saveBy = saveBy
        self.savePitcher = savePitcher
        self.tally = tally
        self.players = players
    }

    /// The day the game counts for: the day it was completed (a suspended game's), else its
    /// official date.
    package var dealDate: String { completedOn ?? date }
    package var season: Int { Int(date.prefix(4)) ?? 0 }

    package func side(of team: String) -> Side? {
        teams.away == team ? .away : teams.home == team ? .home : nil
    }

    package func name(_ player: PlayerID) -> String { players["\(player)"] ?? "\(player)" }

    /// "Nationals 9, Orioles 2" (the winner first; a tie away first).
    package var score: String {
        let away = "\(names.away) \(runs.away)"
        let home = "\(names.home) \(runs.home)"
        return runs.home > runs.away ? "\(home), \(away)" : "\(away), \(home)"
    }
}

extension DealGame {
    /// The game as its follower ends it; nil until the follower has it final with its lineups.
    package init?(follower: GameFollower, forfeit: Bool = false) {
        guard follower.isFinal, let state = follower.state, let result = follower.result else { return nil }
        let info = follower.info
        gameID = follower.gameID
        date = info.date
        completedOn = info.completedOn.flatMap { $0 > info.date ? $0 : nil }
        gameType = info.gameType ?? "R"
        gameNumber = info.gameNumber
        teams = PerSide(away: info.away.code, home: info.home.code)
        names = PerSide(away: info.away.nickname, home: info.home.nickname)
        runs = state.score
        innings = state.inning
        scheduledInnings = result.scheduledInnings
        self.forfeit = forfeit
        if let save = result.savePitcher, state.score.away != state.score.home {
            saveBy = state.score.away > state.score.home ? .away : .home
            savePitcher = info.name(of: save)
        }
        tally = follower.tally
        var players: [String: String] = [:]
        for mark in tally.marks.away + tally.marks.home + tally.scoring {
            players["\(mark.player)"] = info.name(of: mark.player)
        }
        self.players = players
    }
}
