import ArgumentParser
import Assembly
import Clocks
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Pipeline
import Retrosheet
import Server

/// `nohit-bench widget`: many widgets polling `GET /api/widget` with `If-None-Match` while a day
/// is replayed fast — requests per second, latency, and the server's CPU per request. The load
/// comes from wrk (Debian's `wrk`), one thread per team list, each thread keeping the validator of
/// its list as a widget does.
struct WidgetBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "widget",
        abstract: "Widgets polling the widget feed with If-None-Match during a fast replay: requests/s, p50/p99, "
            + "server CPU per request (needs wrk: apt-get install wrk)."
    )

    @Option(help: "Concurrent HTTP/1.1 keep-alive connections (widgets).")
    var clients = 1000

    @Flag(
        help:
            "Replay the plays alone, without the count after each pitch between them (the workload before the board followed pitches)."
    )
    var withoutPitches = false

    @Option(help: "The day's plays are spread evenly over this many seconds; the load runs as long.")
    var seconds = 60.0

    @Option(help: "The day to replay.")
    var date = "2020-08-25"

    @Option(help: "Retrosheet data (the bundled 2020 season by default).")
    var data = "Data/retrosheet"

    @Option(help: "The server's event-loop threads (as `nohit serve`: one per core).")
    var serverThreads = System.coreCount

    @Option(
        help: "Team lists the widgets ask for, separated by ';' (one wrk thread each; an empty list is every game).")
    var teams = "CWS;NYY,BOS;LAD,SF,SD;"

    @Option(
        help: ArgumentHelp(
            "Milliseconds each widget waits after an answer before it asks again (0: back to back, the most the "
                + "server answers; with N widgets and an interval I the load is about N / (I + latency))."))
    var intervalMs = 0

    func run() async throws {
        SSEBenchmark.raiseFileLimit(to: UInt64(clients) * 2 + 1024)
        // The product's log handler (`nohit serve` bootstraps it).
        var logger = Logger(label: "nohit.bench.widget") { StandardErrorLogHandler(label: $0) }
        logger.logLevel = .warning
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-widget-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }

        // The server as `nohit serve` builds it, its hardening included.
        let games = try ReplaySchedule.games(on: date, data: [data])
        let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
        try await BenchService.run(work: work, data: data, clock: clock, serverThreads: serverThreads, logger: logger) {
            service, port in
            try await measure(service: service, port: port, games: games, clock: clock, work: work)
        }
    }

    /// The day's schedule said, the widgets started, the rest of the day replayed while they poll,
    /// the figures printed.
    func measure(service: NoHitService, port: Int, games: [ReplayGame], clock: ManualWallClock, work: String)
        async throws
    {
        let hub = service.hub
        // The day's schedule first, so the board has its games before the first poll.
        let timeline = ReplayTimeline(games: games, announced: clock.now(), pitches: !withoutPitches)
        let entries = timeline.entries
        let scheduled = entries.prefix { if case .scheduled = $0.item { true } else { false } }
        for entry in scheduled { try await hub.receive(entry.item, gameID: entry.gameID, at: entry.time) }
        let rest = entries.dropFirst(scheduled.count)

        // The widgets: wrk, one thread per team list.
        let lists = teams.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        let script = work + "/widget.lua"
        try Self.script(lists: lists, interval: intervalMs).write(toFile: script, atomically: true, encoding: .utf8)
        let wrk = Process()
        wrk.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        wrk.arguments = [
            "wrk", "-t", "\(lists.count)", "-c", "\(clients)", "-d", "\(Int(seconds))s", "--timeout", "10s",
            "-s", script, "http://127.0.0.1:\(port)/",
        ]
        let output = Pipe()
        wrk.standardOutput = output
        do {
            try wrk.run()
        } catch {
            throw ValidationError("wrk did not start (\(error)); install it: apt-get install wrk")
        }

        // The day's plays spread over the same seconds.
        let cpuBefore = ProcessTimes.cpuSeconds()
        let start = ContinuousClock.now
        let interval = Duration.seconds(seconds / Double(max(1, rest.count)))
        for (index, entry) in rest.enumerated() {
            try await Task.sleep(until: start + interval * index, clock: .continuous)
            clock.advance(to: entry.time)
            try await hub.receive(entry.item, gameID: entry.gameID, at: entry.time)
        }
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        wrk.waitUntilExit()
        let cpu = ProcessTimes.cpuSeconds() - cpuBefore

        var figures: [String: Double] = [:]
        for line in report.split(separator: "\n") where line.hasPrefix("figure ") {
            let parts = line.split(separator: " ")
            if parts.count == 3, let value = Double(parts[2]) { figures[String(parts[1])] = value }
        }
        let requests = figures["requests"] ?? 0
        let duration = (figures["duration_us"] ?? 0) / 1e6
        let listNames = lists.map { $0.isEmpty ? "every game" : $0 }.joined(separator: " | ")
        let pacing = intervalMs > 0 ? "every \(intervalMs) ms after each answer" : "back to back"
        let rate = String(format: "%.0f", Double(rest.count) / seconds)
        print(
            "workload: \(clients) widgets (wrk, HTTP/1.1 keep-alive, \(lists.count) threads, one team list each: "
                + "\(listNames)) polling GET /api/widget?teams= \(pacing) with If-None-Match, against `nohit serve`'s "
                + "router and connection guard (\(serverThreads) event-loop threads) while \(date) is replayed: "
                + "\(rest.count) entries over \(Int(seconds)) s (\(rate) board changes/s"
                + (withoutPitches ? ", plays only" : ", plays and the count after each pitch")
                + "); 2 cores shared by server and wrk"
        )
        print(
            String(
                format:
                    "requests: %.0f in %.1f s = %.0f requests/s; 200: %.0f, 304: %.0f, other: %.0f, socket errors: %.0f",
                requests, duration, duration > 0 ? requests / duration : 0, figures["ok"] ?? 0,
                figures["not_modified"] ?? 0, figures["other"] ?? 0, figures["socket_errors"] ?? 0))
        print(
            String(
                format: "latency: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms",
                (figures["p50_us"] ?? 0) / 1000, (figures["p90_us"] ?? 0) / 1000, (figures["p99_us"] ?? 0) / 1000,
                (figures["p999_us"] ?? 0) / 1000, (figures["max_us"] ?? 0) / 1000))
        print(
            String(
                format: "server CPU: %.2f s over the run (%.2f of a core), %.1f µs per request", cpu,
                duration > 0 ? cpu / duration : 0, requests > 0 ? cpu / requests * 1e6 : 0))
    }

    /// wrk's script: each thread asks for its team list and sends the validator of the last 200
    /// it got; the figures come out as `figure NAME VALUE` lines.
    static func script(lists: [String], interval: Int) -> String {
        let quoted = lists.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            local lists = {\(quoted)}
            local threads = {}
            local next_list = 1
            function setup(thread)
              thread:set("list", lists[next_list])
              next_list = next_list + 1
              table.insert(threads, thread)
            end
            function init(args)
              path = list == "" and "/api/widget" or ("/api/widget?teams=" .. list)
              etag = nil
              ok, not_modified, other = 0, 0, 0
            end
            function delay()
              return \(interval)
            end
            function request()
              if etag then
                return wrk.format("GET", path, {["If-None-Match"] = etag})
              end
              return wrk.format("GET", path)
            end
            function response(status, headers, body)
              if status == 200 then
                ok = ok + 1
                etag = headers["ETag"] or headers["etag"]
              elseif status == 304 then
                not_modified = not_modified + 1
              else
                other = other + 1
              end
            end
            function done(summary, latency, requests)
              local totals = {ok = 0, not_modified = 0, other = 0}
              for _, thread in ipairs(threads) do
                totals.ok = totals.ok + thread:get("ok")
                totals.not_modified = totals.not_modified + thread:get("not_modified")
                totals.other = totals.other + thread:get("other")
              end
              local errors = summary.errors
              io.write(string.format("figure requests %d\\n", summary.requests))
              io.write(string.format("figure duration_us %d\\n", summary.duration))
              io.write(string.format("figure ok %d\\n", totals.ok))
              io.write(string.format("figure not_modified %d\\n", totals.not_modified))
              io.write(string.format("figure other %d\\n", totals.other))
              io.write(string.format("figure socket_errors %d\\n",
                errors.connect + errors.read + errors.write + errors.timeout))
              io.write(string.format("figure p50_us %d\\n", latency:percentile(50)))
              io.write(string.format("figure p90_us %d\\n", latency:percentile(90)))
              io.write(string.format("figure p99_us %d\\n", latency:percentile(99)))
              io.write(string.format("figure p999_us %d\\n", latency:percentile(99.9)))
              io.write(string.format("figure max_us %d\\n", latency.max))
            end
            """
    }
}
