import Alerts
import Baseball
import Foundation
import Retrosheet

/// A past day's games as a source says them, in time order: every game's schedule at the start,
/// then each game's lineups and first pitch at its real start, its updates spread over its real
/// length, and its end with the result its records give. Pure.
package struct ReplayTimeline: Sendable {
    package struct Entry: Sendable {
        package var time: Date
        package var gameID: String
        package var item: GameFeedItem
        /// Updates the item carries.
        package var updates: Int
    }

    package let entries: [Entry]

    /// The day's `games`, their schedules said at `announced` (by default a minute before the
    /// first pitch of the day); with `pitches`, the count after each pitch between plays, from the
    /// records' pitch sequences (`AtBat` items).
    package init(games: [ReplayGame], announced: Date? = nil, pitches: Bool = true) {
        let firstPitch = games.map(\.start).min() ?? Date(timeIntervalSince1970: 0)
        let announced = announced ?? firstPitch.addingTimeInterval(-60)
        var keyed: [(time: Date, game: Int, order: Int, entry: Entry)] = []
        for (index, game) in games.enumerated() {
            let id = game.record.id
            func add(_ time: Date, _ order: Int, _ item: GameFeedItem, updates: Int = 0) {
                keyed.append((time, index, order, Entry(time: time, gameID: id, item: item, updates: updates)))
            }
            add(min(announced, game.start), -6, .scheduled(game.info, start: game.start))
            add(game.start, -5, .lineups(game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst))
            add(game.start, -4, .status(GameStatus(.live), result: nil))
            if pitches {
                for pitch in game.timedPitches() {
                    add(pitch.time, 2 * pitch.update + (pitch.afterPlay ? 1 : -1), .atBat(pitch.atBat))
                }
            }
            for (order, timed) in game.updates.enumerated() {
                add(timed.time, 2 * order, .updates([timed.update]), updates: 1)
            }
            add(game.end, 2 * game.updates.count, .status(GameStatus(.final), result: game.result))
        }
        keyed.sort { ($0.time, $0.game, $0.order) < ($1.time, $1.game, $1.order) }
        entries = keyed.map(\.entry)
    }
}

extension ReplayTimeline {
    /// Every moment of the day's no-hit bids in order, with its game and time (score alerts too
    /// when asked for; every out of a notable bid with `everyOut`, as a service with the odds of
    /// history derives them): one follower per game over the timeline, nothing published
    /// (reports, benchmarks, tests).
    package func moments(scoreAlerts: Bool = false, everyOut: Bool = false) -> [(
        moment: Moment, game: GameInfo, time: Date
    )] {
        var followers: [String: GameFollower] = [:]
        var all: [(moment: Moment, game: GameInfo, time: Date)] = []
        for entry in entries {
            var follower = followers[entry.gameID] ?? GameFollower(gameID: entry.gameID)
            for event in follower.follow(entry.item, context: FollowContext(everyOut: everyOut)) {
                if case .moment(let moment) = event, scoreAlerts || moment.kind.isBid {
                    all.append((moment, follower.info, entry.time))
                }
            }
            followers[entry.gameID] = follower
        }
        return all
    }
}
