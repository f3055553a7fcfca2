import Alerts
import ArgumentParser
import Foundation
import Logging
import Pipeline
import Storage
import Synchronization

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

    @Option(help: "The day to replay (YYYY-MM-DD).")
    var date: String

    @Option(help: "Clock speed: 60 plays an hour in a minute; 0 runs as fast as possible.")
    var speed: Double = 0

    @Option(help: "Retrosheet data: a directory of season folders, a season folder, or event files.")
    var data: [String] = []

    @Option(help: "Requests in flight per channel (default: 256).")
    var concurrency: Int?

    @Flag(help: "Print only the summary, not each moment.")
    var quiet = false

    @OptionGroup var store: StoreOptions
    @OptionGroup var providers: ProviderOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        var flags = providers.flags.merging(logging.flags) { $1 }
        if !data.isEmpty { flags["retrosheet.data"] = .stringArray(data) }
        if let concurrency { flags["delivery.concurrency"] = .int(concurrency) }
        let settings = try await store.settings(flags)
        let concurrency = try settings.int("delivery.concurrency", default: 256)
        try ReplaySetup.validate(speed: speed, concurrency: concurrency)
        try logging.bootstrap(settings)
        let logger = Logger(label: "nohit.replay")
        let setup = try await ReplaySetup.prepare(
            date: date, speed: speed, settings: settings, store: store, providers: providers, logger: logger)
        let (games, database, channels, clock, manual) = (
            setup.games, setup.database, setup.channels, setup.clock, setup.manual
        )

        let pipeline = AlertPipeline(
            store: database, channels: channels.channels, clock: clock, concurrency: concurrency, logger: logger)
        let stop = StopSignal()
        let stoppedBy = Atomic<Int32>(0)
        let replay = Task {
            let summary = try await DayReplay(games: games).run(
                clock: clock, publisher: pipeline.publisher, settle: { try await pipeline.waitUntilIdle(stop: stop) }
            ) { moment, game in
                guard !quiet else { return }
                let text = MessageText.render(moment, game: game, jinxSafe: false)
                print("\(Self.timestamp(clock.now(), game: game))  \(moment.id)  \(text.title) — \(text.body)")
            }
            try await pipeline.waitUntilDrained(manual: manual, stop: stop)
            return summary
        }
        // Should delivery fail (the database, say), the replay stops too.
        let dispatchers = Task {
            do {
                try await pipeline.runDispatchers(stop: stop)
            } catch {
                replay.cancel()
                throw error
            }
        }
        let signals = TerminationSignals { number in
            stoppedBy.store(number, ordering: .relaxed)
            replay.cancel()
            stop.request()
        }
        defer { signals.cancel() }

        let started = ContinuousClock.now
        var summary: DayReplay.Summary?
        var failure: (any Error)?
        do {
            summary = try await replay.value
        } catch is CancellationError {
        } catch {
            failure = error
        }
        stop.request()
        do {
            try await dispatchers.value
        } catch {
            StandardStreams.writeError("nohit: delivery failed: \(error)\n")
            failure = failure ?? error
        }
        try? await channels.shutdown()
        if let failure {
            StandardStreams.writeError("nohit: replay failed: \(failure)\n")
            throw ExitCode(1)
        }
        let elapsed = ContinuousClock.now - started

        let statistics = pipeline.statistics.snapshot
        let counts = try await database.outboxCounts()
        var lines: [String] = []
        if let summary {
            lines.append(
                "\(date): \(games.count) games, \(summary.updates) plays, \(summary.moments.count) moments "
                    + "(\(summary.newMoments) new), \(summary.deliveries) alerts planned")
            if !summary.skippedGames.isEmpty {
                lines.append("games left out (unreadable): \(summary.skippedGames.joined(separator: ", "))")
            }
        }
        lines.append(
            "this run: \(statistics.delivered) delivered, \(statistics.retried) retries, \(statistics.failed) failed, "
                + "\(statistics.pruned) devices pruned, \(statistics.tokenRefreshes) token refreshes in "
                + String(
                    format: "%.2f s", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                ))
        lines.append(
            "outbox: \(counts.delivered) delivered, \(counts.pending) pending, \(counts.sending) in doubt, "
                + "\(counts.failed) failed, \(counts.superseded) superseded")
        StandardStreams.writeError(lines.map { "nohit: \($0)\n" }.joined())
        let signal = stoppedBy.load(ordering: .relaxed)
        if signal != 0 {
            StandardStreams.writeError("nohit: stopped by signal \(signal); the rest is sent on the next run\n")
            throw ExitCode(128 + signal)
        }
    }

    /// `2020-08-25 19:10 CDT`: the replay clock in the ballpark's time zone.
    static func timestamp(_ date: Date, game: GameInfo) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: ReplaySchedule.timeZoneIdentifier(ofHome: game.home.code))
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
