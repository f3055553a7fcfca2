import Foundation

/// Keen's timestamps: microseconds since 1970 (UTC) inside, ISO 8601 on the wire.
public enum KeenTime {
    /// Parses every timestamp format Keen's clients send: `2026-11-24T18:30:00Z`, with an offset
    /// (`+05:30`, `-0700`, `+00`), fractional seconds of any length (`.5`, `.123`, `.123456`),
    /// a space for the `T`, and no zone at all (UTC, as Python's `datetime.isoformat()` of a naive
    /// time). A date alone is midnight UTC. Nil for anything else.
    public static func parse(_ text: String) -> Int64? {
        var utf8 = Array(text.utf8)
        while let last = utf8.last, last == 0x20 { utf8.removeLast() }
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= utf8.count else { return nil }
            var value = 0
            for offset in 0..<count {
                let byte = utf8[index + offset]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }
        func take(_ byte: UInt8) -> Bool {
            guard index < utf8.count, utf8[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), take(UInt8(ascii: "-")), let month = digits(2), take(UInt8(ascii: "-")),
            let day = digits(2), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var seconds = 0
        var micros = 0
        var offset = 0
        if index < utf8.count {
            guard take(UInt8(ascii: "T")) || take(UInt8(ascii: "t")) || take(UInt8(ascii: " ")) else { return nil }
            guard let hour = digits(2), take(UInt8(ascii: ":")), let minute = digits(2), hour < 24, minute < 60 else {
                return nil
            }
            seconds = hour * 3600 + minute * 60
            if take(UInt8(ascii: ":")) {
                guard let second = digits(2), second <= 60 else { return nil }
                seconds += min(second, 59)
                if take(UInt8(ascii: ".")) || take(UInt8(ascii: ",")) {
                    var scale = 100_000
                    var count = 0
                    while index < utf8.count, utf8[index] >= 0x30, utf8[index] <= 0x39 {
                        micros += Int(utf8[index] - 0x30) * scale
                        scale /= 10
                        index += 1
                        count += 1
                    }
                    guard count > 0 else { return nil }
                }
            }
            if index < utf8.count {
                if take(UInt8(ascii: "Z")) || take(UInt8(ascii: "z")) {
                    offset = 0
                } else {
                    let sign: Int
                    if take(UInt8(ascii: "+")) {
                        sign = 1
                    } else if take(UInt8(ascii: "-")) {
                        sign = -1
                    } else {
                        return nil
                    }
                    guard let hours = digits(2), hours <= 23 else { return nil }
                    var minutes = 0
                    if index < utf8.count {
                        _ = take(UInt8(ascii: ":"))
                        guard let value = digits(2), value < 60 else { return nil }
                        minutes = value
                    }
                    offset = sign * (hours * 3600 + minutes * 60)
                }
            }
            guard index == utf8.count else { return nil }
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return (Int64(days) * 86_400 + Int64(seconds) - Int64(offset)) * 1_000_000 + Int64(micros)
    }

    /// `2026-11-24T18:30:00.000Z`, or with the offset of `zone` at that instant
    /// (`2026-11-24T13:30:00.000-05:00`); microseconds when there are any.
    public static func format(_ micros: Int64, offsetSeconds: Int = 0) -> String {
        let local = micros + Int64(offsetSeconds) * 1_000_000
        var seconds = local.quotientFloor(1_000_000)
        let fraction = Int(local - seconds * 1_000_000)
        let days = seconds.quotientFloor(86_400)
        seconds -= days * 86_400
        let (year, month, day) = civilFromDays(Int(days))
        let hour = Int(seconds / 3600)
        let minute = Int(seconds % 3600 / 60)
        let second = Int(seconds % 60)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2)
        text += ":" + pad(second, 2) + "." + (fraction % 1000 == 0 ? pad(fraction / 1000, 3) : pad(fraction, 6))
        if offsetSeconds == 0 { return text + "Z" }
        let magnitude = abs(offsetSeconds)
        return text + (offsetSeconds < 0 ? "-" : "+") + pad(magnitude / 3600, 2) + ":" + pad(magnitude % 3600 / 60, 2)
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Division rounding toward minus infinity.
    func quotientFloor(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
