import Alerts
import ArgumentParser
import AsyncHTTPClient
import Baseball
import Clocks
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Retrosheet

/// `nohit-bench latency`: from the play to the lock screen, end to end. `nohit fake-statsapi` plays
/// a real day on its clock; `nohit serve --source statsapi` follows it (with the Gameday push, and
/// polling only) with many APNs devices on `nohit fake-apns`, and SSE clients on its stream. For
/// every moment: from the fake publishing the play (its clock reaching the play) to the first and
/// the last push the fake APNs accepted, and to each SSE client reading it. Every process on one
/// machine: times are CLOCK_MONOTONIC, which they share.
struct LatencyBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency",
        abstract: "Play published → first push accepted, last push accepted, and SSE client: with the Gameday push "
            + "and polling only, over a whole day."
    )

    @Option(help: "The day to play.")
    var date = "2020-08-25"

    @Option(help: "The fake Stats API's clock speed (60: an hour of the day in a minute; 1: real time).")
    var speed = 60.0

    @Option(help: "APNs devices registered (each hears of a bid from --threshold hitless innings, every inning).")
    var devices = 10_000

    @Option(help: "Hitless innings from which a device hears of a bid (4-9).")
    var threshold = 4

    @Option(help: "SSE clients on the server's live stream.")
    var sseClients = 10

    @Option(help: "push (the Gameday push nudges the poller), poll (poll only), or both (one after the other).")
    var mode = "both"

    @Option(help: "Runs of every mode, each from scratch; with more than one, the medians too.")
    var runs = 1

    @Option(help: "The feeds' wait hint (metaData.wait, seconds): how long the poller waits between polls.")
    var wait = 10

    @Option(
        help:
            "Real seconds from the fake's start to the day's first pitch (the server and its clients start meanwhile).")
    var lead = 20.0

    @Option(help: "Retrosheet data (the bundled 2020 season by default).")
    var data = "Data/retrosheet"

    @Option(help: "The nohit executable (default: beside this benchmark).")
    var nohit: String?

    func validate() throws {
        guard ["push", "poll", "both"].contains(mode) else {
            throw ValidationError("--mode must be push, poll or both, not '\(mode)'")
        }
        guard speed > 0 && speed <= 600 else { throw ValidationError("--speed must be above 0 and at most 600") }
        guard (4...9).contains(threshold) else { throw ValidationError("--threshold must be 4 to 9") }
        guard runs >= 1, devices >= 1, sseClients >= 0 else {
            throw ValidationError("--runs and --devices must be at least 1, --sse-clients at least 0")
        }
    }

    /// One mode's figures in one run, in seconds.
    struct Figures {
        var firstPush: [Double] = []
        var lastPush: [Double] = []
        var sse: [Double] = []
        var pushes = 0
        var momentsPushed = 0
        var unmatched = 0
        var sseUnmatched = 0
        /// Receipts before their play was published: a moment put down to the wrong play.
        var early = 0
        var serverCPU = 0.0
        var requests: [String: Int] = [:]
    }

    func run() async throws {
        let executable =
            nohit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "nohit"
            )
            .path
        let games = try ReplaySchedule.games(on: date, data: [data])
        let published = Self.publications(games)
        let first = games.map(\.start).min()!
        let last = games.flatMap { $0.updates.map(\.time) }.max() ?? first
        let modes = mode == "both" ? ["push", "poll"] : [mode]
        print(
            "workload: \(date), \(games.count) games, first pitch to last play \(Self.clock(last.timeIntervalSince(first))) "
                + "of game time played by `nohit fake-statsapi` at speed \(Self.number(speed)) "
                + "(\(Self.clock(last.timeIntervalSince(first) / speed)) real), feeds' wait \(wait) s; "
                + "`nohit serve --source statsapi` (SQLite) with \(devices) APNs devices (threshold \(threshold), every "
                + "inning) on `nohit fake-apns`, \(sseClients) SSE clients; \(published.count) moments the day has "
                + "(every out of a bid and score moments included); modes: \(modes.joined(separator: ", ")); "
                + "2 cores shared by every process")
        var all: [String: [Figures]] = [:]
        // The fake APNs's own figures are read over its TLS: a fresh CA each run, on loopback.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let apns = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        do {
            for index in 1...runs {
                for mode in modes {
                    if runs > 1 { print("run \(index) of \(runs), \(mode)") }
                    let figures = try await runOnce(
                        push: mode == "push", executable: executable, published: published, apns: apns)
                    Self.report(mode, figures)
                    all[mode, default: []].append(figures)
                }
            }
        } catch {
            try await apns.shutdown()
            throw error
        }
        try await apns.shutdown()
        guard runs > 1 else { return }
        for mode in modes {
            let runs = all[mode] ?? []
            func line(_ label: String, _ values: (Figures) -> [Double]) -> String {
                let p50 = runs.map { Self.percentile(values($0), 0.50) }
                let p99 = runs.map { Self.percentile(values($0), 0.99) }
                let max = runs.map { values($0).max() ?? .nan }
                return "\(label) p50 " + String(format: "%.2f s", Medians.median(p50)) + ", p99 "
                    + String(format: "%.2f s", Medians.median(p99)) + " (runs: "
                    + p99.map { String(format: "%.2f", $0) }.joined(separator: ", ") + "), max "
                    + String(format: "%.2f s", Medians.median(max))
            }
            print("\(Self.name(mode)), medians of \(runs.count) runs:")
            print("  " + line("play → first push accepted:", \.firstPush))
            print("  " + line("play → last push accepted: ", \.lastPush))
            if sseClients > 0 { print("  " + line("play → SSE client:         ", \.sse)) }
        }
    }

    static func name(_ mode: String) -> String {
        mode == "push" ? "with the Gameday push" : "polling only"
    }

    static func report(_ mode: String, _ figures: Figures) {
        func line(_ values: [Double]) -> String {
            String(
                format: "p50 %.2f s, p99 %.2f s, max %.2f s", percentile(values, 0.5), percentile(values, 0.99),
                values.max() ?? .nan)
        }
        print("\(name(mode)):")
        print(
            "  play → first push accepted: \(line(figures.firstPush)) (\(figures.momentsPushed) moments pushed, "
                + "\(figures.pushes) pushes)")
        print("  play → last push accepted:  \(line(figures.lastPush))")
        if !figures.sse.isEmpty {
            print("  play → SSE client:          \(line(figures.sse)) (\(figures.sse.count) receipts)")
        }
        let requests = figures.requests.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        print(
            "  the fake Stats API's counts: \(requests.joined(separator: ", ")); "
                + String(format: "server CPU %.1f s", figures.serverCPU)
                + (figures.unmatched > 0
                    ? "; \(figures.unmatched) pushed moments not in the day's own (not measured)" : "")
                + (figures.early > 0 ? "; \(figures.early) receipts BEFORE their play (wrongly attributed)" : "")
                + (figures.sseUnmatched > 0
                    ? "; \(figures.sseUnmatched) stream receipts of moments not in the day's own (not measured)" : ""))
    }

    /// The p-th of the values by nearest rank (the ⌈n·p⌉-th smallest), NaN for none.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((Double(sorted.count) * p).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    static func number(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : String(value)
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 3600
            ? String(format: "%d h %02d min", whole / 3600, whole % 3600 / 60)
            : String(format: "%d min %02d s", whole / 60, whole % 60)
    }

    /// Every moment of the day (bid moments at every out, score moments) by id, with the game-clock
    /// time the fake's feed first shows the play that brings it: each game followed update by
    /// update, as the fake publishes them. Not `ReplayTimeline.moments`: the fake's feed shows the
    /// lineups with the first play and is final with its last update, where a replay says them at
    /// the game's scheduled start and end.
    static func publications(_ games: [ReplayGame]) -> [String: Date] {
        var published: [String: Date] = [:]
        for game in games {
            var follower = GameFollower(gameID: game.record.id)
            let everyOut = FollowContext(everyOut: true)
            func note(_ events: [GameEvent], at time: Date) {
                for case .moment(let moment) in events where published[moment.id] == nil { published[moment.id] = time }
            }
            let start = game.updates.first?.time ?? game.start
            note(
                follower.follow(
                    .lineups(game.record.startingAppearances, homeBatsFirst: game.record.homeBatsFirst),
                    context: everyOut),
                at: start)
            for (time, update) in game.updates {
                note(follower.follow(.updates([update]), context: everyOut), at: time)
            }
            note(
                follower.follow(.status(GameStatus(.final), result: game.result), context: everyOut),
                at: game.updates.last?.time ?? game.end)
        }
        return published
    }

    // MARK: One run of one mode

    /// `apns` reads the fake APNs's figures (over its TLS, on loopback).
    private func runOnce(push: Bool, executable: String, published: [String: Date], apns: HTTPClient) async throws
        -> Figures
    {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-latency-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        // The fake APNs, and the devices (registered before the server starts).
        let fake = try FakeProcess(executable: executable, directory: work + "/fake")
        defer { fake.stop() }
        try Self.runToEnd(
            executable,
            ["devices", "seed", "--count", "\(devices)", "--data-dir", work, "--threshold", "\(threshold)"],
            log: work + "/devices.log")

        // The fake Stats API, its clock starting now, `lead` real seconds before the first pitch.
        let statsPort = try await Self.freePort()
        let statsAPI = try Child(
            executable,
            [
                "fake-statsapi", "--date", date, "--speed", "\(speed)", "--lead", "\(lead)", "--wait", "\(wait)",
                "--port", "\(statsPort)", "--data", data,
            ], log: work + "/fake-statsapi.log")
        defer { statsAPI.stop() }
        let http = HTTPClient.shared
        try await Self.waitFor("http://127.0.0.1:\(statsPort)/clock", client: http, process: statsAPI)

        // The server.
        let port = try await Self.freePort()
        let server = try Child(
            executable,
            [
                "serve", "--port", "\(port)", "--source", "statsapi", "--statsapi-url",
                "http://127.0.0.1:\(statsPort)/api/", "--statsapi-date", date, "--data-dir", work, "--fake-apns",
                work + "/fake", "--data", data, "--log-level", "error",
            ] + (push ? [] : ["--statsapi-push-url", "off"]), log: work + "/server.log")
        defer { server.stop() }
        try await Self.waitFor("http://127.0.0.1:\(port)/healthz", client: http, process: server)

        // The SSE clients, in a process of their own, until told the day is over (stdin closed).
        var clients: (process: Process, input: Pipe, reader: AsyncStream<String>.AsyncIterator)?
        defer {
            if let process = clients?.process, process.isRunning { process.terminate() }
        }
        if sseClients > 0 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = [
                "sse-clients", "--port", "\(port)", "--clients", "\(sseClients)", "--expect", "\(Int.max / 2)",
                "--timeout", "86400", "--until-stdin-closes",
            ]
            let output = Pipe()
            let input = Pipe()
            process.standardOutput = output
            process.standardInput = input
            try process.run()
            var reader = SSEBenchmark.lines(of: output.fileHandleForReading).makeAsyncIterator()
            guard let ready = await reader.next(), ready.hasPrefix("connected") else {
                throw ValidationError("the SSE clients did not connect")
            }
            clients = (process, input, reader)
        }

        // The fake's clock on the machine's: when its feed first shows each play.
        let clock = try await Self.json("http://127.0.0.1:\(statsPort)/clock", client: http)
        guard let virtualNow = clock["now"] as? Double,
            let monotonic = (clock["monotonic_ns"] as? NSNumber)?.int64Value,
            clock["speed"] as? Double == speed
        else { throw ValidationError("the fake Stats API's /clock is not at speed \(speed): \(clock)") }
        func monotonicNanoseconds(of time: Date) -> Int64 {
            monotonic + Int64((time.timeIntervalSince1970 - virtualNow) / speed * 1e9)
        }
        // Everything must be listening before the day's first moment.
        guard let firstMoment = published.values.min(),
            MonotonicClock.nanoseconds() < monotonicNanoseconds(of: firstMoment)
        else {
            throw ValidationError(
                "the server and its clients were not ready before the day's first moment: give a longer --lead")
        }

        // The day: until its last play, a poll's wait and a little more; then until the fake APNs
        // has accepted nothing new for 5 s.
        let cpuBefore = ProcessTimes.cpuSeconds(pid: server.process.processIdentifier)
        let lastPlay = published.values.max()!
        let end = monotonicNanoseconds(of: lastPlay) + Int64(wait + 10) * 1_000_000_000
        var lastReport = MonotonicClock.nanoseconds()
        while MonotonicClock.nanoseconds() < end {
            guard server.process.isRunning, statsAPI.process.isRunning else {
                throw ValidationError("a process ended during the day: see \(work)")
            }
            if MonotonicClock.nanoseconds() - lastReport > 60_000_000_000 {
                lastReport = MonotonicClock.nanoseconds()
                let left = Double(end - lastReport) / 1e9
                FileHandle.standardError.write(Data("latency: \(Self.clock(left)) of the day left\n".utf8))
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        var accepted = -1
        var steady = 0
        while steady < 10 {
            let count = try await fake.acceptedCount(kind: "apns", client: apns)
            steady = count == accepted ? steady + 1 : 0
            accepted = count
            try await Task.sleep(for: .milliseconds(500))
        }
        var figures = Figures()
        figures.serverCPU = ProcessTimes.cpuSeconds(pid: server.process.processIdentifier) - cpuBefore
        figures.requests =
            (try await Self.json("http://127.0.0.1:\(statsPort)/requests", client: http) as? [String: Int]) ?? [:]

        // The pushes: each moment's first and last acceptance.
        let timeline = try await Self.json(fake.description.url + "/accepted/timeline", client: apns)
        for entry in timeline["moments"] as? [[String: Any]] ?? [] {
            figures.pushes += entry["count"] as? Int ?? 0
            guard let id = entry["moment"] as? String, let first = (entry["first_ns"] as? NSNumber)?.int64Value,
                let last = (entry["last_ns"] as? NSNumber)?.int64Value
            else {
                figures.unmatched += 1
                continue
            }
            guard let time = published[id] else {
                figures.unmatched += 1
                continue
            }
            let publishedAt = monotonicNanoseconds(of: time)
            figures.momentsPushed += 1
            if first < publishedAt { figures.early += 1 }
            figures.firstPush.append(Double(first - publishedAt) / 1e9)
            figures.lastPush.append(Double(last - publishedAt) / 1e9)
        }

        // The stream: each client's receipt of each moment.
        if var clients {
            try clients.input.fileHandleForWriting.close()
            while let line = await clients.reader.next() {
                let fields = line.split(separator: " ")
                guard fields.count == 2, fields[0] != "rss", let nanoseconds = Int64(fields[1]) else { continue }
                guard let time = published[String(fields[0])] else {
                    figures.sseUnmatched += 1
                    continue
                }
                if nanoseconds < monotonicNanoseconds(of: time) { figures.early += 1 }
                figures.sse.append(Double(nanoseconds - monotonicNanoseconds(of: time)) / 1e9)
            }
            clients.process.waitUntilExit()
        }
        // What the server logged at error level (its banners, "nohit: ...", left out).
        let logged = ((try? String(contentsOfFile: work + "/server.log", encoding: .utf8)) ?? "")
            .split(separator: "\n").filter { !$0.hasPrefix("nohit: ") }
        for line in logged.prefix(10) { print("  server log: \(line)") }
        if logged.count > 10 { print("  server log: \(logged.count - 10) more lines") }
        return figures
    }

    /// A child process whose standard error goes to a file, stopped (SIGTERM) when asked.
    final class Child: Sendable {
        let process: Process

        init(_ executable: String, _ arguments: [String], log: String) throws {
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: log)
            try process.run()
            self.process = process
        }

        func stop() {
            guard process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }
    }

    static func runToEnd(_ executable: String, _ arguments: [String], log: String) throws {
        let child = try Child(executable, arguments, log: log)
        child.process.waitUntilExit()
        guard child.process.terminationStatus == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw ValidationError("nohit \(arguments.prefix(2).joined(separator: " ")) failed: \(text)")
        }
    }

    static func freePort() async throws -> Int {
        try await IdleBenchmark.freePort(MultiThreadedEventLoopGroup.singleton)
    }

    /// Waits until `url` answers 200 (up to a minute, while the process runs).
    static func waitFor(_ url: String, client: HTTPClient, process: Child) async throws {
        let start = ContinuousClock.now
        while true {
            if let response = try? await client.execute(HTTPClientRequest(url: url), timeout: .seconds(5)),
                response.status == .ok
            {
                return
            }
            guard process.process.isRunning, ContinuousClock.now - start < .seconds(60) else {
                throw ValidationError("\(url) did not answer")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// A JSON object from `url` (the fake APNs over TLS, trusted as `--fake-apns` trusts it).
    static func json(_ url: String, client: HTTPClient) async throws -> [String: Any] {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 30)
        guard let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        else { throw ValidationError("\(url) did not answer a JSON object") }
        return object
    }
}
