import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `nohit-bench idle`: a `nohit serve` process held by one client that keeps up to N idle
/// connections open (reopening whatever the server closes), while real clients from other
/// loopback addresses ask `/healthz` and `/api/attempts`, each on a new connection: their answers
/// and latency, the attacker's hold, the server's CPU and its guard's counters.
struct IdleBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "One client holding thousands of idle connections while real clients are served: latency p50/p99, "
            + "answers, the server's CPU."
    )

    @Option(help: "Idle connections the attacker tries to hold (from 127.0.0.1).")
    var attackers = 20_000

    @Option(help: "Connections the attacker opens per round at most (a round every 100 ms).")
    var openRate = 2_000

    @Option(help: "Real clients, each from its own loopback address (127.0.0.2, 127.0.0.3, ...).")
    var clients = 20

    @Option(help: "Each real client's pause between requests, in milliseconds.")
    var pause = 100

    @Option(help: "How long the real clients are measured, in seconds, once the attacker holds what it can.")
    var seconds = 30.0

    @Option(help: "The nohit executable to serve (default: beside this benchmark); an older build compares.")
    var nohit: String?

    @Option(parsing: .remaining, help: "Further `nohit serve` arguments (limits, e.g. --max-connections-per-client 0).")
    var serveArguments: [String] = []

    func run() async throws {
        SSEBenchmark.raiseFileLimit(to: UInt64(attackers + clients) + 4096)
        let executable =
            nohit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "nohit"
            )
            .path
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-idle-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let port = try await Self.freePort(loops)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: executable)
        server.arguments =
            [
                "serve", "--port", "\(port)", "--date", "2020-08-25", "--speed", "60", "--data", "Data/retrosheet",
                "--data-dir", work + "/data", "--log-level", "error",
            ] + serveArguments
        server.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let serverAddress = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        let probe = RawHTTP(group: loops, server: serverAddress)
        // Up when /healthz answers (from a real client's address).
        let startedAt = ContinuousClock.now
        while (try? await probe.request("GET /healthz", from: "127.0.0.2").status) != 200 {
            guard ContinuousClock.now - startedAt < .seconds(60), server.isRunning else {
                throw ValidationError("the server did not start")
            }
            try await Task.sleep(for: .milliseconds(100))
        }

        // The attacker: idle connections from 127.0.0.1, topped up every 100 ms.
        let attackLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let attacker = Attacker(group: attackLoops, server: serverAddress, target: attackers, perRound: openRate)
        let attacking = Task { await attacker.run() }
        // Until it holds what it can: its count stops rising for a second (or a minute passes).
        var held = 0
        var steady = 0
        let ramp = ContinuousClock.now
        while steady < 10, ContinuousClock.now - ramp < .seconds(60) {
            try await Task.sleep(for: .milliseconds(100))
            let now = attacker.open
            steady = now > held || now == 0 ? 0 : steady + 1
            held = max(held, now)
        }
        let rampTime = ContinuousClock.now - ramp

        // The real clients, measured.
        let cpuBefore = Self.cpuSeconds(pid: server.processIdentifier)
        let benchCPUBefore = ProcessTimes.cpuSeconds()
        let attemptsBefore = attacker.attempts
        let measuredFrom = ContinuousClock.now
        let deadline = measuredFrom + .seconds(seconds)
        let results = RealResults()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<clients {
                let source = "127.0.0.\(2 + index)"
                group.addTask {
                    var turn = 0
                    while ContinuousClock.now < deadline {
                        let path = turn % 2 == 0 ? "/healthz" : "/api/attempts"
                        turn += 1
                        let start = ContinuousClock.now
                        let answer = try? await probe.request("GET " + path, from: source)
                        results.record(path, status: answer?.status, took: ContinuousClock.now - start)
                        try? await Task.sleep(for: .milliseconds(pause))
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - measuredFrom
        let serverCPU = Self.cpuSeconds(pid: server.processIdentifier) - cpuBefore
        let benchCPU = ProcessTimes.cpuSeconds() - benchCPUBefore
        let heldDuring = attacker.open
        let attempts = attacker.attempts - attemptsBefore
        let metrics = (try? await probe.request("GET /metrics", from: "127.0.0.2").body) ?? ""
        attacker.stop()
        await attacking.value
        let serverMemory = ProcessMemory.kilobytes("VmHWM", pid: "\(server.processIdentifier)")

        let span = SSEBenchmark.seconds(elapsed)
        print(
            "workload: `\(([executable] + server.arguments!).joined(separator: " "))`; one attacker at 127.0.0.1 "
                + "keeping up to \(attackers) idle connections open (sending nothing; whatever the server closes "
                + "is reopened, at most \(openRate) per 100 ms); \(clients) real clients from 127.0.0.2-"
                + "127.0.0.\(1 + clients), each a new connection per request, /healthz and /api/attempts in turn, "
                + "\(pause) ms apart, for \(Int(seconds)) s; 2 cores shared by server, attacker and clients")
        print(
            "attacker: held \(held) connections after \(ms(rampTime)) of ramp, \(heldDuring) at the end; "
                + "\(attempts) connection attempts while measured (\(Int(Double(attempts) / span))/s)")
        print(results.summary())
        print(
            String(
                format: "cpu: server %.2f s in %.1f s (%.0f %% of one core); benchmark process %.2f s",
                serverCPU, span, serverCPU / span * 100, benchCPU)
                + "; server peak RSS \(serverMemory / 1024) MB")
        let guardLines = metrics.split(separator: "\n").filter {
            $0.hasPrefix("nohit_http_") && !$0.hasPrefix("nohit_http_clients")
        }
        print(
            "server: " + (guardLines.isEmpty ? "no guard metrics (an older build)" : guardLines.joined(separator: "; "))
        )
        try await attackLoops.shutdownGracefully()
        try await loops.shutdownGracefully()
    }

    func ms(_ duration: Duration) -> String {
        String(format: "%.1f ms", SSEBenchmark.seconds(duration) * 1000)
    }

    /// A port free now (bound, read, closed).
    static func freePort(_ group: any EventLoopGroup) async throws -> Int {
        let channel = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }

    /// User plus system CPU seconds of another process, from /proc.
    static func cpuSeconds(pid: Int32) -> Double { ProcessTimes.cpuSeconds(pid: pid) }
}

/// Idle connections from 127.0.0.1: opens up to `target`, at most `perRound` every 100 ms, and
/// opens again whatever the server closes.
private final class Attacker: Sendable {
    private let group: any EventLoopGroup
    private let server: SocketAddress
    private let target: Int
    private let perRound: Int
    private let state = Mutex((open: 0, attempts: 0, stopped: false, channels: [ObjectIdentifier: any Channel]()))

    init(group: any EventLoopGroup, server: SocketAddress, target: Int, perRound: Int) {
        self.group = group
        self.server = server
        self.target = target
        self.perRound = perRound
    }

    var open: Int { state.withLock { $0.open } }
    var attempts: Int { state.withLock { $0.attempts } }

    func stop() {
        let channels = state.withLock { state in
            state.stopped = true
            return Array(state.channels.values)
        }
        for channel in channels { channel.close(promise: nil) }
    }

    func run() async {
        let source = try! SocketAddress(ipAddress: "127.0.0.1", port: 0)
        while !state.withLock({ $0.stopped }) {
            let wanted = state.withLock { state in
                let wanted = min(perRound, target - state.open)
                state.open += max(0, wanted)
                state.attempts += max(0, wanted)
                return wanted
            }
            if wanted > 0 {
                let connecting = (0..<wanted).map { _ in
                    ClientBootstrap(group: group).connectTimeout(.seconds(5)).bind(to: source).connect(to: server)
                }
                for future in connecting {
                    guard let channel = try? await future.get() else {
                        state.withLock { $0.open -= 1 }
                        continue
                    }
                    let id = ObjectIdentifier(channel)
                    let kept = state.withLock { state -> Bool in
                        guard !state.stopped else { return false }
                        state.channels[id] = channel
                        return true
                    }
                    if !kept { channel.close(promise: nil) }
                    channel.closeFuture.whenComplete { [self] _ in
                        state.withLock { state in
                            state.open -= 1
                            state.channels[id] = nil
                        }
                    }
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
