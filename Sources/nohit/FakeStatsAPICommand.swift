import Alerts
import ArgumentParser
import Assembly
import Clocks
import Configuration
import FakeStatsAPI
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging

/// `nohit fake-statsapi --date DATE`: a Retrosheet day served as MLB's Stats API.
struct FakeStatsAPICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-statsapi",
        abstract: "Serve a Retrosheet day as MLB's Stats API would show it live (schedule, feed, diffPatch).",
        discussion: """
            The day's games play on a clock running --speed times real time from a minute before the first \
            pitch, or --lead real seconds before it (each game from its real start, over its real length). \
            Under /api/: GET v1/schedule?date=; \
            v1.1/game/{pk}/feed/live (?timecode= for a past state); feed/live/diffPatch?startTimecode= (RFC 6902 \
            patches, or the whole feed without a usable start); feed/live/timestamps; and the Gameday push, a \
            WebSocket at v1/game/push/subscribe/gameday/{pk} (a message naming the feed's new timecode each \
            time it moves, Gameday5 every 10 s). Player ids are 600000 and up, in the order of their Retrosheet ids.

            Faults: POST /faults with {"kind": "server-error" | "timeout" | "truncated" | "stale" | \
            "bad-patch" | "rescore" | "push-drop" | "push-delay" | "push-duplicate" | "push-disconnect" | \
            "push-silence", "game": gamePk, "count": n, "play": atBatIndex, "to": eventType, "seconds": delay}; \
            the next n matching responses or push messages carry it (a re-scored play stays re-scored: by \
            default the game's latest hit becomes an error; a delayed message comes 5 s of game clock late by \
            default; a silent socket sends nothing more). GET /faults lists those pending, DELETE /faults drops \
            them; GET /requests counts requests by route (push: sockets opened, push message: messages sent); \
            GET /clock shows the game clock beside CLOCK_MONOTONIC (when a play shows, on the machine's clock).
            """
    )

    @Option(
        name: [.customLong("date"), .customLong("replay")],
        help: "The day to serve (YYYY-MM-DD; --replay is the same) [replay.date, NOHIT_REPLAY_DATE].")
    var date: String?

    @Option(
        help: ArgumentHelp(
            "Clock speed: 60 plays an hour in a minute; 0 shows every game over (default: 60) [replay.speed, "
                + "NOHIT_REPLAY_SPEED]."))
    var speed: Double?

    @Option(
        help: ArgumentHelp(
            "Retrosheet data: a directory of season folders or zips, a season folder or zip, or event files [retrosheet.data, "
                + "NOHIT_RETROSHEET_DATA]."))
    var data: [String] = []

    @Option(
        help: ArgumentHelp(
            "A JSON configuration file (default: $NOHIT_CONFIG) for the day, speed and data, as serve's.",
            valueName: "file"))
    var config: String?

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 8081

    @Option(help: "The wait hint (metaData.wait, seconds) the feeds carry.")
    var wait = 10

    @Option(
        help: ArgumentHelp(
            "Real seconds from the start to the first pitch (default: a minute of the game clock, at --speed).",
            valueName: "seconds"))
    var lead: Double?

    @Option(
        help: ArgumentHelp(
            "Add synthetic ABS challenges (automated ball-strike, 2026 on) to the day's games, drawn from this seed: "
                + "about four a game, on called pitches, the record's call the call after the review.",
            valueName: "seed"))
    var abs: UInt64?

    func validate() throws {
        if let speed, !(speed >= 0 && speed.isFinite) {
            throw ValidationError("--speed must be 0 or more, not \(speed)")
        }
        if let lead, !(lead >= 0 && lead <= 86_400) {
            throw ValidationError("--lead must be 0 to 86400 seconds, not \(lead)")
        }
        guard (1...300).contains(wait) else { throw ValidationError("--wait must be 1 to 300 seconds, not \(wait)") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535, not \(port)") }
    }

    func run() async throws {
        // The day, speed and data as serve and replay read them: flags, NOHIT_* variables, the file.
        var flags: [String: ConfigContent] = [:]
        if let date { flags["replay.date"] = .string(date) }
        if let speed { flags["replay.speed"] = .double(speed) }
        if !data.isEmpty { flags["retrosheet.data"] = .stringArray(data) }
        let settings = try await Settings.load(flags: flags, file: config)
        let speed = try settings.double("replay.speed", default: ServiceSettings.Replay.serveSpeed)
        guard speed >= 0 && speed.isFinite else { throw ValidationError("the speed must be 0 or more, not \(speed)") }
        guard let date = try settings.string("replay.date"), !date.isEmpty else {
            throw ValidationError(
                "give the day to serve: --date YYYY-MM-DD (or NOHIT_REPLAY_DATE, or replay.date in the file)")
        }
        let places = try settings.strings("retrosheet.data") ?? []
        let games = try ServiceSettings.readDay(date, places: places.isEmpty ? RetrosheetData.defaultPlaces() : places)
        let firstPitch = games.map(\.start).min()!
        let clock: any WallClock =
            speed == 0
            ? ManualWallClock(games.map(\.end).max()!.addingTimeInterval(3600))
            : ScaledWallClock(
                virtualStart: firstPitch.addingTimeInterval(-(lead.map { $0 * speed } ?? 60)), speed: speed)
        let server = FakeStatsAPIServer(
            date: date, games: games, clock: clock, wait: wait, abs: abs.map { SyntheticABS(seed: $0) })
        let router = server.router()
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: server.pushRouter()),
            configuration: .init(address: .hostname(host, port: port), serverName: "nohit-fake-statsapi"),
            onServerRunning: { channel in
                StandardStreams.writeError(
                    "nohit: fake Stats API for \(date) (\(games.count) games) at speed \(speed) on "
                        + "http://\(host):\(channel.localAddress?.port ?? port)/api/\n")
                if let abs {
                    let count = server.absPlans.values.reduce(0) { $0 + $1.challenges.count }
                    StandardStreams.writeError(
                        "nohit: with \(count) synthetic ABS challenges (seed \(abs)): not the day's own; "
                            + "each on a called pitch, the record's call the call after the review\n")
                }
            },
            logger: Logger(label: "nohit.fake-statsapi"))
        do {
            try await app.runService()
        } catch {
            guard let message = SystemErrors.listening(error, host: host, port: port) else { throw error }
            StandardStreams.writeError("nohit: \(message)\n")
            throw ExitCode(2)
        }
    }
}
