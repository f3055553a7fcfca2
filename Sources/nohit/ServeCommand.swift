import ArgumentParser
import Assembly
import Clocks
import Configuration
import Metrics
import UnixSignals

/// `nohit serve --date DATE`: the HTTP API and live stream, fed by a replayed day as if live,
/// with alerts going out through the pipeline. The command reads and checks its settings; the
/// service itself is built by ``NoHitService`` (as the tests and benchmarks build it).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the JSON API and the live stream, watching a replayed day as if live, or MLB's Stats API.",
        discussion: """
            --date plays that day's Retrosheet games on a clock running --speed times real time (each game \
            from its real first pitch, over its real length); moments become alerts to the registered devices \
            and events on /api/stream. --source statsapi follows MLB's Stats API instead (or a \
            `nohit fake-statsapi`, with --statsapi-url and --statsapi-date). SIGINT or SIGTERM stops gracefully.

            Every setting can also come from a NOHIT_* environment variable or a JSON file (--config or \
            $NOHIT_CONFIG); a flag wins over the variable, the variable over the file. The names: --port is \
            http.port, NOHIT_HTTP_PORT, {"http": {"port": 8080}}; `nohit settings` (docs/configuration.md) \
            lists them all.

            Endpoints: GET /healthz, /readyz, /metrics, /api/games, /api/games/{id}, /api/attempts, /api/moments, \
            /api/hall-of-fame/{season}, /api/stream (Server-Sent Events; Last-Event-ID resumes), /api/ws (WebSocket; ?after= resumes); \
            POST /api/devices; GET and PUT /api/devices/{id}/preferences (Authorization: Bearer <secret>).
            """
    )

    @Option(help: Settings.help("http.host")) var host: String?
    @Option(help: Settings.help("http.port")) var port: Int?
    @Option(help: Settings.help("source")) var source: String?
    @Option(help: Settings.help("statsapi.url")) var statsapiURL: String?
    @Option(help: Settings.help("statsapi.push-url")) var statsapiPushURL: String?
    @Option(help: Settings.help("statsapi.date")) var statsapiDate: String?
    @OptionGroup var pipeline: PipelineOptions
    @Option(help: Settings.help("admin.token")) var adminToken: String?
    @Option(help: Settings.help("admin.token-file")) var adminTokenFile: String?
    @Option(help: Settings.help("http.max-connections")) var maxConnections: Int?
    @Option(help: Settings.help("http.max-connections-per-client")) var maxConnectionsPerClient: Int?
    @Option(help: Settings.help("http.header-timeout")) var headerTimeout: Int?
    @Option(help: Settings.help("http.idle-timeout")) var idleTimeout: Int?
    @Option(help: Settings.help("http.backlog")) var backlog: Int?
    @Option(help: Settings.help("http.max-streams")) var maxStreams: Int?
    @Option(help: Settings.help("http.abuse-penalty")) var abusePenalty: Int?
    @Option(help: Settings.help("http.metrics")) var metrics: String?
    @Option(help: Settings.help("proxy.trusted")) var trustedProxies: String?
    @Option(help: Settings.help("http.registrations-per-minute")) var registrationsPerMinute: Int?
    @Option(help: Settings.help("scoreboard.keep-finished-minutes")) var keepFinishedMinutes: Int?
    @OptionGroup var store: StoreOptions
    @OptionGroup var providers: ProviderOptions
    @OptionGroup var logging: LoggingOptions

    /// What the command line gave, as settings keys.
    var flags: [String: ConfigContent] {
        var flags = providers.flags.merging(logging.flags) { $1 }.merging(pipeline.flags) { $1 }
        for (key, value) in [
            ("http.host", host), ("source", source), ("statsapi.url", statsapiURL), ("statsapi.date", statsapiDate),
            ("statsapi.push-url", statsapiPushURL), ("admin.token", adminToken), ("admin.token-file", adminTokenFile),
            ("http.metrics", metrics), ("proxy.trusted", trustedProxies),
        ] {
            if let value { flags[key] = .string(value) }
        }
        for (key, value) in [
            ("http.port", port), ("http.max-connections", maxConnections),
            ("http.max-connections-per-client", maxConnectionsPerClient), ("http.header-timeout", headerTimeout),
            ("http.idle-timeout", idleTimeout), ("http.max-streams", maxStreams), ("http.backlog", backlog),
            ("http.abuse-penalty", abusePenalty), ("http.registrations-per-minute", registrationsPerMinute),
            ("scoreboard.keep-finished-minutes", keepFinishedMinutes),
        ] {
            if let value { flags[key] = .int(value) }
        }
        return flags
    }

    func run() async throws {
        let config = try await store.settings(flags)
        // Every setting is read and checked before anything is opened or written.
        let http = try ServiceSettings.HTTP.read(config)
        let settings = try ServiceSettings.read(config, store: store, providers: providers, http: http, ending: false)
        try logging.bootstrap(config)
        if adminToken != nil {
            StandardStreams.writeError(
                "nohit: warning: the admin token was given as a flag, which every user of this machine can read in "
                    + "the process list (/proc/PID/cmdline); give it as "
                    + "--admin-token-file FILE (mode 600) or NOHIT_ADMIN_TOKEN instead\n")
        }
        let banner =
            switch settings.source {
            case .replay(let replay): "serving \(replay.date) (\(replay.games.count) games) at speed \(replay.speed)"
            case .statsAPI(let statsAPI): "following the Stats API at \(statsAPI.url)"
            case .driven: "serving"
            }
        var hooks = NoHitService.Hooks()
        hooks.signals = [.sigterm, .sigint]
        hooks.notice = { StandardStreams.writeError("nohit: \($0)\n") }
        hooks.onListening = { port in
            let host = http.host
            StandardStreams.writeError(
                "nohit: \(banner) on http://\(host.contains(":") ? "[\(host)]" : host):\(port)\n"
                    + "nohit: open \(Self.browserURL(host: host, port: port)) in a browser; Ctrl-C (or SIGTERM) "
                    + "stops gracefully\n")
        }
        do {
            try await NoHitService.withService(settings, hooks: hooks) { service in
                // Hummingbird's request metrics go through the process's metrics system.
                MetricsSystem.bootstrap(service.metrics.factory)
                let started = ContinuousClock.now
                let signal = try await service.run()
                StandardStreams.writeError(
                    try await Self.stopped(service, by: signal, after: ContinuousClock.now - started))
            }
        } catch {
            guard let message = SystemErrors.listening(error, host: http.host, port: http.port) else { throw error }
            StandardStreams.writeError("nohit: \(message)\n")
            throw ExitCode(2)
        }
    }

    /// What the service finished and what it left, said as it stops: the moments and alerts of
    /// this run, and what waits in the outbox for the next start.
    static func stopped(_ service: NoHitService, by signal: UnixSignal?, after elapsed: Duration) async throws
        -> String
    {
        let run = service.pipeline.statistics.snapshot
        let published = service.alerts.counts.value
        // The database may be gone (a full disk takes reads; PostgreSQL stopped does not): the summary
        // is said without the outbox then.
        let store = service.store.store
        let counts = await Deadline.result(within: .seconds(5)) { try await store.outboxCounts() }
        guard case .success(let outbox) = counts else {
            return "nohit: stopped\(signal.map { " by \($0)" } ?? ""): \(published.moments) moments, "
                + "\(published.deliveries) alerts planned; \(run.delivered) delivered, \(run.failed) failed; the "
                + "outbox could not be read (the database did not answer): what it holds is sent at the next start\n"
        }
        let seconds = Int(elapsed.components.seconds)
        let time =
            seconds < 60
            ? "\(seconds) s"
            : seconds < 3600
                ? "\(seconds / 60) min \(seconds % 60) s"
                : "\(seconds / 3600) h \(seconds % 3600 / 60) min"
        var lines = [
            "stopped\(signal.map { " by \($0)" } ?? "") after \(time): \(published.moments) moments "
                + "(\(published.new) new), \(published.deliveries) alerts planned; \(run.delivered) delivered, "
                + "\(run.failed) failed" + (run.held > 0 ? ", \(run.held) held" : "")
                + ", \(run.pruned) devices pruned",
            outbox.pending + outbox.sending + outbox.held == 0
                ? "left nothing to send: the outbox is empty"
                : "left \(outbox.pending) pending, \(outbox.sending) in doubt and \(outbox.held) held in the "
                    + "outbox: sent at the next start (those in doubt again, with the same ids)",
        ]
        lines += service.pipeline.statistics.faults.all.map { "held: \($0.description)" }
        return lines.map { "nohit: \($0)\n" }.joined()
    }

    /// Where a browser on this machine opens the service listening on `host`.
    static func browserURL(host: String, port: Int) -> String {
        switch host {
        case "0.0.0.0", "::", "": "http://localhost:\(port)/ (from elsewhere: this machine's address)"
        case let address where address.contains(":"): "http://[\(address)]:\(port)/"
        default: "http://\(host):\(port)/"
        }
    }
}
