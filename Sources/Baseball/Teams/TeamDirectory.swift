import Foundation
import Synchronization

/// Every club as it was on any day since 1871, from data: Retrosheet's franchise history
/// (`CurrentNames.csv`: each franchise's codes, league, division, location and nickname by date),
/// later changes in the same form (`Changes.csv`: the Athletics of 2025), and MLB's ids and
/// abbreviations by season (`MLBClubs.csv`). A club missing from them (the Federal League of
/// 1914-1915) is named from its season's `TEAMyyyy` file (``club(_:on:teamFile:)``).
///
/// Dates are official dates, `yyyy-mm-dd`; a day between two of a club's eras (the winter) takes
/// the era that began last, so postseason games keep the season's names.
package enum TeamDirectory {
    struct Era: Sendable {
        var franchise: String
        var code: String
        var league: String
        var division: String?
        var location: String
        var nickname: String
        /// yyyy-mm-dd.
        var first: String
        var last: String?
        var state: String
    }

    struct Identity: Sendable {
        var code: String
        var firstSeason: Int
        var lastSeason: Int?
        var mlbID: Int
        var abbreviation: String
    }

    static let data: (eras: [Era], identities: [Identity]) = {
        func rows(_ name: String) -> [[String]] {
            guard let url = Bundle.module.url(forResource: name, withExtension: "csv"),
                let text = try? String(contentsOf: url, encoding: .utf8)
            else {
                preconditionFailure(
                    "the team directory's data (\(name).csv) is missing from the Baseball module's resources")
            }
            return text.split(whereSeparator: \.isNewline).dropFirst().map {
                $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
        }
        func isoDate(_ text: String) -> String? {
            let parts = text.split(separator: "/").compactMap { Int($0) }
            guard parts.count == 3 else { return nil }
            return String(format: "%04d-%02d-%02d", parts[2], parts[0], parts[1])
        }
        let eras = (rows("CurrentNames") + rows("Changes")).compactMap { row -> Era? in
            guard row.count >= 11, let first = isoDate(row[7]) else { return nil }
            let divisions = ["E": "East", "C": "Central", "W": "West"]
            return Era(
                franchise: row[0], code: row[1], league: row[2], division: divisions[row[3]], location: row[4],
                nickname: row[5], first: first, last: isoDate(row[8]), state: row[10])
        }
        let identities = rows("MLBClubs").compactMap { row -> Identity? in
            guard row.count >= 5, let first = Int(row[1]), let id = Int(row[3]) else { return nil }
            return Identity(code: row[0], firstSeason: first, lastSeason: Int(row[2]), mlbID: id, abbreviation: row[4])
        }
        return (eras, identities)
    }()

    /// The club Retrosheet calls `code` on `date` (yyyy-mm-dd); nil for a code the history does
    /// not know.
    package static func club(_ code: String, on date: String) -> Club? {
        let eras = data.eras.filter { $0.code == code }
        guard let era = eras.last(where: { $0.first <= date }) ?? eras.first else { return nil }
        return club(era, on: date)
    }

    /// The club `code` names on `date`, or, for one the history does not know, the club its
    /// season's `TEAMyyyy` file names (`league` A/N/F, `city`, `nickname`).
    package static func club(
        _ code: String, on date: String, teamFile: (league: String, city: String, nickname: String)?
    ) -> Club {
        if let known = club(code, on: date) { return known }
        guard let teamFile else { return .unlisted(code) }
        let leagues = ["A": "AL", "N": "NL", "F": "FL"]
        return .unlisted(
            code, location: teamFile.city, nickname: teamFile.nickname,
            league: leagues[teamFile.league] ?? teamFile.league)
    }

    /// The club MLB numbers `id` on `date` (its franchise in the era of that day: 120 is the
    /// Expos in 2004, the Nationals in 2005).
    package static func club(mlbID id: Int, on date: String) -> Club? {
        let year = Int(date.prefix(4)) ?? 0
        let candidates = data.identities.filter { $0.mlbID == id }
        let inSeason = candidates.filter { $0.firstSeason <= year && ($0.lastSeason ?? .max) >= year }
        // Two eras in one season (the Angels renamed in September 1965): the one begun by that day.
        let begun = inSeason.last { identity in data.eras.contains { $0.code == identity.code && $0.first <= date } }
        guard
            let identity = begun ?? inSeason.last ?? candidates.last(where: { $0.firstSeason <= year })
                ?? candidates.first
        else { return nil }
        return club(identity.code, on: date)
    }

    /// Every club playing on `date`: one per franchise, in the era of that day, by name.
    package static func clubs(on date: String) -> [Club] {
        let year = Int(date.prefix(4)) ?? 0
        var latest: [String: Era] = [:]
        for era in data.eras where era.first <= date {
            if let known = latest[era.franchise], known.first > era.first { continue }
            latest[era.franchise] = era
        }
        return latest.values.filter { era in
            guard let last = era.last else { return true }
            // Through the season of its last day (its postseason, the winter after).
            return Int(last.prefix(4)) ?? 0 >= year
        }.map { club($0, on: date) }.sorted { $0.name < $1.name }
    }

    /// The clubs of today (by the system's date).
    package static var current: [Club] { todays().clubs }

    /// The club of today a fan names by any of its codes: MLB's abbreviation (`NYY`), Retrosheet's
    /// (`NYA`) or the franchise's (`OAK` for the Athletics of 2025), in upper case.
    package static func current(_ code: String) -> Club? { todays().byCode[code] }

    /// Every code ``current(_:)`` takes, sorted.
    package static var currentCodes: [String] { todays().byCode.keys.sorted() }

    /// Today's clubs and their codes, worked out once a day (a widget asks on every request).
    private static let cache = Mutex<(day: String, clubs: [Club], byCode: [String: Club])?>(nil)

    private static func todays() -> (clubs: [Club], byCode: [String: Club]) {
        let day = today
        if let known = cache.withLock({ $0 }), known.day == day { return (known.clubs, known.byCode) }
        let clubs = clubs(on: day)
        var byCode: [String: Club] = [:]
        for club in clubs {
            for code in [club.franchise, club.retrosheet, club.abbreviation] where byCode[code] == nil {
                byCode[code] = club
            }
        }
        cache.withLock { $0 = (day, clubs, byCode) }
        return (clubs, byCode)
    }

    /// Today, `yyyy-mm-dd` in UTC.
    static var today: String {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date())
        return String(format: "%04d-%02d-%02d", parts.year ?? 2026, parts.month ?? 1, parts.day ?? 1)
    }

    static func identity(ofMLB id: Int, year: Int) -> Identity? {
        data.identities.last { $0.mlbID == id && $0.firstSeason <= year && ($0.lastSeason ?? .max) >= year }
    }

    static func club(_ era: Era, on date: String) -> Club {
        let year = Int(date.prefix(4)) ?? 0
        let identities = data.identities.filter { $0.code == era.code }
        let identity =
            identities.last { $0.firstSeason <= year && ($0.lastSeason ?? .max) >= year }
            ?? identities.last { $0.firstSeason <= year } ?? identities.first
        return Club(
            retrosheet: era.code, franchise: era.franchise, abbreviation: identity?.abbreviation ?? era.code,
            mlbID: identity?.mlbID, location: era.location, nickname: era.nickname, league: era.league,
            division: era.division, timeZone: timeZones[era.state] ?? "America/New_York")
    }

    /// The ballparks' time zones by state or province.
    static let timeZones: [String: String] = [
        "CA": "America/Los_Angeles", "WA": "America/Los_Angeles", "OR": "America/Los_Angeles",
        "AZ": "America/Phoenix", "CO": "America/Denver", "TX": "America/Chicago", "IL": "America/Chicago",
        "MO": "America/Chicago", "WI": "America/Chicago", "MN": "America/Chicago", "ON": "America/Toronto",
        "QC": "America/Toronto", "MI": "America/Detroit", "IN": "America/Indiana/Indianapolis",
        "KY": "America/New_York",
    ]
}
