import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `nohit-bench hostile`: a `nohit serve` process (a release build, SQLite) under every attack of
/// issue 40 at once, each from its own loopback address, while real clients from other addresses
/// use the API, the live stream and Keen's API: their latency and errors, the server's memory,
/// whether it survives.
struct HostileBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile",
        abstract: "Every attack at once (each from its own 127.0.0.x) beside real clients: their p99 and errors, the "
            + "server's peak RSS, no crash."
    )

    @Option(help: "How long the attacks and the real clients run, in seconds.")
    var seconds = 60.0

    @Option(help: "Real clients, each from its own loopback address (127.0.0.101, 127.0.0.102, ...).")
    var clients = 20

    @Option(help: "Each real client's pause between requests, in milliseconds.")
    var pause = 100

    @Option(help: "Idle keep-alive connections the idlers try to hold, spread over 40 addresses (127.0.1.x).")
    var idlers = 8_000

    @Option(help: "Live-stream clients that never read, spread over 20 addresses (127.0.2.x).")
    var silentStreams = 5_000

    @Option(
        help: "Only these attacks, comma-separated (to see what each costs): \(Attacks.names.joined(separator: ", ")).")
    var only: String?

    @Option(help: "The nohit executable to serve (default: beside this benchmark).")
    var nohit: String?

    func run() async throws {
        SSEBenchmark.raiseFileLimit(to: UInt64(idlers + silentStreams) + 8_192)
        let executable =
            nohit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "nohit"
            ).path
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-hostile-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        // Two Keen projects made as an operator makes them: the real clients' app, and another
        // tenant's, whose read key the query attacker has.
        let app = try Self.createProject("app", executable: executable, work: work)
        let other = try Self.createProject("other", executable: executable, work: work)

        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let port = try await IdleBenchmark.freePort(loops)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: executable)
        server.arguments = [
            "serve", "--port", "\(port)", "--date", "2020-08-25", "--speed", "60", "--data", "Data/retrosheet",
            "--data-dir", work, "--log-level", "error",
        ]
        server.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        server.standardError = FileHandle(forWritingAtPath: work + "/server.log")
        try server.run()
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        let http = RawHTTP(group: loops, server: address)
        let startedAt = ContinuousClock.now
        while (try? await http.request("GET /healthz", from: "127.0.0.100").status) != 200 {
            guard ContinuousClock.now - startedAt < .seconds(60), server.isRunning else {
                throw ValidationError("the server did not start")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        // The web app's public write key, as anyone reads it.
        let config = try await http.request("GET /api/config", from: "127.0.0.100")
        guard
            let object = try JSONSerialization.jsonObject(with: Data(config.body.utf8)) as? [String: Any],
            let analytics = object["analytics"] as? [String: Any], let webProject = analytics["project_id"] as? String,
            let webWriteKey = analytics["write_key"] as? String
        else { throw ValidationError("/api/config has no analytics write key: \(config.body.prefix(200))") }
        // The other tenant's events, for its queries to scan: 50,000 with a long string of "a"s (each
        // batch from its own address: one client may send 10,000 events at once).
        for batch in 0..<100 {
            let events = (0..<500).map { index in
                #"{"s":"\#(String(repeating: "a", count: 24 + (batch + index) % 8))!","n":\#(index)}"#
            }
            let body = #"{"scan":[\#(events.joined(separator: ","))]}"#
            let answer = try await http.request(
                "POST /3.0/projects/\(other.id)/events", headers: ["Authorization": other.writeKey], body: body,
                from: "127.0.3.\(1 + batch)")
            guard answer.status == 200 else {
                throw ValidationError("seeding: \(answer.status) \(answer.body.prefix(200))")
            }
        }
        let device = try await http.request(
            "POST /api/devices", headers: ["Content-Type": "application/json"],
            body: #"{"channel":"apns","token":"\#(String(repeating: "ab", count: 32))","topic":"com.example.app"}"#,
            from: "127.0.0.100")
        let deviceID =
            ((try? JSONSerialization.jsonObject(with: Data(device.body.utf8))) as? [String: Any])?["id"] as? String
            ?? UUID().uuidString.lowercased()

        // Memory, sampled every 100 ms.
        let memory = MemorySampler(pid: server.processIdentifier)
        let sampling = Task { await memory.run() }
        let rssBefore = memory.current

        // The attacks, each from its own address, on their own event loop.
        let attackLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let attack = Attacks(
            group: attackLoops, server: address, webProject: webProject, webWriteKey: webWriteKey,
            otherProject: other.id, otherReadKey: other.readKey, deviceID: deviceID, idlers: idlers,
            silentStreams: silentStreams)
        let chosen = Set((only ?? "").split(separator: ",").map(String.init))
        if let unknown = chosen.subtracting(Attacks.names).first {
            throw ValidationError("--only: no attack '\(unknown)' (\(Attacks.names.joined(separator: ", ")))")
        }
        let attacking = Task { await attack.run(only: chosen) }
        // A few seconds for the attacks to take hold (the idlers to connect) before measuring.
        try await Task.sleep(for: .seconds(5))

        // The real clients.
        let clientLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let real = RawHTTP(group: clientLoops, server: address)
        let results = RealResults()
        let cpuBefore = ProcessTimes.cpuSeconds(pid: server.processIdentifier)
        let measuredFrom = ContinuousClock.now
        let deadline = measuredFrom + .seconds(seconds)
        let requests: [(name: String, line: String, headers: [String: String], body: String?)] = [
            ("GET /healthz", "GET /healthz", [:], nil),
            ("GET /api/scoreboard", "GET /api/scoreboard", [:], nil),
            ("GET /api/games/{id}", "GET /api/games/CHA202008250", [:], nil),
            ("GET /api/attempts", "GET /api/attempts", [:], nil),
            (
                "Keen POST event", "POST /3.0/projects/\(app.id)/events/taps",
                ["Authorization": app.writeKey, "Content-Type": "application/json"], #"{"button":"follow"}"#
            ),
        ]
        // A dashboard's query: each client once every 10 s (20 clients: 120 a minute, within the
        // read key's 200).
        let query =
            "GET /3.0/projects/\(app.id)/queries/count?event_collection=taps&timeframe=this_14_days&api_key=\(app.readKey)"
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<clients {
                let source = "127.0.0.\(101 + index)"
                // The stream: connected at the start, each event counted until the end.
                group.addTask {
                    let start = ContinuousClock.now
                    let stream = try? await real.openStream(from: source)
                    results.record(
                        "SSE /api/stream: head and first event", status: stream?.status,
                        took: ContinuousClock.now - start)
                    guard let stream else { return }
                    while ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(200)) }
                    results.streamEvents(stream.counter.events, stillOpen: stream.channel.isActive)
                    try? await stream.channel.close()
                }
                group.addTask {
                    var turn = index
                    while ContinuousClock.now < deadline {
                        let request = requests[turn % requests.count]
                        turn += 1
                        let start = ContinuousClock.now
                        let answer = try? await real.request(
                            request.line, headers: request.headers, body: request.body, from: source)
                        results.record(request.name, status: answer?.status, took: ContinuousClock.now - start)
                        try? await Task.sleep(for: .milliseconds(pause))
                    }
                }
                group.addTask {
                    var next = measuredFrom + .milliseconds(500 * index)
                    while next < deadline {
                        try? await Task.sleep(until: next)
                        let start = ContinuousClock.now
                        let answer = try? await real.request(query, from: source)
                        results.record("Keen count query", status: answer?.status, took: ContinuousClock.now - start)
                        next += .seconds(10)
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - measuredFrom
        let serverCPU = ProcessTimes.cpuSeconds(pid: server.processIdentifier) - cpuBefore
        let alive = server.isRunning
        let metrics = (try? await http.request("GET /metrics", from: "127.0.0.100").body) ?? ""
        attack.stop()
        await attacking.value
        // What is left 3 s after every attacker and client has gone: nothing should be.
        try await Task.sleep(for: .seconds(3))
        let after = (try? await http.request("GET /metrics", from: "127.0.0.100").body) ?? ""
        let leftOver = after.split(separator: "\n").filter {
            $0.hasPrefix("nohit_stream_clients ") || $0.hasPrefix("nohit_http_connections ")
                || $0.hasPrefix("nohit_analytics_queries{")
        }
        memory.stop()
        await sampling.value

        print(
            "workload: `\(([executable] + server.arguments!).joined(separator: " "))` (SQLite); for \(Int(seconds)) s "
                + "(after 5 s for the attacks to take hold), every attack at once, each from its own address:")
        for line in Attacks.descriptions { print("  " + line) }
        print(
            "  beside \(clients) real clients (127.0.0.101-127.0.0.\(100 + clients)), each on a new connection per request, "
                + "\(pause) ms apart, in turn: " + requests.map(\.name).joined(separator: ", ")
                + "; a Keen count query every 10 s; and one SSE stream each, held throughout; 2 cores shared by the server, the attackers and the clients"
        )
        print("attacks: " + attack.summary)
        print(results.summary())
        let span = SSEBenchmark.seconds(elapsed)
        print(
            "server: " + (alive ? "running at the end" : "NOT RUNNING (crashed)")
                + String(format: "; %.1f s of CPU in %.1f s", serverCPU, span)
                + "; RSS \(rssBefore / 1024) MB before the attacks, peak \(memory.peak / 1024) MB during them, "
                + "\(memory.current / 1024) MB at the end")
        let guardLines = metrics.split(separator: "\n").filter {
            ($0.hasPrefix("nohit_http_") || $0.hasPrefix("nohit_stream_") || $0.hasPrefix("nohit_analytics_"))
                && !$0.hasPrefix("nohit_http_requests") && !$0.hasPrefix("nohit_http_request_duration")
        }
        print("server's own counts: " + guardLines.joined(separator: "; "))
        print(
            "3 s after the attacks and the clients: " + leftOver.joined(separator: "; ")
                + " (the metrics request's own connection included)")
        // What the server logged at error level (its log level): a real client's 500 says why here.
        let logged = ((try? String(contentsOfFile: work + "/server.log", encoding: .utf8)) ?? "")
            .split(separator: "\n").filter { !$0.hasPrefix("note:") && !$0.hasPrefix("nohit: first start") }
        print(
            "server log: \(logged.count) lines"
                + (logged.isEmpty ? "" : ", the first: " + logged.prefix(5).joined(separator: " | ")))
        try? await attackLoops.shutdownGracefully()
        try? await clientLoops.shutdownGracefully()
        try? await loops.shutdownGracefully()
        guard alive else { throw ValidationError("the server stopped during the attacks (see \(work)/server.log)") }
    }

    struct Project {
        var id: String
        var writeKey: String
        var readKey: String
    }

    static func createProject(_ id: String, executable: String, work: String) throws -> Project {
        let create = Process()
        create.executableURL = URL(fileURLWithPath: executable)
        create.arguments = ["analytics", "project", "create", id, "--id", id, "--json", "--data-dir", work]
        let output = Pipe()
        create.standardOutput = output
        try create.run()
        let json = output.fileHandleForReading.readDataToEndOfFile()
        create.waitUntilExit()
        guard create.terminationStatus == 0,
            let keys = try JSONSerialization.jsonObject(with: json) as? [String: String],
            let writeKey = keys["write_key"], let readKey = keys["read_key"]
        else { throw ValidationError("`nohit analytics project create \(id)` failed") }
        return Project(id: id, writeKey: writeKey, readKey: readKey)
    }
}

/// The server's resident memory every 100 ms: the latest and the highest.
final class MemorySampler: Sendable {
    private let pid: Int32
    private let state = Mutex((current: 0, peak: 0, stopped: false))

    init(pid: Int32) {
        self.pid = pid
        let now = ProcessMemory.kilobytes("VmRSS", pid: "\(pid)")
        state.withLock { $0 = (now, now, false) }
    }

    var current: Int { state.withLock { $0.current } }
    var peak: Int { state.withLock { $0.peak } }

    func stop() { state.withLock { $0.stopped = true } }

    func run() async {
        while !state.withLock({ $0.stopped }) {
            let now = ProcessMemory.kilobytes("VmRSS", pid: "\(pid)")
            state.withLock { state in
                if now > 0 { state.current = now }
                state.peak = max(state.peak, now)
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// Real clients' answers and latencies, by request (and their streams' events), for the hostile
/// and idle benchmarks.
final class RealResults: Sendable {
    private struct Entry {
        var took: [Duration] = []
        var statuses: [String: Int] = [:]
    }

    private let state = Mutex((entries: [String: Entry](), order: [String](), events: [Int](), closed: 0))

    func record(_ name: String, status: Int?, took: Duration) {
        state.withLock { state in
            if state.entries[name] == nil { state.order.append(name) }
            state.entries[name, default: Entry()].took.append(took)
            state.entries[name, default: Entry()].statuses[status.map(String.init) ?? "no answer", default: 0] += 1
        }
    }

    func streamEvents(_ events: Int, stillOpen: Bool) {
        state.withLock { state in
            state.events.append(events)
            if !stillOpen { state.closed += 1 }
        }
    }

    static func isError(_ status: String) -> Bool { !status.hasPrefix("2") }

    func summary() -> String {
        let (entries, order, events, closed) = state.withLock { ($0.entries, $0.order, $0.events, $0.closed) }
        func at(_ sorted: [Duration], _ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            let value = sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
            return String(format: "%.1f ms", SSEBenchmark.seconds(value) * 1000)
        }
        var lines: [String] = []
        var all: [Duration] = []
        var errors = 0
        for name in order {
            let entry = entries[name]!
            let sorted = entry.took.sorted()
            all += sorted
            errors += entry.statuses.filter { Self.isError($0.key) }.values.reduce(0, +)
            let statuses = entry.statuses.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
                .joined(separator: ", ")
            lines.append(
                "  \(name): \(sorted.count) (\(statuses)); p50 \(at(sorted, 0.5)), p99 \(at(sorted, 0.99)), "
                    + "max \(at(sorted, 1.0))")
        }
        all.sort()
        let total = all.count
        let streams =
            events.isEmpty
            ? ""
            : "; streams: \(events.count) held, events each \(events.min()!)-\(events.max()!), \(closed) closed "
                + "before the end"
        return "real clients: \(total) requests, \(errors) errors; connect to last byte p50 \(at(all, 0.5)), "
            + "p99 \(at(all, 0.99)), max \(at(all, 1.0))\(streams)\n" + lines.joined(separator: "\n")
    }
}

/// HTTP/1.1 from a chosen loopback address, one request per connection (`Connection: close`).
struct RawHTTP: Sendable {
    let group: any EventLoopGroup
    let server: SocketAddress

    func request(
        _ line: String, headers: [String: String] = [:], body: String? = nil, from source: String,
        timeout: TimeAmount = .seconds(10)
    ) async throws -> (status: Int, body: String) {
        var text = "\(line) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        let bytes = try await exchange(ByteBuffer(string: text), from: source, timeout: timeout)
        let answer = String(decoding: bytes, as: UTF8.self)
        let status = answer.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        let body = answer.range(of: "\r\n\r\n").map { String(answer[$0.upperBound...]) } ?? ""
        return (status, body)
    }

    /// Sends `bytes`, reads until the server closes (or `timeout`).
    func exchange(_ bytes: ByteBuffer, from source: String, timeout: TimeAmount = .seconds(10)) async throws -> [UInt8]
    {
        let done = group.next().makePromise(of: [UInt8].self)
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .bind(to: try SocketAddress(ipAddress: source, port: 0))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Gather(done: done))
                }
            }
            .connect(to: server).get()
        channel.writeAndFlush(bytes, promise: nil)
        let timer = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        defer { timer.cancel() }
        return try await done.futureResult.get()
    }

    /// An SSE stream from `source`: returned once its head and first event have come.
    func openStream(from source: String) async throws -> (status: Int, channel: any Channel, counter: StreamCounter) {
        let counter = StreamCounter(eventLoop: group.next())
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .bind(to: try SocketAddress(ipAddress: source, port: 0))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(counter) }
            }
            .connect(to: server).get()
        channel.writeAndFlush(
            ByteBuffer(string: "GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"),
            promise: nil)
        let status = try await counter.firstEvent.futureResult.get()
        return (status, channel, counter)
    }
}

/// Collects everything until the connection closes.
final class Gather: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private var bytes: [UInt8] = []
    private let done: EventLoopPromise<[UInt8]>

    init(done: EventLoopPromise<[UInt8]>) { self.done = done }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytes.append(contentsOf: unwrapInboundIn(data).readableBytesView)
    }

    func channelInactive(context: ChannelHandlerContext) { done.succeed(bytes) }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

/// Counts SSE events (blank-line separated) on a stream; `firstEvent` gives the status once the
/// head and the first event (the `retry:` line counts) have come.
final class StreamCounter: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    let firstEvent: EventLoopPromise<Int>
    private let count = Atomic<Int>(0)
    private var head = ""
    private var status: Int?
    private var previous: UInt8 = 0

    init(eventLoop: any EventLoop) { firstEvent = eventLoop.makePromise() }

    var events: Int { count.load(ordering: .relaxed) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if status == nil {
            head += buffer.readString(length: buffer.readableBytes) ?? ""
            guard let end = head.range(of: "\r\n\r\n") else { return }
            status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
            buffer = ByteBuffer(string: String(head[end.upperBound...]))
            if status != 200 {
                firstEvent.succeed(status!)
                context.close(promise: nil)
                return
            }
        }
        for byte in buffer.readableBytesView {
            if byte == UInt8(ascii: "\n") && previous == UInt8(ascii: "\n") {
                if count.add(1, ordering: .relaxed).newValue == 1 { firstEvent.succeed(200) }
            }
            previous = byte
        }
    }

    func channelInactive(context: ChannelHandlerContext) { firstEvent.fail(ChannelError.eof) }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}
