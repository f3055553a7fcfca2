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

    @Flag(help: "Allow webhook and Web Push URLs into loopback and private networks.")
    var allowPrivateNetworks = false

    @OptionGroup var store: StoreOptions
    @OptionGroup var providers: ProviderOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard speed >= 0 && speed.isFinite else { throw ValidationError("--speed must be 0 or more") }
        guard (1...10_000).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 10,000") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
    }

    func run() async throws {
        try logging.bootstrap()
        let logger = Logger(label: "nohit.serve")
        let places = data.isEmpty ? RetrosheetData.defaultPlaces() : data
        let games: [ReplayGame]
        do {
            games = try ReplaySchedule.games(on: replay, data: places)
        } catch {
            StandardStreams.writeError("nohit: \(error)\n")
            throw ExitCode(2)
        }
        let database = try store.open()
        let settings = try providers.settings(dataDir: store.dataDir) { line in print("console: \(line)") }
        let channels = try ProviderChannels(settings)
        for (kind, reason) in channels.unavailable.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            logger.warning(
                "channel unavailable; its alerts stay queued",
                metadata: ["channel": "\(kind.rawValue)", "reason": "\(reason)"])
        }

        let firstPitch = games.map(\.start).min()!
        let clock: any WallClock =
            speed == 0
            ? ManualWallClock(firstPitch.addingTimeInterval(-60))
            : ScaledWallClock(virtualStart: firstPitch.addingTimeInterval(-60), speed: speed)
        let recovery = try await database.recoverInDoubt(now: clock.now())
        if !recovery.requeued.isEmpty || !recovery.superseded.isEmpty {
            logger.notice(
                "recovered after an unclean stop",
                metadata: ["requeued": "\(recovery.requeued.count)", "superseded": "\(recovery.superseded.count)"])
        }

        let pipeline = AlertPipeline(
            store: database, channels: channels.channels, clock: clock, concurrency: concurrency, logger: logger)
        let board = LiveBoard(games: games)
        let feed = LiveFeed()
        var api = APIServer(
            store: database, board: board, feed: feed, registrar: Registrar(allowPrivateNetworks: allowPrivateNetworks),
            seasons: SeasonLibrary(places: places), clock: clock)
        api.vapidPublicKey = VAPID(key: settings.vapidKey, subject: settings.vapidSubject).publicKeyBase64URL
        api.statistics = pipeline.statistics
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
