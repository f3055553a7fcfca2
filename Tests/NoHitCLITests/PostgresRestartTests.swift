import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// PostgreSQL stopped under a serving instance (`pg_ctl stop -m immediate`, as a crash) mid-day,
/// down for 30 s, then started again (issue 57, item 1): the instance does not exit nor grow,
/// `/readyz` says the database is degraded every time it is asked meanwhile, and once the server
/// is back it goes on by itself — every planned alert delivered, the day followed to its end, and a
/// graceful stop. Then stalled
/// (every process of the cluster stopped for 20 s): what is served from memory goes on being
/// served. A cluster of its own (initdb in a scratch directory, on a free port): the suites' shared
/// one is not stopped.
extension OperatorCLITests {
    // Bounded by its own waits (each `eventually`, and the stop's), not by a time limit: a time
    // limit counts from the test's start, and this one may wait long for its turn (`ownThreads`);
    // that wait, not the test, once ran past 20 minutes.
    @Test func anInstanceOutlivesPostgreSQLRestartingUnderIt() async throws {
        if let missing = PostgresCluster.unavailable {
            print("PostgresRestartTests skipped: needs \(missing) (CI has it)")
            return
        }
        let own = try PostgresCluster()
        defer { own.remove() }
        @discardableResult func cluster(_ what: String, _ sql: String = "") throws -> String {
            try own.run(what, sql)
        }
        let database = own.url()
        let fake = try await startFakeAPNs()
        defer { Task { try? await fake.shutdown() } }
        let seeded = try nohit([
            "devices", "seed", "--count", "300", "--mix", "--database", database, "--data-dir", "d",
        ])
        #expect(seeded.status == 0, "\(seeded.standardError)")

        let server = try await ServedDay.start(
            Executable.productsDirectory.appendingPathComponent("nohit").path,
            [
                "serve", "--database", database, "--data-dir", path("d"), "--date", "2020-08-25", "--speed", "600",
                "--fake-apns", path("fa"), "--port", "0",
            ], in: folder)
        defer { server.terminateIfRunning() }
        // Mid-day: some moments are out.
        _ = try await ServedDay.eventually("the first alerts", within: 300) { () -> Bool? in
            let delivered = try await server.metric("nohit_outbox{state=\"delivered\"}") ?? 0
            return delivered > 0 ? true : nil
        }
        try cluster("crash")
        let degraded = try await ServedDay.eventually("/readyz degraded", within: 300) { () -> String? in
            let answer = await server.readiness()
            return answer.status == 503 && answer.body.contains(#""degraded":["database"]"#) ? answer.body : nil
        }
        #expect(server.process.isRunning, "\(server.log)")
        // Down for 30 s (the fault's length, not a wait for a result): the instance waits, says so
        // every time it is asked, and does not grow while what it would write waits.
        let down = ContinuousClock.now
        let pid = server.process.processIdentifier
        let residentAtCrash = InstancesTests.Day.residentBytes(pid)
        var mostWhileDown = residentAtCrash
        // Answers by kind: "503 saying why", or the status of any other (a bare 503 as "503 alone").
        var readinessWhileDown: [String: Int] = [:]
        while ContinuousClock.now - down < .seconds(30) {
            #expect(server.process.isRunning, "\(server.log)")
            let answer = await server.readiness()
            let saysWhy = answer.status == 503 && answer.body.contains(#""degraded":["database"]"#)
            readinessWhileDown[saysWhy ? "503 saying why" : "\(answer.status) alone", default: 0] += 1
            mostWhileDown = max(mostWhileDown, InstancesTests.Day.residentBytes(pid))
            try await Task.sleep(for: .seconds(1))
        }
        let grew = (mostWhileDown - residentAtCrash) >> 20
        #expect(
            readinessWhileDown.keys.sorted() == ["503 saying why"],
            "/readyz while the database was down: \(readinessWhileDown)")
        #expect(grew < 256, "grew \(grew) MB while the database was down")
        try cluster("start")
        _ = try await ServedDay.eventually("/readyz ready again", within: 120) {
            await server.readiness().status == 200 ? true : nil
        }
        let stall = try await stallUnder(server, cluster: cluster)
        // Beside the heaviest tests of a full run, the rest of the day took over 5 minutes once.
        try await server.waitForTheDaysEnd(within: 600)
        let log = try await server.stop()
        #expect(server.process.terminationStatus == 0, "\(log)")
        let summary = try #require(ServedDay.summary(log), "\(log)")
        #expect(summary.moments == 19 && summary.planned > 0, "\(log)")
        #expect(log.contains("nohit: left nothing to send: the outbox is empty"), "\(log)")
        // The outbox as the database holds it, the truth the stop's counts are taken from in the
        // process (an outcome whose commit was cut off with its connection is counted where it was
        // decided, and a delivery whose lease lapsed while the database was down may be superseded
        // by the bid's later alert, delivered: state 4). Every row ends delivered or superseded.
        let states = try cluster(
            "sql",
            "SELECT state, count(*), replace(COALESCE(max(last_error), ''), E'\\n', ' ') FROM outbox GROUP BY state "
                + "ORDER BY state")
        var rows: [Int: Int] = [:]
        for line in states.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            if fields.count >= 2, let state = Int(fields[0]), let count = Int(fields[1]) { rows[state] = count }
        }
        let delivered = rows[2] ?? 0
        let superseded = rows[4] ?? 0
        #expect(
            rows.keys.allSatisfy { [2, 4].contains($0) } && delivered + superseded >= summary.planned,
            "outbox rows by state (0 pending, 1 sending, 2 delivered, 3 failed, 4 superseded, 5 held): \(states)\n\(log)"
        )
        print(
            "PostgreSQL restarted under serve after 30 s down: /readyz said \(degraded.prefix(160)) "
                + "(\(readinessWhileDown["503 saying why", default: 0]) times 503 saying why, once a second, while "
                + "down); its resident memory grew \(grew) MB at most meanwhile; \(summary.planned) alerts "
                + "planned, \(summary.delivered) delivered as the process counted; the outbox holds \(delivered) "
                + "delivered and \(superseded) superseded (\(states.split(separator: "\n").joined(separator: "; "))); "
                + stall)
    }

    /// PostgreSQL stalled under the instance (issue 57, item 1): every process of the cluster
    /// stopped (SIGSTOP) for 20 s, so that connections stay open and nothing answers, as a server
    /// that hangs. What the instance serves from memory must go on being served meanwhile: a
    /// blocked event loop or a handler waiting on the database would leave these unanswered until
    /// the server came back. Probed every second: `/healthz`, the games, the scoreboard, the
    /// attempts, the web app's page, and the stream from its start (`?after=0`: its kept events).
    /// Returns what was seen, for the test's last line.
    private func stallUnder(
        _ server: ServedDay, cluster: (String, String) throws -> String
    ) async throws -> String {
        let paths = ["/healthz", "/api/games", "/api/scoreboard", "/api/attempts", "/"]
        _ = try cluster("stall", "")
        let stopped = ContinuousClock.now
        var slowest = (path: "", seconds: 0.0)
        var probes = 0
        var readiness: Set<Int> = []
        do {
            defer { _ = try? cluster("resume", "") }
            while ContinuousClock.now - stopped < .seconds(20) {
                for path in paths {
                    // curl's own bound: an answer that waited for the database would take the
                    // stall's 20 s.
                    let answer = try await Executable.runDetached(
                        "/usr/bin/curl",
                        [
                            "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "--max-time", "5",
                            server.address + path,
                        ])
                    let fields = answer.standardOutput.split(separator: " ")
                    let seconds = fields.count == 2 ? Double(fields[1]) ?? 99 : 99
                    #expect(fields.first == "200", "\(path) while PostgreSQL was stopped: \(answer.standardOutput)")
                    if seconds > slowest.seconds { slowest = (path, seconds) }
                    probes += 1
                }
                let stream = try await Executable.runDetached(
                    "/usr/bin/curl", ["-sN", "--max-time", "3", server.address + "/api/stream?after=0"])
                #expect(
                    stream.standardOutput.hasPrefix("retry: 2000") && stream.standardOutput.contains("event: game"),
                    "the stream while PostgreSQL was stopped: \(stream.standardOutput.prefix(300))")
                readiness.insert(await server.readiness().status)
                try await Task.sleep(for: .seconds(1))
            }
        }
        #expect(server.process.isRunning, "\(server.log)")
        return "stalled 20 s (SIGSTOP): \(probes) requests answered 200, the slowest \(slowest.path) in "
            + "\(slowest.seconds) s, the stream served its kept events; /readyz said \(readiness.sorted())"
    }
}
