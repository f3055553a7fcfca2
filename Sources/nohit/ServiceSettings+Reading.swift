import Alerts
import ArgumentParser
import Assembly
import Configuration
import Deals
import Foundation
import NIOCore
import Retrosheet
import Server
import StatsAPI

/// What `nohit serve` and `nohit replay` both take: the day, its pace, where seasons and deal rules
/// are read, how many requests go out at once.
struct PipelineOptions: ParsableArguments {
    @Option(name: [.customLong("date"), .customLong("replay")], help: Settings.help("replay.date"))
    var date: String?

    @Option(help: Settings.help("replay.speed"))
    var speed: Double?

    @Option(help: Settings.help("retrosheet.data"))
    var data: [String] = []

    @Option(name: .customLong("deals"), help: Settings.help("deals.files"))
    var dealFiles: [String] = []

    @Option(help: Settings.help("delivery.concurrency"))
    var concurrency: Int?

    var flags: [String: ConfigContent] {
        var flags: [String: ConfigContent] = [:]
        if let date { flags["replay.date"] = .string(date) }
        if let speed { flags["replay.speed"] = .double(speed) }
        if !data.isEmpty { flags["retrosheet.data"] = .stringArray(data) }
        if !dealFiles.isEmpty { flags["deals.files"] = .stringArray(dealFiles) }
        if let concurrency { flags["delivery.concurrency"] = .int(concurrency) }
        return flags
    }
}

extension ServiceSettings {
    /// What a command that runs the pipeline reads, everything checked before anything is opened
    /// or written (the day's games read too): `http` for `nohit serve` (nil for `nohit replay`),
    /// `source` from the settings (`nohit replay` always replays, to the day's end).
    static func read(
        _ config: Settings, store: StoreOptions, providers: ProviderOptions, http: HTTP?, ending: Bool
    ) throws -> ServiceSettings {
        let concurrency = try config.int("delivery.concurrency", default: Delivery.defaultConcurrency)
        guard (1...10_000).contains(concurrency) else {
            throw ValidationError("--concurrency must be 1 to 10,000, not \(concurrency)")
        }
        let location = try store.location(config)
        let places = try config.strings("retrosheet.data") ?? []
        var settings = ServiceSettings(
            store: location, source: try source(config, http: http, ending: ending, places: places), http: http,
            delivery: Delivery(concurrency: concurrency),
            retrosheetPlaces: places.isEmpty ? RetrosheetData.defaultPlaces() : places,
            dealRules: try dealRules(config), analytics: try analyticsLimits(config))
        if case .replay(var replay) = settings.source {
            replay.games = try readDay(replay.date, places: settings.retrosheetPlaces)
            settings.source = .replay(replay)
        }
        let read = try providers.settings(config, dataDir: location.dataDir) { line in
            // Flushed at once: the demo's alerts show up even when standard output is a file.
            print("console: \(line)")
            fflush(nil)
        }
        settings.delivery.providers = read.settings
        let starts = try config.int("apns.start-budget", default: StartBudget().starts)
        guard (1...50).contains(starts) else {
            throw ValidationError("apns.start-budget must be 1 to 50 starts an hour, not \(starts)")
        }
        settings.delivery.startBudget = StartBudget(starts: starts, window: 3600)
        settings.delivery.newVAPIDKeyFile = read.newVAPIDKeyFile
        if let url = try config.string("feedback.url") {
            guard let secret = try config.string("feedback.secret") else {
                throw ValidationError(
                    "feedback.url needs its signing secret: NOHIT_FEEDBACK_SECRET (whsec_...), or feedback.secret in "
                        + "the configuration file")
            }
            settings.delivery.feedback = Feedback(url: url, secret: secret)
        }
        return settings
    }

    /// The day's games; each game that cannot be read is said on standard error, and left out.
    static func readDay(_ date: String, places: [String]) throws -> [ReplayGame] {
        let day = try Replay.day(on: date, places: places)
        for error in day.skipped {
            StandardStreams.writeError("nohit: \(date): a game that cannot be read is left out: \(error)\n")
        }
        return day.games
    }

    /// Where games come from: a replayed day (its games read later, with the places), or the Stats API.
    private static func source(_ config: Settings, http: HTTP?, ending: Bool, places: [String]) throws -> Source {
        let name = http == nil ? "replay" : try config.string("source", default: "replay")
        guard ["replay", "statsapi"].contains(name) else {
            throw ValidationError("the source must be replay or statsapi, not '\(name)'")
        }
        if name == "statsapi" {
            let url = try config.string("statsapi.url", default: StatsAPI.mlb)
            let date = try config.string("statsapi.date")
            if let date, date.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) == nil {
                throw ValidationError("the Stats API date must be YYYY-MM-DD, not '\(date)'")
            }
            return .statsAPI(
                StatsAPI(url: url, pushURL: try pushURL(config.string("statsapi.push-url"), statsAPI: url), date: date))
        }
        let speed = try config.double(
            "replay.speed", default: http == nil ? Replay.replaySpeed : Replay.serveSpeed)
        guard speed >= 0 && speed.isFinite else { throw ValidationError("--speed must be 0 or more, not \(speed)") }
        guard let date = try config.string("replay.date") else {
            throw ValidationError(
                "give the day to replay: --date YYYY-MM-DD (or NOHIT_REPLAY_DATE, or replay.date in the file)"
                    + (http == nil ? "" : ", or --source statsapi"))
        }
        return .replay(Replay(date: date, games: [], speed: speed, endsWithTheDay: ending))
    }

    /// The Gameday push's base from its setting: nil for "off" (polling only), the Stats API's
    /// own push when not set.
    static func pushURL(_ setting: String?, statsAPI: String) throws -> String? {
        if setting?.lowercased() == "off" { return nil }
        let url = setting ?? GamedayPushClient.baseURL(forStatsAPI: statsAPI)
        guard let url, let components = URLComponents(string: url),
            ["ws", "wss"].contains(components.scheme?.lowercased() ?? ""), components.host?.isEmpty == false
        else {
            throw ValidationError(
                "statsapi.push-url must be a ws:// or wss:// URL, or off, not '\(setting ?? "derived from \(statsAPI)")'"
            )
        }
        return url
    }

    /// The shipped deal rules and the operator's (`deals.files`), checked: a malformed file stops
    /// the command before anything starts, naming file, rule and reason.
    static func dealRules(_ config: Settings) throws -> [DealRule] {
        do {
            return try DealRuleFile.load(adding: try config.strings("deals.files") ?? [])
        } catch {
            throw ValidationError("deal rules: \(error)")
        }
    }

    /// The Keen API's limits from the settings (`analytics.*`), each checked.
    static func analyticsLimits(_ config: Settings) throws -> AnalyticsLimits {
        var limits = AnalyticsLimits()
        func read(_ key: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
            let read = try config.int(key, default: value)
            guard range.contains(read) else {
                throw ValidationError("\(key) must be \(range.lowerBound) to \(range.upperBound), not \(read)")
            }
            return read
        }
        limits.eventsPerMinutePerKey = try read(
            "analytics.events-per-minute-per-key", limits.eventsPerMinutePerKey, 0...100_000_000)
        limits.eventsPerMinutePerClient = try read(
            "analytics.events-per-minute-per-client", limits.eventsPerMinutePerClient, 0...100_000_000)
        limits.queriesPerMinutePerKey = try read(
            "analytics.queries-per-minute-per-key", limits.queriesPerMinutePerKey, 0...1_000_000)
        limits.queriesPerMinutePerClient = try read(
            "analytics.queries-per-minute-per-client", limits.queriesPerMinutePerClient, 0...1_000_000)
        limits.querySeconds = Double(try read("analytics.query-seconds", Int(limits.querySeconds), 1...300))
        limits.queryMemoryBytes =
            try read("analytics.query-memory-mb", limits.queryMemoryBytes / 1_048_576, 16...65_536) * 1_048_576
        limits.concurrentQueries = try read("analytics.concurrent-queries", limits.concurrentQueries, 1...256)
        limits.bodyBytesInFlight =
            try read("analytics.body-mb-in-flight", limits.bodyBytesInFlight / 1_048_576, 10...4096) * 1_048_576
        limits.propertiesPerCollection = try read(
            "analytics.properties-per-collection", limits.propertiesPerCollection, 10...1_000_000)
        limits.collectionsPerProject = try read(
            "analytics.collections-per-project", limits.collectionsPerProject, 1...1_000_000)
        limits.savedQueriesPerProject = try read(
            "analytics.saved-queries-per-project", limits.savedQueriesPerProject, 1...1_000_000)
        limits.datasetsPerProject = try read("analytics.datasets-per-project", limits.datasetsPerProject, 1...100_000)
        return limits
    }
}

extension ServiceSettings.HTTP {
    /// `nohit serve`'s HTTP settings, each checked.
    static func read(_ config: Settings) throws -> ServiceSettings.HTTP {
        var http = ServiceSettings.HTTP()
        http.host = try config.string("http.host", default: http.host)
        http.port = try config.int("http.port", default: http.port)
        guard (0...65_535).contains(http.port) else {
            throw ValidationError("the port must be 0 to 65535, not \(http.port)")
        }
        http.adminToken = try adminToken(
            given: try config.string("admin.token"), file: try config.string("admin.token-file"))
        http.limits = try limits(config)
        http.registrationsPerMinute = try config.int(
            "http.registrations-per-minute", default: http.registrationsPerMinute)
        guard (0...100_000).contains(http.registrationsPerMinute) else {
            throw ValidationError(
                "registrations per minute must be 0 to 100000, not \(http.registrationsPerMinute)")
        }
        http.webFolder = try checkedWebFolder()
        let metricsText = try config.string("http.metrics", default: http.metricsAccess.rawValue)
        guard let metricsAccess = MetricsAccess(rawValue: metricsText) else {
            throw ValidationError(
                "http.metrics must be \(MetricsAccess.allCases.map(\.rawValue).joined(separator: ", ")), not "
                    + "'\(metricsText)'")
        }
        http.metricsAccess = metricsAccess
        if metricsAccess == .token && (http.adminToken ?? "").isEmpty {
            throw ValidationError(
                "http.metrics token needs an admin token (--admin-token-file, NOHIT_ADMIN_TOKEN or --admin-token)")
        }
        http.keepFinishedMinutes = try config.int("scoreboard.keep-finished-minutes", default: http.keepFinishedMinutes)
        guard (0...1440).contains(http.keepFinishedMinutes) else {
            throw ValidationError("minutes a finished game stays must be 0 to 1440, not \(http.keepFinishedMinutes)")
        }
        return http
    }

    /// The operator's token: given as a setting, or the first line of a file (so that it is not
    /// in the process list, as a flag's value is). Not both; never empty.
    static func adminToken(given: String?, file: String?) throws -> String? {
        guard let file else {
            if let given, given.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw ValidationError(
                    "the admin token is empty: give one, or leave admin.token out to close /api/admin")
            }
            return given
        }
        guard given == nil else {
            throw ValidationError("give the admin token once: admin.token-file or admin.token, not both")
        }
        // A token others may read is no secret: said at start (not refused: a container engine's
        // secrets are often 0444, root's, and cannot be changed from inside). The file a link
        // leads to is the one read (Kubernetes mounts secrets as links).
        let target = URL(fileURLWithPath: file).resolvingSymlinksInPath().path
        if let mode = (try? FileManager.default.attributesOfItem(atPath: target))?[.posixPermissions] as? Int,
            mode & 0o077 != 0
        {
            StandardStreams.writeError(
                "nohit: warning: the admin token file \(target) may be read by other users of this machine (mode "
                    + "\(String(mode & 0o777, radix: 8))): chmod 600 it, or mount it with mode 0400\n")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError(
                "cannot read the admin token file \(file): \((error as NSError).localizedDescription)")
        }
        let token =
            String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !token.isEmpty else {
            throw ValidationError("the admin token file \(file) is empty: its first line is the token")
        }
        return token
    }

    /// The connection limits from the settings, each checked.
    static func limits(_ config: Settings) throws -> ConnectionLimits {
        var limits = ConnectionLimits()
        func read(_ key: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
            let read = try config.int(key, default: value)
            guard range.contains(read) else {
                throw ValidationError("\(key) must be \(range.lowerBound) to \(range.upperBound), not \(read)")
            }
            return read
        }
        func seconds(_ amount: TimeAmount) -> Int { Int(amount.nanoseconds / 1_000_000_000) }
        limits.maxConnections = try read("http.max-connections", limits.maxConnections, 1...1_000_000)
        limits.maxConnectionsPerClient = try read(
            "http.max-connections-per-client", limits.maxConnectionsPerClient, 0...1_000_000)
        limits.headerTimeout = .seconds(Int64(try read("http.header-timeout", seconds(limits.headerTimeout), 1...3600)))
        limits.idleTimeout = .seconds(Int64(try read("http.idle-timeout", seconds(limits.idleTimeout), 1...86_400)))
        limits.bodyTimeout = .seconds(Int64(try read("http.body-timeout", seconds(limits.bodyTimeout), 1...3600)))
        limits.minimumBodyRate = try read("http.minimum-body-rate", limits.minimumBodyRate, 1...100_000_000)
        limits.maxStreams = try read("http.max-streams", limits.maxStreams, 0...1_000_000)
        limits.backlog = try read("http.backlog", limits.backlog, 1...65_535)
        limits.abusePenalty = .seconds(Int64(try read("http.abuse-penalty", seconds(limits.abusePenalty), 0...86_400)))
        let headerText = try config.string("proxy.header", default: TrustedProxies.Header.xForwardedFor.rawValue)
        guard let header = TrustedProxies.Header(rawValue: headerText.lowercased()) else {
            throw ValidationError(
                "proxy.header must be \(TrustedProxies.Header.allCases.map(\.rawValue).joined(separator: " or ")), "
                    + "not '\(headerText.prefix(40))'")
        }
        do {
            limits.trustedProxies = try TrustedProxies(try config.strings("proxy.trusted") ?? [], header: header)
        } catch {
            throw ValidationError("\(error)")
        }
        return limits
    }

    /// `$NOHIT_WEB_FOLDER`: a folder to serve the web app from instead of the bundled files,
    /// checked before anything is started.
    static func checkedWebFolder() throws -> String? {
        guard let folder = ProcessInfo.processInfo.environment["NOHIT_WEB_FOLDER"] else { return nil }
        guard FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("index.html")) else {
            throw ValidationError(
                "NOHIT_WEB_FOLDER: no index.html in '\(folder)' (Sources/Server/Public is the web app)")
        }
        return folder
    }
}
