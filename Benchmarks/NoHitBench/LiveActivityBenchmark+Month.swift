import Alerts
import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import Retrosheet

#if canImport(Glibc)
    import Glibc
#endif

extension LiveActivityBenchmark {
    /// Every day of `month` with games as its own `nohit replay` process on one data directory and
    /// one `nohit fake-apns`, as an operator would run it: one day (drawn from `seed`, printed) is
    /// killed with SIGKILL once APNs has made a channel the process has not learned of (the fake
    /// makes it and does not answer), then run again. Prints the channels made, deleted and left
    /// after each day and at the end: none may be left, the leaked one included.
    func replayMonthInProcesses(_ month: String, year: Int, number: Int) async throws {
        let (work, fake, providers) = try Self.start(nohit: nohit)
        defer { Self.stop(work: work, fake: fake, providers: providers) }
        let executable =
            nohit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "nohit"
            ).path
        let dataDir = (work as NSString).appendingPathComponent("service")
        let fakeDir = (work as NSString).appendingPathComponent("fake")
        for (index, delay) in BroadcastChannelPlan.buckets.enumerated() {
            try Self.run(
                executable,
                [
                    "devices", "add", "--data-dir", dataDir, "--apns", String(format: "%064x", 0xbeef00 + index),
                    "--topic", Self.bundle, "--threshold", "6", "--spoiler-delay", "\(delay)",
                ])
        }
        let days = (1...31).map { String(format: "%04d-%02d-%02d", year, number, $0) }.filter {
            (try? ReplaySchedule.games(on: $0, data: [data]))?.isEmpty == false
        }
        guard !days.isEmpty else { throw ValidationError("no games in \(month) under \(data)") }
        let seed = self.seed ?? UInt64.random(in: 0...UInt64.max)
        let drawn = Int(seed % UInt64(days.count))
        print(
            "workload: every day of \(month) with games (\(days.count)) as its own nohit replay --speed 0 process, "
                + "one data directory, 5 phones (one per delay bucket), one nohit fake-apns; killed (SIGKILL) on "
                + "the first day from \(days[drawn]) (seed \(seed)) where APNs made a channel the process had not "
                + "learned of, then run again")
        let client = providers.client
        var killed: (day: String, leaked: Int)?
        var leftAfterADay = 0
        for (index, day) in days.enumerated() {
            let arguments = [
                "replay", "--date", day, "--speed", "0", "--data", data, "--data-dir", dataDir, "--fake-apns", fakeDir,
                "--quiet",
            ]
            if killed == nil && index >= drawn {
                try await Self.stall(true, fake: fake, client: client)
                let before = try await Self.channelCounts(fake: fake, client: client).created
                let process = try Self.start(executable, arguments)
                while process.isRunning, try await Self.channelCounts(fake: fake, client: client).created == before {
                    try await Task.sleep(for: .milliseconds(5))
                }
                if process.isRunning {
                    Glibc.kill(process.processIdentifier, SIGKILL)
                    process.waitUntilExit()
                    let leaked = try await Self.channelCounts(fake: fake, client: client).open
                    killed = (day, leaked)
                    print("\(day): killed with \(leaked) channel(s) on the fake, one of them unknown to the service")
                } else {
                    process.waitUntilExit()
                }
                try await Self.stall(false, fake: fake, client: client)
                guard killed != nil else { continue }
            }
            try Self.run(executable, arguments)
            let counts = try await Self.channelCounts(fake: fake, client: client)
            leftAfterADay = max(leftAfterADay, counts.open)
            print("\(day): \(counts.created) channels made so far, \(counts.deleted) deleted, \(counts.open) left")
        }
        let end = try await Self.channelCounts(fake: fake, client: client)
        print(
            "\(month) in processes: \(days.count) days; \(end.created) broadcast channels made, \(end.deleted) deleted; "
                + "at most \(leftAfterADay) left after a day; "
                + (killed.map { "killed on \($0.day) with \($0.leaked) on the fake; " } ?? "no day made a channel; ")
                + "\(end.open) on the fake at the end")
    }

    /// Channels the fake made and deleted since start, and open now.
    static func channelCounts(fake: FakeProcess, client: HTTPClient) async throws -> (
        created: Int, deleted: Int, open: Int
    ) {
        let response = try await client.execute(
            HTTPClientRequest(url: fake.description.url + "/channels/\(bundle)"), timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 26)
        let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        return (object?["created"] as? Int ?? -1, object?["deleted"] as? Int ?? -1, object?["open"] as? Int ?? -1)
    }

    /// Whether the fake answers the channels it makes.
    static func stall(_ stall: Bool, fake: FakeProcess, client: HTTPClient) async throws {
        var request = HTTPClientRequest(url: fake.description.url + "/channels/stall")
        request.method = .POST
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: ["stall": stall])))
        let response = try await client.execute(request, timeout: .seconds(60))
        guard response.status == .ok else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "stall: \(response.status)"])
        }
    }

    static func start(_ executable: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs `nohit` to its end; throws unless it exits 0.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = try start(executable, arguments)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(
                .featureUnsupported,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "nohit \(arguments.prefix(3).joined(separator: " ")) exited \(process.terminationStatus)"
                ])
        }
    }
}
