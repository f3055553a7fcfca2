import Foundation

/// A season of deal days: each day with the triggers that made it, and the days counted by month
/// and by franchise. A doubleheader that qualifies twice is one day; several teams qualifying on
/// one day count once each by franchise, so those counts need not add up to the total.
package struct DealHistory: Sendable, Hashable, Codable {
    package struct Day: Sendable, Hashable, Codable {
        package var date: String
        package var triggers: [DealTrigger]
    }

    package struct Count: Sendable, Hashable, Codable {
        /// `2019-04`, or a franchise's Retrosheet code.
        package var key: String
        package var days: Int
    }

    package var season: Int
    package var rule: String?
    package var days: [Day]
    package var byMonth: [Count]
    package var byFranchise: [Count]
    package var totalDays: Int { days.count }

    /// The history of `triggers` whose redemption days fall in `season` (and, when `rule` is
    /// given, of that rule only).
    package init(triggers: [DealTrigger], season: Int, rule: String? = nil) {
        self.season = season
        self.rule = rule
        var byDay: [String: [DealTrigger]] = [:]
        for trigger in triggers where rule == nil || trigger.ruleID == rule {
            for day in trigger.redeemDays where day.hasPrefix("\(season)-") {
                byDay[day, default: []].append(trigger)
            }
        }
        days = byDay.keys.sorted().map { Day(date: $0, triggers: byDay[$0]!.sorted { $0.gameID < $1.gameID }) }
        var months: [String: Int] = [:]
        var franchises: [String: Set<String>] = [:]
        for day in days {
            months[String(day.date.prefix(7)), default: 0] += 1
            for trigger in day.triggers { franchises[trigger.team, default: []].insert(day.date) }
        }
        byMonth = months.keys.sorted().map { Count(key: $0, days: months[$0]!) }
        byFranchise = franchises.map { Count(key: $0.key, days: $0.value.count) }
            .sorted { ($0.days, $1.key) > ($1.days, $0.key) }
    }
}
