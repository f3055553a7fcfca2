import ArgumentParser
import Foundation
import Pipeline
import Retrosheet
import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// `nohit-bench sse-instances`: the plan past one instance, simulated. Several `nohit serve`
/// processes replay a day together on one PostgreSQL database (each game followed by one of them,
/// its items shared through the game log that every instance applies), each with its share of SSE
/// clients in a client process of its own. Every moment must reach every client on every instance;
/// the figure is what the fan-out between instances costs: for each moment, how long after its
/// first receipt anywhere (a client of the instance that said it) each client read it.
struct SSEInstancesBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sse-instances",
        abstract: "Several nohit serve processes on one PostgreSQL database, SSE clients on each: every moment on "
            + "every instance, and the delay the fan-out between instances adds."
    )

    @Option(help: "The database: postgres://user@host/db (the run uses a schema of its own, dropped after).")
    var database: String

    @Option(help: "Server processes.") var instances = 2
    @Option(help: "SSE clients in all, shared evenly by the instances.") var clients = 4_000
    @Option(help: "Replay speed (the day's games over their real lengths, this many times faster).")
    var speed = 120.0
    @Option(help: "The day to replay.") var date = "2020-08-25"
    @Option(help: "Retrosheet data.") var data = "Data/retrosheet"
    @Option(help: "Seconds a game's lease lasts (a game is taken over when its instance stops renewing).")
    var leaseSeconds = 10
    @Option(help: "The nohit executable (default: beside this benchmark).") var nohit: String?

    func run() async throws {
        guard (2...8).contains(instances) else { throw ValidationError("--instances must be 2 to 8") }
        guard PostgresStore.Location.isURL(database) else { throw ValidationError("--database must be postgres://…") }
        SSEBenchmark.raiseFileLimit(to: UInt64(clients) * 2 + 4096)
        let executable =
            nohit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "nohit"
            ).path
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-fleet-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let schema = "bench_fleet_" + UUID().uuidString.prefix(8).lowercased()
        let url = database + (database.contains("?") ? "&" : "?") + "schema=\(schema)"

        let games = try ReplaySchedule.games(on: date, data: [data])
        let timeline = ReplayTimeline(games: games)
        // (Every out of a notable bid: the servers have the odds of history.)
        let moments = timeline.moments(everyOut: true).count
        let span = (timeline.entries.last?.time ?? Date()).timeIntervalSince(timeline.entries.first?.time ?? Date())
        let timeout = Int(span / speed) + 180

        // The servers, one after another (the first makes the schema).
        var servers: [(process: Process, port: Int)] = []
        defer {
            for server in servers where server.process.isRunning {
                server.process.terminate()
                server.process.waitUntilExit()
            }
        }
        for index in 0..<instances {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = [
                "serve", "--date", date, "--speed", "\(speed)", "--data", data, "--port", "0", "--database", url,
                "--data-dir", work, "--instance-id", "i\(index + 1)", "--lease-seconds", "\(leaseSeconds)",
                "--max-connections-per-client", "0", "--log-level", "error",
            ]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            var banner = ""
            while !banner.contains(" on http://") {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { throw ValidationError("instance \(index + 1) did not start: \(banner)") }
                banner += String(decoding: chunk, as: UTF8.self)
            }
            errors.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
            guard let range = banner.range(of: #"127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
                let port = Int(banner[range].split(separator: ":")[1])
            else { throw ValidationError("no port in instance \(index + 1)'s banner: \(banner)") }
            servers.append((process, port))
        }

        // Each instance's clients, in a process of their own.
        var children: [Process] = []
        var readers: [AsyncStream<String>.AsyncIterator] = []
        var shares: [Int] = []
        for (index, server) in servers.enumerated() {
            let share = clients / instances + (index < clients % instances ? 1 : 0)
            let (child, reader) = try await SSEBenchmark.startClients(
                port: server.port, clients: share, expect: moments * share, timeout: timeout)
            children.append(child)
            readers.append(reader)
            shares.append(share)
        }
        let serverCPUBefore = servers.map { ProcessTimes.cpuSeconds(pid: $0.process.processIdentifier) }
        let databaseCPUBefore = ProcessTimes.cpuSeconds(ofProcessesNamed: "postgres")
        let start = ContinuousClock.now

        // Every receipt: (instance, moment id, CLOCK_MONOTONIC ns).
        var receipts: [(instance: Int, id: String, at: Int64)] = []
        for index in readers.indices {
            while let line = await readers[index].next() {
                let fields = line.split(separator: " ")
                if fields.count == 2, fields[0] != "rss", let nanoseconds = Int64(fields[1]) {
                    receipts.append((index, String(fields[0]), nanoseconds))
                }
            }
            children[index].waitUntilExit()
        }
        let elapsed = SSEBenchmark.seconds(ContinuousClock.now - start)
        let serverCPU = zip(servers, serverCPUBefore).map {
            ProcessTimes.cpuSeconds(pid: $0.process.processIdentifier) - $1
        }
        let databaseCPU = ProcessTimes.cpuSeconds(ofProcessesNamed: "postgres") - databaseCPUBefore

        // For each moment, its first receipt anywhere; every receipt's delay after it.
        var first: [String: (at: Int64, instance: Int)] = [:]
        for receipt in receipts where receipt.at < first[receipt.id]?.at ?? .max {
            first[receipt.id] = (receipt.at, receipt.instance)
        }
        var delays = Array(repeating: [Double](), count: instances)
        var firsts = Array(repeating: 0, count: instances)
        for moment in first.values { firsts[moment.instance] += 1 }
        for receipt in receipts {
            delays[receipt.instance].append(Double(receipt.at - first[receipt.id]!.at) / 1e6)
        }
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        // Receipts on instances that did not say the moment's game: the cross-instance path alone.
        var crossing: [Double] = []
        for receipt in receipts where first[receipt.id]!.instance != receipt.instance {
            crossing.append(Double(receipt.at - first[receipt.id]!.at) / 1e6)
        }
        let expected = moments * clients

        print(
            "workload: \(instances) `nohit serve` processes (`\(executable) serve --date \(date) --speed \(Int(speed)) "
                + "--database <postgres, schema \(schema)> --instance-id iN --lease-seconds \(leaseSeconds)`) on one "
                + "PostgreSQL database, \(clients) SSE clients (HTTP/1.1) split evenly, each instance's in a client "
                + "process of its own; \(games.count) games, \(moments) moments, the day over \(Int(span / speed)) s; "
                + "all on this machine's 2 cores, loopback only")
        print(
            "delivered: \(receipts.count) of \(expected) moment receipts (\(shares.map(String.init).joined(separator: "/")) "
                + "clients) in \(String(format: "%.0f", elapsed)) s; moments first seen on each instance (the one "
                + "that said the game): \(firsts.map(String.init).joined(separator: "/"))")
        for index in 0..<instances {
            print(
                String(
                    format:
                        "instance i%d: after a moment's first receipt anywhere, p50 %.1f ms, p99 %.1f ms, max %.1f ms; "
                        + "server CPU %.2f s", index + 1, percentile(delays[index], 0.5),
                    percentile(delays[index], 0.99), delays[index].max() ?? 0, serverCPU[index]))
        }
        print(
            String(
                format:
                    "between instances (receipts on an instance that did not say the moment's game, %d of them): "
                    + "p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                crossing.count, percentile(crossing, 0.5), percentile(crossing, 0.99), crossing.max() ?? 0))
        print(
            String(
                format: "cpu: servers %.2f s in all (%.2f s per instance), PostgreSQL %.2f s, over %.0f s",
                serverCPU.reduce(0, +), serverCPU.reduce(0, +) / Double(instances), databaseCPU, elapsed))

        for server in servers {
            server.process.terminate()
            server.process.waitUntilExit()
        }
        try await PostgresStore.withStore(
            try PostgresStore.Location(url: url),
            secrets: try SecretBox.keyFile(at: (work as NSString).appendingPathComponent("secrets.key")),
            instance: "bench"
        ) { try await $0.dropSchema() }
        guard receipts.count == expected else {
            throw ValidationError("only \(receipts.count) of \(expected) moment receipts arrived")
        }
    }
}
