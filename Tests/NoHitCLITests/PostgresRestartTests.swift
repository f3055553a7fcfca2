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
/// down for seconds, then started again (issue 57, item 1): the instance does not exit, `/readyz`
/// says the database is degraded meanwhile, and once the server is back it goes on by itself —
/// every planned alert delivered, the day followed to its end, and a graceful stop. A cluster of
/// its own (initdb in a scratch directory, on a free port): the suites' shared one is not stopped.
extension OperatorCLITests {
    @Test func anInstanceOutlivesPostgreSQLRestartingUnderIt() async throws {
        let bin =
            (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted {
                $0.compare($1, options: .numeric) == .orderedAscending
            }.last.map { "/usr/lib/postgresql/\($0)/bin" }
        guard ProcessInfo.processInfo.environment["NOHIT_TEST_POSTGRES"] != nil, geteuid() == 0, let bin,
            FileManager.default.isExecutableFile(atPath: bin + "/initdb")
        else {
            print(
                "PostgresRestartTests skipped: needs NOHIT_TEST_POSTGRES, root and PostgreSQL's binaries (CI runs it)")
            return
        }
        let clusterDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-pg-\(UUID())").path
        let port = try Self.freePort()
        // initdb, then start/stop/sql as the postgres user.
        let control = """
            set -e
            bin="$1"; dir="$2"; port="$3"; what="$4"
            # The server outlives this shell: it must not hold a descriptor the test waits on (the
            # one by which Foundation sees this shell end).
            for fd in $(ls /proc/$$/fd); do if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi; done
            as() { runuser -u postgres -- "$@"; }
            case "$what" in
              init)
                mkdir -p "$dir"; chown postgres "$dir"
                as "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
                printf "listen_addresses = '127.0.0.1'\\nport = %s\\nunix_socket_directories = '%s'\\n" "$port" "$dir" \
                  | as tee -a "$dir/data/postgresql.conf" >/dev/null
                as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null
                as "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qc "CREATE ROLE nohit LOGIN" \
                  -qc "CREATE DATABASE nohit OWNER nohit" ;;
              crash) as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null ;;
              start) as "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >/dev/null ;;
            esac
            """
        func cluster(_ what: String) throws {
            let result = try Executable.run("/bin/bash", ["-c", control, "pg", bin, clusterDirectory, "\(port)", what])
            #expect(result.status == 0, "\(what): \(result.standardError)")
        }
        try cluster("init")
        defer {
            try? cluster("crash")
            try? FileManager.default.removeItem(atPath: clusterDirectory)
        }
        let database = "postgres://nohit@127.0.0.1:\(port)/nohit"
        let fake = try Executable.startCollecting(
            "nohit", ["fake-apns", "--port", "0", "--dir", path("fa")], until: "\"ca\"", keepRunning: true)
        let fakeProcess = try #require(fake.process, "fake-apns did not start: \(fake.output)")
        defer {
            fakeProcess.terminate()
            fakeProcess.waitUntilExit()
        }
        let seeded = try nohit([
            "devices", "seed", "--count", "300", "--mix", "--database", database, "--data-dir", "d",
        ])
        #expect(seeded.status == 0, "\(seeded.standardError)")

        let server = Process()
        server.executableURL = Executable.productsDirectory.appendingPathComponent("nohit")
        server.arguments = [
            "serve", "--database", database, "--data-dir", path("d"), "--date", "2020-08-25", "--speed", "600",
            "--fake-apns", path("fa"), "--port", "0",
        ]
        server.currentDirectoryURL = folder
        let output = Pipe()
        server.standardError = output
        server.standardOutput = output
        let said = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            said.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
        }
        try server.run()
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let address = try await eventually("the banner", within: 120) {
            said.withLock { $0.firstMatch(of: /on (http:\/\/127\.0\.0\.1:\d+)/).map { String($0.1) } }
        }
        func readiness() async -> (status: Int, body: String) {
            guard let (body, response) = try? await URLSession.shared.data(from: URL(string: address + "/readyz")!)
            else { return (0, "") }
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: body, as: UTF8.self))
        }
        // Mid-day: some moments are out.
        _ = try await eventually("the first alerts", within: 120) { () -> Bool? in
            let delivered = try await Self.metric(address, "nohit_outbox{state=\"delivered\"}") ?? 0
            return delivered > 0 ? true : nil
        }
        try cluster("crash")
        let degraded = try await eventually("/readyz degraded", within: 60) { () -> String? in
            let answer = await readiness()
            return answer.status == 503 && answer.body.contains(#""degraded":["database"]"#) ? answer.body : nil
        }
        #expect(server.isRunning, "\(said.withLock { $0 })")
        // Down for a while (the fault's length, not a wait for a result): the instance waits.
        try await Task.sleep(for: .seconds(5))
        #expect(server.isRunning, "\(said.withLock { $0 })")
        try cluster("start")
        _ = try await eventually("/readyz ready again", within: 120) { await readiness().status == 200 ? true : nil }
        _ = try await eventually("the day's end with an empty outbox", within: 300) { () -> Bool? in
            let final = try await Self.metric(address, "nohit_games{status=\"final\"}")
            let pending = try await Self.metric(address, "nohit_outbox{state=\"pending\"}")
            let sending = try await Self.metric(address, "nohit_outbox{state=\"sending\"}")
            return final == 16 && pending == 0 && sending == 0 ? true : nil
        }
        kill(server.processIdentifier, SIGINT)
        try await Executable.onThread { server.waitUntilExit() }
        let log = said.withLock { $0 }
        #expect(server.terminationStatus == 0, "\(log)")
        let summary = try #require(
            log.firstMatch(of: /(\d+) moments \(\d+ new\), (\d+) alerts planned; (\d+) delivered, 0 failed/), "\(log)")
        // Delivered may exceed planned: a moment whose record committed as its connection dropped is
        // found stored when made again, and counted as planned once only.
        #expect(summary.1 == "19" && Int(summary.3)! >= Int(summary.2)! && Int(summary.2)! > 0, "\(log)")
        #expect(log.contains("nohit: left nothing to send: the outbox is empty"), "\(log)")
        print("PostgreSQL restarted under serve: /readyz said \(degraded.prefix(160)); \(summary.0)")
    }

    /// A gauge's value in the service's `/metrics`.
    static func metric(_ address: String, _ series: String) async throws -> Double? {
        let (body, _) = try await URLSession.shared.data(from: URL(string: address + "/metrics")!)
        let text = String(decoding: body, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(series + " ") }) else { return nil }
        return Double(line.dropFirst(series.count + 1))
    }

    /// A loopback port nothing listens on now.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                guard bind(descriptor, $0, length) == 0, getsockname(descriptor, $0, &length) == 0 else {
                    throw CocoaError(.fileWriteUnknown)
                }
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
