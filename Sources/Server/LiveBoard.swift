import Alerts
import Baseball
import Foundation
import Pipeline
import Synchronization

/// What the API and the stream say about a game: teams, status, inning, score, and each
/// pitching side's no-hit bid.
package struct GameSnapshot: Sendable, Hashable, Codable {
    package struct Team: Sendable, Hashable, Codable {
        package var code: String
        package var name: String
        package var runs: Int
    }

    package struct Bid: Sendable, Hashable, Codable {
        /// The team in the field.
        package var team: String
        package var pitchers: [String]
        package var currentPitcher: String
        package var outs: Int
        package var innings: Int
        package var hitless: Bool
        package var perfect: Bool
        /// alive, broken-up, official or not-official.
        package var status: String
    }

    package enum Status: String, Sendable, Hashable, Codable {
        case scheduled
        case live
        case final
    }

    package var id: String
    package var date: String
    package var startTime: Date
    package var status: Status
    package var away: Team
    package var home: Team
    package var inning: Int
    /// top or bottom.
    package var half: String
    package var outs: Int
    package var bids: [Bid]
    package var broadcasts: [String]
    package var updatedAt: Date

    /// A side hitless through at least `minimumOuts`, in a game still on or just won without a hit.
    package func attempts(minimumOuts: Int) -> [Bid] {
        bids.filter { $0.hitless && $0.outs >= minimumOuts && ($0.status == "alive" || $0.status == "official") }
    }
}

/// The day's games as they stand, fed by the replay (or later a live source), read by the API.
package final class LiveBoard: Sendable {
    private let games: Mutex<[String: GameSnapshot]>

    package init(games: [ReplayGame] = []) {
        var snapshots: [String: GameSnapshot] = [:]
        for game in games {
            snapshots[game.record.id] = Self.scheduled(game.info, start: game.start)
        }
        self.games = Mutex(snapshots)
    }

    static func scheduled(_ info: GameInfo, start: Date) -> GameSnapshot {
        GameSnapshot(
            id: info.id, date: info.date, startTime: start, status: .scheduled,
            away: .init(code: info.away.code, name: info.away.name, runs: 0),
            home: .init(code: info.home.code, name: info.home.name, runs: 0), inning: 1, half: "top",
            outs: 0, bids: [], broadcasts: info.broadcasts.map(\.name), updatedAt: start)
    }

    /// Records a replay step and returns the game's new snapshot.
    @discardableResult
    package func apply(_ step: DayReplay.Step) -> GameSnapshot {
        apply(
            info: step.game.info, start: step.game.start, state: step.state, bids: step.bids,
            isFinished: step.isFinished, at: step.time)
    }

    /// Records a game as it stands (from any source) and returns its new snapshot.
    @discardableResult
    package func apply(
        info: GameInfo, start: Date, state: GameState, bids: PerSide<NoHitBid>, isFinished: Bool, at time: Date
    ) -> GameSnapshot {
        func bid(_ bid: NoHitBid) -> GameSnapshot.Bid {
            let team = bid.pitchingSide == .home ? info.home.code : info.away.code
            let status: String
            switch bid.status {
            case .alive: status = "alive"
            case .brokenUp: status = "broken-up"
            case .official: status = "official"
            case .notOfficial: status = "not-official"
            }
            return .init(
                team: team, pitchers: bid.pitchers.map(info.name(of:)),
                currentPitcher: info.name(of: bid.currentPitcher),
                outs: bid.outs, innings: bid.hitlessInnings, hitless: bid.isHitless,
                perfect: bid.isHitless && bid.isPerfect,
                status: status)
        }
        let snapshot = GameSnapshot(
            id: info.id, date: info.date, startTime: start,
            status: isFinished ? .final : .live,
            away: .init(code: info.away.code, name: info.away.name, runs: state.score.away),
            home: .init(code: info.home.code, name: info.home.name, runs: state.score.home), inning: state.inning,
            half: state.battingSide == .away ? "top" : "bottom", outs: state.outs,
            // The home side pitches to the away batters first.
            bids: [bid(bids.home), bid(bids.away)], broadcasts: info.broadcasts.map(\.name),
            updatedAt: time)
        games.withLock { $0[snapshot.id] = snapshot }
        return snapshot
    }

    /// A game known before it starts (from the schedule).
    package func add(_ info: GameInfo, start: Date) {
        games.withLock { games in
            if games[info.id] == nil { games[info.id] = Self.scheduled(info, start: start) }
        }
    }

    /// Every game of the day by start time.
    package var all: [GameSnapshot] {
        games.withLock { $0.values.sorted { ($0.startTime, $0.id) < ($1.startTime, $1.id) } }
    }

    package func game(id: String) -> GameSnapshot? {
        games.withLock { $0[id] }
    }
}
