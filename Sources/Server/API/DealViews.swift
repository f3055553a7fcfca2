import Baseball
import Deals
import Foundation
import Pipeline

/// `GET /api/deals/today`: every rule, yes or no today in its own time zone, and why.
struct DealsToday: Encodable {
    var deals: [Answer]

    struct Answer: Encodable {
        var rule: String
        var version: Int
        var sponsor: String
        var team: Team?
        var reward: String
        var code: String?
        var eligibility: String?
        var timeZone: String
        /// Today in the rule's time zone.
        var day: String
        var on: Bool
        /// The game(s) that made today a deal day, with the play that did it and when to redeem.
        var because: [Because]
        /// Why today is not a deal day (when it is not): "the Nationals lost 3-5 yesterday".
        var whyNot: String?
        /// Whether the rule is in force today (a rule of past seasons answers no).
        var inForce: Bool
        var condition: String
        var sources: [String]
        var note: String?
    }

    struct Team: Encodable {
        var code: String
        var mlb: Int
        var name: String
    }

    struct Because: Encodable {
        var gameID: String
        var gameDate: String
        var score: String
        var play: String?
        var why: String
        var window: String
        var triggerID: String
    }

    init(_ answers: [TodayAnswer]) {
        deals = answers.map { answer in
            let rule = answer.rule
            return Answer(
                rule: rule.id, version: rule.version, sponsor: rule.sponsor,
                team: rule.team.map { Team(code: $0.retro, mlb: $0.mlb, name: $0.name) }, reward: rule.reward.text,
                code: rule.reward.code, eligibility: rule.eligibility, timeZone: rule.timeZone, day: answer.day,
                on: answer.isOn,
                because: answer.triggers.map {
                    Because(
                        gameID: $0.gameID, gameDate: $0.gameDate, score: $0.score, play: $0.play, why: $0.why,
                        window: $0.window, triggerID: $0.id.uuidString.lowercased())
                }, whyNot: answer.whyNot, inForce: rule.isEffective(on: answer.day),
                condition: DealWords.condition(rule),
                sources: rule.sources, note: rule.note)
        }
    }
}

/// `GET /api/deals/{rule}/history` and `/api/deals/history`: a season's deal days.
struct DealsHistory: Encodable {
    var season: Int
    var rule: String?
    var sponsor: String?
    var totalDays: Int
    var byMonth: [Month]
    var byFranchise: [Franchise]
    var days: [Day]

    struct Month: Encodable {
        var month: String
        var days: Int
    }

    struct Franchise: Encodable {
        var team: String
        var name: String
        var days: Int
    }

    struct Day: Encodable {
        var date: String
        var triggers: [Trigger]
    }

    struct Trigger: Encodable {
        var rule: String
        var version: Int
        var gameID: String
        var gameDate: String
        var team: String
        var score: String
        var play: String?
        var why: String
    }

    init(_ history: DealHistory, sponsor: String?) {
        season = history.season
        rule = history.rule
        self.sponsor = sponsor
        totalDays = history.totalDays
        byMonth = history.byMonth.map { Month(month: $0.key, days: $0.days) }
        // A franchise by its name in the season (the Indians in 2020, the Guardians in 2022).
        let seasonDay = "\(history.season)-07-01"
        byFranchise = history.byFranchise.map {
            Franchise(team: $0.key, name: TeamDirectory.club($0.key, on: seasonDay)?.name ?? $0.key, days: $0.days)
        }
        days = history.days.map { day in
            Day(
                date: day.date,
                triggers: day.triggers.map {
                    Trigger(
                        rule: $0.ruleID, version: $0.version, gameID: $0.gameID, gameDate: $0.gameDate, team: $0.team,
                        score: $0.score, play: $0.play, why: $0.why)
                })
        }
    }
}

/// A rule's condition in words, for the page.
enum DealWords {
    static func condition(_ rule: DealRule) -> String {
        let team = rule.team?.name ?? "either team"
        var text = words(rule.when, team: team)
        switch rule.games.venue {
        case .home: text += ", at home"
        case .away: text += ", on the road"
        case .any: break
        }
        return text
    }

    static func words(_ condition: DealCondition, team: String) -> String {
        switch condition {
        case .all(let list): return list.map { words($0, team: team) }.joined(separator: " and ")
        case .any(let list): return "(" + list.map { words($0, team: team) }.joined(separator: " or ") + ")"
        case .not(let inner): return "not " + words(inner, team: team)
        case .result(let outcome):
            return outcome == .win ? "the \(team) win" : outcome == .loss ? "the \(team) lose" : "a tie"
        case .runsFor(let c): return "the \(team) score \(compare(c)) runs"
        case .runsAgainst(let c): return "the \(team) allow \(compare(c)) runs"
        case .margin(let c): return "the \(team) win by \(compare(c))"
        case .venue(let venue): return venue == .home ? "at home" : "on the road"
        case .innings(let c): return "\(compare(c)) innings are played"
        case .count(let event, let actor, let c):
            let what = event == .stolenBase ? "stolen bases" : event == .homeRun ? "home runs" : "strikeouts"
            return actor == .pitchers
                ? "the \(team)'s pitchers record \(compare(c)) \(what)" : "the \(team) have \(compare(c)) \(what)"
        case .save: return "the \(team) win with a save"
        case .firstInSeries(let event):
            let what = event == .stolenBase ? "stolen base" : event == .homeRun ? "home run" : "strikeout"
            return "the first \(what) of the series (\(team))"
        }
    }

    static func compare(_ c: DealCondition.Comparison) -> String {
        switch c.op {
        case .atLeast: "\(c.value) or more"
        case .greater: "more than \(c.value)"
        case .atMost: "\(c.value) or fewer"
        case .less: "fewer than \(c.value)"
        case .equal: "exactly \(c.value)"
        }
    }
}
