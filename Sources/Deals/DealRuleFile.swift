import Alerts
import Baseball
import Foundation
import Retrosheet

/// A rule file that cannot be used: the file, the rule (id, or its place), and why.
package struct DealRuleError: Error, Sendable, Hashable, CustomStringConvertible {
    package var file: String
    /// The rule's id, or "rule N" when it has none, or nil for the file as a whole.
    package var rule: String?
    package var reason: String

    package var description: String {
        "\(file): " + (rule.map { "rule \($0): " } ?? "") + reason
    }
}

/// Reads rule files:
///
/// ```json
/// {"format": "nohit-deals/1",
///  "rules": [{"id": "papa-johns-dc-nationals", "version": 2, "sponsor": "Papa John's (DC area)",
///             "team": {"mlb": 120, "retro": "WAS", "name": "Nationals"},
///             "games": {"types": ["R"], "venue": "any"},
///             "when": {"all": [{"result": "win"}, {"runs_for": {">=": 7}}]},
///             "reward": {"text": "50% off online orders", "code": "NATSWIN"},
///             "redeem": {"kind": "next_local_day"}, "time_zone": "America/New_York",
///             "effective": {"from": "2013-01-01", "to": null},
///             "source": ["..."], "note": "..."}]}
/// ```
///
/// Every key is checked: an unknown key, a missing one or a value of the wrong kind is refused
/// with the file, the rule and the reason.
package enum DealRuleFile {
    package static let format = "nohit-deals/1"

    /// The rules of every file, in order; two versions of one id must not overlap in time, and an
    /// id@version must be unique across files.
    package static func load(_ paths: [String]) throws(DealRuleError) -> [DealRule] {
        var rules: [DealRule] = []
        for path in paths {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw DealRuleError(file: path, rule: nil, reason: "cannot be read (\(error.localizedDescription))")
            }
            rules += try parse(data, file: path)
        }
        try checkVersions(rules, file: paths.joined(separator: ", "))
        return rules
    }

    /// The rules of one file's bytes.
    package static func parse(_ data: Data, file: String) throws(DealRuleError) -> [DealRule] {
        let top: Any
        do {
            top = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw DealRuleError(file: file, rule: nil, reason: "is not JSON (\(error.localizedDescription))")
        }
        guard let object = top as? [String: Any] else {
            throw DealRuleError(file: file, rule: nil, reason: "must be a JSON object with \"format\" and \"rules\"")
        }
        var reader = Reader(file: file, rule: nil)
        try reader.only(["format", "rules", "notice"], in: object, at: "the file")
        guard let format = object["format"] as? String, format == Self.format else {
            throw reader.error("\"format\" must be \"\(Self.format)\"")
        }
        guard let list = object["rules"] as? [Any] else { throw reader.error("\"rules\" must be an array") }
        var rules: [DealRule] = []
        for (index, item) in list.enumerated() {
            let id = (item as? [String: Any])?["id"] as? String
            reader.rule = id ?? "\(index + 1)"
            rules.append(try reader.rule(item))
        }
        try checkVersions(rules, file: file)
        return rules
    }

    private static func checkVersions(_ rules: [DealRule], file: String) throws(DealRuleError) {
        var seen: Set<String> = []
        for rule in rules {
            guard seen.insert(rule.versionedID).inserted else {
                throw DealRuleError(file: file, rule: rule.id, reason: "version \(rule.version) is given twice")
            }
        }
        let byID = Dictionary(grouping: rules, by: \.id)
        for (id, versions) in byID.sorted(by: { $0.key < $1.key }) {
            let ordered = versions.sorted { $0.effectiveFrom < $1.effectiveFrom }
            for (earlier, later) in zip(ordered, ordered.dropFirst()) {
                guard let end = earlier.effectiveTo, end < later.effectiveFrom else {
                    throw DealRuleError(
                        file: file, rule: id,
                        reason:
                            "versions \(earlier.version) and \(later.version) are both in effect on \(later.effectiveFrom)"
                    )
                }
            }
        }
    }

    /// Reads one rule's JSON, naming what is wrong.
    private struct Reader {
        var file: String
        var rule: String?

        func error(_ reason: String) -> DealRuleError { DealRuleError(file: file, rule: rule, reason: reason) }

        func only(_ keys: Set<String>, in object: [String: Any], at place: String) throws(DealRuleError) {
            if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
                throw error("\(place): unknown key \"\(unknown)\" (known: \(keys.sorted().joined(separator: ", ")))")
            }
        }

        func string(_ object: [String: Any], _ key: String, at place: String, optional: Bool = false)
            throws(DealRuleError) -> String?
        {
            guard let value = object[key], !(value is NSNull) else {
                if optional { return nil }
                throw error("\(place): \"\(key)\" is missing")
            }
            guard let text = value as? String, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw error("\(place): \"\(key)\" must be a non-empty string")
            }
            return text
        }

        func integer(_ value: Any?, at place: String) throws(DealRuleError) -> Int {
            // JSON's true and false are not numbers here (`value is Bool` holds for 0 and 1 too: a
            // JSON boolean is the NSNumber whose type is `c`).
            guard let number = value as? NSNumber, String(cString: number.objCType) != "c",
                number.doubleValue == number.doubleValue.rounded(), abs(number.doubleValue) < 1e9
            else { throw error("\(place) must be a whole number") }
            return number.intValue
        }

        func date(_ object: [String: Any], _ key: String, at place: String, optional: Bool = false)
            throws(DealRuleError) -> String?
        {
            guard let text = try string(object, key, at: place, optional: optional) else { return nil }
            guard DealCalendar.isDate(text) else {
                throw error("\(place): \"\(key)\" must be a date yyyy-mm-dd, not \"\(text)\"")
            }
            return text
        }

        func rule(_ item: Any) throws(DealRuleError) -> DealRule {
            guard let object = item as? [String: Any] else { throw error("must be a JSON object") }
            try only(
                [
                    "id", "version", "sponsor", "team", "games", "when", "reward", "redeem", "time_zone", "effective",
                    "eligibility", "source", "note",
                ], in: object, at: "the rule")
            guard let id = try string(object, "id", at: "the rule"), Preferences.isRuleID(id) else {
                throw error("\"id\" must be lower-case letters, digits and '-' (1-64), naming sponsor and team")
            }
            let version = try integer(object["version"], at: "\"version\"")
            guard version >= 1 else { throw error("\"version\" must be 1 or more") }
            let sponsor = try string(object, "sponsor", at: "the rule")!
            let team = try self.team(object["team"])
            let games = try self.games(object["games"])
            guard let when = object["when"] else { throw error("\"when\" is missing") }
            let condition = try self.condition(when, at: "when", team: team)
            if case .some = Self.firstInSeries(condition), !games.types.isSubset(of: ["F", "D", "L", "W"]) {
                throw error(
                    "first_in_series needs postseason games only (games.types of F, D, L, W): a regular season has no series here"
                )
            }
            guard let rewardObject = object["reward"] as? [String: Any] else {
                throw error("\"reward\" must be an object with \"text\" (and \"code\")")
            }
            try only(["text", "code"], in: rewardObject, at: "reward")
            let reward = DealRule.Reward(
                text: try string(rewardObject, "text", at: "reward")!,
                code: try string(rewardObject, "code", at: "reward", optional: true))
            let redeem = try redemption(object["redeem"])
            let zone = try string(object, "time_zone", at: "the rule")!
            guard TimeZone(identifier: zone) != nil else {
                throw error("\"time_zone\" \"\(zone)\" is not an IANA time zone name (such as America/New_York)")
            }
            guard let effective = object["effective"] as? [String: Any] else {
                throw error("\"effective\" must be an object with \"from\" (and \"to\", null when no end is known)")
            }
            try only(["from", "to"], in: effective, at: "effective")
            let from = try date(effective, "from", at: "effective")!
            let to = try date(effective, "to", at: "effective", optional: true)
            if let to, to < from { throw error("effective: \"to\" \(to) is before \"from\" \(from)") }
            let sources: [String]
            switch object["source"] {
            case let text as String where !text.isEmpty: sources = [text]
            case let list as [Any] where !list.isEmpty && list.allSatisfy({ ($0 as? String)?.isEmpty == false }):
                sources = list.compactMap { $0 as? String }
            default: throw error("\"source\" must name where the rule was found (a string or a list of them)")
            }
            return DealRule(
                id: id, version: version, sponsor: sponsor, team: team, games: games, when: condition, reward: reward,
                redeem: redeem, timeZone: zone, effectiveFrom: from, effectiveTo: to,
                eligibility: try string(object, "eligibility", at: "the rule", optional: true), sources: sources,
                note: try string(object, "note", at: "the rule", optional: true))
        }

        static func firstInSeries(_ condition: DealCondition) -> DealEvent? {
            switch condition {
            case .firstInSeries(let event): event
            case .all(let list), .any(let list): list.lazy.compactMap(firstInSeries).first
            case .not(let inner): firstInSeries(inner)
            default: nil
            }
        }

        func team(_ value: Any?) throws(DealRuleError) -> DealRule.Team? {
            guard let value, !(value is NSNull) else { return nil }
            guard let object = value as? [String: Any] else {
                throw error("\"team\" must be an object {\"mlb\": id, \"retro\": code, \"name\": ...} or null")
            }
            try only(["mlb", "retro", "name"], in: object, at: "team")
            let mlb = try integer(object["mlb"], at: "team.mlb")
            let retro = try string(object, "retro", at: "team")!
            guard let club = TeamDirectory.current.first(where: { $0.mlbID == mlb }) else {
                throw error("team.mlb \(mlb) is not an MLB club's id")
            }
            guard club.franchise == retro || club.retrosheet == retro else {
                throw error("team: MLB id \(mlb) is \(club.franchise) in Retrosheet's codes, not \(retro)")
            }
            return DealRule.Team(
                mlb: mlb, retro: retro, name: try string(object, "name", at: "team", optional: true) ?? club.name)
        }

        func games(_ value: Any?) throws(DealRuleError) -> DealRule.Games {
            guard let object = value as? [String: Any] else {
                throw error("\"games\" must be an object {\"types\": [\"R\"], \"venue\": \"home\"|\"away\"|\"any\"}")
            }
            try only(["types", "venue"], in: object, at: "games")
            guard let types = object["types"] as? [String], !types.isEmpty else {
                throw error("games.types must be a non-empty list of MLB game types (R, F, D, L, W)")
            }
            if let bad = types.first(where: { !["R", "F", "D", "L", "W"].contains($0) }) {
                throw error("games.types: \"\(bad)\" is not R, F, D, L or W")
            }
            guard let venueText = object["venue"] as? String, let venue = DealRule.Venue(rawValue: venueText) else {
                throw error("games.venue must be \"home\", \"away\" or \"any\"")
            }
            return DealRule.Games(types: Set(types), venue: venue)
        }

        func comparison(_ value: Any?, at place: String) throws(DealRuleError) -> DealCondition.Comparison {
            guard let object = value as? [String: Any], object.count == 1, let (key, number) = object.first,
                let op = DealCondition.Comparison.Operator(rawValue: key)
            else {
                throw error("\(place) must be one comparison such as {\">=\": 7} (>=, >, <=, <, ==)")
            }
            let count = try integer(number, at: "\(place) \(key)")
            guard count >= 0 else { throw error("\(place): \(count) is negative") }
            return DealCondition.Comparison(op: op, value: count)
        }

        func condition(_ value: Any, at place: String, team: DealRule.Team?) throws(DealRuleError) -> DealCondition {
            guard let object = value as? [String: Any], object.count == 1, let (key, argument) = object.first else {
                throw error("\(place) must be an object with exactly one condition")
            }
            let here = "\(place).\(key)"
            func needsTeam() throws(DealRuleError) {
                guard team != nil else { throw error("\(here) needs a team (the rule has none)") }
            }
            switch key {
            case "all", "any":
                guard let list = argument as? [Any], !list.isEmpty else {
                    throw error("\(here) must be a non-empty list of conditions")
                }
                var conditions: [DealCondition] = []
                for (index, item) in list.enumerated() {
                    conditions.append(try condition(item, at: "\(here)[\(index)]", team: team))
                }
                return key == "all" ? .all(conditions) : .any(conditions)
            case "not":
                return .not(try condition(argument, at: here, team: team))
            case "result":
                guard let text = argument as? String, let outcome = DealCondition.Outcome(rawValue: text) else {
                    throw error("\(here) must be \"win\", \"loss\" or \"tie\"")
                }
                try needsTeam()
                return .result(outcome)
            case "runs_for":
                try needsTeam()
                return .runsFor(try comparison(argument, at: here))
            case "runs_against":
                try needsTeam()
                return .runsAgainst(try comparison(argument, at: here))
            case "margin":
                try needsTeam()
                return .margin(try comparison(argument, at: here))
            case "venue":
                guard let text = argument as? String, let venue = DealRule.Venue(rawValue: text), venue != .any else {
                    throw error("\(here) must be \"home\" or \"away\"")
                }
                try needsTeam()
                return .venue(venue)
            case "innings":
                return .innings(try comparison(argument, at: here))
            case "count":
                guard let object = argument as? [String: Any] else {
                    throw error("\(here) must be {\"event\": ..., \"by\": \"batters\"|\"pitchers\", \">=\": N}")
                }
                guard let eventText = object["event"] as? String, let event = DealEvent(rawValue: eventText) else {
                    throw error("\(here).event must be stolen_base, strikeout or home_run")
                }
                guard let byText = object["by"] as? String, let actor = DealCondition.Actor(rawValue: byText) else {
                    throw error("\(here).by must be \"batters\" or \"pitchers\" (the team's)")
                }
                if actor == .pitchers && event != .strikeout {
                    throw error("\(here): only strikeouts are counted by pitchers")
                }
                var rest = object
                rest["event"] = nil
                rest["by"] = nil
                return .count(event, by: actor, try comparison(rest, at: here))
            case "save":
                guard argument as? Bool == true else { throw error("\(here) must be true") }
                try needsTeam()
                return .save
            case "first_in_series":
                guard let text = argument as? String, let event = DealEvent(rawValue: text) else {
                    throw error("\(here) must name an event: stolen_base, strikeout or home_run")
                }
                return .firstInSeries(event)
            default:
                throw error(
                    "\(place): unknown condition \"\(key)\" (all, any, not, result, runs_for, runs_against, margin, venue, innings, count, save, first_in_series)"
                )
            }
        }

        func redemption(_ value: Any?) throws(DealRuleError) -> DealRule.Redemption {
            guard let object = value as? [String: Any], let kind = object["kind"] as? String else {
                throw error(
                    "\"redeem\" must be an object with \"kind\": next_local_day, until_midnight, days or fixed")
            }
            switch kind {
            case "next_local_day", "until_midnight":
                try only(["kind"], in: object, at: "redeem")
                return kind == "next_local_day" ? .nextLocalDay : .untilMidnight
            case "days":
                try only(["kind", "days"], in: object, at: "redeem")
                let days = try integer(object["days"], at: "redeem.days")
                guard (1...366).contains(days) else { throw error("redeem.days must be 1 to 366") }
                return .days(days)
            case "fixed":
                try only(["kind", "dates"], in: object, at: "redeem")
                guard let list = object["dates"] as? [Any], !list.isEmpty else {
                    throw error("redeem.dates must be a non-empty list")
                }
                var dates: [DealRule.FixedDate] = []
                for (index, item) in list.enumerated() {
                    let place = "redeem.dates[\(index)]"
                    guard let entry = item as? [String: Any] else { throw error("\(place) must be an object") }
                    try only(["series_games", "date", "from", "to"], in: entry, at: place)
                    var games: ClosedRange<Int>?
                    if let range = entry["series_games"] {
                        guard let pair = range as? [Any], pair.count == 2 else {
                            throw error("\(place).series_games must be [first, last]")
                        }
                        let first = try integer(pair[0], at: "\(place).series_games")
                        let last = try integer(pair[1], at: "\(place).series_games")
                        guard 1 <= first, first <= last else {
                            throw error("\(place).series_games must be [first, last] with 1 <= first <= last")
                        }
                        games = first...last
                    }
                    let from = try string(entry, "from", at: place, optional: true)
                    let to = try string(entry, "to", at: place, optional: true)
                    for time in [from, to].compactMap(\.self) where DealCalendar.minutes(time) == nil {
                        throw error("\(place): \"\(time)\" is not a time HH:MM")
                    }
                    dates.append(
                        DealRule.FixedDate(
                            seriesGames: games, date: try date(entry, "date", at: place)!, from: from, to: to))
                }
                return .fixed(dates)
            default:
                throw error("redeem.kind \"\(kind)\" is not next_local_day, until_midnight, days or fixed")
            }
        }
    }
}

/// Calendar arithmetic on `yyyy-mm-dd` strings (Gregorian, no time zone: a local date).
package enum DealCalendar {
    package static func isDate(_ text: String) -> Bool { components(text) != nil }

    static func components(_ text: String) -> DateComponents? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]),
            let day = Int(parts[2]), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components),
            calendar.dateComponents([.year, .month, .day], from: date) == components
        else { return nil }
        return components
    }

    /// `date` plus `days` days.
    package static func adding(_ days: Int, to date: String) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        guard let parts = components(date), let start = calendar.date(from: parts),
            let moved = calendar.date(byAdding: .day, value: days, to: start)
        else { return date }
        let c = calendar.dateComponents([.year, .month, .day], from: moved)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// The local date of `instant` in `zone`.
    package static func localDate(_ instant: Date, in zone: String) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone) ?? .gmt
        let c = calendar.dateComponents([.year, .month, .day], from: instant)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }

    /// "HH:MM" → minutes after midnight.
    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard text.utf8.count == 5, parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }

    /// "Wednesday, Aug 26".
    package static func spoken(_ date: String) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        guard let parts = components(date), let day = calendar.date(from: parts) else { return date }
        let weekdays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = calendar.component(.weekday, from: day)
        return "\(weekdays[weekday - 1]), \(months[(parts.month ?? 1) - 1]) \(parts.day ?? 0)"
    }
}

extension DealRuleFile {
    /// The shipped rules (`Data/deals/rules.json`, found as ``ShippedData`` says).
    package static var shippedPath: String { ShippedData.path("Data/deals/rules.json") }

    /// The shipped rules and an operator's files (`--deals`), checked together.
    package static func load(adding files: [String]) throws(DealRuleError) -> [DealRule] {
        try load([shippedPath] + files)
    }
}
