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
///
/// A follower is read, given its item and written back in one synchronous step (``apply(_:gameID:at:sequence:)``),
/// with everything it needs to finish its moments (the odds of history, what each bid's
/// no-hitter would mean, looked up ahead by the history warmer): no suspension point lies between
/// reading a follower and writing it back, by construction.
package actor GameHub: GameFeedSink {
    private var followers: [String: GameFollower] = [:]
    private let consumers: [any GameChangeConsumer]
    private let logger: Logger
    /// How often bids finished in the seasons known: each moment of a bid still alive carries its
    /// figures, and every out of a notable bid is a moment.
    private let odds: BidOdds?
    /// What each bid's no-hitter would mean, as far as it has been looked up.
    private let meanings: NoHitterMeanings
    /// Items and updates received so far.
    package private(set) var itemsReceived = 0
    package private(set) var updatesReceived = 0

    package init(
        consumers: [any GameChangeConsumer], odds: BidOdds? = nil, meanings: NoHitterMeanings = NoHitterMeanings(),
        logger: Logger = Logger(label: "nohit.games")
    ) {
        self.consumers = consumers
        self.odds = odds
        self.meanings = meanings
        self.logger = logger
    }

    package func receive(_ item: GameFeedItem, gameID: String, at time: Date) async throws {
        try await receive(item, gameID: gameID, at: time, sequence: nil)
    }

    /// Takes an item of the shared game log, numbered `sequence` there.
    package func receive(_ item: GameFeedItem, gameID: String, at time: Date, sequence: Int64?) async throws {
        // A bid in its 9th inning may end with this item: what its no-hitter means, if still being
        // looked up, is waited for (a local read, asked at the 4th hitless inning), so "No-hitter!"
        // carries it whatever the speed of the game or the machine.
        if let bids = followers[gameID]?.bids,
            Side.allCases.contains(where: { bids[$0].isAlive && bids[$0].outs >= 24 })
        {
            await meanings.answered(gameID: gameID)
        }
        guard let change = apply(item, gameID: gameID, at: time, sequence: sequence) else { return }
        for consumer in consumers { try await consumer.consume(change) }
    }

    /// The item applied to its game's follower, which is written back before anything else runs:
    /// the change to hand the consumers, nil when the item changed nothing.
    private func apply(_ item: GameFeedItem, gameID: String, at time: Date, sequence: Int64?) -> GameChange? {
        var follower = followers[gameID] ?? GameFollower(gameID: gameID)
        let events = follower.follow(
            item, context: FollowContext(odds: odds, meanings: meanings.meanings(gameID: gameID)))
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
        guard !events.isEmpty else { return nil }
        return GameChange(time: time, events: events, game: follower, sequence: sequence)
    }

    /// Every game followed, by id.
    package var games: [GameFollower] { Array(followers.values) }

    package func game(id: String) -> GameFollower? { followers[id] }

    /// Updates applied by every game's engine: one per update received, re-scorings aside.
    package var applications: Int { followers.values.reduce(0) { $0 + $1.applications } }

    /// Games stopped by an update that did not fit, and why.
    package var problems: [String: String] { followers.compactMapValues(\.problem) }
}
