import Alerts
import ArgumentParser
import Foundation
import NIOCore
import Synchronization

/// `nohit-bench liveactivity`: the day of Giolito's no-hitter (2020-08-25) replayed to many Live
/// Activities, through the whole pipeline to `nohit fake-apns` as its own process, two ways in one
/// run: broadcast channels (one per delay bucket, the activities subscribed on the fake across
/// them) and today's per-token path (one device per activity). Each prints the APNs requests per
/// state change of the bid, the activities each reached, the server's CPU per state change (less
/// a replay of the same day without activities) and the time from each change to its last
/// activity updated.
struct LiveActivityBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "liveactivity",
        abstract: "Live Activities on 2020-08-25 by broadcast channels against per-token pushes, through nohit "
            + "fake-apns: requests and CPU per state change, time to the last activity updated."
    )

    @Option(help: "Live Activities, spread evenly over the delay buckets.")
    var activities = 100_000

    @Option(help: "The nohit executable (runs the fake provider); default: beside this benchmark.")
    var nohit: String?

    @Option(help: "Retrosheet data (2020-08-25 is replayed).")
    var data = "../shared/data/retrosheet"

    @Option(help: "Runs, each from scratch; with more than one, the medians too.")
    var runs = 1

    @Option(
        help: ArgumentHelp(
            "Instead: every day of this month (YYYY-MM) replayed through broadcast channels alone, one fake for the "
                + "month: channels made, deleted after each day's finals, and left on the fake.", valueName: "month"))
    var month: String?

    @Flag(
        help: ArgumentHelp(
            "With --month: each day as its own nohit replay process on one data directory, one day killed "
                + "(SIGKILL) while APNs made a channel the process had not learned of, then run again."))
    var killADay = false

    @Option(help: "With --kill-a-day: the seed that draws the day (printed; default: random).")
    var seed: UInt64?

    static let bundle = "com.example.nohit"
    static let game = "CHA202008250"

    /// What one way of one run measured.
    struct Figures {
        var changes = 0
        var requests = 0
        var reached = 0
        var cpuSeconds = 0.0
        /// Each change with something due at once: from before its moments were published to
        /// every due delivery acknowledged.
        var latencies: [Double] = []
        /// Broadcast channels made, deleted, and left on the fake after the day.
        var channels = (made: 0, deleted: 0, left: 0)
    }

    func run() async throws {
        guard runs >= 1, activities >= BroadcastChannelPlan.buckets.count else {
            throw ValidationError("--runs must be at least 1 and --activities at least 5")
        }
        if let month {
            let parts = month.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 2, (1...12).contains(parts[1]) else {
                throw ValidationError("--month must be YYYY-MM, not '\(month)'")
            }
            if killADay {
                try await replayMonthInProcesses(month, year: parts[0], number: parts[1])
            } else {
                try await replayMonth(month)
            }
            return
        }
        var results: [(baseline: Double, broadcast: Figures, token: Figures)] = []
        for index in 1...runs {
            if runs > 1 { print("run \(index) of \(runs)") }
            results.append(try await runOnce())
        }
        guard runs > 1 else { return }
        func summary(_ label: String, _ values: [Double], _ format: String) {
            let sorted = values.sorted()
            print(
                "\(label) over \(runs) runs: median \(String(format: format, Medians.median(sorted))), min "
                    + "\(String(format: format, sorted[0])), max \(String(format: format, sorted[sorted.count - 1]))")
        }
        summary(
            "broadcast: cpu per state change", results.map { cpuPerChange($0.broadcast, baseline: $0.baseline) },
            "%.4f s")
        summary(
            "per-token: cpu per state change", results.map { cpuPerChange($0.token, baseline: $0.baseline) }, "%.4f s")
        summary(
            "broadcast: change → last activity (p50)", results.map { Medians.median($0.broadcast.latencies.sorted()) },
            "%.3f s")
        summary(
            "per-token: change → last activity (p50)", results.map { Medians.median($0.token.latencies.sorted()) },
            "%.3f s")
    }

    /// The server's CPU per change above the replay's own; negative when within the baseline's
    /// noise (runs of the same replay differ by a tenth of a second or more).
    func cpuPerChange(_ figures: Figures, baseline: Double) -> Double {
        (figures.cpuSeconds - baseline) / Double(max(1, figures.changes))
    }

    private func runOnce() async throws -> (baseline: Double, broadcast: Figures, token: Figures) {
        let (work, fake, providers) = try Self.start(nohit: nohit)
        defer { Self.stop(work: work, fake: fake, providers: providers) }
        let buckets = BroadcastChannelPlan.buckets
        print(
            "workload: 2020-08-25 replayed (\(Self.game), Giolito's no-hitter, and the day's other games); "
                + "\(activities) Live Activities per followed bid over the delay buckets \(buckets.map { "\($0) s" }.joined(separator: ", ")); "
                + "nohit fake-apns as its own process over TLS and HTTP/2; SQLite (WAL)")

        // The same day with one phone per bucket and no activity: what the replay costs anyway.
        let phones = buckets.enumerated().map { index, delay in Self.phone(index, delay: delay) }
        // Twice, the first warming what every replay reads (the season's files, the code): the
        // second is the one taken.
        let cold = try await replay(
            devices: phones, channels: nil, providers: providers, fake: fake, work: work, name: "baseline-cold")
        let baseline = try await replay(
            devices: phones, channels: nil, providers: providers, fake: fake, work: work, name: "baseline")
        print(
            String(
                format: "baseline (no activity): %.3f s CPU for the day's replay (%.3f s the first time)",
                baseline.cpuSeconds, cold.cpuSeconds))

        // Broadcast: the phones make a channel per bucket; the activities subscribe on the fake.
        let broadcast = try await replay(
            devices: phones, channels: providers.broadcastClients, providers: providers, fake: fake, work: work,
            name: "broadcast")
        report("broadcast channels", broadcast, baseline: baseline.cpuSeconds)

        // Per token: one device per activity, spread over the buckets alike.
        let tokens = (0..<activities).map { index in
            var preferences = Preferences()
            preferences.spoilerDelaySeconds = buckets[index % buckets.count]
            return Device(
                id: UUID(),
                channel: .liveActivity(
                    token: String(format: "%064llx", UInt64(index) &* 0x9E37_79B9_7F4A_7C15), environment: .production,
                    topic: Self.bundle),
                preferences: preferences, registeredAt: Date(), secretHash: "")
        }
        try await fake.reset(client: providers.client)
        let token = try await replay(
            devices: phones + tokens, channels: nil, providers: providers, fake: fake, work: work, name: "token")
        report("per-token pushes", token, baseline: baseline.cpuSeconds)
        return (baseline.cpuSeconds, broadcast, token)
    }

    func report(_ name: String, _ figures: Figures, baseline: Double) {
        let sorted = figures.latencies.sorted()
        print(
            "\(name): \(figures.changes) state changes of the day's followed bids; \(figures.requests) APNs requests "
                + "for them "
                + String(format: "(%.1f per change)", Double(figures.requests) / Double(max(1, figures.changes)))
                + ", reaching \(figures.reached) activity updates; "
                + String(
                    format: "server CPU %.4f s per change (%.3f s over the day, less the baseline's); ",
                    cpuPerChange(figures, baseline: baseline), figures.cpuSeconds)
                + String(
                    format: "change → last activity due at once updated (the 0 s bucket's; the others go out at "
                        + "their delay) p50 %.3f s, max %.3f s over %d changes",
                    Medians.median(sorted), sorted.last ?? 0, sorted.count))
    }

    static func phone(_ index: Int, delay: Int) -> Device {
        var preferences = Preferences()
        preferences.spoilerDelaySeconds = delay
        return Device(
            id: UUID(),
            channel: .apns(token: String(format: "%064x", index + 1), environment: .production, topic: bundle),
            preferences: preferences, registeredAt: Date(), secretHash: "")
    }
}
