import Analytics
import Foundation
import JSON
import Testing

@testable import Server

/// The operator's dashboard (`AnalyticsAPI.usage`) from events made here: retention cohorts,
/// crash-free sessions and devices, the period against the one before, and debug builds' events
/// left out; every figure checked against a count the test makes itself.
@Suite struct DashboardTests {
    @Test func theDashboardCountsRetentionCrashesAndThePeriodBefore() async throws {
        let fixture = try await CachedQueryTests.Fixture()
        defer { fixture.remove() }
        let (store, api, clock) = (fixture.store, fixture.api, fixture.clock)
        let day: TimeInterval = 86_400
        // Each device: the days (before "now") it was seen, its first, its sessions' clean exits.
        let devices: [(id: String, days: [Int], sessions: [(day: Int, clean: Bool)], test: Bool)] = [
            ("a", [6, 5, 3], [(6, true), (5, false)], false),
            ("b", [6, 4], [(6, true)], false),
            ("c", [5, 4, 3, 2], [(5, true), (2, true)], false),
            ("d", [1], [(1, false)], false),
            ("old", [10, 9], [(10, false), (9, true)], false),  // the period before
            ("debug", [6, 5, 4], [(6, false)], true),  // a debug build: left out
        ]
        let now = clock.now()
        for device in devices {
            var batch: [(String, [IncomingEvent])] = []
            func event(_ daysAgo: Int, _ extra: JSONObject) throws -> IncomingEvent {
                var object = extra
                object["keen"] = [
                    "timestamp": .string(
                        KeenTime.format(Int64((now.timeIntervalSince1970 - Double(daysAgo) * day) * 1e6)))
                ]
                object["user"] = ["id_hash": .string(device.id)]
                object["standard_properties"] = [
                    "first_time_app_launch": .bool(daysAgo == device.days.max()), "app_version": "1.0",
                ]
                if device.test { object["test_mode"] = true }
                return try KeenEventRules.normalize(.object(object), now: Int64(now.timeIntervalSince1970 * 1e6))
            }
            batch.append(("views", try device.days.map { try event($0, JSONObject([("tab", "live")])) }))
            batch.append(
                (
                    "app_launch",
                    try device.sessions.map {
                        try event($0.day, JSONObject([("clean_exit", .bool($0.clean)), ("session_duration", 10)]))
                    }
                ))
            _ = try await store.record(project: "app", batch: batch, createdAt: Int64(now.timeIntervalSince1970 * 1e6))
        }
        let usage = try await api.usage(project: "app", days: 7, timezone: "UTC")
        let totals = try #require(usage["totals"])
        // This period (the last 7 days, today included): a, b, c, d.
        #expect(totals["active_devices"] == 4 && totals["new_devices"] == 4)
        #expect(totals["sessions"] == 6 && totals["sessions_crashed"] == 2)
        #expect(totals["crash_free_sessions"] == .number(1 - 2.0 / 6))
        #expect(totals["session_devices"] == 4 && totals["devices_crashed"] == 2)
        #expect(totals["crash_free_devices"] == 0.5)
        let previous = try #require(usage["previous"])
        #expect(previous["active_devices"] == 1 && previous["sessions"] == 2 && previous["crash_free_sessions"] == 0.5)

        // Day cohorts: 6 days ago a and b (a back 1 and 3 days later, b 2 days later); 5 days ago
        // c (back each of the next 3 days); yesterday d.
        let daily = try #require(usage["retention"]?["daily"]?.array)
        #expect(daily.map { $0["size"] } == [2, 1, 1])
        #expect(daily[0]["retained"]?.array?.prefix(3).map { $0 } == [0.5, 0.5, 0.5])
        #expect(daily[1]["retained"]?.array?.prefix(3).map { $0 } == [1, 1, 1])
        // d, first seen yesterday: not back today; no later day in the period.
        #expect(daily[2]["retained"]?.array == [0])
        // By version (every device's first under 1.0): the same four devices, day 1 counted over
        // the cohorts with a next day in the period (a and b, c, d: a and c back); the period before
        // has old's.
        let byVersion = try #require(usage["retention_by_version"])
        #expect(byVersion["current"]?.array?.map { $0["value"]?.string } == ["1.0"])
        #expect(byVersion["current"]?.array?.first?["devices"] == 4)
        #expect(byVersion["current"]?.array?.first?["days"]?.array?.first == .number(2.0 / 4))
        #expect(byVersion["previous"]?.array?.first?["devices"] == 1)
        // Any other period: the 7 days from the date 10 days ago (old, a, b and c were seen then).
        let tenDaysAgo = String(KeenTime.format(Int64((now.timeIntervalSince1970 - 10 * day) * 1e6)).prefix(10))
        let compared = try await api.usage(project: "app", days: 7, timezone: "UTC", compare: tenDaysAgo)
        #expect(compared["previous"]?["active_devices"] == 4 && compared["previous"]?["sessions"] == 6)
        #expect(compared["previous_period"]?["start"]?.string == tenDaysAgo + "T00:00:00.000Z")
        await #expect(throws: KeenError.self) {
            try await api.usage(project: "app", days: 7, timezone: "UTC", compare: "last month")
        }
        // Versions: only the real devices' (the debug build's events are not counted).
        let versions = try #require(usage["versions_by_day"]?.array)
        #expect(versions.map { $0["value"]?.array?.first?["result"] ?? 0 } == [2, 2, 2, 2, 1, 1, 0])
    }

    /// Retention from two day lists, against shares counted here.
    @Test func retentionIsTheShareOfACohortSeenLater() {
        func buckets(_ days: [[String]]) -> JSONValue {
            .array(
                days.enumerated().map { index, devices in
                    [
                        "timeframe": ["start": .string("2026-11-\(10 + index)T00:00:00.000Z")],
                        "value": .array(devices.map { ["user.id_hash": .string($0), "result": 1] }),
                    ]
                })
        }
        var active = Array(repeating: [String](), count: 21)
        var firsts = Array(repeating: [String](), count: 21)
        firsts[0] = ["a", "b", "c", "d"]
        active[0] = ["a", "b", "c", "d"]
        active[1] = ["a", "b"]
        active[7] = ["a"]
        active[15] = ["c", "a"]
        firsts[8] = ["e"]
        active[8] = ["e"]
        let retention = AnalyticsAPI.retention(activity: buckets(active), firsts: buckets(firsts))
        let daily = retention["daily"]?.array ?? []
        #expect(daily.map { $0["cohort"]?.string?.prefix(10) } == ["2026-11-10", "2026-11-18"])
        #expect(daily[0]["retained"]?.array == [0.5, 0, 0, 0, 0, 0, 0.25])
        // Weeks: days 0-6, 7-13, 14-20; the first week's four devices: a in week 2, a and c in week 3.
        let weekly = retention["weekly"]?.array ?? []
        #expect(weekly.map { $0["size"] } == [4, 1])
        #expect(weekly[0]["retained"]?.array == [0.25, 0.5])
        #expect(weekly[1]["retained"]?.array == [0])
    }

    /// Retention by the app's version over 40 days: each version's devices (a device in its first
    /// cohort, under the version it had then), day 1, 7 and 30 and weeks 1 to 4, against shares
    /// counted here; a day or week past the period is null.
    @Test func retentionByVersionCountsEachVersionsDevices() {
        let property = "standard_properties.app_version"
        func buckets(_ days: [[(device: String, version: String?)]]) -> JSONValue {
            .array(
                days.enumerated().map { index, rows in
                    [
                        "timeframe": ["start": .string("2026-10-\(10 + index)T00:00:00.000Z")],
                        "value": .array(
                            rows.map { row in
                                var object: JSONObject = ["user.id_hash": .string(row.device), "result": 1]
                                object[property] = row.version.map(JSONValue.string) ?? .null
                                return .object(object)
                            }),
                    ]
                })
        }
        let count = 40
        var active = Array(repeating: [(device: String, version: String?)](), count: count)
        var firsts = active
        // 1.4: a and b on day 0 (a back on days 1, 7 and 30; b never), c on day 3 (back day 4).
        // 1.3: d on day 0 (back day 1), and again "first" on day 5 under 1.4 (a reinstall: still 1.3's).
        // No version: e on day 35 (back on day 36; day 7 is past the period).
        for (day, rows) in [
            (0, [("a", "1.4"), ("b", "1.4"), ("d", "1.3")]), (3, [("c", "1.4")]), (5, [("d", "1.4")]),
            (35, [("e", nil)]),
        ] as [(Int, [(String, String?)])] {
            firsts[day] += rows.map { ($0.0, $0.1) }
        }
        for (day, devices) in [
            (0, ["a", "b", "d"]), (1, ["a", "d"]), (3, ["c"]), (4, ["c"]), (5, ["d"]), (7, ["a"]), (30, ["a"]),
            (35, ["e"]), (36, ["e"]),
        ] {
            active[day] += devices.map { ($0, nil) }
        }
        let rows = AnalyticsAPI.retention(activity: buckets(active), firsts: buckets(firsts), by: property)
        #expect(rows.map { $0["value"]?.string } == ["1.4", "1.3", "none"])
        #expect(rows.map { $0["devices"]?.number } == [3, 1, 1])
        // 1.4: day 1, a of a, b and c's cohorts (c's day 4 counts: 1 of 3 then c); day 7: a of a
        // and b, and c of day 3 not back on day 10; day 30: a of a and b, c's day 33 (not seen).
        let third = JSONValue.number(1.0 / 3)
        let twoThirds = JSONValue.number(2.0 / 3)
        let zero = JSONValue.number(0)
        let one = JSONValue.number(1)
        let none = JSONValue.null
        #expect(rows[0]["days"]?.array == [twoThirds, third, third])
        // Weeks (0-6, 7-13, ...): a, b, c first in week 0; a in week 1, none in 2 and 3, a in week 4.
        #expect(rows[0]["weeks"]?.array == [third, zero, zero, third])
        #expect(rows[1]["days"]?.array == [one, zero, zero])
        // e's day 1 is in the period; its day 7 and 30 are not, nor any week after its own (days
        // 35-39 are the period's last week).
        #expect(rows[2]["days"]?.array == [one, none, none])
        #expect(rows[2]["weeks"]?.array == [none, none, none, none])
    }
}
