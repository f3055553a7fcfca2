import Alerts
import ArgumentParser
import Delivery
import Foundation
import Hummingbird
import Logging
import Pipeline
import Server
import ServiceLifecycle
import Storage

/// `nohit serve --replay DATE`: the HTTP API and live stream, fed by a replayed day as if live,
/// with alerts going out through the pipeline.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the JSON API and the live stream, watching a replayed day as if it were live.",
        discussion: """
            --replay plays that day's Retrosheet games on a clock running --speed times real time (each game \
            from its real first pitch, over its real length); moments become alerts to the registered devices \
            and events on /api/stream. SIGINT or SIGTERM stops gracefully.

            Endpoints: GET /healthz, /metrics, /api/games, /api/games/{id}, /api/attempts, /api/moments, \
            /api/hall-of-fame/{season}, /api/stream (Server-Sent Events; Last-Event-ID resumes); \
            POST /api/devices; GET and PUT /api/devices/{id}/preferences (Authorization: Bearer <secret>).
            """
    )

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on.")
    var port = 8080

    @Option(help: "The day to replay as live (YYYY-MM-DD).")
    var replay: String

    @Option(help: "Clock speed: 60 plays an hour in a minute; 0 runs as fast as possible.")
    var speed: Double = 60

    @Option(help: "Retrosheet data: a directory of season folders (the hall of fame reads <dir>/<season>).")
    var data: [String] = []

    @Option(help: "Requests in flight per channel.")
    var concurrency = 256

    @Option(help: "The operator's token for /api/admin/... (default: $NOHIT_ADMIN_TOKEN; none closes them).")
    var adminToken: String?

    @Flag(help: "Allow webhook and Web Push URLs into loopback and private networks.")
    var allowPrivateNetworks = false

    @OptionGroup var store: StoreOptions
    @OptionGroup var providers: ProviderOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        try ReplaySetup.validate(speed: speed, concurrency: concurrency)
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    func run() async throws {
        try logging.bootstrap()
        let logger = Logger(label: "nohit.serve")
        let setup = try await ReplaySetup.prepare(
            date: replay, data: data, speed: speed, store: store, providers: providers, logger: logger)
        let (games, places, database, settings, channels, clock) = (
            setup.games, setup.places, setup.database, setup.settings, setup.channels, setup.clock
        )

        let pipeline = AlertPipeline(
            store: database, channels: channels.channels, clock: clock, concurrency: concurrency, logger: logger)
        let board = LiveBoard(games: games)
        let feed = LiveFeed()
        var api = APIServer(
            store: database, board: board, feed: feed, registrar: Registrar(allowPrivateNetworks: allowPrivateNetworks),
            seasons: SeasonLibrary(places: places), clock: clock)
        api.vapidPublicKey = VAPID(key: settings.vapidKey, subject: settings.vapidSubject).publicKeyBase64URL
        api.statistics = pipeline.statistics
        api.adminToken = adminToken ?? ProcessInfo.processInfo.environment["NOHIT_ADMIN_TOKEN"]
        api.outbox = database
        let source = LiveReplay(
            games: games, pipeline: pipeline, clock: clock, board: board, feed: feed, logger: logger)
        let app = Application(
            router: api.router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "nohit"),
            services: [source, FeedHeartbeat(feed: feed)],
            onServerRunning: { channel in
                let address = channel.localAddress.map { "\($0)" } ?? "\(host):\(port)"
                StandardStreams.writeError(
                    "nohit: serving \(replay) (\(games.count) games) at speed \(speed) on http://\(host):"
                        + "\(channel.localAddress?.port ?? port) (\(address))\n")
            },
            logger: logger)
        defer { feed.finishAll() }
        do {
            try await app.runService()
        } catch {
            try? await channels.shutdown()
            throw error
        }
        try? await channels.shutdown()
    }
}
