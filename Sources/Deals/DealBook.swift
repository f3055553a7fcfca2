import Alerts
import Baseball
import Foundation

/// A rule that a final game triggered: which version, which game, the day it counts for, the days
/// it can be redeemed, and why, in words. Its id is UUIDv5 of "rule@version/game", so the same
/// game seen again (a replay, a restart, another source) gives the same trigger.
package struct DealTrigger: Sendable, Hashable, Codable, Identifiable {
    package var id: UUID
    package var ruleID: String
    package var version: Int
    package var gameID: String
    /// The game's official date.
    package var gameDate: String
    /// The day the game counts for (its completion date when suspended).
    package var dealDate: String
    /// The local days the reward can be had, in the rule's time zone.
    package var redeemDays: [String]
    /// "Wednesday, Aug 26, all day (America/New_York)".
    package var window: String
    /// The franchise credited (the rule's team, or the team that did it in a rule for either).
    package var team: String
    /// "Nationals 9, Orioles 2".
    package var score: String
    /// The play that did it, when one did: "Juan Soto's home run in the 6th made it 7".
    package var play: String?
    /// "Nationals 9, Orioles 2 on Aug 25: Juan Soto's home run in the 6th made it 7."
    package var why: String

    package static let namespace = UUID(uuidString: "3A8C1E52-6D0B-4F8E-9C57-1B2D4E6F8A90")!

    package static func id(rule: DealRule, gameID: String) -> UUID {
        UUID.version5(namespace: namespace, name: "\(rule.versionedID)/\(gameID)")
    }

    /// What an alert says of it.
    package func notice(_ rule: DealRule) -> DealNotice {
        DealNotice(
            ruleID: ruleID, version: version, sponsor: rule.sponsor, reward: rule.reward.text, code: rule.reward.code,
            day: redeemDays.first ?? dealDate, window: window, why: why)
    }
}

/// Evaluates rules against final games, in the order they end. Pure. It remembers each
/// postseason series' games and events (for "first in a series"), so a book is fed a season's
/// final games in order — the live service seeds it with the games it already saw.
package struct DealBook: Sendable {
    package let rules: [DealRule]
    private var seriesGames: [String: Int] = [:]
    /// "series|team|event" and "series|*|event" seen in a series' earlier games.
    private var seriesEvents: Set<String> = []
    /// Games already counted in their series (a game seen again is not counted twice).
    private var counted: [String: (series: String, number: Int, events: Set<String>)] = [:]

    package init(rules: [DealRule]) {
        self.rules = rules
    }

    /// The rules in force on `date`, one version per id, by id.
    package func rules(on date: String) -> [DealRule] {
        Dictionary(grouping: rules.filter { $0.isEffective(on: date) }, by: \.id).values
            .compactMap { $0.max { $0.version < $1.version } }.sorted { $0.id < $1.id }
    }

    /// Every rule id with its newest version, by id.
    package var latestRules: [DealRule] {
        Dictionary(grouping: rules, by: \.id).values.compactMap { $0.max { $0.version < $1.version } }
            .sorted { $0.id < $1.id }
    }

    /// The triggers of `game` (final), and the game remembered for its series. Seeing a game
    /// again (a re-scoring) evaluates it against the same series state as the first time.
    package mutating func evaluate(_ game: DealGame) -> [DealTrigger] {
        let series = Self.seriesKey(game)
        let seriesNumber: Int
        var before = seriesEvents
        if let known = counted[game.gameID] {
            seriesNumber = known.number
            before.subtract(known.events)
            seriesEvents.subtract(known.events)
        } else {
            seriesNumber = (seriesGames[series] ?? 0) + 1
            seriesGames[series] = seriesNumber
        }
        var events: Set<String> = []
        for event in DealEvent.allCases {
            for side in Side.allCases where game.tally.count(event, batting: side) > 0 {
                events.insert("\(series)|\(game.teams[side])|\(event.rawValue)")
                events.insert("\(series)|*|\(event.rawValue)")
            }
        }
        let context = Context(game: game, series: series, seriesNumber: seriesNumber, seenBefore: before)
        var triggers: [DealTrigger] = []
        for rule in rules(on: game.date) {
            if let trigger = Self.trigger(rule, context) { triggers.append(trigger) }
        }
        counted[game.gameID] = (series, seriesNumber, events.subtracting(before))
        seriesEvents.formUnion(events)
        return triggers
    }

    /// A postseason series: season, round and the two clubs; a regular-season game is its own.
    static func seriesKey(_ game: DealGame) -> String {
        guard ["F", "D", "L", "W"].contains(game.gameType) else { return game.gameID }
        let clubs = [game.teams.away, game.teams.home].sorted().joined(separator: "-")
        return "\(game.season)-\(game.gameType)-\(clubs)"
    }

    struct Context {
        var game: DealGame
        var series: String
        var seriesNumber: Int
        var seenBefore: Set<String>
    }

    static func trigger(_ rule: DealRule, _ context: Context) -> DealTrigger? {
        let game = context.game
        guard rule.games.types.contains(game.gameType) else { return nil }
        var side: Side?
        if let team = rule.team {
            guard let found = game.side(of: team.retro) else { return nil }
            side = found
        }
        if let side {
            switch rule.games.venue {
            case .home: guard side == .home else { return nil }
            case .away: guard side == .away else { return nil }
            case .any: break
            }
        }
        guard holds(rule.when, side: side, context) else { return nil }
        let days = redeemDays(rule, context)
        guard !days.isEmpty else { return nil }
        let credited =
            side.map { game.teams[$0] } ?? firstSide(rule.when, context).map { game.teams[$0] } ?? game.teams.home
        let play = explanation(rule.when, side: side, context)
        let why = "\(game.score) on \(DealCalendar.spoken(game.date))" + (play.map { ": \($0)." } ?? ".")
        return DealTrigger(
            id: DealTrigger.id(rule: rule, gameID: game.gameID), ruleID: rule.id, version: rule.version,
            gameID: game.gameID, gameDate: game.date, dealDate: game.dealDate, redeemDays: days,
            window: window(rule, days: days), team: credited, score: game.score, play: play, why: why)
    }

    static func outcome(_ game: DealGame, side: Side) -> DealCondition.Outcome? {
        if game.forfeit { return nil }
        let mine = game.runs[side]
        let theirs = game.runs[side.opponent]
        return mine > theirs ? .win : mine < theirs ? .loss : .tie
    }

    static func count(_ event: DealEvent, by actor: DealCondition.Actor, side: Side?, _ game: DealGame) -> Int {
        guard let side else { return Side.allCases.reduce(0) { $0 + game.tally.count(event, batting: $1) } }
        return game.tally.count(event, batting: actor == .batters ? side : side.opponent)
    }

    static func holds(_ condition: DealCondition, side: Side?, _ context: Context) -> Bool {
        let game = context.game
        switch condition {
        case .all(let list): return list.allSatisfy { holds($0, side: side, context) }
        case .any(let list): return list.contains { holds($0, side: side, context) }
        case .not(let inner): return !holds(inner, side: side, context)
        case .result(let wanted):
            guard let side else { return false }
            return outcome(game, side: side) == wanted
        case .runsFor(let comparison):
            guard let side else { return false }
            return comparison.holds(game.runs[side])
        case .runsAgainst(let comparison):
            guard let side else { return false }
            return comparison.holds(game.runs[side.opponent])
        case .margin(let comparison):
            guard let side else { return false }
            return comparison.holds(game.runs[side] - game.runs[side.opponent])
        case .venue(let venue):
            guard let side else { return false }
            return (venue == .home) == (side == .home)
        case .innings(let comparison): return comparison.holds(game.innings)
        case .count(let event, let actor, let comparison):
            return comparison.holds(count(event, by: actor, side: side, game))
        case .save:
            guard let side else { return false }
            return game.saveBy == side && outcome(game, side: side) == .win
        case .firstInSeries(let event):
            guard count(event, by: .batters, side: side, game) > 0 else { return false }
            let team = side.map { game.teams[$0] } ?? "*"
            return !context.seenBefore.contains("\(context.series)|\(team)|\(event.rawValue)")
        }
    }

    /// For a rule for either team: the side that did what it counts first.
    static func firstSide(_ condition: DealCondition, _ context: Context) -> Side? {
        switch condition {
        case .all(let list), .any(let list): return list.lazy.compactMap { firstSide($0, context) }.first
        case .count(let event, _, _), .firstInSeries(let event):
            let marks = Side.allCases.compactMap { side in
                context.game.tally.play(event, batting: side, reaching: 1).map { (side, $0) }
            }
            // The earlier inning, the visitors first within one.
            return marks.min { ($0.1.inning, $0.0.rawValue) < ($1.1.inning, $1.0.rawValue) }?.0
        default: return nil
        }
    }

    /// The play that met the first threshold of the condition, in words.
    static func explanation(_ condition: DealCondition, side: Side?, _ context: Context) -> String? {
        let game = context.game
        switch condition {
        case .all(let list), .any(let list):
            return list.lazy.filter { holds($0, side: side, context) }.compactMap {
                explanation($0, side: side, context)
            }.first
        case .runsFor(let comparison):
            guard let side, let target = comparison.threshold, target > 0,
                let mark = game.tally.play(batting: side, reachingRuns: target)
            else { return nil }
            let inning = "in the \(Words.ordinal(mark.inning))"
            let batter = game.name(mark.player)
            switch mark.eventType {
            case .single, .double, .triple, .homeRun, .walk, .intentionalWalk, .hitByPitch, .error, .fieldersChoice,
                .strikeout:
                return "\(batter)'s \(words(mark.eventType)) \(inning) made it \(mark.runsAfter)"
            case .genericOut:
                return "an out by \(batter) \(inning) made it \(mark.runsAfter)"
            default:
                return "a \(words(mark.eventType)) \(inning), \(batter) batting, made it \(mark.runsAfter)"
            }
        case .count(let event, let actor, let comparison):
            guard let target = comparison.threshold, target > 0 else { return nil }
            let batting: Side?
            if let side {
                batting = actor == .batters ? side : side.opponent
            } else {
                batting = firstSide(condition, context)
            }
            guard let batting, let mark = game.tally.play(event, batting: batting, reaching: target) else {
                return nil
            }
            return describe(event, mark, number: target, game)
        case .firstInSeries(let event):
            guard let batting = side ?? firstSide(condition, context),
                let mark = game.tally.play(event, batting: batting, reaching: 1)
            else { return nil }
            return describe(event, mark, number: 1, game) + " (game \(context.seriesNumber) of the series)"
        case .save:
            return game.savePitcher.map { "\($0) earned the save" }
        default:
            return nil
        }
    }

    static func describe(_ event: DealEvent, _ mark: GameTally.Mark, number: Int, _ game: DealGame) -> String {
        let who = game.name(mark.player)
        let inning = "in the \(Words.ordinal(mark.inning))"
        switch event {
        case .stolenBase:
            return number == 1 ? "\(who) stole a base \(inning)" : "steal number \(number): \(who) \(inning)"
        case .homeRun: return number == 1 ? "\(who) homered \(inning)" : "home run number \(number): \(who) \(inning)"
        case .strikeout: return "strikeout number \(number): \(who) \(inning)"
        }
    }

    static func words(_ type: EventType) -> String {
        switch type {
        case .single: "single"
        case .double: "double"
        case .triple: "triple"
        case .homeRun: "home run"
        case .walk, .intentionalWalk: "walk"
        case .hitByPitch: "hit-by-pitch"
        case .error: "reaching on an error"
        case .fieldersChoice: "fielder's choice"
        case .genericOut: "out"
        case .strikeout: "strikeout"
        case .wildPitch: "wild pitch"
        case .passedBall: "passed ball"
        case .balk: "balk"
        case .stolenBase: "steal"
        case .defensiveIndifference: "runner's advance on indifference"
        case .pickoffError, .foulError: "error"
        default: "runner's advance"
        }
    }

    /// The local days a trigger can be redeemed.
    static func redeemDays(_ rule: DealRule, _ context: Context) -> [String] {
        let day = context.game.dealDate
        switch rule.redeem {
        case .nextLocalDay: return [DealCalendar.adding(1, to: day)]
        case .untilMidnight: return [day]
        case .days(let count): return (1...count).map { DealCalendar.adding($0, to: day) }
        case .fixed(let dates):
            return dates.filter { $0.seriesGames?.contains(context.seriesNumber) ?? true }.prefix(1).map(\.date)
        }
    }

    static func window(_ rule: DealRule, days: [String]) -> String {
        let zone = " (\(rule.timeZone))"
        switch rule.redeem {
        case .nextLocalDay: return "\(DealCalendar.spoken(days[0])), all day" + zone
        case .untilMidnight: return "today, \(DealCalendar.spoken(days[0])), until midnight" + zone
        case .days:
            return "\(DealCalendar.spoken(days[0])) through \(DealCalendar.spoken(days[days.count - 1]))" + zone
        case .fixed(let dates):
            let entry = dates.first { $0.date == days[0] }
            let hours = entry.flatMap { e in e.from.map { "\($0)-\(e.to ?? "close")" } }
            return DealCalendar.spoken(days[0]) + (hours.map { ", \($0)" } ?? ", all day") + zone
        }
    }
}
