import Analytics
import Foundation
import JSON

/// The operator's Metrics page: how a project's devices use the app over the last `days` days
/// (`this_N_days` in `timezone`), from the events its clients record (the web page's own, or an
/// app's through NoHitterKit), as Keen queries run on the store directly (the admin token stands
/// for the read key); an unknown project is the store's `notFound`. Events marked `test_mode`
/// (debug builds) are left out of every figure.
extension AnalyticsAPI {
    /// What every dashboard query leaves out: debug builds' events.
    static let notTestMode: JSONValue = [["property_name": "test_mode", "operator": "exists", "property_value": false]]

    /// `compare`: the first day (`YYYY-MM-DD`, in `timezone`) of the period to set beside this one
    /// (as many days); the days just before this period by default.
    package func usage(project: String, days: Int, timezone: String, compare: String? = nil) async throws -> JSONValue {
        guard (1...90).contains(days) else { throw KeenError.badParameter("days", "must be 1 to 90, not \(days)") }
        let now = now()
        let zone = try QueryZone.parse(.string(timezone))
        guard let period = try zone.resolve(.string("this_\(days)_days"), now: now) else {
            throw KeenError.timeframe("this_\(days)_days could not be resolved")
        }
        let span = Int64(days) * 86_400_000_000
        var previous = Timeframe(start: period.start - span, end: period.start)
        if let compare {
            guard let other = zone.days(from: compare, count: days) else {
                throw KeenError.badParameter(
                    "compare", "the first day of the other period, as YYYY-MM-DD, not '\(compare.prefix(40))'")
            }
            previous = other
        }
        func frame(_ timeframe: Timeframe) -> JSONValue {
            ["start": .string(KeenTime.format(timeframe.start)), "end": .string(KeenTime.format(timeframe.end))]
        }
        func run(
            _ analysis: String, _ collection: String, _ extra: [(key: String, value: JSONValue)],
            in timeframe: Timeframe? = nil
        ) async throws -> JSONValue {
            var parameters = JSONObject(extra)
            parameters["event_collection"] = .string(collection)
            parameters["timeframe"] = timeframe.map(frame) ?? .string("this_\(days)_days")
            parameters["timezone"] = .string(timezone)
            var filters = parameters["filters"]?.array ?? []
            filters += Self.notTestMode.array ?? []
            parameters["filters"] = .array(filters)
            let query = try KeenQuery.parse(analysis, parameters: parameters, now: now)
            // The operator's: before any tenant's query waiting.
            return try await queries.run(for: AnalyticsQueries.operatorShare) { budget in
                try await store.query(project: project, query, budget: budget)
            }
        }
        let device: (key: String, value: JSONValue) = ("target_property", "user.id_hash")
        let daily: (key: String, value: JSONValue) = ("interval", "daily")
        // A device's first visit (the web page) or first launch (an app).
        let first: (key: String, value: JSONValue) = (
            "filters",
            [
                [
                    "operator": "or",
                    "operands": [
                        ["property_name": "standard_properties.first_visit", "operator": "eq", "property_value": true],
                        [
                            "property_name": "standard_properties.first_time_app_launch", "operator": "eq",
                            "property_value": true,
                        ],
                    ],
                ]
            ]
        )
        let unclean: (key: String, value: JSONValue) = (
            "filters", [["property_name": "clean_exit", "operator": "eq", "property_value": false]]
        )

        // Activity by device and day, and first days, for retention.
        let activity = try await run("count", "views", [("group_by", "user.id_hash"), daily])
        let firsts = try await run("count", "views", [("group_by", "user.id_hash"), daily, first])
        let retention = Self.retention(activity: activity, firsts: firsts)
        // The same by the app's version, and for the other period, to set beside it.
        let versionProperty = "standard_properties.app_version"
        let byVersion: (key: String, value: JSONValue) = ("group_by", ["user.id_hash", .string(versionProperty)])
        let firstsByVersion = try await run("count", "views", [byVersion, daily, first])
        let activityBefore = try await run("count", "views", [("group_by", "user.id_hash"), daily], in: previous)
        let firstsBefore = try await run("count", "views", [byVersion, daily, first], in: previous)
        let retentionByVersion: JSONValue = [
            "property": .string(versionProperty),
            "days": .array(Self.retentionDays.map { .number(Double($0)) }),
            "weeks": .array(Self.retentionWeeks.map { .number(Double($0)) }),
            "current": .array(Self.retention(activity: activity, firsts: firstsByVersion, by: versionProperty)),
            "previous": .array(Self.retention(activity: activityBefore, firsts: firstsBefore, by: versionProperty)),
        ]

        func totals(_ timeframe: Timeframe?) async throws -> JSONObject {
            let sessions = try await run("count", "app_launch", [], in: timeframe).number ?? 0
            let crashed = try await run("count", "app_launch", [unclean], in: timeframe).number ?? 0
            let devices = try await run("count_unique", "app_launch", [device], in: timeframe).number ?? 0
            let crashedDevices =
                try await run("count_unique", "app_launch", [device, unclean], in: timeframe).number ?? 0
            func ratio(_ part: Double, _ whole: Double) -> JSONValue { whole > 0 ? .number(1 - part / whole) : .null }
            return JSONObject([
                ("active_devices", try await run("count_unique", "views", [device], in: timeframe)),
                ("new_devices", try await run("count_unique", "views", [device, first], in: timeframe)),
                ("sessions", .number(sessions)), ("sessions_crashed", .number(crashed)),
                ("session_devices", .number(devices)), ("devices_crashed", .number(crashedDevices)),
                ("crash_free_sessions", ratio(crashed, sessions)),
                ("crash_free_devices", ratio(crashedDevices, devices)),
                ("errors", try await run("count", "errors", [], in: timeframe)),
            ])
        }
        let current = try await totals(nil)
        let before = try await totals(previous)
        let version: (key: String, value: JSONValue) = ("group_by", "standard_properties.app_version")
        let system: (key: String, value: JSONValue) = ("group_by", "standard_properties.system_version")
        return .object(
            JSONObject([
                ("project", .string(project)), ("days", .number(Double(days))), ("timezone", .string(timezone)),
                ("period", frame(period)), ("previous_period", frame(previous)),
                ("totals", .object(current)), ("previous", .object(before)),
                ("weekly_active_devices", try await run("count_unique", "views", [device, ("interval", "weekly")])),
                ("daily_active_devices", try await run("count_unique", "views", [device, daily])),
                ("new_devices_by_day", try await run("count_unique", "views", [device, daily, first])),
                ("sessions_by_day", try await run("count", "app_launch", [daily])),
                (
                    "session_length",
                    .object(
                        JSONObject([
                            (
                                "average",
                                try await run("average", "app_launch", [("target_property", "session_duration")])
                            ),
                            (
                                "median",
                                try await run("median", "app_launch", [("target_property", "session_duration")])
                            ),
                        ]))
                ),
                ("retention", retention),
                ("retention_by_version", retentionByVersion),
                ("versions_by_day", try await run("count_unique", "views", [device, daily, version])),
                ("os_versions_by_day", try await run("count_unique", "views", [device, daily, system])),
                (
                    "devices_by_model",
                    try await run("count_unique", "views", [device, ("group_by", "standard_properties.model")])
                ),
                (
                    "languages",
                    try await run("count_unique", "views", [device, ("group_by", "standard_properties.language")])
                ),
                ("errors_by_kind", try await run("count", "errors", [("group_by", "kind")])),
                (
                    "errors_by_version",
                    try await run("count", "errors", [("group_by", ["kind", "standard_properties.app_version"])])
                ),
                ("alerts_opened_by_channel", try await run("count", "pushes", [("group_by", "channel")])),
                ("views_by_tab", try await run("count", "views", [("group_by", "tab")])),
                ("touches_by_target", try await run("count", "touches", [("group_by", "target")])),
                (
                    "deal_taps",
                    try await run(
                        "count", "touches",
                        [
                            ("group_by", "target"),
                            ("filters", [["property_name": "tab", "operator": "eq", "property_value": "deals"]]),
                        ])
                ),
            ]))
    }

    /// Retention cohorts from two daily group_by results (devices active each day; devices whose
    /// first visit or launch was that day): for each day's new devices, the share active 1 to 7
    /// days later (`daily`), and for each week's (7-day blocks from the period's first day), the
    /// share active 1 to 3 weeks later (`weekly`); a later day or week past the period is absent.
    static func retention(activity: JSONValue, firsts: JSONValue) -> JSONValue {
        func byDay(_ result: JSONValue) -> [(start: String, devices: Set<String>)] {
            (result.array ?? []).map { bucket in
                let devices = (bucket["value"]?.array ?? []).compactMap { $0["user.id_hash"]?.string }
                return (bucket["timeframe"]?["start"]?.string ?? "", Set(devices))
            }
        }
        let active = byDay(activity)
        let new = byDay(firsts)
        guard active.count == new.count, !active.isEmpty else {
            return ["daily": [], "weekly": []]
        }
        func share(_ cohort: Set<String>, _ later: Set<String>) -> JSONValue {
            cohort.isEmpty ? .null : .number(Double(cohort.intersection(later).count) / Double(cohort.count))
        }
        var daily: [JSONValue] = []
        for (index, day) in new.enumerated() where !day.devices.isEmpty {
            // (Typed: JSONValue takes nil as its null, and the days past the period would stay.)
            let later = (1...7).compactMap { offset -> JSONValue? in
                index + offset < active.count ? share(day.devices, active[index + offset].devices) : Optional.none
            }
            daily.append([
                "cohort": .string(day.start), "size": .number(Double(day.devices.count)), "retained": .array(later),
            ])
        }
        var weekly: [JSONValue] = []
        let weeks = stride(from: 0, to: active.count, by: 7).map { start in
            (
                start: active[start].start,
                new: new[start..<min(start + 7, new.count)].reduce(into: Set<String>()) { $0.formUnion($1.devices) },
                active: active[start..<min(start + 7, active.count)].reduce(into: Set<String>()) {
                    $0.formUnion($1.devices)
                }
            )
        }
        for (index, week) in weeks.enumerated() where !week.new.isEmpty {
            let later = (1...3).compactMap { offset -> JSONValue? in
                index + offset < weeks.count ? share(week.new, weeks[index + offset].active) : Optional.none
            }
            weekly.append([
                "cohort": .string(week.start), "size": .number(Double(week.new.count)), "retained": .array(later),
            ])
        }
        return ["daily": .array(daily), "weekly": .array(weekly)]
    }

    /// The days and weeks after a cohort's first that retention by a property counts.
    static let retentionDays = [1, 7, 30]
    static let retentionWeeks = [1, 2, 3, 4]

    /// Retention by a property's value (the app's version): each value's devices — those whose
    /// first visit or launch in the period was under it, each in its earliest cohort (under the
    /// least value, when its first day had several) — and the share of them seen again
    /// `retentionDays` days after their first day and `retentionWeeks` weeks after their first week
    /// (7-day blocks from the period's first day). Each share counts only the cohorts whose later
    /// day or week is in the period (the devices retained over the devices counted), null when none
    /// is. Most devices first.
    static func retention(activity: JSONValue, firsts: JSONValue, by property: String) -> [JSONValue] {
        let active = (activity.array ?? []).map { bucket in
            Set((bucket["value"]?.array ?? []).compactMap { $0["user.id_hash"]?.string })
        }
        let buckets = firsts.array ?? []
        guard buckets.count == active.count, !active.isEmpty else { return [] }
        // Each device's earliest first day, and its value then.
        var first: [String: (day: Int, value: String)] = [:]
        for (day, bucket) in buckets.enumerated() {
            for row in bucket["value"]?.array ?? [] {
                guard let device = row["user.id_hash"]?.string, (row["result"]?.number ?? 0) > 0 else { continue }
                let value =
                    switch row[property] {
                    case .string(let text)?: text
                    case nil, .null?: "none"
                    case let other?: other.jsonText
                    }
                if let known = first[device], known.day < day || (known.day == day && known.value <= value) { continue }
                first[device] = (day, value)
            }
        }
        var cohorts: [String: [Int: Set<String>]] = [:]
        for (device, seen) in first { cohorts[seen.value, default: [:]][seen.day, default: []].insert(device) }
        let weekStarts = Array(stride(from: 0, to: active.count, by: 7))
        let activeWeeks = weekStarts.map { start in
            active[start..<min(start + 7, active.count)].reduce(into: Set<String>()) { $0.formUnion($1) }
        }
        func share(_ pairs: [(cohort: Set<String>, later: Set<String>)]) -> JSONValue {
            let counted = pairs.reduce(0) { $0 + $1.cohort.count }
            guard counted > 0 else { return .null }
            let retained = pairs.reduce(0) { $0 + $1.cohort.intersection($1.later).count }
            return .number(Double(retained) / Double(counted))
        }
        let rows = cohorts.map { value, days -> (value: String, devices: Int, row: JSONValue) in
            let weekly = weekStarts.indices.map { week in
                (weekStarts[week]..<weekStarts[week] + 7).reduce(into: Set<String>()) { $0.formUnion(days[$1] ?? []) }
            }
            let dayShares = retentionDays.map { offset in
                share(
                    days.compactMap { day, devices in
                        day + offset < active.count ? (devices, active[day + offset]) : nil
                    })
            }
            let weekShares = retentionWeeks.map { offset in
                share(
                    weekly.indices.compactMap { week in
                        week + offset < activeWeeks.count ? (weekly[week], activeWeeks[week + offset]) : nil
                    })
            }
            let devices = days.values.reduce(0) { $0 + $1.count }
            let row: JSONValue = [
                "value": .string(value), "devices": .number(Double(devices)), "days": .array(dayShares),
                "weeks": .array(weekShares),
            ]
            return (value, devices, row)
        }
        return rows.sorted { ($1.devices, $0.value) < ($0.devices, $1.value) }.map(\.row)
    }
}
