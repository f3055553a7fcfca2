import Foundation
import JSON

/// Keen's data enrichment add-ons (`keen.addons`), those that need no outside data: the URL
/// parser, the date-time parser and the user-agent parser (common browsers and systems, by
/// pattern). The IP-to-geo and referrer parsers need databases this server does not have: an
/// event asking for them is refused with the reason, never stored half-enriched.
enum KeenAddons {
    static func apply(_ addons: JSONValue, to event: JSONObject, timestamp: Int64) throws(KeenError) -> [(
        String, JSONValue
    )] {
        guard let list = addons.array else { throw .invalidKeenProperty("keen.addons must be a list of add-ons") }
        var results: [(String, JSONValue)] = []
        for (index, addon) in list.enumerated() {
            guard let name = addon["name"]?.string, let input = addon["input"]?.object,
                let output = addon["output"]?.string, !output.isEmpty
            else {
                throw .invalidKeenProperty("keen.addons[\(index)] needs a name, an input object and an output path")
            }
            for part in output.split(separator: ".", omittingEmptySubsequences: false) {
                try KeenEventRules.checkPropertyName(String(part), path: "keen.addons[\(index)].output")
            }
            func inputValue(_ key: String) throws(KeenError) -> JSONValue? {
                guard let path = input[key]?.string else {
                    throw .invalidKeenProperty("keen.addons[\(index)] (\(name)) needs input.\(key), a property path")
                }
                if path == "keen.timestamp" { return .string(KeenTime.format(timestamp)) }
                var value: JSONValue? = .object(event)
                for part in path.split(separator: ".") { value = value?[String(part)] }
                return value
            }
            switch name {
            case "keen:url_parser":
                if let url = try inputValue("url")?.string { results.append((output, parseURL(url))) }
            case "keen:date_time_parser":
                if let text = try inputValue("date_time")?.string, let micros = KeenTime.parse(text) {
                    results.append((output, dateTime(micros)))
                }
            case "keen:ua_parser":
                if let agent = try inputValue("ua_string")?.string { results.append((output, userAgent(agent))) }
            case "keen:ip_to_geo", "keen:referrer_parser":
                throw .invalidKeenProperty(
                    "\(name) needs a \(name == "keen:ip_to_geo" ? "geolocation" : "referrer") database, which this server does not have; send the event without it"
                )
            default:
                throw .invalidKeenProperty(
                    "keen.addons[\(index)]: no add-on called '\(name)' (keen:url_parser, keen:date_time_parser, keen:ua_parser)"
                )
            }
        }
        return results
    }

    static func parseURL(_ text: String) -> JSONValue {
        let components = URLComponents(string: text)
        var query = JSONObject()
        for item in components?.queryItems ?? [] { query[item.name] = .string(item.value ?? "") }
        return [
            "protocol": components?.scheme.map { .string($0) } ?? .null,
            "domain": components?.host.map { .string($0) } ?? .null,
            "path": .string(components?.path ?? ""),
            "anchor": components?.fragment.map { .string($0) } ?? .null,
            "query_string": .object(query),
        ]
    }

    static func dateTime(_ micros: Int64) -> JSONValue {
        let seconds = micros.quotientFloor(1_000_000)
        let days = seconds.quotientFloor(86_400)
        let (year, month, day) = KeenTime.civilFromDays(Int(days))
        let inDay = Int(seconds - days * 86_400)
        // 1970-01-01 was a Thursday; Keen numbers Monday 1 ... Sunday 7.
        let weekday = Int(((days % 7) + 7 + 3) % 7) + 1
        let names = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        return [
            "millisecond": .number(Double(Int(micros - seconds * 1_000_000) / 1000)),
            "second": .number(Double(inDay % 60)), "minute": .number(Double(inDay % 3600 / 60)),
            "hour": .number(Double(inDay / 3600)), "day_of_week": .number(Double(weekday)),
            "day_of_week_string": .string(names[weekday - 1]), "day_of_month": .number(Double(day)),
            "month": .number(Double(month)), "quarter_of_year": .number(Double((month - 1) / 3 + 1)),
            "year": .number(Double(year)), "timezone_offset": 0,
        ]
    }

    static func userAgent(_ agent: String) -> JSONValue {
        func version(after marker: String, in text: String) -> [String]? {
            guard let range = text.range(of: marker) else { return nil }
            let rest = text[range.upperBound...].prefix { $0.isNumber || $0 == "." || $0 == "_" }
            let parts = rest.split(whereSeparator: { $0 == "." || $0 == "_" }).map(String.init)
            return parts.isEmpty ? nil : parts
        }
        func part(_ parts: [String]?, _ index: Int) -> JSONValue {
            guard let parts, index < parts.count else { return .null }
            return .string(parts[index])
        }
        let browsers: [(String, String)] = [
            ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("CriOS/", "Chrome Mobile iOS"),
            ("Chrome/", agent.contains("Mobile") ? "Chrome Mobile" : "Chrome"),
            ("Version/", agent.contains("Mobile") ? "Mobile Safari" : "Safari"),
        ]
        var browser: (String, [String]?) = ("Other", nil)
        for (marker, family) in browsers {
            if let parts = version(after: marker, in: agent) {
                browser = (family, parts)
                break
            }
        }
        let systems: [(String, String)] = [
            ("iPhone OS ", "iOS"), ("CPU OS ", "iOS"), ("Android ", "Android"), ("Windows NT ", "Windows"),
            ("Mac OS X ", "Mac OS X"), ("CrOS x86_64 ", "Chrome OS"),
        ]
        var system: (String, [String]?) = (agent.contains("Linux") ? "Linux" : "Other", nil)
        for (marker, family) in systems {
            if let parts = version(after: marker, in: agent) {
                system = (family, parts)
                break
            }
        }
        let device =
            agent.contains("iPhone")
            ? "iPhone" : agent.contains("iPad") ? "iPad" : agent.contains("Macintosh") ? "Mac" : "Other"
        return [
            "browser": [
                "family": .string(browser.0), "major": part(browser.1, 0), "minor": part(browser.1, 1),
                "patch": part(browser.1, 2),
            ],
            "os": [
                "family": .string(system.0), "major": part(system.1, 0), "minor": part(system.1, 1),
                "patch": part(system.1, 2), "patch_minor": part(system.1, 3),
            ],
            "device": ["family": .string(device)],
        ]
    }
}
