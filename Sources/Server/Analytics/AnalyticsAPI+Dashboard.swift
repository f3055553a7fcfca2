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
}
