import Alerts
import ArgumentParser
import Baseball
import Clocks
import Deals
import Foundation
import Logging
import Pipeline
import Retrosheet
import ServiceLifecycle
import Storage
import UnixSignals

/// `nohit replay --date DATE`: a past day's games through the whole alert pipeline (engine,
/// planner, outbox, dispatchers, providers) without the HTTP server.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a past day's games through the alert pipeline, sending alerts to registered devices.",
        discussion: """
            Each game starts at its real first pitch and its plays are spread over its real length, on a clock \
            running --speed times real time; --speed 0 runs as fast as possible. Moments are printed as they \
            happen; alerts go to the devices in the database through the configured providers.

            Running the same day again sends nothing twice: moments already stored are not planned again, and \
            alerts whose sending was cut short by a crash are sent again under the same delivery id \
            (apns-id), unless a later alert of the same bid already reached the device. SIGINT or SIGTERM \
            stops gracefully: requests in flight finish and are recorded; the rest waits for the next run.
            """
    )

    @Option(help: Settings.help("replay.date"))
    var date: String?

    @Option(help: Settings.help("replay.speed"))
    var speed: Double?

    @Option(help: Settings.help("retrosheet.data"))
    var data: [String] = []

    @Option(name: .customLong("deals"), help: Settings.help("deals.files"))
    var dealFiles: [String] = []

    @Option(help: Settings.help("delivery.concurrency"))
    var concurrency: Int?

    @Flag(help: "Print only the summary, not each moment.")
    var quiet = false

    @OptionGroup var store: StoreOptions
    @OptionGroup var providers: ProviderOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        var flags = providers.flags.merging(logging.flags) { $1 }
        if !data.isEmpty { flags["retrosheet.data"] = .stringArray(data) }
        if !dealFiles.isEmpty { flags["deals.files"] = .stringArray(dealFiles) }
        if let concurrency { flags["delivery.concurrency"] = .int(concurrency) }
        if let date { flags["replay.date"] = .string(date) }
        if let speed { flags["replay.speed"] = .double(speed) }
        let settings = try await store.settings(flags)
        let concurrency = try settings.int("delivery.concurrency", default: 256)
        let speed = try settings.double("replay.speed", default: 0)
        try ReplaySetup.validate(speed: speed, concurrency: concurrency)
        guard let date = try settings.string("replay.date") else {
            throw ValidationError(
                "give the day to replay: --date YYYY-MM-DD (or NOHIT_REPLAY_DATE, or replay.date in the file)")
        }
        let dealRules = try Runtime.dealRules(settings)
        try logging.bootstrap(settings)
        let location = try store.location(settings)
        let day = try ReplaySetup.day(date, settings: settings)
        try await location.withStore { opened in
            try await replay(
                opened, day: day, date: date, speed: speed, location: location, settings: settings,
                concurrency: concurrency, dealRules: dealRules)
        }
    }

    func replay(
        _ opened: OpenedStore, day: (games: [ReplayGame], places: [String]), date: String, speed: Double,
        location: StoreLocation, settings: Settings, concurrency: Int, dealRules: [DealRule]
    ) async throws {
        let logger = Logger(label: "nohit.replay")
        let setup = try await ReplaySetup.prepare(
            day: day, speed: speed, settings: settings, store: opened, location: location, providers: providers,
            logger: logger)
        let (games, database, channels, clock, manual) = (
            setup.games, setup.database, setup.channels, setup.clock, setup.manual
        )

        let statistics = DeliveryStatistics()
        let runtime = Runtime(
            store: database, channels: channels.channels, clock: clock, concurrency: concurrency,
            staleAfter: setup.settings.staleAfter, statistics: statistics, dealRules: dealRules,
            consumers: quiet ? [] : [MomentPrinter(clock: clock)], feedback: setup.feedback,
            odds: ServeCommand.shippedOdds(), logger: logger)
        let services: [ServiceGroupConfiguration.ServiceConfiguration]
        let progress: ReplaySource.Progress
        if let coordination = opened.coordination, let run = setup.run {
            // Several instances play the day together: each game said by one of them into the shared
            // game log, which every instance applies; the day over, each waits for the alerts.
            let shared = Runtime.Shared(
                coordination: coordination, run: run, runtime: runtime, clock: clock,
                about: "nohit replay \(date) x\(speed)", logger: logger)
            var source = SharedReplaySource(
                timeline: ReplayTimeline(games: games), leases: shared.leases, log: shared.log, clock: clock)
            source.afterDay = {
                try await shared.caughtUp()
                try await runtime.pipeline.waitUntilDrained(manual: nil)
            }
            progress = source.progress
            services = shared.services + [.init(service: source, successTerminationBehavior: .gracefullyShutdownGroup)]
        } else {
            var source = ReplaySource(games: games, sink: runtime.hub, clock: clock)
            source.settle = { try await runtime.pipeline.waitUntilIdle() }
            source.afterDay = { try await runtime.pipeline.waitUntilDrained(manual: manual) }
            progress = source.progress
            services = [.init(service: source, successTerminationBehavior: .gracefullyShutdownGroup)]
        }

        let started = ContinuousClock.now
        var signal: UnixSignal?
        var failure: (any Error)?
        do {
            // The day over and every alert sent, the group shuts down (the dispatchers last).
            signal = try await runtime.run(services, logger: logger)
        } catch {
            failure = error
        }
        try? await channels.shutdown()
        if let failure {
            StandardStreams.writeError("nohit: replay failed: \(failure)\n")
            throw ExitCode(1)
        }
        let elapsed = ContinuousClock.now - started

        let delivered = statistics.snapshot
        let counts = try await database.outboxCounts()
        let published = runtime.alerts.counts.value
        let skipped = await runtime.hub.problems.keys.sorted()
        var lines = [
            "\(date): \(games.count) games, \(progress.updates) plays\(setup.run == nil ? "" : " said here"), "
                + "\(published.moments) moments (\(published.new) new), \(published.deliveries) alerts planned"
        ]
        if !skipped.isEmpty {
            lines.append("games left out from a play that did not fit: \(skipped.joined(separator: ", "))")
        }
        lines.append(
            "this run: \(delivered.delivered) delivered, \(delivered.retried) retries, \(delivered.failed) failed, "
                + "\(delivered.pruned) devices pruned, \(delivered.tokenRefreshes) token refreshes in "
                + String(
                    format: "%.2f s", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                ))
        if published.deliveries == 0 {
            lines.append(
                try await Self.whyNoAlerts(
                    moments: published.moments, new: published.new, store: database, name: opened.name))
        }
        lines.append(
            "outbox: \(counts.delivered) delivered, \(counts.pending) pending, \(counts.sending) in doubt, "
                + "\(counts.failed) failed, \(counts.superseded) superseded")
        StandardStreams.writeError(lines.map { "nohit: \($0)\n" }.joined())
        if let signal, !progress.isDone {
            StandardStreams.writeError(
                "nohit: stopped by signal \(signal.rawValue); the rest is sent on the next run\n")
            throw ExitCode(128 + signal.rawValue)
        }
    }

    /// Why a replay planned no alert, and what to do about it.
    static func whyNoAlerts(moments: Int, new: Int, store: any DeviceStore, name: String) async throws -> String {
        if moments == 0 {
            return "no alerts: no bid on this day reached an alert (the earliest is a hitless 4th inning, for a "
                + "device's favourite team)"
        }
        if new == 0 {
            return "no alerts: every moment of this day was already stored in \(name) (by an earlier run, or "
                + "another instance sharing it), and none is "
                + "planned twice (not even for devices added since): replay it into a new --data-dir to send it "
                + "afresh"
        }
        let devices = try await store.activeDevices().count
        if devices == 0 {
            return "no alerts: no device is registered in \(name): add one first (nohit devices add --console me, "
                + "or devices seed --count N)"
        }
        return "no alerts: \(devices) device\(devices == 1 ? " is" : "s are") registered, but none asked for these "
            + "moments (thresholds, favourite teams, alert frequency)"
    }

    /// Prints each moment as it happens, with the replay clock's time in the ballpark.
    struct MomentPrinter: GameChangeConsumer {
        let clock: any WallClock

        func consume(_ change: GameChange) async throws {
            // The no-hit bids' moments (the replay is about them; score alerts go to the devices).
            // (An out's odds moment is for the devices that chose odds alerts: not printed.)
            for moment in change.moments where moment.kind.isBid && moment.kind != .hitlessOut {
                let text = MessageText.render(moment, game: change.game.info, jinxSafe: false)
                print(
                    "\(ReplayCommand.timestamp(clock.now(), game: change.game.info))  \(moment.id)  "
                        + "\(text.title) — \(text.body)")
            }
        }
    }

    /// `2020-08-25 19:10 CDT`: the replay clock in the ballpark's time zone.
    static func timestamp(_ date: Date, game: GameInfo) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: game.home.club.timeZone)
        formatter.dateFormat = "yyyy-MM-dd HH:mm zzz"
        return formatter.string(from: date)
    }
}

/// Where Retrosheet seasons are found when --data is not given.
enum RetrosheetData {
    /// The first of `$NOHIT_RETROSHEET`, the 2020 season bundled with the project
    /// (`Data/retrosheet`, with Retrosheet's notice) and `../shared/data/retrosheet` that exists.
    static func defaultPlaces() -> [String] {
        let candidates =
            [ProcessInfo.processInfo.environment["NOHIT_RETROSHEET"]].compactMap { $0 } + [
                "Data/retrosheet", "../shared/data/retrosheet",
            ]
        return [candidates.first { FileManager.default.fileExists(atPath: $0) } ?? "Data/retrosheet"]
    }
}
