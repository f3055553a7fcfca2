import Alerts
import ArgumentParser
import Assembly
import Baseball
import Foundation
import Logging
import Pipeline
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

    @OptionGroup var pipeline: PipelineOptions

    @Flag(help: "Print only the summary, not each moment.")
    var quiet = false

    @OptionGroup var store: StoreOptions
    @OptionGroup var providers: ProviderOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let config = try await store.settings(
            providers.flags.merging(logging.flags) { $1 }.merging(pipeline.flags) { $1 })
        // Every setting is read and checked, and the day's games read, before anything is opened.
        let settings = try ServiceSettings.read(config, store: store, providers: providers, http: nil, ending: true)
        try logging.bootstrap(config)
        guard case .replay(let replay) = settings.source else { return }
        var hooks = NoHitService.Hooks()
        hooks.signals = [.sigterm, .sigint]
        hooks.notice = { StandardStreams.writeError("nohit: \($0)\n") }
        hooks.logger = Logger(label: "nohit.replay")
        let printer = quiet ? nil : MomentPrinter()
        hooks.consumers = printer.map { [$0] } ?? []
        try await NoHitService.withService(settings, hooks: hooks) { service in
            try await Self.replay(replay, on: service)
        }
    }

    /// Runs the day through `service` and says what it did.
    static func replay(_ replay: ServiceSettings.Replay, on service: NoHitService) async throws {
        let started = ContinuousClock.now
        let signal: UnixSignal?
        do {
            // The day over and every alert sent, the group shuts down (the dispatchers last).
            signal = try await service.run()
        } catch {
            StandardStreams.writeError("nohit: replay failed: \(error)\n")
            throw ExitCode(1)
        }
        let elapsed = ContinuousClock.now - started
        let delivered = service.pipeline.statistics.snapshot
        let counts = try await service.store.store.outboxCounts()
        let published = service.alerts.counts.value
        let skipped = await service.hub.problems.keys.sorted()
        let updates = service.progress?.updates ?? 0
        var lines = [
            "\(replay.date): \(replay.games.count) games, \(updates) plays\(service.run == nil ? "" : " said here"), "
                + "\(published.moments) moments (\(published.new) new), \(published.deliveries) alerts planned"
        ]
        if !skipped.isEmpty {
            lines.append("games left out from a play that did not fit: \(skipped.joined(separator: ", "))")
        }
        lines.append(
            "this run: \(delivered.delivered) delivered, \(delivered.retried) retries, \(delivered.failed) failed, "
                + (delivered.held > 0 ? "\(delivered.held) held, " : "")
                + "\(delivered.pruned) devices pruned, \(delivered.tokenRefreshes) token refreshes in "
                + String(
                    format: "%.2f s", Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                ))
        if published.deliveries == 0 {
            lines.append(
                try await Self.whyNoAlerts(
                    moments: published.moments, new: published.new, store: service.store.store,
                    name: service.store.name))
        }
        lines.append(
            "outbox: \(counts.delivered) delivered, \(counts.pending) pending, \(counts.sending) in doubt, "
                + "\(counts.failed) failed, \(counts.superseded) superseded"
                + (counts.held > 0 ? ", \(counts.held) held" : ""))
        for fault in service.pipeline.statistics.faults.all {
            lines.append("held: \(fault.description)")
        }
        StandardStreams.writeError(lines.map { "nohit: \($0)\n" }.joined())
        if let signal, service.progress?.isDone != true {
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

    /// Prints each moment as it happens, with the replay clock's time in the ballpark (the time
    /// of the change that made it).
    struct MomentPrinter: GameChangeConsumer {
        func consume(_ change: GameChange) async throws {
            // The no-hit bids' moments (the replay is about them; score alerts go to the devices).
            // (An out's odds moment is for the devices that chose odds alerts: not printed.)
            for moment in change.moments where moment.kind.isBid && moment.kind != .hitlessOut {
                let text = MessageText.render(moment, game: change.game.info, jinxSafe: false)
                print(
                    "\(ReplayCommand.timestamp(change.time, game: change.game.info))  \(moment.id)  "
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
