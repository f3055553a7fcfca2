import Foundation
import JSON
import TestSupport
import Testing

@testable import Analytics

/// The columnar executor against the row engine on the same events: thousands of random queries
/// (every analysis it answers, every filter operator it takes, "or" filters, group_by on one and
/// two properties, daily intervals, order_by and limit, multi_analysis) over events whose
/// properties are sometimes missing, null, of another type or nested; before and after events are
/// appended to the columns unsorted. Every answer must be the row engine's, to the last bit.
@Suite struct ColumnarQueryTests {
    static let start: Int64 = 1_790_812_800_000_000  // 2026-10-01T00:00:00Z
    static let day: Int64 = 86_400_000_000

    static func events(_ count: Int, seed: UInt64, offset: Int = 0) throws -> [JSONValue] {
        var random = SplitMix(seed: seed)
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        return (0..<count).map { index in
            var event = JSONObject()
            let time = start + Int64.random(in: 0..<(10 * day), using: &random)
            event["keen"] = ["timestamp": .string(KeenTime.format(time))]
            event["user"] = ["id": .string("u\(Int.random(in: 0..<40, using: &random))")]
            switch Int.random(in: 0..<20, using: &random) {
            case 0: break
            case 1: event["n"] = .null
            case 2: event["n"] = .string("7")
            case 3: event["n"] = true
            // Tenths: sums of them depend on the order they are added in.
            default: event["n"] = .number(Double(Int.random(in: -50...500, using: &random)) / 10)
            }
            switch Int.random(in: 0..<12, using: &random) {
            case 0: break
            case 1: event["s"] = 3
            case 2: event["s"] = [:]
            default: event["s"] = .string(pick(["live", "scores", "deals", "game", "Live", "settings", ""]))
            }
            if Int.random(in: 0..<4, using: &random) > 0 { event["b"] = .bool(Bool.random(using: &random)) }
            event["v"] = ["os": .string(pick(["17.6", "18.1", "18.0", "16.7", "26.1"]))]
            event["i"] = .number(Double(index + offset))
            return .object(event)
        }
    }

    static func randomQuery(_ random: inout SplitMix) throws -> (String, JSONObject) {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        let properties = ["n", "s", "b", "v.os", "user.id", "missing"]
        // "v" is an object: `exists` on it asks for any of its leaves (the rows answer that).
        let filtered = properties + ["v"]
        func filter(depth: Int = 0) -> JSONValue {
            if depth < 2, Int.random(in: 0..<6, using: &random) == 0 {
                return [
                    "operator": "or",
                    "operands": .array(
                        (0..<Int.random(in: 1...3, using: &random)).map { _ in filter(depth: depth + 1) }),
                ]
            }
            let op = pick(["eq", "ne", "lt", "lte", "gt", "gte", "exists", "in"])
            let operand: JSONValue
            switch op {
            case "exists": operand = .bool(Bool.random(using: &random))
            case "in":
                operand = .array([
                    pick(["live", "game", 7, 12.5, true, "18.1", "u3"]), pick(["scores", 0, "u7", "17.6"]),
                ])
            case "lt", "lte", "gt", "gte":
                operand = pick([.number(10), .number(-3.25), .string("m"), .string("18"), .string("u2")])
            default:
                operand = pick([
                    .string("live"), .number(7), .string("7"), .bool(true), .null, .string("18.1"), .string("u5"),
                ])
            }
            return ["property_name": .string(pick(filtered)), "operator": .string(op), "property_value": operand]
        }
        let analysis = pick([
            "count", "count_unique", "sum", "average", "minimum", "maximum", "median", "percentile",
            "standard_deviation", "select_unique", "multi_analysis",
        ])
        var parameters = JSONObject([("event_collection", "e")])
        if analysis == "multi_analysis" {
            parameters["analyses"] = [
                "c": ["analysis_type": "count"], "u": ["analysis_type": "count_unique", "target_property": "user.id"],
                "m": ["analysis_type": "median", "target_property": "n"],
                "a": ["analysis_type": .string(pick(["sum", "average", "maximum"])), "target_property": "n"],
            ]
        } else if analysis != "count" {
            parameters["target_property"] = .string(pick(["n", "s", "b", "v.os", "user.id", "missing", "i"]))
        }
        if analysis == "percentile" { parameters["percentile"] = .number(pick([0, 10, 25, 50, 90, 99.5, 100])) }
        if Int.random(in: 0..<3, using: &random) > 0 {
            parameters["filters"] = .array((0..<Int.random(in: 1...3, using: &random)).map { _ in filter() })
        }
        let groupCount = Int.random(in: 0..<4, using: &random)
        if groupCount == 1 { parameters["group_by"] = .string(pick(properties)) }
        if groupCount == 2 {
            parameters["group_by"] = .array([.string(pick(["s", "b"])), .string(pick(["v.os", "n"]))])
        }
        let from = start + Int64.random(in: -day...(5 * day), using: &random)
        let to = from + Int64.random(in: 1...(8 * day), using: &random)
        if Int.random(in: 0..<4, using: &random) > 0 {
            parameters["timeframe"] = ["start": .string(KeenTime.format(from)), "end": .string(KeenTime.format(to))]
            if Int.random(in: 0..<2, using: &random) == 0 {
                parameters["interval"] = .string(pick(["daily", "every_6_hours", "every_2_days"]))
                parameters["timezone"] = .string(pick(["UTC", "America/New_York", "-18000"]))
            }
        }
        if groupCount == 1 || groupCount == 2, analysis != "multi_analysis", Int.random(in: 0..<3, using: &random) == 0
        {
            parameters["order_by"] = [["property_name": "result", "direction": .string(pick(["ASC", "DESC"]))]]
            if Bool.random(using: &random) {
                parameters["limit"] = .number(Double(Int.random(in: 1...4, using: &random)))
            }
        }
        return (analysis, parameters)
    }

    /// Whether two answers agree: the same shape and values, to the last bit (sums are added in
    /// the rows' order by both).
    static func agree(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)): return x == y
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { agree($0, $1) }
        case (.object(let x), .object(let y)):
            return x.members.map(\.key) == y.members.map(\.key)
                && zip(x.members, y.members).allSatisfy { agree($0.value, $1.value) }
        default: return a == b
        }
    }

    @Test func everyAnswerIsTheRowEnginesOnRandomQueries() throws {
        let seed = TestSeed.draw()
        print("columnar vs rows: seed \(seed) (NOHIT_TEST_SEED=\(seed) draws the same)")
        var random = SplitMix(seed: seed)
        var events = MemoryEvents()
        let first = try Self.events(3_000, seed: seed &+ 1)
        try events.add("e", first, now: Self.start)
        var columns = try CollectionColumns.read(
            collection: "e", paths: ["n", "s", "b", "v.os", "user.id", "missing", "i"], from: events)
        var answered = 0
        var declined = 0
        var failures: [String] = []
        for round in 0..<2 {
            if round == 1 {
                // Later events appended as a store writes them: not in timestamp order.
                let later = try Self.events(1_000, seed: seed &+ 2, offset: 3_000)
                try events.add("e", later, now: Self.start)
                for (index, event) in later.enumerated() {
                    let normalized = try KeenEventRules.normalize(event, now: Self.start)
                    columns.append(
                        timestamp: normalized.timestamp, rowID: Int64(10_000 + index), leaves: normalized.leaves)
                }
                #expect(columns.unsorted == 1_000)
            }
            for _ in 0..<800 {
                let (analysis, parameters) = try Self.randomQuery(&random)
                let query = try KeenQuery.parse(analysis, parameters: parameters, now: Self.start + 20 * Self.day)
                let rows = try QueryEngine.run(query, on: events)
                guard let columnar = try ColumnarQuery.run(query, on: columns, projectPaths: try events.paths()) else {
                    declined += 1
                    continue
                }
                answered += 1
                if !Self.agree(rows, columnar) {
                    failures.append(
                        "\(analysis) \(JSONValue.object(parameters).jsonText)\n rows: \(rows.jsonText.prefix(300))\n columns: \(columnar.jsonText.prefix(300))"
                    )
                }
            }
        }
        print(
            "columnar vs rows: \(answered) answered (\(failures.count) differ), \(declined) declined "
                + "(the rows answer those)")
        #expect(
            failures.isEmpty,
            "\(failures.count) answers differ; the first: \(failures.prefix(4).joined(separator: "\n"))")
        #expect(answered > 1_000 && declined > 0)
    }

    /// Rows another writer committed, read as columns of their own and followed into the kept
    /// ones (PostgreSQL): appended as late rows with their strings renumbered in the kept
    /// dictionaries, only when the kept columns still end where the rows begin and were read at the
    /// same deletions count; answers then as the rows of both do.
    @Test func rowsFollowedFromAnotherWriterJoinTheKeptColumns() throws {
        let seed = TestSeed.draw()
        print("followed columns: seed \(seed)")
        let paths: Set<String> = ["n", "s", "b", "v.os", "user.id", "missing", "i"]
        var events = MemoryEvents()
        try events.add("e", try Self.events(2_000, seed: seed), now: Self.start)
        var kept = try CollectionColumns.read(collection: "e", paths: paths, from: events)
        kept.followed = 2_000
        let store = ColumnStore()
        #expect(store.keep(kept, project: "p", collection: "e"))
        var others = MemoryEvents()
        let later = try Self.events(700, seed: seed &+ 1, offset: 2_000)
        try others.add("e", later, now: Self.start)
        let tail = try CollectionColumns.read(collection: "e", paths: paths, from: others)

        // Kept columns that moved on, or were read at another deletions count, take nothing.
        #expect(
            store.follow(project: "p", collection: "e", rows: tail, from: 1_999, through: 2_700, deletions: 0) == nil)
        #expect(
            store.follow(project: "p", collection: "e", rows: tail, from: 2_000, through: 2_700, deletions: 1) == nil)
        #expect(store.kept(project: "p", collection: "e")?.count == 2_000)
        let followed = try #require(
            store.follow(project: "p", collection: "e", rows: tail, from: 2_000, through: 2_700, deletions: 0))
        #expect(followed.followed == 2_700 && followed.count == 2_700 && followed.unsorted == 700)
        for path in paths {
            let (all, before, after) = (followed.columns[path]!, kept.columns[path]!, tail.columns[path]!)
            #expect((0..<2_000).map(all.value) == (0..<2_000).map(before.value), "\(path)")
            #expect((0..<700).map { all.value(2_000 + $0) } == (0..<700).map(after.value), "\(path)")
        }
        #expect(Array(followed.timestamps[2_000...]) == tail.timestamps)
        // Another query that followed them further already: they are as they are.
        #expect(
            store.follow(project: "p", collection: "e", rows: tail, from: 2_000, through: 2_500, deletions: 0)?
                .count == 2_700)

        try events.add("e", later, now: Self.start)
        for parameters in [
            #"{"event_collection":"e","group_by":"s","timeframe":"this_30_days"}"#,
            #"{"event_collection":"e","target_property":"user.id","group_by":"v.os","timeframe":"this_30_days"}"#,
        ] {
            guard case .object(let object) = try JSONValue.parse(parameters) else { return }
            let analysis = object["target_property"] == nil ? "count" : "count_unique"
            let query = try KeenQuery.parse(analysis, parameters: object, now: Self.start + 20 * Self.day)
            let columnar = try #require(try ColumnarQuery.run(query, on: followed, projectPaths: try events.paths()))
            let rows = try QueryEngine.run(query, on: events)
            #expect(Self.agree(columnar, rows), "\(parameters)")
        }
    }

    /// Funnels: two and three steps over two collections, actors of one property or another,
    /// random filters, optional, inverted and with_actors steps, timeframes per step.
    @Test func funnelsAreTheRowEngines() throws {
        let seed = TestSeed.draw()
        print("columnar funnels vs rows: seed \(seed)")
        var random = SplitMix(seed: seed)
        var events = MemoryEvents()
        try events.add("e", try Self.events(2_000, seed: seed &+ 1), now: Self.start)
        try events.add("f", try Self.events(1_000, seed: seed &+ 2), now: Self.start)
        let paths: Set<String> = ["n", "s", "b", "v.os", "user.id", "missing", "i"]
        var data = [
            "e": try CollectionColumns.read(collection: "e", paths: paths, from: events),
            "f": try CollectionColumns.read(collection: "f", paths: paths, from: events),
        ]
        // Later events of "e" appended as written (not in timestamp order).
        let later = try Self.events(500, seed: seed &+ 3, offset: 2_000)
        try events.add("e", later, now: Self.start)
        for (index, event) in later.enumerated() {
            let normalized = try KeenEventRules.normalize(event, now: Self.start)
            data["e"]!.append(timestamp: normalized.timestamp, rowID: Int64(10_000 + index), leaves: normalized.leaves)
        }
        var failures: [String] = []
        var answered = 0
        for _ in 0..<300 {
            func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
            let (_, sample) = try Self.randomQuery(&random)
            let steps: [JSONValue] = (0..<Int.random(in: 2...3, using: &random)).map { index in
                var step = JSONObject([
                    ("event_collection", .string(pick(["e", "f"]))),
                    ("actor_property", .string(pick(["user.id", "user.id", "s", "n"]))),
                ])
                if let filters = sample["filters"], Bool.random(using: &random) { step["filters"] = filters }
                if index > 0 {
                    step["optional"] = .bool(Int.random(in: 0..<4, using: &random) == 0)
                    step["inverted"] = .bool(Int.random(in: 0..<4, using: &random) == 0)
                }
                step["with_actors"] = .bool(Int.random(in: 0..<3, using: &random) == 0)
                if Bool.random(using: &random) {
                    let from = Self.start + Int64.random(in: 0...(5 * Self.day), using: &random)
                    step["timeframe"] = [
                        "start": .string(KeenTime.format(from)), "end": .string(KeenTime.format(from + 3 * Self.day)),
                    ]
                }
                return .object(step)
            }
            let parameters = JSONObject([("steps", .array(steps))])
            let query = try KeenQuery.parse("funnel", parameters: parameters, now: Self.start + 20 * Self.day)
            let rows = try QueryEngine.run(query, on: events)
            guard let columnar = try ColumnarQuery.funnel(query, on: data, projectPaths: try events.paths()) else {
                continue
            }
            answered += 1
            if !Self.agree(rows, columnar) {
                failures.append(
                    "\(JSONValue.object(parameters).jsonText)\n rows: \(rows.jsonText.prefix(300))\n columns: \(columnar.jsonText.prefix(300))"
                )
            }
        }
        print("columnar funnels vs rows: \(answered) answered (\(failures.count) differ)")
        #expect(
            failures.isEmpty,
            "\(failures.count) funnels differ; the first: \(failures.prefix(3).joined(separator: "\n"))")
        #expect(answered > 100)
    }

    @Test func percentileBySelectionIsTheSortedOne() {
        var random = SplitMix(seed: 11)
        for count in [1, 2, 3, 10, 101, 1_000] {
            let values = (0..<count).map { _ in Double(Int.random(in: -20...20, using: &random)) / 2 }
            for p in [0.0, 1, 25, 33.3, 50, 75, 99, 100] {
                var copy = values
                #expect(
                    ColumnarQuery.percentileBySelection(&copy, p) == QueryEngine.percentile(values, p), "\(count) \(p)")
            }
        }
    }
}
