import Analytics
import Foundation
import JSON
import Synchronization
import TestSupport
import Testing

@testable import Storage

/// Columns on PostgreSQL follow every instance's writes: two instances write through their own
/// connections while a third answers from its columns, and each answer counts every event
/// acknowledged before it began and none not yet sent; once the writers stop, every answer equals
/// the row engine's over the same table, and stays equal after a delete on another instance and
/// late events. Events, batches and queries are drawn from a seed the test prints
/// (`NOHIT_TEST_SEED` replays it).
@Suite(.postgres) struct PostgresColumnsTests {
    static let base: Int64 = 1_790_000_000_000_000
    static let now: Int64 = 1_800_000_000_000_000
    static let day: Int64 = 86_400_000_000
    static let tabs = ["live", "scores", "hall", "deals", "gone"]
    static let versions = ["1.0", "1.1", "2.0"]

    /// What the writers sent and had acknowledged, per tab, in order.
    final class Ledger: Sendable {
        struct Counts: Sendable {
            var sent: [String: Int] = [:]
            var acknowledged: [String: Int] = [:]
        }
        let counts = Mutex(Counts())
    }

    /// Opens once `count` arrivals were made; waiters before that wait for it.
    final class Gate: Sendable {
        let state: Mutex<(left: Int, waiters: [CheckedContinuation<Void, Never>])>

        init(waitingFor count: Int) { state = Mutex((count, [])) }

        func arrive() {
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.left -= 1
                guard state.left == 0 else { return [] }
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in ready { waiter.resume() }
        }

        func wait() async {
            await withCheckedContinuation { continuation in
                let open = state.withLock { state -> Bool in
                    if state.left <= 0 { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if open { continuation.resume() }
            }
        }
    }

    static func event(_ random: inout SplitMix, late: Bool) throws -> (IncomingEvent, tab: String) {
        let tab = tabs[Int(random.next() % UInt64(tabs.count))]
        let version = versions[Int(random.next() % UInt64(versions.count))]
        let number = Int(random.next() % 10)
        let user = Int(random.next() % 40)
        // Most events within the last days, in order of writing; a late one lands weeks earlier.
        let offset = Int64(random.next() % UInt64(day)) + (late ? 0 : 30 * day)
        let json = #"{"tab":"\#(tab)","app_version":"\#(version)","n":\#(number),"user":"u\#(user)"}"#
        return (try KeenEventRules.normalize(try JSONValue.parse(json), now: base + offset), tab)
    }

    static func query(_ analysis: String, _ parameters: String) throws -> KeenQuery {
        guard case .object(let object) = try JSONValue.parse(parameters) else { throw CocoaError(.coderInvalidValue) }
        return try KeenQuery.parse(analysis, parameters: object, now: now)
    }

    static let all = #""timeframe":{"start":"2026-09-01T00:00:00Z","end":"2027-09-01T00:00:00Z"}"#
    /// Queries the columns answer, each compared with the row engine.
    static let queries: [(String, String)] = [
        ("count", #"{"event_collection":"views",\#(all)}"#),
        ("count", #"{"event_collection":"views",\#(all),"group_by":"tab"}"#),
        ("sum", #"{"event_collection":"views","target_property":"n",\#(all),"group_by":["tab","app_version"]}"#),
        ("count_unique", #"{"event_collection":"views","target_property":"user",\#(all),"group_by":"app_version"}"#),
        ("median", #"{"event_collection":"views","target_property":"n",\#(all)}"#),
        (
            "count",
            #"{"event_collection":"views",\#(all),"interval":"weekly","filters":[{"property_name":"tab","operator":"ne","property_value":"gone"}]}"#
        ),
        (
            "funnel",
            #"{"steps":[{"event_collection":"views","actor_property":"user",\#(all),"filters":[{"property_name":"tab","operator":"eq","property_value":"live"}]},{"event_collection":"opens","actor_property":"user",\#(all)}]}"#
        ),
    ]

    @Test func twoInstancesWriteWhileAThirdAnswersFromColumnsAsTheRowsDo() async throws {
        let seed = TestSeed.draw()
        print("PostgreSQL columns test: events, batches and queries drawn with seed \(seed)")
        let url = try #require(TestPostgres.url(schema: "columns"))
        let location = try PostgresStore.Location(url: url)
        try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "a") { a in
            try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "b") { b in
                try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "c") { c in
                    try await Self.run(seed: seed, writers: [a, b], reader: c)
                    try await a.dropSchema()
                }
            }
        }
    }

    static func run(seed: UInt64, writers: [PostgresStore], reader: PostgresStore) async throws {
        _ = try await writers[0].createProject(name: "app", id: "app", now: Date())
        let ledger = Ledger()
        var random = SplitMix(seed: seed)
        // The batches each writer sends, drawn up front so the seed alone decides them.
        var drawn: [[[(IncomingEvent, tab: String)]]] = []
        for _ in writers {
            var batches: [[(IncomingEvent, tab: String)]] = []
            for _ in 0..<30 {
                let size = 1 + Int(random.next() % 60)
                var batch: [(IncomingEvent, tab: String)] = []
                for _ in 0..<size {
                    let late = random.next() % 8 == 0
                    batch.append(try event(&random, late: late))
                }
                batches.append(batch)
            }
            drawn.append(batches)
        }
        let plans = drawn
        let total = plans.joined().reduce(0) { $0 + $1.count }
        let opens = try (0..<40).map {
            try KeenEventRules.normalize(
                try JSONValue.parse(#"{"user":"u\#($0)"}"#), now: base + 31 * day + Int64($0))
        }
        _ = try await writers[1].record(project: "app", batch: [("opens", opens)], createdAt: base)
        // The writers' first batches, then the reader's columns read: what the writers send after
        // is followed.
        for (writer, batches) in zip(writers, plans) {
            let batch = batches[0]
            ledger.counts.withLock { counts in
                for (_, tab) in batch {
                    counts.sent[tab, default: 0] += 1
                    counts.acknowledged[tab, default: 0] += 1
                }
            }
            _ = try await writer.record(project: "app", batch: [("views", batch.map(\.0))], createdAt: base)
        }
        #expect(
            try await reader.columnarAnswer(
                project: "app", try query("count", #"{"event_collection":"views",\#(all)}"#), budget: .unlimited)
                != nil)
        // Halfway, each writer waits until each reader has answered twice: answers are asked while
        // they write, however loaded the machine.
        let halfway = Gate(waitingFor: 2)

        let columnar = try await withThrowingTaskGroup(of: Int.self) { group in
            for (writer, batches) in zip(writers, plans) {
                group.addTask {
                    for (index, batch) in batches.enumerated().dropFirst() {
                        if index == batches.count / 2 { await halfway.wait() }
                        ledger.counts.withLock { counts in
                            for (_, tab) in batch { counts.sent[tab, default: 0] += 1 }
                        }
                        _ = try await writer.record(project: "app", batch: [("views", batch.map(\.0))], createdAt: base)
                        ledger.counts.withLock { counts in
                            for (_, tab) in batch { counts.acknowledged[tab, default: 0] += 1 }
                        }
                    }
                    return 0
                }
            }
            // Two readers on one instance answer while they write, one grouping by a property the
            // columns do not hold yet: every count at least what was acknowledged before the
            // question, at most what was sent by the answer.
            for property in ["tab", "app_version"] {
                group.addTask {
                    var (answers, fromColumns) = (0, 0)
                    // A reader that fails still lets the writers on (the test then ends with its failure).
                    defer { if answers < 2 { halfway.arrive() } }
                    let grouped = try query(
                        "count", #"{"event_collection":"views",\#(all),"group_by":"\#(property)"}"#)
                    while true {
                        try Task.checkCancellation()
                        let before = ledger.counts.withLock { $0 }
                        let columns = try await reader.columnarAnswer(project: "app", grouped, budget: .unlimited)
                        var answer = JSONValue.null
                        if let columns {
                            answer = columns
                            fromColumns += 1
                        } else {
                            answer = try await reader.rowsAnswer(project: "app", grouped, budget: .unlimited)
                        }
                        let after = ledger.counts.withLock { $0 }
                        var counted: [String: Int] = [:]
                        for entry in answer.array ?? [] {
                            if let value = entry[property]?.string, let count = entry["result"]?.number.map(Int.init) {
                                counted[value] = count
                            }
                        }
                        if property == "tab" {
                            for tab in tabs {
                                let count = counted[tab] ?? 0
                                #expect(
                                    count >= before.acknowledged[tab, default: 0]
                                        && count <= after.sent[tab, default: 0],
                                    "seed \(seed): \(tab) counted \(count), acknowledged before \(before.acknowledged[tab, default: 0]), sent by the answer \(after.sent[tab, default: 0])"
                                )
                            }
                        } else {
                            let count = counted.values.reduce(0, +)
                            let (acknowledged, sent) = (
                                before.acknowledged.values.reduce(0, +), after.sent.values.reduce(0, +)
                            )
                            #expect(
                                count >= acknowledged && count <= sent,
                                "seed \(seed): \(count) counted by version, acknowledged before \(acknowledged), sent by the answer \(sent)"
                            )
                        }
                        answers += 1
                        if answers == 2 { halfway.arrive() }
                        if after.acknowledged.values.reduce(0, +) == total && answers >= 2 { break }
                    }
                    return fromColumns
                }
            }
            var columnar = 0
            for try await count in group { columnar += count }
            return columnar
        }
        #expect(columnar > 0, "seed \(seed): answers came from the columns while the writers wrote")

        try await expectColumnsAnswerAsRows(reader, seed: seed, when: "after the writers")
        // A delete on another instance: the reader's columns are read again.
        let deleted = try await writers[1].deleteEvents(
            project: "app", collection: "views", timeframe: nil,
            filters: [KeenFilter(path: "tab", op: .eq, value: .string("gone"))], budget: .unlimited)
        let sentGone = ledger.counts.withLock { $0.acknowledged["gone", default: 0] }
        #expect(deleted == sentGone, "seed \(seed)")
        try await expectColumnsAnswerAsRows(reader, seed: seed, when: "after a delete on another instance")
        // Late events on a writer are followed.
        var late: [IncomingEvent] = []
        for _ in 0..<50 { late.append(try event(&random, late: true).0) }
        _ = try await writers[0].record(project: "app", batch: [("views", late)], createdAt: base)
        try await expectColumnsAnswerAsRows(reader, seed: seed, when: "after late events")
        let counts = try await reader.query(
            project: "app", try query("count", #"{"event_collection":"views",\#(all)}"#), budget: .unlimited)
        let acknowledged = ledger.counts.withLock { $0.acknowledged.values.reduce(0, +) }
        #expect(counts.number.map(Int.init) == acknowledged - deleted + late.count, "seed \(seed)")

        // An export read a page at a time from another instance: every event once, in order.
        var (exported, after): ([EventExport.Cursor], EventExport.Cursor?) = ([], nil)
        while true {
            let page = try await writers[1].exportPage(
                project: "app", collection: "views", timeframe: .allTime, after: after, limit: 97, filters: [])
            exported += page.map(\.cursor)
            #expect(page.allSatisfy { !$0.leaves.contains { $0.path == EventExport.unknownPath } })
            guard page.count == 97, let last = page.last else { break }
            after = last.cursor
        }
        #expect(exported.count == acknowledged - deleted + late.count, "seed \(seed)")
        #expect(
            zip(exported, exported.dropFirst()).allSatisfy { ($0.timestamp, $0.rowID) < ($1.timestamp, $1.rowID) },
            "seed \(seed)")
    }

    /// Each query answered from the reader's columns equals the row engine's answer (the reader
    /// keeps the columns: a columnar answer is asked for, not a fallback).
    static func expectColumnsAnswerAsRows(_ store: PostgresStore, seed: UInt64, when: String) async throws {
        for (analysis, parameters) in queries {
            let query = try query(analysis, parameters)
            let columns = try await store.columnarAnswer(project: "app", query, budget: .unlimited)
            let rows = try await store.rowsAnswer(project: "app", query, budget: .unlimited)
            #expect(columns != nil, "seed \(seed), \(when): \(analysis) \(parameters) was not answered from columns")
            #expect(columns == rows, "seed \(seed), \(when): \(analysis) \(parameters)")
        }
    }
}
