import Foundation
import JSON
import TestSupport
import Testing

@testable import Analytics

/// `standard_deviation` and Keen's "or" filters over events made here, against values the test
/// computes itself from the same events.
@Suite struct KeenAnalysesTests {
    /// 500 sessions: a length, a platform, an app version; a few without a length, one with text.
    static func sessions() throws -> (
        events: MemoryEvents, rows: [(length: Double?, platform: String, version: String)]
    ) {
        var generator = SplitMix(seed: 37)
        var rows: [(length: Double?, platform: String, version: String)] = []
        var json: [JSONValue] = []
        for index in 0..<500 {
            let platform = ["ios", "web", "android"][Int.random(in: 0..<3, using: &generator)]
            let version = ["1.0", "1.1", "2.0"][Int.random(in: 0..<3, using: &generator)]
            let length: Double? = index % 25 == 0 ? nil : Double(Int.random(in: 1...3_600, using: &generator)) / 8
            rows.append((length, platform, version))
            var event = JSONObject([("platform", .string(platform)), ("app", ["version": .string(version)])])
            if let length { event["length"] = .number(length) }
            json.append(.object(event))
        }
        // Text where a number is expected is not a value (as for the other numeric analyses).
        json.append(["platform": "ios", "app": ["version": "1.0"], "length": "long"])
        rows.append((nil, "ios", "1.0"))
        var events = MemoryEvents()
        try events.add("sessions", json, now: 1_795_530_600_000_000)
        return (events, rows)
    }

    /// The sample standard deviation, two passes (the engine keeps one running pass).
    static func deviation(_ values: [Double]) -> Double? {
        guard values.count >= 2 else { return nil }
        let mean = values.reduce(0, +) / Double(values.count)
        return (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)).squareRoot()
    }

    static func run(_ type: String, _ parameters: [(String, JSONValue)], on events: MemoryEvents) throws -> JSONValue {
        let query = try KeenQuery.parse(
            type, parameters: JSONObject([("event_collection", "sessions")] + parameters), now: 1_795_530_600_000_000)
        return try QueryEngine.run(query, on: events)
    }

    @Test func standardDeviationIsTheSampleDeviationOfTheNumbers() throws {
        let (events, rows) = try Self.sessions()
        let expected = try #require(Self.deviation(rows.compactMap(\.length)))
        let result = try #require(
            try Self.run("standard_deviation", [("target_property", "length")], on: events).number)
        #expect(abs(result - expected) < 1e-9 * expected, "\(result) vs \(expected)")

        // Grouped, each group its own.
        let grouped = try #require(
            try Self.run("standard_deviation", [("target_property", "length"), ("group_by", "platform")], on: events)
                .array)
        #expect(grouped.count == 3)
        for row in grouped {
            let platform = try #require(row["platform"]?.string)
            let want = try #require(Self.deviation(rows.filter { $0.platform == platform }.compactMap(\.length)))
            let got = try #require(row["result"]?.number)
            #expect(abs(got - want) < 1e-9 * want, "\(platform): \(got) vs \(want)")
        }

        // In a multi-analysis beside the average.
        let multi = try Self.run(
            "multi_analysis",
            [
                (
                    "analyses",
                    [
                        "spread": ["analysis_type": "standard_deviation", "target_property": "length"],
                        "mean": ["analysis_type": "average", "target_property": "length"],
                    ]
                )
            ], on: events)
        #expect(abs((multi["spread"]?.number ?? 0) - expected) < 1e-9 * expected)

        // One value has no sample deviation; none, none either.
        var one = MemoryEvents()
        try one.add("sessions", ["length": 4], now: 1_795_530_600_000_000)
        #expect(try Self.run("standard_deviation", [("target_property", "length")], on: one) == .null)
        #expect(try Self.run("standard_deviation", [("target_property", "missing")], on: events) == .null)
        // Large values close together: the running pass keeps the digits a sum of squares loses.
        var close = MemoryEvents()
        try close.add(
            "sessions", [1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16].map { ["length": .number($0)] as JSONValue },
            now: 1_795_530_600_000_000)
        let spread = try #require(try Self.run("standard_deviation", [("target_property", "length")], on: close).number)
        #expect(abs(spread - 30.0.squareRoot()) < 1e-6)
        // It needs its target.
        #expect(throws: KeenError.self) { try Self.run("standard_deviation", [], on: events) }
    }

    @Test func orFiltersPassAnEventWhenAnyOperandPasses() throws {
        let (events, rows) = try Self.sessions()
        let webOrNew: JSONValue = [
            "operator": "or",
            "operands": [
                ["property_name": "platform", "operator": "eq", "property_value": "web"],
                ["property_name": "app.version", "operator": "eq", "property_value": "2.0"],
            ],
        ]
        let count = try Self.run("count", [("filters", [webOrNew])], on: events)
        #expect(count == .number(Double(rows.filter { $0.platform == "web" || $0.version == "2.0" }.count)))

        // Beside a plain filter: the list's filters all pass, the or's operands any.
        let long: JSONValue = ["property_name": "length", "operator": "gt", "property_value": 200]
        let both = try Self.run("count", [("filters", [webOrNew, long])], on: events)
        let expected = rows.filter { ($0.platform == "web" || $0.version == "2.0") && ($0.length ?? 0) > 200 }.count
        #expect(both == .number(Double(expected)))

        // Nested: android, or (version 1.0 or no length); and an or of one operand is that operand.
        let nested: JSONValue = [
            "operator": "or",
            "operands": [
                ["property_name": "platform", "operator": "eq", "property_value": "android"],
                [
                    "operator": "or",
                    "operands": [
                        ["property_name": "app.version", "operator": "in", "property_value": ["1.0"]],
                        ["property_name": "length", "operator": "exists", "property_value": false],
                    ],
                ],
            ],
        ]
        let nestedCount = try Self.run("count", [("filters", [nested])], on: events)
        #expect(
            nestedCount
                == .number(
                    Double(rows.filter { $0.platform == "android" || $0.version == "1.0" || $0.length == nil }.count)))
        let single: JSONValue = [
            "operator": "or", "operands": [["property_name": "platform", "operator": "eq", "property_value": "ios"]],
        ]
        #expect(
            try Self.run("count", [("filters", [single])], on: events)
                == .number(Double(rows.filter { $0.platform == "ios" }.count)))

        // In a count_unique, the same.
        let unique = try Self.run(
            "count_unique", [("target_property", "platform"), ("filters", [webOrNew])], on: events)
        #expect(
            unique
                == .number(
                    Double(Set(rows.filter { $0.platform == "web" || $0.version == "2.0" }.map(\.platform)).count)))

        // `property_value` holding the list is read as the operands.
        let asValue: JSONValue = [
            "operator": "or",
            "property_value": [["property_name": "platform", "operator": "eq", "property_value": "web"]],
        ]
        #expect(
            try Self.run("count", [("filters", [asValue])], on: events)
                == .number(Double(rows.filter { $0.platform == "web" }.count)))
    }

    @Test func aBadOrFilterSaysWhereAndWhy() {
        func message(_ filter: JSONValue) -> String? {
            do {
                _ = try KeenQuery.parse(
                    "count", parameters: JSONObject([("event_collection", "e"), ("filters", [filter])]), now: 0)
                return nil
            } catch {
                return "\(error.code): \(error.message)"
            }
        }
        #expect(
            message(["operator": "or"])
                == "FilterDefinitionError: filters[0]: or takes operands, a non-empty list of filters")
        #expect(
            message(["operator": "or", "operands": []])
                == "FilterDefinitionError: filters[0]: or takes operands, a non-empty list of filters")
        #expect(
            message([
                "operator": "or",
                "operands": [["property_name": "a", "operator": "eq", "property_value": 1], ["operator": "like"]],
            ])
                == "FilterDefinitionError: filters[0]: operands[1]: 'like' is not an operator (eq, ne, lt, lte, gt, gte, exists, in, contains, not_contains, within, regex, or)"
        )
        #expect(
            message(["operator": "or", "operands": [["property_name": "a", "operator": "in", "property_value": 1]]])
                == "FilterDefinitionError: filters[0]: operands[0]: in takes a list of values")
        #expect(
            message(["operator": "or", "operands": ["text"]])
                == "FilterDefinitionError: filters[0]: operands[0]: a filter is an object, not a string")
        var deep: JSONValue = ["property_name": "a", "operator": "eq", "property_value": 1]
        for _ in 0..<4 { deep = ["operator": "or", "operands": [deep]] }
        #expect(message(deep)?.contains("or filters nest at most 3 deep") == true)
        let many = JSONValue.array(
            Array(repeating: ["property_name": "a", "operator": "eq", "property_value": 1], count: 101))
        #expect(
            message(["operator": "or", "operands": many])
                == "FilterDefinitionError: filters[0]: or takes at most 100 operands, not 101")
    }

    /// A property a query both tests with `exists` and reads (as its target, a group or another
    /// filter): each use sees it (the second use took the first's place before, so an `exists`
    /// on a property also grouped by never held).
    @Test func aPropertyTestedWithExistsAndReadIsSeenByBoth() throws {
        var events = MemoryEvents()
        try events.add("e", [["n": 1], ["n": 2], ["n": 2], ["m": 5]], now: 1_795_530_600_000_000)
        func run(_ type: String, _ parameters: [(String, JSONValue)]) throws -> JSONValue {
            let query = try KeenQuery.parse(
                type, parameters: JSONObject([("event_collection", "e")] + parameters), now: 1_795_530_600_000_000)
            return try QueryEngine.run(query, on: events)
        }
        let exists: JSONValue = [["property_name": "n", "operator": "exists", "property_value": true]]
        let missing: JSONValue = [["property_name": "n", "operator": "exists", "property_value": false]]
        #expect(try run("sum", [("target_property", "n"), ("filters", exists)]) == 5)
        #expect(
            try run("count", [("group_by", "n"), ("filters", exists)]) == [
                ["n": 1, "result": 1], ["n": 2, "result": 2],
            ])
        #expect(try run("count", [("group_by", "n"), ("filters", missing)]) == [["n": nil, "result": 1]])
        let both: JSONValue = [
            ["property_name": "n", "operator": "exists", "property_value": true],
            ["property_name": "n", "operator": "gt", "property_value": 1],
        ]
        #expect(try run("count", [("filters", both)]) == 2)
    }

    /// A date's days in a zone: from its local midnight, as many local days (23 or 25 hours across
    /// a change to daylight saving time), wherever the zone is.
    @Test func daysFromADateStartAtItsLocalMidnight() throws {
        func days(_ zone: String, _ date: String, _ count: Int) throws -> (String, String)? {
            let zone = try QueryZone.parse(.string(zone))
            return zone.days(from: date, count: count).map { (KeenTime.format($0.start), KeenTime.format($0.end)) }
        }
        #expect(try days("UTC", "2026-11-14", 7)?.0 == "2026-11-14T00:00:00.000Z")
        #expect(
            try days("America/New_York", "2026-03-07", 2)! == ("2026-03-07T05:00:00.000Z", "2026-03-09T04:00:00.000Z"))
        #expect(
            try days("Pacific/Kiritimati", "2026-11-14", 1)! == ("2026-11-13T10:00:00.000Z", "2026-11-14T10:00:00.000Z")
        )
        #expect(try days("Pacific/Pago_Pago", "2026-11-14", 1)?.0 == "2026-11-14T11:00:00.000Z")
        #expect(try days("UTC", "14/11/2026", 7) == nil)
        #expect(try days("UTC", "2026-11-14", 0) == nil)
        // A name with a NUL or any other character IANA's names never hold is refused (Foundation
        // read "America/New_York\0..." as New York); seconds from UTC are Keen's too.
        for name in [
            "America/New_York\u{0}x", "America/New York", "../../etc/passwd", String(repeating: "A", count: 65),
        ] {
            #expect(throws: KeenError.self, "\(name)") { try QueryZone.parse(.string(name)) }
        }
        #expect(try QueryZone.parse(.string("0")).offset(at: 0) == 0)
        #expect(try QueryZone.parse(.string("Etc/GMT+5")).offset(at: 0) == -5 * 3600)
    }
}
