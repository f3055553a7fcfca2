import Alerts
import Baseball
import Foundation
import Pipeline
import Storage
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

/// The day's games as they stand, fed by the game changes of any source, read by the API.
package final class LiveBoard: Sendable {
    private let games = Mutex<[String: GameSnapshot]>([:])

    package init() {}

    /// Records a game as it stands after `change` and returns its snapshot, or nil for a game
    /// not yet scheduled (no teams to show).
    @discardableResult
    package func apply(_ change: GameChange) -> GameSnapshot? {
        let game = change.game
        guard game.isScheduled else { return nil }
        let snapshot = Self.snapshot(game, at: change.time)
        games.withLock { $0[snapshot.id] = snapshot }
        return snapshot
    }

    static func snapshot(_ game: GameFollower, at time: Date) -> GameSnapshot {
        let info = game.info
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
        let state = game.state
        let status: GameSnapshot.Status
        switch game.status.phase {
        case .final: status = .final
        case .scheduled, .warmup, .postponed, .cancelled: status = .scheduled
        case .live, .delayed, .suspended: status = .live
        }
        let bids = game.bids.map { [bid($0.home), bid($0.away)] } ?? []
        return GameSnapshot(
            id: info.id, date: info.date, startTime: game.start ?? time, status: status,
            away: .init(code: info.away.code, name: info.away.name, runs: state?.score.away ?? 0),
            home: .init(code: info.home.code, name: info.home.name, runs: state?.score.home ?? 0),
            inning: state?.inning ?? 1, half: state?.battingSide == .home ? "bottom" : "top", outs: state?.outs ?? 0,
            // The home side pitches to the away batters first.
            bids: bids, broadcasts: info.broadcasts.map(\.name), updatedAt: time)
    }

    /// Every game of the day by start time.
    package var all: [GameSnapshot] {
        games.withLock { $0.values.sorted { ($0.startTime, $0.id) < ($1.startTime, $1.id) } }
    }

    package func game(id: String) -> GameSnapshot? {
        games.withLock { $0[id] }
    }
}

/// The live board and the live stream as a consumer of game changes: the change's moments go on
/// the stream (after the alert publisher stored them: it comes first), then the game as it
/// stands. The same for every source.
package struct LiveConsumer: GameChangeConsumer {
    package let board: LiveBoard
    package let feed: LiveFeed

    package init(board: LiveBoard, feed: LiveFeed) {
        self.board = board
        self.feed = feed
    }

    package func consume(_ change: GameChange) async throws {
        for moment in change.moments { feed.publish(moment, game: change.game.info, at: change.time) }
        if let snapshot = board.apply(change) { feed.publish(snapshot) }
    }
}

extension LiveFeed {
    /// A moment as the stream's `moment` event.
    package func publish(_ moment: Moment, game: GameInfo, at time: Date) {
        let view = MomentView(StoredMoment(moment: moment, game: game, occurredAt: time))
        if let data = try? APIServer.encoder.encode(view) {
            publish(.moment, data: String(decoding: data, as: UTF8.self))
        }
    }

    /// A game as it stands, as the stream's `game` event.
    package func publish(_ snapshot: GameSnapshot) {
        if let data = try? APIServer.encoder.encode(snapshot) {
            publish(.game, data: String(decoding: data, as: UTF8.self))
        }
    }
}
