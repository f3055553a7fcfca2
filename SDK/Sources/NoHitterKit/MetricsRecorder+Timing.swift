import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension MetricsRecorder {
    /// The wait after `failures` failed uploads in a row: `initial` doubled each time, at most
    /// `maximum`, times `jitter` (0.5 to 1, so phones that failed together do not retry together).
    static func backoff(failures: Int, initial: TimeInterval, maximum: TimeInterval, jitter: Double) -> TimeInterval {
        min(maximum, initial * pow(2, Double(max(0, failures - 1)))) * jitter
    }

    /// `2026-11-24T18:03:12.345Z`: ISO 8601 in UTC with milliseconds, as Keen reads it.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = milliseconds / 1000
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.year!, parts.month!, parts.day!, parts.hour!,
            parts.minute!, parts.second!, Int(milliseconds - seconds * 1000))
    }
}
