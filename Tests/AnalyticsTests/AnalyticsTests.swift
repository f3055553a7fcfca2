import Foundation
import JSON
import Testing

@testable import Analytics

/// Events kept in memory, as a store hands them to the query engine.
struct MemoryEvents: EventSource {
    var pathNames: [String] = []
    var rows: [String: [(timestamp: Int64, data: [UInt8])]] = [:]

    mutating func add(_ collection: String, _ event: JSONValue, now: Int64) throws {
        try add(collection, [event], now: now)
    }

    /// Many events at once (kept in time order once, after all of them).
    mutating func add(_ collection: String, _ events: [JSONValue], now: Int64) throws {
        var names = pathNames
        for event in events {
            let normalized = try KeenEventRules.normalize(event, now: now)
            let data = EventCodec.encode(normalized.leaves) { (path: String) -> Int in
                if let id = names.firstIndex(of: path) { return id }
                names.append(path)
                return names.count - 1
            }
            rows[collection, default: []].append((normalized.timestamp, data))
        }
        pathNames = names
        rows[collection]?.sort { $0.timestamp < $1.timestamp }
    }

    func paths() throws -> [String] { pathNames }

    func scan(_ scan: ScanPlan, _ body: (EventRow) throws -> Bool) throws {
        let chosen = (rows[scan.collection] ?? []).enumerated().filter { scan.timeframe.contains($0.element.timestamp) }
        for (index, row) in scan.newestFirst ? chosen.reversed() : chosen {
            let keepGoing = try row.data.withUnsafeBytes { bytes in
                try body(
                    EventRow(rowID: Int64(index + 1), timestamp: row.timestamp, createdAt: row.timestamp, data: bytes))
            }
            if !keepGoing { return }
        }
    }

    func count(_ scan: ScanPlan) throws -> Int {
        (rows[scan.collection] ?? []).filter { scan.timeframe.contains($0.timestamp) }.count
    }
}

@Suite struct AnalyticsTests {
    /// Every timestamp format Keen's clients send: the iOS SDK's `yyyy-MM-dd'T'HH:mm:ssZZZZZ`,
    /// PBMetrics-era `-0700`, fractional seconds, `Z`, Python's naive `isoformat()` (UTC) and its
    /// microseconds, keen-tracking-js's `toISOString()`.
    @Test func timestampsInEveryFormatTheSDKsSend() {
        let instant: Int64 = 1_795_530_600_000_000  // 2026-11-24T14:30:00Z
        let cases: [(String, Int64)] = [
            ("2026-11-24T09:30:00-05:00", instant), ("2026-11-24T07:30:00-0700", instant),
            ("2026-11-24T14:30:00Z", instant), ("2026-11-24T14:30:00.000Z", instant),
            ("2026-11-24T14:30:00", instant), ("2026-11-24T14:30:00.250000", instant + 250_000),
            ("2026-11-24T20:00:00.5+05:30", instant + 500_000), ("2026-11-24 14:30:00+00:00", instant),
            ("2026-11-24T14:30:00.123456789Z", instant + 123_456),
        ]
        for (text, expected) in cases { #expect(KeenTime.parse(text) == expected, "\(text)") }
        for bad in ["2026-02-30T00:00:00Z", "yesterday", "2026-11-24T25:00:00Z", "2026-11-24T14:30:00+2"] {
            #expect(KeenTime.parse(bad) == nil, "\(bad)")
        }
        #expect(KeenTime.format(instant) == "2026-11-24T14:30:00.000Z")
        #expect(KeenTime.format(instant, offsetSeconds: -18_000) == "2026-11-24T09:30:00.000-05:00")
    }

    /// A daily count in America/New_York across the change to daylight saving time
    /// (2026-03-08): the buckets start at New York's midnights, the 8th is 23 hours long, and each
    /// event falls in its local day.
    @Test func aDailyQueryAcrossADSTChangeFollowsTheZonesMidnights() throws {
        var events = MemoryEvents()
        // 23:30 local on the 7th (EST, -5), 00:30 and 23:30 on the 8th (EST then EDT, -4), 00:30 on the 9th.
        for time in ["2026-03-08T04:30:00Z", "2026-03-08T05:30:00Z", "2026-03-09T03:30:00Z", "2026-03-09T04:30:00Z"] {
            try events.add("opens", ["keen": ["timestamp": .string(time)]], now: 0)
        }
        let query = try KeenQuery.parse(
            "count",
            parameters: JSONObject([
                ("event_collection", "opens"), ("timezone", "America/New_York"), ("interval", "daily"),
                ("timeframe", ["start": "2026-03-07T00:00:00-05:00", "end": "2026-03-10T00:00:00-04:00"]),
            ]), now: 0)
        let result = try QueryEngine.run(query, on: events)
        let buckets = try #require(result.array)
        #expect(buckets.map { $0["value"] } == [1, 2, 1])
        #expect(
            buckets.map { $0["timeframe"]?["start"]?.string } == [
                "2026-03-07T00:00:00.000-05:00", "2026-03-08T00:00:00.000-05:00", "2026-03-09T00:00:00.000-04:00",
            ])
        let boundaries = try query.interval!.boundaries(of: query.timeframe!, zone: query.zone)
        #expect(boundaries[2] - boundaries[1] == 23 * 3_600_000_000)
    }

    /// `interval` and `group_by` together: per bucket, a group per value.
    @Test func intervalAndGroupByTogether() throws {
        var events = MemoryEvents()
        let day: Int64 = 86_400_000_000
        for (offset, tab) in [(0, "live"), (1, "live"), (1, "scores"), (2, "scores")] {
            try events.add("views", ["tab": .string(tab)], now: day * Int64(20_000 + offset) + 3_600_000_000)
        }
        let query = try KeenQuery.parse(
            "count",
            parameters: JSONObject([
                ("event_collection", "views"), ("interval", "daily"), ("group_by", "tab"),
                (
                    "timeframe",
                    ["start": .string(KeenTime.format(day * 20_000)), "end": .string(KeenTime.format(day * 20_003))]
                ),
            ]), now: 0)
        let buckets = try #require(try QueryEngine.run(query, on: events).array)
        #expect(
            buckets.map { $0["value"] } == [
                [["tab": "live", "result": 1]], [["tab": "live", "result": 1], ["tab": "scores", "result": 1]],
                [["tab": "scores", "result": 1]],
            ])
    }

    /// Property names, the fast pass over a plain name's bytes and the full checks agreeing: printable
    /// ASCII, other scripts and 256 characters pass; a dot (also one a combining mark follows: paths
    /// split on the dot's byte), a leading '$', an empty name, a control character (C0, DEL, C1)
    /// and 257 characters are refused.
    @Test(arguments: [
        ("tab", true), ("view_name-2 (x)?", true), ("é", true), ("名前", true),
        (String(repeating: "a", count: 256), true),
        (String(repeating: "é", count: 256), true), ("a$", true), ("a.b", false), ("a.\u{301}b", false), ("$a", false),
        ("", false), ("a\u{7F}", false), ("a\u{85}", false), ("a\u{0}", false), ("a\nb", false),
        (String(repeating: "a", count: 257), false), (String(repeating: "é", count: 257), false),
    ])
    func propertyNames(_ name: String, _ allowed: Bool) {
        var passed = true
        do {
            try KeenEventRules.checkPropertyName(name, path: "p")
        } catch {
            passed = false
        }
        #expect(passed == allowed, "\(name.debugDescription)")
    }

    @Test func eventsAreCheckedByKeensRules() throws {
        #expect(throws: KeenError.self) { try KeenEventRules.normalize(["a.b": 1], now: 0) }
        #expect(throws: KeenError.self) { try KeenEventRules.normalize(["$a": 1], now: 0) }
        #expect(throws: KeenError.self) {
            try KeenEventRules.normalize(.string(String(repeating: "x", count: 5)), now: 0)
        }
        #expect(throws: KeenError.self) { try KeenEventRules.normalize(["keen": 3], now: 0) }
        #expect(throws: KeenError.self) { try KeenEventRules.normalize(["keen": ["colour": "red"]], now: 0) }
        #expect(throws: KeenError.self) {
            try KeenEventRules.normalize(["s": .string(String(repeating: "x", count: 10_001))], now: 0)
        }
        #expect(throws: KeenError.self) { try KeenEventRules.checkCollection("$events") }
        #expect(throws: KeenError.self) { try KeenEventRules.checkCollection(String(repeating: "c", count: 65)) }
        do {
            _ = try KeenEventRules.normalize(
                ["keen": ["addons": [["name": "keen:ip_to_geo", "input": ["ip": "ip"], "output": "geo"]]]], now: 0)
            Issue.record("ip_to_geo accepted")
        } catch {
            #expect(error.code == "InvalidKeenNamespaceProperty")
        }
        let event = try KeenEventRules.normalize(
            [
                "page": ["url": "https://example.com/a?b=c"],
                "keen": [
                    "addons": [
                        ["name": "keen:url_parser", "input": ["url": "page.url"], "output": "parsed"]
                    ]
                ],
            ], now: 0)
        #expect(event.leaves.contains(EventLeaf(path: "parsed.domain", value: .string("example.com"))))
    }

    /// The binary form gives back every leaf, and an event rebuilt from it is the event sent.
    @Test func theBinaryFormRoundTrips() throws {
        let sent: JSONValue = [
            "a": ["b": 1.5, "c": ["x", 2, true], "d": [:]], "n": -42, "big": 1e300, "t": "é\n\"", "z": nil, "f": false,
        ]
        let event = try KeenEventRules.normalize(sent, now: 0)
        var names: [String] = []
        let data = EventCodec.encode(event.leaves) { (path: String) -> Int in
            names.append(path)
            return names.count - 1
        }
        let leaves = EventCodec.decode(data).map { EventLeaf(path: names[$0.pathID], value: $0.value) }
        #expect(leaves == event.leaves)
        var rebuilt = KeenEventRules.rebuild(leaves: leaves, timestamp: 0, createdAt: 0, id: "1").object!
        rebuilt["keen"] = nil
        #expect(JSONValue.object(rebuilt) == sent)
    }

    /// The reader refuses a key twice in one object, few keys or many; its strings are what was
    /// sent, ASCII or not; and a batch's events are counted without reading them (so one past the
    /// limit costs no parse), the same count as the parse's.
    @Test func theJSONReaderAndTheBatchCount() throws {
        for keys in [2, 7, 8, 9, 30] {
            let members = (0..<keys).map { "\"k\($0)\":\($0)" } + ["\"k\(keys / 2)\":0"]
            #expect(throws: JSONSyntaxError.self, "\(keys) keys") {
                try JSONValue.parse("{" + members.joined(separator: ",") + "}")
            }
            let distinct = try JSONValue.parse("{" + members.dropLast().joined(separator: ",") + "}")
            #expect(distinct.object?.members.count == keys)
        }
        #expect(try JSONValue.parse(#"["plain","é","\u00e9","a\"b"]"#) == ["plain", "é", "é", "a\"b"])
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse([0x22, 0xC3, 0x28, 0x22]) }

        let batch = #"{"a":[{},{"x":[1,2],"y":"s,]}"},"t\"],",-1.5e3,null],"b":[],"c":[[]]}"#
        #expect(JSONValue.batchElementCount(Array(batch.utf8)) == 6)
        let parsed = try JSONValue.parse(batch).object!.members.map { $0.value.array!.count }.reduce(0, +)
        #expect(parsed == 6)
        #expect(JSONValue.batchElementCount(Array(("\u{FEFF} { } ").utf8)) == 0)
        for notABatch in [#"{"a":{}}"#, #"{"a":[1,}"#, #"{"a":[1]"#, #"[1]"#, #"{"a":[1]} x"#, #"{"a":["x]}"#, ""] {
            #expect(JSONValue.batchElementCount(Array(notABatch.utf8)) == nil, "\(notABatch)")
        }
    }

    @Test func queriesSayWhatIsWrong() {
        func error(_ parameters: JSONObject, _ type: String = "count") -> String? {
            do {
                _ = try KeenQuery.parse(type, parameters: parameters, now: 0)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(error(JSONObject()) == "MissingRequiredPropertyError")
        #expect(error(JSONObject([("event_collection", "e"), ("interval", "daily")])) == "IntervalDefinitionError")
        #expect(
            error(JSONObject([("event_collection", "e"), ("timeframe", "last_week")])) == "TimeframeDefinitionError")
        #expect(error(JSONObject([("event_collection", "e"), ("timezone", "Mars/Olympus")])) == "InvalidTimezoneError")
        #expect(
            error(
                JSONObject([
                    ("event_collection", "e"),
                    ("filters", [["property_name": "a", "operator": "like", "property_value": 1]]),
                ]))
                == "FilterDefinitionError")
        #expect(error(JSONObject([("event_collection", "e")]), "sum") == "MissingRequiredPropertyError")
        #expect(error(JSONObject([("event_collection", "e")]), "mode") == "ResourceNotFoundError")
        // Null is absent (the iOS client sends unset parameters as null).
        #expect(error(JSONObject([("event_collection", "e"), ("filters", nil), ("interval", nil)])) == nil)
    }

    @Test func relativeTimeframesIncludeTheCurrentUnitOrOnlyCompleteOnes() throws {
        // Wednesday 2026-11-25 15:00 UTC.
        let now = KeenTime.parse("2026-11-25T15:00:00Z")!
        let zone = QueryZone.utc
        #expect(
            try zone.resolve("this_2_days", now: now)
                == Timeframe(start: KeenTime.parse("2026-11-24T00:00:00Z")!, end: now + 1))
        #expect(
            try zone.resolve("previous_2_days", now: now)
                == Timeframe(
                    start: KeenTime.parse("2026-11-23T00:00:00Z")!, end: KeenTime.parse("2026-11-25T00:00:00Z")!))
        // Weeks start on Sunday (the 22nd).
        #expect(try zone.resolve("this_week", now: now)?.start == KeenTime.parse("2026-11-22T00:00:00Z"))
        #expect(try zone.resolve("yesterday", now: now)?.start == KeenTime.parse("2026-11-24T00:00:00Z"))
        #expect(QueryEngine.percentile([1, 2, 3, 4], 50) == 2.5)
        #expect(QueryEngine.percentile([5], 90) == 5)
    }
}
