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
            var previous: (time: Date, sequence: [UInt8], half: (Int, Side)?) = (game.start, [], nil)
            for (order, timed) in game.updates.enumerated() {
                if pitches, case .play(let record) = timed.update, order < game.pitchSequences.count {
                    let sequence = game.pitchSequences[order]
                    let half = (record.inning, record.battingSide)
                    // A plate appearance written over several records repeats its earlier
                    // pitches: only those after them are new.
                    let continues = previous.half.map { $0 == half } == true && sequence.starts(with: previous.sequence)
                    let all = PitchSequence.pitches(sequence)
                    let new = all.dropFirst(continues ? PitchSequence.pitches(previous.sequence).count : 0)
                    // Each new pitch but the last (the play is made on it, or after it) between
                    // the update before and this one.
                    let shown = Array(new.dropLast())
                    let span = timed.time.timeIntervalSince(previous.time)
                    for (number, pitch) in shown.enumerated() {
                        let time = previous.time.addingTimeInterval(span * Double(number + 1) / Double(shown.count + 1))
                        add(
                            time, 2 * order - 1,
                            .atBat(
                                AtBat(
                                    batter: record.batter, balls: pitch.balls, strikes: pitch.strikes,
                                    lastPitch: PitchSequence.words(pitch.code), afterUpdates: order)))
                    }
                    let ends = record.play?.eventType.endsPlateAppearance ?? false
                    // A play within the plate appearance (a steal, a wild pitch): the count after
                    // every pitch so far, once the play is in.
                    if !ends, record.play != nil, let last = all.last {
                        add(
                            timed.time, 2 * order + 1,
                            .atBat(
                                AtBat(
                                    batter: record.batter, balls: last.balls, strikes: last.strikes,
                                    lastPitch: PitchSequence.words(last.code), afterUpdates: order + 1)))
                    }
                    previous = (timed.time, ends ? [] : sequence, half)
                } else {
                    previous.time = timed.time
                }
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
            follower.momentsAtEveryOut = everyOut
            for event in follower.follow(entry.item) {
                if case .moment(let moment) = event, scoreAlerts || moment.kind.isBid {
                    all.append((moment, follower.info, entry.time))
                }
            }
            followers[entry.gameID] = follower
        }
        return all
    }
}
