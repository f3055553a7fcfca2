import Alerts
import Baseball
import Foundation
import Logging

/// What one item from a source did to a game: its events, in order, and the game after them.
package struct GameChange: Sendable {
    package var time: Date
    package var events: [GameEvent]
    /// The game's follower after the change: info, status, state, bids.
    package var game: GameFollower
    /// The item's number in the shared game log, when several instances follow the games together:
    /// every instance applies the same items in the same order, so what a change publishes can be
    /// numbered from it alike everywhere (the live stream's ids). Nil for a source read directly.
    package var sequence: Int64?

    package init(time: Date, events: [GameEvent], game: GameFollower, sequence: Int64? = nil) {
        self.time = time
        self.events = events
        self.game = game
        self.sequence = sequence
    }

    /// The moments among the events.
    package var moments: [Moment] {
        events.compactMap {
            if case .moment(let moment) = $0 { return moment }
            return nil
        }
    }
}

/// Takes the game changes, in order: the alert publisher, the live board and stream, the
/// scoreboard, the deals.
package protocol GameChangeConsumer: Sendable {
    /// Takes one change. Throwing stops the source that made it (a moment not stored must not be
    /// passed over).
    func consume(_ change: GameChange) async throws
}

/// The day's games: one follower per game, and the consumers every change goes to, in the
/// order given. Sources call `receive` (one source at a time), and it returns once every consumer
/// has the change: a source never runs ahead of what it made, and nothing queues up in between.
package actor GameHub: GameFeedSink {
    private var followers: [String: GameFollower] = [:]
    private let consumers: [any GameChangeConsumer]
    private let logger: Logger
    /// How often bids finished in the seasons known: each moment of a bid still alive carries its
    /// figures, and every out of a notable bid is a moment (devices may choose to hear of a bid
    /// when its odds pass a share).
    private let odds: BidOdds?
    /// What a completed no-hitter means from the seasons known (its moment's `meaning`).
    private let meaning: (@Sendable (_ completed: Moment, _ game: GameInfo) async -> String?)?
    /// Items and updates received so far.
    package private(set) var itemsReceived = 0
    package private(set) var updatesReceived = 0

    package init(
        consumers: [any GameChangeConsumer], odds: BidOdds? = nil,
        meaning: (@Sendable (_ completed: Moment, _ game: GameInfo) async -> String?)? = nil,
        logger: Logger = Logger(label: "nohit.games")
    ) {
        self.consumers = consumers
        self.odds = odds
        self.meaning = meaning
        self.logger = logger
    }

    package func receive(_ item: GameFeedItem, gameID: String, at time: Date) async throws {
        try await receive(item, gameID: gameID, at: time, sequence: nil)
    }

    /// Takes an item of the shared game log, numbered `sequence` there.
    package func receive(_ item: GameFeedItem, gameID: String, at time: Date, sequence: Int64?) async throws {
        var follower = followers[gameID] ?? GameFollower(gameID: gameID)
        follower.momentsAtEveryOut = odds != nil
        var events = follower.follow(item)
        if let odds {
            for index in events.indices {
                guard case .moment(var moment) = events[index], moment.kind.isBid, moment.kind.bidStillAlive else {
                    continue
                }
                moment.odds = odds.chance(outs: moment.outs)
                // And by the pitches the bid's pitchers have thrown, where the source counts them.
                let thrown = follower.pitcherLines.pitches(of: moment.pitchingSide)
                // (At a complete inning only: the row is the pitches as of its last out.)
                if let thrown, thrown > 0, moment.outs % 3 == 0 {
                    moment.odds?.pitches = odds.pitchChance(outs: moment.outs, pitches: thrown)
                }
                events[index] = .moment(moment)
            }
        }
        // A completed no-hitter: its last out in words, and what it means.
        for index in events.indices {
            guard case .moment(var moment) = events[index], moment.kind == .completed else { continue }
            moment.lastPlay = Self.lastPlay(follower.playByPlay, fielding: moment.pitchingSide)
            moment.meaning = await meaning?(moment, follower.info)
            events[index] = .moment(moment)
        }
        followers[gameID] = follower
        itemsReceived += 1
        switch item {
        case .updates(let list): updatesReceived += list.count
        case .revised(let list): updatesReceived += list.count
        default: break
        }
        for event in events {
            switch event {
            case .problem(let reason):
                logger.error(
                    "an update does not fit the game; it is followed no further until its source corrects it",
                    metadata: ["game.id": "\(gameID)", "problem": "\(reason)"])
            case .revision(let revision):
                logger.notice(
                    "play re-scored; bids recomputed",
                    metadata: ["game.id": "\(gameID)", "revision.from": "\(revision.from)"])
            default:
                break
            }
        }
        guard !events.isEmpty else { return }
        let change = GameChange(time: time, events: events, game: follower, sequence: sequence)
        for consumer in consumers { try await consumer.consume(change) }
    }

    /// The last play against the side fielding as `fielding` in words, without its full stop: a
    /// no-hitter's last out, even when a walk-off came after it (a substitution after a play
    /// carries its number, and comes after it).
    static func lastPlay(_ entries: [PlayByPlayEntry], fielding: Side) -> String? {
        let half = fielding == .home ? "top" : "bottom"
        guard let last = entries.last(where: { $0.half == half })?.number,
            var text = entries.first(where: { $0.number == last && $0.half == half })?.text
        else { return nil }
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Every game followed, by id.
    package var games: [GameFollower] { Array(followers.values) }

    package func game(id: String) -> GameFollower? { followers[id] }

    /// Updates applied by every game's engine: one per update received, re-scorings aside.
    package var applications: Int { followers.values.reduce(0) { $0 + $1.applications } }

    /// Games stopped by an update that did not fit, and why.
    package var problems: [String: String] { followers.compactMapValues(\.problem) }
}
