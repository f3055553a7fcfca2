import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import Storage
import Synchronization

/// `nohit-bench analytics`: Keen-compatible analytics on a `nohit serve` process over HTTP. A
/// project is created, N app events (an SDK's `views`: a device's salted hash, a session, the
/// screen and its duration, the standard properties, a uniqueness token) are sent in batches of
/// 500 by a few concurrent uploaders, then queries over all of them are timed.
struct AnalyticsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "Ingest N events over HTTP in batches (events/s, server CPU, bytes per event), then time count, "
            + "count_unique, median and a funnel over all of them."
    )

    @Option(help: "Events to send.") var events = 1_000_000
    @Option(help: "Events per batch request.") var batch = 500
    @Option(help: "Batch requests in flight at once.") var uploaders = 4
    @Option(help: "Devices the events come from.") var devices = 20_000
    @Option(help: "Days the events' timestamps cover (ending 2026-10-31).") var days = 31
    @Option(help: "Runs of each query (the median is reported).") var runs = 3
    @Option(help: "The nohit executable to serve (default: beside this benchmark).") var nohit: String?
    @Option(
        help: ArgumentHelp(
            "A reference to run the same queries on the same events in the same run: duckdb (PyPI duckdb, one "
                + "thread, in process; the benchmark makes .build/duckdb-venv for it).", valueName: "tool"))
    var reference: String?
    @Option(
        help: ArgumentHelp(
            "A PostgreSQL database to serve from instead of SQLite (postgres://user@host:port/db); each run "
                + "makes a schema of its own and drops it after.", valueName: "url"))
    var database: String?
    @Flag(
        help:
            "After the queries, export every event as NDJSON (server memory sampled), then drop one mid-way and resume it."
    )
    var export = false

    func validate() throws {
        if let reference, reference != "duckdb" {
            throw ValidationError("--reference: the reference is duckdb, not '\(reference)'")
        }
    }

    func run() async throws {
        let executable =
            nohit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "nohit"
            ).path
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-analytics-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        // The project and its keys, created by the CLI as an operator would.
        let create = Process()
        create.executableURL = URL(fileURLWithPath: executable)
        // On PostgreSQL, a schema of this run's own.
        let databaseURL = try database.map { url -> String in
            let schema = "bench_" + UUID().uuidString.prefix(8).lowercased()
            _ = try PostgresStore.Location(url: url)
            return url + (url.contains("?") ? "&" : "?") + "schema=\(schema)"
        }
        let storeArguments = ["--data-dir", work] + (databaseURL.map { ["--database", $0] } ?? [])
        create.arguments = ["analytics", "project", "create", "bench", "--id", "bench", "--json"] + storeArguments
        let created = Pipe()
        create.standardOutput = created
        try create.run()
        let keysJSON = created.fileHandleForReading.readDataToEndOfFile()
        create.waitUntilExit()
        guard create.terminationStatus == 0,
            let keys = try JSONSerialization.jsonObject(with: keysJSON) as? [String: String],
            let writeKey = keys["write_key"], let readKey = keys["read_key"], let masterKey = keys["master_key"]
        else { throw ValidationError("`nohit analytics project create` failed") }

        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let port = try await IdleBenchmark.freePort(loops)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: executable)
        server.arguments =
            [
                "serve", "--port", "\(port)", "--date", "2020-08-25", "--speed", "1", "--data", "Data/retrosheet",
                "--log-level", "error",
                // One client writing a million events as fast as it can: no per-key or per-client rate.
                "--config", try Self.unlimitedRates(in: work),
            ] + storeArguments
        server.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try server.run()
        var serverRunning = true
        defer {
            if serverRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let base = "http://127.0.0.1:\(port)/3.0/projects/bench"
        let client = HTTPClient(
            eventLoopGroupProvider: .shared(loops),
            configuration: .init(
                connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 16)))
        let startedAt = ContinuousClock.now
        while (try? await client.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz"), timeout: .seconds(5)))?
            .status != .ok
        {
            guard ContinuousClock.now - startedAt < .seconds(60), server.isRunning else {
                throw ValidationError("the server did not start")
            }
            try await Task.sleep(for: .milliseconds(100))
        }

        // Ingest.
        let workload = EventWorkload(total: events, devices: devices, days: days)
        let batches = (events + batch - 1) / batch
        let counters = IngestCounters()
        let cpuBefore = ProcessTimes.cpuSeconds(pid: server.processIdentifier)
        let databaseCPUBefore = databaseCPUSeconds()
        let benchBefore = ProcessTimes.cpuSeconds()
        let ingestStart = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<uploaders {
                group.addTask { [events, batch] in
                    while true {
                        let index = counters.next.add(1, ordering: .relaxed).oldValue
                        guard index < batches else { return }
                        let count = min(batch, events - index * batch)
                        let body = workload.batchBody(first: index * batch, count: count)
                        counters.bytesSent.add(body.count, ordering: .relaxed)
                        var request = HTTPClientRequest(url: base + "/events")
                        request.method = .POST
                        request.headers.add(name: "authorization", value: writeKey)
                        request.headers.add(name: "content-type", value: "application/json")
                        request.body = .bytes(ByteBuffer(bytes: body))
                        let sent = ContinuousClock.now
                        let response = try await client.execute(request, timeout: .seconds(120))
                        let answer = try await response.body.collect(upTo: 16 << 20)
                        counters.latencies.withLock { $0.append(ContinuousClock.now - sent) }
                        let failed = String(buffer: answer).components(separatedBy: #""success":false"#).count - 1
                        if response.status != .ok || failed > 0 {
                            counters.failures.add(max(failed, response.status == .ok ? 0 : count), ordering: .relaxed)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let ingestTime = SSEBenchmark.seconds(ContinuousClock.now - ingestStart)
        let ingestCPU = ProcessTimes.cpuSeconds(pid: server.processIdentifier) - cpuBefore
        let databaseCPU = databaseCPUSeconds() - databaseCPUBefore
        let benchCPU = ProcessTimes.cpuSeconds() - benchBefore
        let sortedLatencies = counters.latencies.withLock { $0 }.sorted()
        func latency(_ p: Double) -> Double {
            SSEBenchmark.seconds(
                sortedLatencies[min(sortedLatencies.count - 1, Int(Double(sortedLatencies.count) * p))])
                * 1000
        }

        print(
            "workload: `\(([executable] + server.arguments!).joined(separator: " "))` (\(database == nil ? "SQLite" : "PostgreSQL")), project created by "
                + "`nohit analytics project create`; \(events) `views` events from \(devices) devices over \(days) days "
                + "in arrival order, each up to an hour late (keen.timestamp, keen.uniqueness_token, session_id, user.id_hash, view.name, view.duration_ms, "
                + "standard_properties: 9 fields), POST /3.0/projects/bench/events in batches of \(batch), \(uploaders) "
                + "in flight, over HTTP/1.1 on loopback; 2 cores shared by server and this client")
        print(
            String(
                format:
                    "ingest: %d events in %.2f s = %.0f events/s (%.1f MB of JSON, %d batches, p50 %.0f ms, p99 %.0f ms "
                    + "per batch); %d events refused; server CPU %.2f s = %.2f µs/event; client CPU %.2f s%@",
                events, ingestTime, Double(events) / ingestTime,
                Double(counters.bytesSent.load(ordering: .relaxed)) / 1e6,
                batches, latency(0.5), latency(0.99), counters.failures.load(ordering: .relaxed), ingestCPU,
                ingestCPU / Double(events) * 1e6, benchCPU,
                database == nil
                    ? ""
                    : String(
                        format: "; PostgreSQL's CPU %.2f s = %.2f µs/event", databaseCPU,
                        databaseCPU / Double(events) * 1e6)))

        // Queries over all of the events.
        let all = #""timeframe":{"start":"2026-10-01T00:00:00Z","end":"2026-11-01T00:00:00Z"}"#
        let sliced =
            all
            + #","timezone":"America/New_York","interval":"daily","group_by":"view.name","filters":[{"property_name":"standard_properties.logged_in","operator":"eq","property_value":true}]"#
        let step = { (tab: String) in
            #"{"event_collection":"views","actor_property":"user.id_hash",\#(all),"filters":[{"property_name":"view.name","operator":"eq","property_value":"\#(tab)"},{"property_name":"standard_properties.os_version","operator":"gte","property_value":"17"}]}"#
        }
        let queries: [(name: String, analysis: String, body: String)] = [
            ("count", "count", #"{"event_collection":"views",\#(all)}"#),
            (
                "count_unique user.id_hash", "count_unique",
                #"{"event_collection":"views","target_property":"user.id_hash",\#(all)}"#
            ),
            (
                "median view.duration_ms", "median",
                #"{"event_collection":"views","target_property":"view.duration_ms",\#(all)}"#
            ),
            (
                "funnel live → game → settings (by user.id_hash; filters on view.name and os_version)", "funnel",
                #"{"steps":[\#(step("live")),\#(step("game")),\#(step("settings"))]}"#
            ),
            (
                "count, filtered, group_by view.name, daily (America/New_York)", "count",
                #"{"event_collection":"views",\#(sliced)}"#
            ),
            (
                "count_unique user.id_hash, filtered, group_by, daily", "count_unique",
                #"{"event_collection":"views","target_property":"user.id_hash",\#(sliced)}"#
            ),
            (
                "median view.duration_ms, filtered, group_by, daily", "median",
                #"{"event_collection":"views","target_property":"view.duration_ms",\#(sliced)}"#
            ),
        ]
        var ours: [(name: String, median: Double, cpu: Double, answer: String)] = []
        for query in queries {
            var times: [Double] = []
            var cpu: [Double] = []
            var databaseCPU: [Double] = []
            var summary = ""
            for _ in 0..<runs {
                var request = HTTPClientRequest(url: base + "/queries/" + query.analysis)
                request.method = .POST
                request.headers.add(name: "authorization", value: readKey)
                request.headers.add(name: "content-type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: query.body))
                let before = ProcessTimes.cpuSeconds(pid: server.processIdentifier)
                let databaseBefore = databaseCPUSeconds()
                let start = ContinuousClock.now
                let response = try await client.execute(request, timeout: .seconds(600))
                let body = try await response.body.collect(upTo: 64 << 20)
                times.append(SSEBenchmark.seconds(ContinuousClock.now - start) * 1000)
                cpu.append((ProcessTimes.cpuSeconds(pid: server.processIdentifier) - before) * 1000)
                databaseCPU.append((databaseCPUSeconds() - databaseBefore) * 1000)
                let text = String(buffer: body)
                guard response.status == .ok else {
                    throw ValidationError("\(query.name): \(response.status.code) \(text.prefix(500))")
                }
                summary = Self.summarize(text)
                if ours.count == queries.firstIndex(where: { $0.name == query.name }) {
                    ours.append((query.name, 0, 0, text))
                } else {
                    ours[ours.count - 1].answer = text
                }
            }
            ours[ours.count - 1].median = times.sorted()[times.count / 2]
            ours[ours.count - 1].cpu = cpu.sorted()[cpu.count / 2]
            print(
                String(
                    format: "query %@: median %.0f ms (runs, the first cold: %@; server CPU median %.0f ms%@) → %@",
                    query.name, times.sorted()[times.count / 2],
                    times.map { String(format: "%.0f", $0) }.joined(separator: ", "), cpu.sorted()[cpu.count / 2],
                    database == nil
                        ? "" : String(format: ", PostgreSQL's %.0f ms", databaseCPU.sorted()[databaseCPU.count / 2]),
                    summary))
        }

        if export {
            try await Self.measureExport(
                client: client, base: base, masterKey: masterKey, server: server, events: events)
        }
        try await client.shutdown()
        if reference == "duckdb" {
            try Self.compareWithDuckDB(workload: workload, ours: ours, runs: runs, work: work)
        }

        let peak = ProcessMemory.kilobytes("VmHWM", pid: "\(server.processIdentifier)")
        print(
            String(
                format: "server memory: peak resident %.0f MB (VmHWM: ingest, the columns read, every query)",
                Double(peak) / 1024))
        // Storage, read with the server stopped.
        server.terminate()
        server.waitUntilExit()
        serverRunning = false
        if let databaseURL {
            let location = try PostgresStore.Location(url: databaseURL)
            try await PostgresStore.withStore(location, secrets: .ephemeral()) { store in
                let analyticsBytes = try await store.analyticsBytes() ?? 0
                print(
                    String(
                        format: "storage: analytics tables (events with their primary key, uniqueness tokens) %.1f MB "
                            + "= %.0f bytes/event (PostgreSQL, pg_total_relation_size)",
                        Double(analyticsBytes) / 1e6, Double(analyticsBytes) / Double(events)))
                try await store.dropSchema()
            }
        } else {
            let path = (work as NSString).appendingPathComponent("nohit.sqlite")
            let store = try SQLiteStore(path: path)
            let analyticsBytes = try await store.analyticsBytes() ?? 0
            let fileBytes = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
            print(
                String(
                    format:
                        "storage: analytics tables (events, time index, uniqueness tokens) %.1f MB = %.0f bytes/event; "
                        + "database file %.1f MB (with the service's own tables)",
                    Double(analyticsBytes) / 1e6, Double(analyticsBytes) / Double(events), Double(fileBytes) / 1e6))
        }
        try await loops.shutdownGracefully()
    }

    /// CPU seconds of PostgreSQL's processes when serving from it (their backends do the scans).
    func databaseCPUSeconds() -> Double {
        database == nil ? 0 : ProcessTimes.cpuSeconds(ofProcessesNamed: "postgres")
    }

    /// A settings file without the Keen API's per-key and per-client rates (a setting of 0), in `work`.
    static func unlimitedRates(in work: String) throws -> String {
        let path = (work as NSString).appendingPathComponent("unlimited-rates.json")
        let rates = [
            "events-per-minute-per-key", "events-per-minute-per-client", "queries-per-minute-per-key",
            "queries-per-minute-per-client",
        ]
        let object = ["analytics": Dictionary(uniqueKeysWithValues: rates.map { ($0, 0) })]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A result's first 160 characters, or for a long one its size.
    static func summarize(_ text: String) -> String {
        text.count <= 160 ? text : "\(text.prefix(120))… (\(text.utf8.count) bytes)"
    }
}

extension AnalyticsBenchmark {
    /// Runs `Benchmarks/duckdb_reference.py` (DuckDB, one thread, in process) on the same events
    /// (written as CSV by the same generator) and prints, per query, our median over HTTP beside
    /// DuckDB's, the ratio, the goal (at most twice DuckDB's, or 5 ms where DuckDB takes under
    /// 2.5 ms) and whether the answers agree.
    static func compareWithDuckDB(
        workload: EventWorkload, ours: [(name: String, median: Double, cpu: Double, answer: String)], runs: Int,
        work: String
    ) throws {
        let python = ".build/duckdb-venv/bin/python"
        if !FileManager.default.isExecutableFile(atPath: python) {
            print("reference: making .build/duckdb-venv (python3 -m venv; pip install duckdb from PyPI)")
            try Self.shell(["python3", "-m", "venv", ".build/duckdb-venv"])
            try Self.shell([".build/duckdb-venv/bin/pip", "install", "--quiet", "duckdb"])
        }
        let csv = (work as NSString).appendingPathComponent("events.csv")
        try workload.writeCSV(to: csv)
        let start = Int64(1_790_812_800) * 1_000_000  // 2026-10-01T00:00:00Z, as the queries' timeframe
        let end = Int64(1_793_491_200) * 1_000_000  // 2026-11-01T00:00:00Z
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["Benchmarks/duckdb_reference.py", csv, "\(runs)", "\(start)", "\(end)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError(
                "the DuckDB reference failed (exit \(process.terminationStatus)): \(text.suffix(500))")
        }
        let lines = text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        guard let header = lines.first, lines.count == ours.count + 1 else {
            throw ValidationError("the DuckDB reference answered \(lines.count) lines: \(text.prefix(500))")
        }
        print(
            "reference: DuckDB \(header["duckdb"] ?? "?") in process, SET threads = 1, the same \(header["rows"] ?? "?") events "
                + "(CSV from the same generator, loaded in \(header["load_s"] ?? "?") s), the same queries as SQL; "
                + "medians of \(runs) runs; ours over HTTP, DuckDB in process")
        for (mine, theirs) in zip(ours, lines.dropFirst()) {
            let reference = theirs["median_ms"] as? Double ?? .nan
            let goal = reference < 2.5 ? 5 : 2 * reference
            let agree = Self.summary(mine.answer, index: ours.firstIndex { $0.name == mine.name } ?? 0)
            let theirsAnswer = theirs["answer"].map { Self.canonical($0) } ?? "?"
            print(
                String(
                    format: "vs duckdb %@: ours %.1f ms (server CPU %.0f ms), DuckDB %.1f ms (CPU %.1f ms): %.1f× "
                        + "(goal ≤ %.1f ms: %@); answers %@ (ours %@, DuckDB %@)",
                    mine.name, mine.median, mine.cpu, reference, theirs["cpu_ms"] as? Double ?? .nan,
                    mine.median / reference, goal, mine.median <= goal ? "met" : "not met",
                    agree == theirsAnswer ? "agree" : "DIFFER", agree, theirsAnswer))
        }
    }

    /// Our answer in the reference's form: the number, the funnel's list, or for a grouped daily
    /// result its cells and the sum of their values.
    static func summary(_ text: String, index: Int) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return "?"
        }
        let result = object["result"]
        guard index >= 4, let buckets = result as? [[String: Any]] else { return canonical(result ?? "?") }
        var cells = 0
        var total = 0.0
        for bucket in buckets {
            for group in bucket["value"] as? [[String: Any]] ?? [] {
                cells += 1
                total += (group["result"] as? Double) ?? Double(group["result"] as? Int ?? 0)
            }
        }
        let rounded = index == 6 ? (total * 1000).rounded() / 1000 : total
        return canonical(["cells": cells, "total": rounded] as [String: Any])
    }

    /// A JSON value as sorted, plain text (whole numbers without a fraction), to compare.
    static func canonical(_ value: Any) -> String {
        switch value {
        case let double as Double:
            return double == double.rounded() && abs(double) < 1e15 ? String(Int64(double)) : String(double)
        case let list as [Any]: return "[" + list.map(canonical).joined(separator: ",") + "]"
        case let object as [String: Any]:
            return "{" + object.keys.sorted().map { "\($0):\(canonical(object[$0]!))" }.joined(separator: ",") + "}"
        default: return "\(value)"
        }
    }

    static func shell(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("`\(arguments.joined(separator: " "))` failed (exit \(process.terminationStatus))")
        }
    }
}
