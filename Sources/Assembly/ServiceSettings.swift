import Alerts
import Clocks
import Deals
import Foundation
import Pipeline
import Retrosheet
import Server

/// Everything the service is built from, read and checked before anything is opened: where its
/// state is kept, where games come from, the HTTP server (none for `nohit replay`), delivery, the
/// deal rules and the Keen API's limits. An immutable value: ``NoHitService/withService(_:hooks:_:)``
/// builds the whole service from it, and nothing is configured afterwards. Each default lives
/// here, once: `nohit serve` falls back to these values for the settings it is not given, and the
/// reference (`nohit settings`) quotes them.
package struct ServiceSettings: Sendable {
    package var store: StoreLocation
    package var source: Source
    /// The HTTP API, web app and live stream; nil runs the pipeline alone (`nohit replay`).
    package var http: HTTP?
    package var delivery: Delivery
    /// Where Retrosheet seasons are read (the hall of fame, standings, odds, what a no-hitter means).
    package var retrosheetPlaces: [String]
    package var dealRules: [DealRule]
    package var analytics: AnalyticsLimits

    package init(
        store: StoreLocation, source: Source, http: HTTP? = nil, delivery: Delivery = Delivery(),
        retrosheetPlaces: [String] = RetrosheetData.defaultPlaces(), dealRules: [DealRule] = [],
        analytics: AnalyticsLimits = AnalyticsLimits()
    ) {
        self.store = store
        self.source = source
        self.http = http
        self.delivery = delivery
        self.retrosheetPlaces = retrosheetPlaces
        self.dealRules = dealRules
        self.analytics = analytics
    }

    /// Where live games come from.
    package enum Source: Sendable {
        /// A past day's Retrosheet games, played on a clock as if live.
        case replay(Replay)
        /// MLB's Stats API (or a `nohit fake-statsapi`), polled, with the Gameday push.
        case statsAPI(StatsAPI)
        /// Whoever built the service says what happens (``NoHitService/hub``), on this clock:
        /// benchmarks and tests that drive the games themselves.
        case driven(clock: any WallClock)

        /// `replay` or `statsapi`, as the page's data notice and `/readyz` name it.
        package var name: String {
            switch self {
            case .replay, .driven: "replay"
            case .statsAPI: "statsapi"
            }
        }
    }

    /// A replayed day.
    package struct Replay: Sendable {
        /// `nohit serve` plays an hour in a minute; `nohit replay` as fast as it can.
        package static let serveSpeed = 60.0
        package static let replaySpeed = 0.0

        package var date: String
        /// The day's games, read before anything is opened (a day that cannot be read leaves
        /// nothing behind).
        package var games: [ReplayGame]
        /// 60 plays an hour in a minute; 0 runs as fast as possible.
        package var speed: Double
        /// Whether the service ends once the day is over and every alert is sent (`nohit replay`),
        /// or goes on serving (`nohit serve`).
        package var endsWithTheDay: Bool

        package init(date: String, games: [ReplayGame], speed: Double, endsWithTheDay: Bool) {
            self.date = date
            self.games = games
            self.speed = speed
            self.endsWithTheDay = endsWithTheDay
        }
    }

    /// MLB's Stats API.
    package struct StatsAPI: Sendable {
        package static let mlb = "https://statsapi.mlb.com/api/"

        package var url: String
        /// The Gameday push's base; nil polls only.
        package var pushURL: String?
        /// The official date to follow instead of today's (a fake Stats API's day).
        package var date: String?

        package init(url: String = StatsAPI.mlb, pushURL: String?, date: String? = nil) {
            self.url = url
            self.pushURL = pushURL
            self.date = date
        }
    }

    /// The HTTP server.
    package struct HTTP: Sendable {
        package var host = "127.0.0.1"
        package var port = 8080
        package var limits = ConnectionLimits()
        /// Device registrations per client per minute (bursts of twice that); 0: no limit.
        package var registrationsPerMinute = APIServer.Options.defaultRegistrationsPerMinute
        package var metricsAccess = MetricsAccess.standard
        /// The operator's token for `/api/admin/...`; none closes them.
        package var adminToken: String?
        /// Minutes a finished game of the day before stays on the default scoreboard.
        package var keepFinishedMinutes = APIServer.Options.defaultKeepFinishedMinutes
        /// A folder to serve the web app from instead of the bundled files (work on the web app).
        package var webFolder: String?
        /// Event-loop threads for the server's connections; nil: one per core (NIO's shared group).
        package var threads: Int?

        package init() {}
    }

    /// Delivery.
    package struct Delivery: Sendable {
        /// Requests in flight per channel.
        package static let defaultConcurrency = DispatchMachine.Settings().concurrency

        package var concurrency = Delivery.defaultConcurrency
        /// How to reach the push providers; nil builds no channel (moments are stored and planned,
        /// nothing is sent: benchmarks of the stream).
        package var providers: ProviderSettings?
        /// The operator's feedback hook, told of every pruned device.
        package var feedback: Feedback?
        /// Where the providers' VAPID key is written once the store is open, when it is a new key
        /// (a first start): nothing is written before the settings have all been checked.
        package var newVAPIDKeyFile: String?
        /// The broadcast channels' limit and timings (made when APNs has a key).
        package var broadcasts = BroadcastChannels.Settings()
        /// How many Live Activities are started by push on one device, and how often.
        package var startBudget = StartBudget()

        package init(concurrency: Int = Delivery.defaultConcurrency, providers: ProviderSettings? = nil) {
            self.concurrency = concurrency
            self.providers = providers
        }
    }

    /// The feedback hook's address and signing secret.
    package struct Feedback: Sendable {
        package var url: String
        package var secret: String

        package init(url: String, secret: String) {
            self.url = url
            self.secret = secret
        }
    }
}

/// Where Retrosheet seasons are found when none are named.
package enum RetrosheetData {
    /// The first of `$NOHIT_RETROSHEET`, the 2020 season bundled with the project
    /// (`Data/retrosheet`, with Retrosheet's notice, found as `ShippedData` says) and
    /// `../shared/data/retrosheet` that exists.
    package static func defaultPlaces() -> [String] {
        let candidates =
            [ProcessInfo.processInfo.environment["NOHIT_RETROSHEET"]].compactMap { $0 } + [
                ShippedData.path("Data/retrosheet"), "../shared/data/retrosheet",
            ]
        return [candidates.first { FileManager.default.fileExists(atPath: $0) } ?? "Data/retrosheet"]
    }
}

extension ServiceSettings.Replay {
    /// The day's Retrosheet games from `places` (those that cannot be read left out: ``day(on:places:)``
    /// says which).
    package static func games(on date: String, places: [String]) throws -> [ReplayGame] {
        try day(on: date, places: places).games
    }

    /// The day's Retrosheet games from `places`, read before anything is opened or written: a day
    /// that cannot be read leaves nothing behind.
    package static func day(on date: String, places: [String]) throws -> ReplaySchedule.Day {
        let missing = places.filter { !FileManager.default.fileExists(atPath: $0) }
        guard missing.isEmpty else {
            throw StartError(
                "no Retrosheet data at \(missing.joined(separator: ", ")) (from "
                    + "\(FileManager.default.currentDirectoryPath)); the 2020 season that comes with nohit is "
                    + "Data/retrosheet in its source directory: run nohit from there, or pass --data DIR "
                    + "(a directory of season folders; NOHIT_RETROSHEET_DATA), or set NOHIT_RETROSHEET to that "
                    + "directory")
        }
        do {
            return try ReplaySchedule.day(on: date, data: places)
        } catch {
            throw StartError("\(error)")
        }
    }
}
