import Foundation
import JSON

/// A query's time zone: seconds east of UTC (a number, or a number in a string, as keen-analysis
/// sends `-60·getTimezoneOffset()`) or an IANA name, whose offsets follow daylight saving time.
public struct QueryZone: Sendable, Hashable {
    public let timeZone: TimeZone

    public static let utc = QueryZone(timeZone: TimeZone(secondsFromGMT: 0)!)

    public static func parse(_ value: JSONValue?) throws(KeenError) -> QueryZone {
        switch value {
        case nil, .null?: return .utc
        case .number(let seconds)?:
            guard seconds == seconds.rounded(), abs(seconds) <= 18 * 3600,
                let zone = TimeZone(secondsFromGMT: Int(seconds))
            else { throw .timezone("\(seconds) is not a whole number of seconds between -64800 and 64800") }
            return QueryZone(timeZone: zone)
        case .string(let name)?:
            if let seconds = Double(name.trimmingCharacters(in: .whitespaces)) { return try parse(.number(seconds)) }
            // IANA's names are letters, digits, '_', '-', '+' and '/': Foundation read
            // "America/New_York\0anything" as New York.
            guard name.utf8.count <= 64,
                name.utf8.allSatisfy({ byte in
                    (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                        || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                        || byte == UInt8(ascii: "/")
                }), let zone = TimeZone(identifier: name)
            else {
                throw .timezone("'\(name)' is neither seconds from UTC nor an IANA time zone name (America/New_York)")
            }
            return QueryZone(timeZone: zone)
        case let other?:
            throw .timezone("must be seconds from UTC or an IANA name, not \(other.typeName)")
        }
    }

    /// Seconds east of UTC at `micros`.
    public func offset(at micros: Int64) -> Int {
        timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(micros) / 1_000_000))
    }

    var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        // Keen's weeks start on Sunday.
        calendar.firstWeekday = 1
        return calendar
    }
}

/// A unit of calendar time in a zone.
public enum TimeUnit: String, Sendable, CaseIterable {
    case minute, hour, day, week, month, year

    var component: Calendar.Component {
        switch self {
        case .minute: .minute
        case .hour: .hour
        case .day: .day
        case .week: .weekOfYear
        case .month: .month
        case .year: .year
        }
    }

    init?(word: Substring) {
        let singular = word.hasSuffix("s") ? word.dropLast() : word
        self.init(rawValue: String(singular))
    }
}

/// A half-open span of time in microseconds since 1970: `[start, end)`.
public struct Timeframe: Sendable, Hashable {
    public var start: Int64
    public var end: Int64

    public init(start: Int64, end: Int64) {
        self.start = start
        self.end = end
    }

    public static let allTime = Timeframe(start: .min, end: .max)

    public func contains(_ micros: Int64) -> Bool { micros >= start && micros < end }

    public func json(zone: QueryZone) -> JSONValue {
        [
            "start": .string(KeenTime.format(start, offsetSeconds: zone.offset(at: start))),
            "end": .string(KeenTime.format(end, offsetSeconds: zone.offset(at: end))),
        ]
    }
}

extension QueryZone {
    func date(_ micros: Int64) -> Date { Date(timeIntervalSince1970: Double(micros) / 1_000_000) }
    /// Microseconds since 1970, saturating: a date moved millions of units away stays a number
    /// (it is past any event, and a bucket boundary beyond the last) instead of trapping.
    func micros(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard value.isFinite else { return value < 0 ? .min : .max }
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return Int64(value)
    }

    /// The start of the unit holding `micros`, in this zone.
    func startOfUnit(_ unit: TimeUnit, at micros: Int64) -> Int64 {
        let calendar = self.calendar
        guard let interval = calendar.dateInterval(of: unit.component, for: date(micros)) else { return micros }
        return self.micros(interval.start)
    }

    /// The `count` days from local midnight of `date` (`YYYY-MM-DD`) in this zone; nil for a text
    /// that is not such a date.
    public func days(from date: String, count: Int) -> Timeframe? {
        guard date.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) != nil,
            let noon = KeenTime.parse(date + "T12:00:00Z"), count > 0
        else { return nil }
        // The date's local noon (noon UTC less the zone's offset), then the start of its day.
        let start = startOfUnit(.day, at: noon - Int64(offset(at: noon)) * 1_000_000)
        return Timeframe(start: start, end: adding(count, .day, to: start))
    }

    /// `micros` moved by `count` units, in this zone's calendar (a day across a change to
    /// daylight saving time is 23 or 25 hours).
    func adding(_ count: Int, _ unit: TimeUnit, to micros: Int64) -> Int64 {
        let calendar = self.calendar
        let component: Calendar.Component = unit == .week ? .day : unit.component
        let value = unit == .week ? count * 7 : count
        guard let moved = calendar.date(byAdding: component, value: value, to: date(micros)) else { return micros }
        return self.micros(moved)
    }

    /// Resolves a `timeframe` parameter at `now`: absent means all time; a relative one
    /// (`this_7_days`, `previous_24_hours`, `today`, `yesterday`, `this_week`, ...) in this zone —
    /// "this" runs from the start of the earliest unit up to now (the current unit so far),
    /// "previous" covers only complete units; an absolute one is `{"start": ..., "end": ...}`.
    public func resolve(_ value: JSONValue?, now: Int64) throws(KeenError) -> Timeframe? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            if text.hasPrefix("{"), let parsed = try? JSONValue.parse(text) { return try resolve(parsed, now: now) }
            return try relative(text, now: now)
        case .object(let object)?:
            guard let startText = object["start"]?.string, let endText = object["end"]?.string else {
                throw .timeframe("an absolute timeframe is {\"start\": ISO time, \"end\": ISO time}")
            }
            guard let start = KeenTime.parse(startText) else {
                throw .timeframe("start '\(startText)' is not an ISO 8601 time")
            }
            guard let end = KeenTime.parse(endText) else {
                throw .timeframe("end '\(endText)' is not an ISO 8601 time")
            }
            guard start < end else { throw .timeframe("start \(startText) is not before end \(endText)") }
            return Timeframe(start: start, end: end)
        case let other?:
            throw .timeframe("must be a relative timeframe such as this_7_days or {start, end}, not \(other.typeName)")
        }
    }

    func relative(_ text: String, now: Int64) throws(KeenError) -> Timeframe {
        let aliases = ["today": "this_1_days", "yesterday": "previous_1_days"]
        var words = (aliases[text] ?? text).split(separator: "_")
        // this_day, previous_week: one unit.
        if words.count == 2 { words.insert("1", at: 1) }
        guard words.count == 3, words[0] == "this" || words[0] == "previous", let count = Int(words[1]), count >= 1,
            count <= 100_000, let unit = TimeUnit(word: words[2])
        else {
            throw .timeframe(
                "'\(text)' is not a timeframe: this_N_units or previous_N_units (minutes, hours, days, weeks, months, years), today, yesterday, or {start, end}"
            )
        }
        let current = startOfUnit(unit, at: now)
        if words[0] == "this" {
            return Timeframe(start: adding(-(count - 1), unit, to: current), end: now + 1)
        }
        return Timeframe(start: adding(-count, unit, to: current), end: current)
    }
}

/// A query's `interval`: `minutely` ... `yearly`, or `every_N_units`.
public struct QueryInterval: Sendable, Hashable {
    public var count: Int
    public var unit: TimeUnit
    public var text: String

    public static let maximumBuckets = 2_500

    public static func parse(_ value: JSONValue?) throws(KeenError) -> QueryInterval? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            let named: [String: TimeUnit] = [
                "minutely": .minute, "hourly": .hour, "daily": .day, "weekly": .week, "monthly": .month,
                "yearly": .year,
            ]
            if let unit = named[text] { return QueryInterval(count: 1, unit: unit, text: text) }
            let words = text.split(separator: "_")
            guard words.count == 3, words[0] == "every", let count = Int(words[1]), (1...100_000).contains(count),
                let unit = TimeUnit(word: words[2])
            else {
                throw .interval(
                    "'\(text)' is not an interval: minutely, hourly, daily, weekly, monthly, yearly or every_N_units (N from 1 to 100000)"
                )
            }
            return QueryInterval(count: count, unit: unit, text: text)
        case let other?: throw .interval("must be a string such as daily, not \(other.typeName)")
        }
    }

    /// The buckets' boundaries over `timeframe` in `zone`: from its start, `count` units at a time,
    /// the last bucket ending at or after its end.
    public func boundaries(of timeframe: Timeframe, zone: QueryZone) throws(KeenError) -> [Int64] {
        var boundaries = [timeframe.start]
        var step = 1
        while boundaries.last! < timeframe.end {
            guard boundaries.count <= Self.maximumBuckets else {
                throw .interval("\(text) over this timeframe makes more than \(Self.maximumBuckets) intervals")
            }
            let next = zone.adding(count * step, unit, to: timeframe.start)
            guard next > boundaries.last! else { throw .interval("\(text) does not advance") }
            boundaries.append(next)
            step += 1
        }
        return boundaries
    }
}
