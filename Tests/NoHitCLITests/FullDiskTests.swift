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

/// A full disk under SQLite (issue 57, item 2): `nohit serve` replays the bundled day to 200
/// devices on the fake APNs with its data directory on a 64 MB tmpfs of its own (a mount
/// namespace the test makes), and the test fills that disk mid-day. Writes are refused with one
/// clear message (503, never acknowledged), `/readyz` degrades and says why, the database stays
/// whole, and once the filler is removed the service goes on by itself: every acknowledged event
/// is stored, every planned alert delivered, the outbox empty.
extension OperatorCLITests {
    @Test func aFullDiskRefusesWritesClearlyAndTheServiceGoesOnWhenSpaceReturns() async throws {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/nsenter")
        else {
            print("FullDiskTests skipped: a tmpfs in a mount namespace needs root, unshare and nsenter (CI runs it)")
            return
        }
        // A container without the right to mount is told apart from a failure of the service.
        let probe = try Executable.run(
            "/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", "mount -t tmpfs tmpfs /mnt"])
        guard probe.status == 0 else {
            print(
                "FullDiskTests skipped: this machine does not let root mount a tmpfs in a namespace: \(probe.standardError)"
            )
            return
        }
        let fake = try await startFakeAPNs()
        defer { Task { try? await fake.shutdown() } }
        let disk = path("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let nohit = Executable.productsDirectory.appendingPathComponent("nohit").path
        let script = """
            set -e
            mount -t tmpfs -o size=64m tmpfs "$1"
            "$2" devices seed --count 200 --mix --data-dir "$1/data" >/dev/null
            exec "$2" serve --date 2020-08-25 --speed 600 --fake-apns "$3" --port 0 --data-dir "$1/data"
            """
        let server = try await ServedDay.start(
            "/usr/bin/unshare",
            ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", disk, nohit, path("fa")],
            in: folder)
        defer { server.terminateIfRunning() }
        let address = server.address
        // The service's files as it sees them: through its own root, in its mount namespace.
        let inside = "/proc/\(server.process.processIdentifier)/root\(disk)"
        let keys = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: inside + "/data/web-analytics.json")))
                as? [String: String])
        let project = keys["project_id"] ?? ""
        let pad = String(repeating: "x", count: 2000)
        func post(_ n: Int) async throws -> (status: Int, body: String, retryAfter: String?) {
            var request = URLRequest(url: URL(string: "\(address)/3.0/projects/\(project)/events/probe")!)
            request.httpMethod = "POST"
            request.setValue(keys["write_key"], forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(#"{"n": \#(n), "pad": "\#(pad)"}"#.utf8)
            let (body, response) = try await URLSession.shared.data(for: request)
            let http = response as? HTTPURLResponse
            return (
                http?.statusCode ?? 0, String(decoding: body, as: UTF8.self),
                http?.value(forHTTPHeaderField: "Retry-After")
            )
        }
        var acknowledged = 0
        var n = 0
        for _ in 0..<20 {
            n += 1
            if try await post(n).status == 201 { acknowledged += 1 }
        }
        #expect(acknowledged == 20)

        // The disk filled to its last byte by another writer, mid-day.
        let filler =
            FileHandle(forWritingAtPath: inside + "/filler")
            ?? {
                FileManager.default.createFile(atPath: inside + "/filler", contents: nil)
                return FileHandle(forWritingAtPath: inside + "/filler")!
            }()
        let block = Data(count: 1 << 20)
        while (try? filler.write(contentsOf: block)) != nil {}
        let small = Data(count: 4096)
        while (try? filler.write(contentsOf: small)) != nil {}
        try? filler.close()

        // Events: stored and acknowledged (room the database already had) or refused with why.
        var refused: (status: Int, body: String, retryAfter: String?)?
        while refused == nil && n < 5000 {
            n += 1
            let answer = try await post(n)
            if answer.status == 201 { acknowledged += 1 } else { refused = answer }
        }
        let refusal = try #require(refused, "5,000 events stored on a full 64 MB disk")
        #expect(refusal.status == 503, "\(refusal.body)")
        #expect(refusal.retryAfter == "30")
        #expect(refusal.body.contains("the disk holding the database is full"), "\(refusal.body)")
        #expect(refusal.body.contains("nothing of this request was stored"), "\(refusal.body)")
        // Held full until the service's own writes have met it too (a moment, a claim, outcomes):
        // no more events meanwhile, so the reason names the last of those.
        let degraded = try await ServedDay.eventually("/readyz degraded by the service's own writes", within: 120) {
            () -> String? in
            let answer = await server.readiness()
            guard answer.status == 503, answer.body.contains("the disk holding the database is full") else {
                return nil
            }
            let own = [
                "a moment and its alerts", "a claim of deliveries", "delivery outcomes", "deliveries given back",
            ]
            return own.contains { answer.body.contains("the last: \($0)") } ? answer.body : nil
        }
        #expect(degraded.contains(#""degraded":["database"]"#), "\(degraded)")
        // The database stays whole while its disk is full.
        let database = disk + "/data/nohit.sqlite"
        #expect(try Self.integrity(database, of: server.process.processIdentifier) == "ok")

        // Space returns: the service goes on by itself.
        try FileManager.default.removeItem(atPath: inside + "/filler")
        _ = try await ServedDay.eventually("an event stored again", within: 300) { () -> Bool? in
            n += 1
            let answer = try await post(n)
            guard answer.status == 201 else { return nil }
            acknowledged += 1
            return true
        }
        _ = try await ServedDay.eventually("/readyz ready again", within: 300) {
            await server.readiness().status == 200 ? true : nil
        }
        // The day played to its end, every alert sent.
        try await server.waitForTheDaysEnd()
        #expect(try await server.metric("nohit_storage_writable") == 1)
        #expect(try await server.metric("nohit_storage_write_failures") ?? 0 > 0)
        var count = URLRequest(
            url: URL(string: "\(address)/3.0/projects/\(project)/queries/count?event_collection=probe")!)
        count.setValue(keys["read_key"], forHTTPHeaderField: "Authorization")
        let (counted, _) = try await URLSession.shared.data(for: count)
        let result = try #require(try JSONSerialization.jsonObject(with: counted) as? [String: Any])
        #expect(result["result"] as? Int == acknowledged, "\(result); \(acknowledged) acknowledged of \(n) sent")
        #expect(try Self.integrity(database, of: server.process.processIdentifier) == "ok")

        let log = try await server.stop()
        #expect(server.process.terminationStatus == 0, "\(log)")
        #expect(log.contains("[Storage] cannot store "), "\(log)")
        #expect(log.contains("the disk holding the database is full (SQLite error 13"), "\(log)")
        #expect(log.contains("[Storage] the database takes writes again after "), "\(log)")
        let summary = try #require(ServedDay.summary(log), "\(log)")
        #expect(summary.moments == 19 && summary.planned == summary.delivered && summary.planned > 0, "\(log)")
        #expect(log.contains("nohit: left nothing to send: the outbox is empty"), "\(log)")
    }

    /// SQLite's own check of the database file, read beside the service in its mount namespace
    /// (through /proc/PID/root SQLite would follow the link to this namespace's empty directory).
    static func integrity(_ path: String, of pid: Int32) throws -> String {
        let check = try Executable.run(
            "/usr/bin/nsenter",
            [
                "--target", "\(pid)", "--mount", "--", "python3", "-c",
                "import sqlite3, sys; print(sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True)"
                    + ".execute('PRAGMA integrity_check').fetchone()[0])", path,
            ])
        return check.status == 0
            ? check.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) : check.standardError
    }
}
