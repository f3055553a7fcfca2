import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// The uploaders' shared counters: the next batch, refusals, bytes, each batch's latency.
final class IngestCounters: Sendable {
    let next = Atomic<Int>(0)
    let failures = Atomic<Int>(0)
    let bytesSent = Atomic<Int>(0)
    let latencies = Mutex<[Duration]>([])
}

/// The benchmark's events, made from their index alone (any uploader can make any batch).
struct EventWorkload: Sendable {
    let total: Int
    let devices: Int
    let days: Int
    static let tabs = ["live", "live", "live", "scores", "scores", "game", "game", "hall-of-fame", "deals", "settings"]
    static let models = ["iPhone15,2", "iPhone16,1", "iPhone14,7", "iPad13,4", "iPhone17,3"]
    static let systems = ["18.1", "17.6.1", "18.0", "16.7.10", "26.1"]
    static let languages = ["en-US", "es-US", "en-CA", "ja-JP", "ko-KR"]
    /// 2026-10-31T24:00:00Z minus the days, in seconds.
    var start: Int { 1_793_491_200 - days * 86_400 }

    func batchBody(first: Int, count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count * 520)
        out.append(contentsOf: #"{"views":["#.utf8)
        for index in first..<(first + count) {
            if index > first { out.append(UInt8(ascii: ",")) }
            event(index, into: &out)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    /// One event's values, from its index alone.
    struct Fields {
        var second: Int
        var millis: Int
        var device: Int
        var hash: String
        var tab: String
        var duration: Int
        var token: UInt64

        /// `keen.timestamp` in microseconds.
        var microseconds: Int64 { Int64(second) * 1_000_000 + Int64(millis) * 1_000 }
    }

    func fields(_ index: Int) -> Fields {
        var random = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 &+ 0xD1B5_4A32_D192_ED03
        func next() -> UInt64 {
            random = random &+ 0x9E37_79B9_7F4A_7C15
            var z = random
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let device = Int(next() % UInt64(devices))
        // Events arrive about when they happen: in index order over the days, each up to an hour
        // late (a phone's queue waiting for its next upload).
        let second = max(start, start + index * (days * 86_400) / total - Int(next() % 3600))
        let millis = Int(next() % 1000)
        let tab = Self.tabs[Int(next() % UInt64(Self.tabs.count))]
        let duration = 200 + Int(next() % 60_000)
        let hash = String(UInt64(truncatingIfNeeded: device) &* 0x2545_F491_4F6C_DD1D, radix: 16)
        return Fields(
            second: second, millis: millis, device: device, hash: hash, tab: tab, duration: duration,
            token: next() % 1_000_000)
    }

    func event(_ index: Int, into out: inout [UInt8]) {
        let f = fields(index)
        let date = Date(timeIntervalSince1970: TimeInterval(f.second))
        let parts = Calendar.utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let timestamp = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.year!, parts.month!, parts.day!, parts.hour!,
            parts.minute!, parts.second!, f.millis)
        let (device, hash) = (f.device, f.hash)
        let text =
            #"{"keen":{"timestamp":"\#(timestamp)","uniqueness_token":"b\#(index)-\#(f.token)"},"#
            + #""session_id":"\#(hash)-\#(f.second / 1800)","user":{"id_hash":"\#(hash)"},"#
            + #""view":{"name":"\#(f.tab)","duration_ms":\#(f.duration)},"standard_properties":{"app_version":"1.\#(device % 4).0","#
            + #""app_build":"\#(140 + device % 4)","device_model":"\#(Self.models[device % 5])","os_version":"\#(Self.systems[device % 5])","#
            + #""language":"\#(Self.languages[device % 5])","screen_scale":\#(2 + device % 2),"first_launch":\#(index % 97 == 0),"#
            + #""logged_in":\#(device % 3 != 0),"notifications":"\#(device % 4 == 0 ? "denied" : "authorized")"}}"#
        out.append(contentsOf: text.utf8)
    }

    /// The events as CSV, the columns the reference's queries read: `ts` (µs), `id_hash`, `name`,
    /// `duration_ms`, `os_version`, `logged_in`.
    func writeCSV(to path: String) throws {
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var chunk = "ts,id_hash,name,duration_ms,os_version,logged_in\n"
        for index in 0..<total {
            let f = fields(index)
            chunk +=
                "\(f.microseconds),\(f.hash),\(f.tab),\(f.duration),\(Self.systems[f.device % 5]),\(f.device % 3 != 0)\n"
            if chunk.utf8.count > 1 << 20 {
                try handle.write(contentsOf: Data(chunk.utf8))
                chunk = ""
            }
        }
        try handle.write(contentsOf: Data(chunk.utf8))
    }
}

extension Calendar {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
