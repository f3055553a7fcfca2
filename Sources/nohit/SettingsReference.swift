import ArgumentParser
import Assembly
import NIOCore
import Pipeline
import Server

/// One setting: its key (the file's nested objects, the `NOHIT_*` variable), the flag that sets
/// it and the commands that take that flag, and what it does. The one list the flags' help, the
/// file's check and `docs/configuration.md` (`nohit settings --markdown`) are made from.
struct Setting: Sendable {
    var key: String
    /// Without the leading dashes; nil: the file or the environment only.
    var flag: String?
    var commands: [String]
    var help: String
    var valueName: String?

    init(_ key: String, _ flag: String?, _ commands: [String], _ help: String, valueName: String? = nil) {
        self.key = key
        self.flag = flag
        self.commands = commands
        self.help = help
        self.valueName = valueName
    }
}

extension Settings {
    /// The defaults the reference quotes, from where each lives.
    private static let http = ServiceSettings.HTTP()
    private static let limits = ConnectionLimits()
    private static let analytics = AnalyticsLimits()
    private static func seconds(_ amount: TimeAmount) -> Int { Int(amount.nanoseconds / 1_000_000_000) }

    static let withStore = ["serve", "replay", "devices", "analytics"]
    static let pipeline = ["serve", "replay"]

    /// Every setting, in the order the reference lists them.
    static let reference: [Setting] = [
        // The HTTP server.
        Setting(
            "http.host", "host", ["serve"], "Address to listen on (default: \(http.host); 0.0.0.0 for every interface)."
        ),
        Setting("http.port", "port", ["serve"], "Port to listen on (default: \(http.port); 0 picks a free one)."),
        Setting(
            "http.max-connections", "max-connections", ["serve"],
            "Open connections in all (default: \(limits.maxConnections), lowered to the open-file limit less \(limits.fileDescriptorReserve); `serve` first raises its soft open-file limit to the hard one and logs both)."
        ),
        Setting(
            "http.max-connections-per-client", "max-connections-per-client", ["serve"],
            "Open connections from one client, an IPv4 address or IPv6 /64, and the most live streams it may hold "
                + "however many HTTP/2 streams they come on: one more is 429 over SSE, 1013 over the WebSocket "
                + "(default: \(limits.maxConnectionsPerClient); 0: no limit)."),
        Setting(
            "http.header-timeout", "header-timeout", ["serve"],
            "Seconds a new connection has to send its first request head (default: \(seconds(limits.headerTimeout)))."),
        Setting(
            "http.idle-timeout", "idle-timeout", ["serve"],
            "Seconds a connection may stay open with no request in progress (default: \(seconds(limits.idleTimeout)))."),
        Setting(
            "http.body-timeout", nil, ["serve"],
            "Seconds a request body may take before its pace is looked at; after them it must have come at "
                + "`http.minimum-body-rate` or its connection is closed (default: \(seconds(limits.bodyTimeout)))."),
        Setting(
            "http.minimum-body-rate", nil, ["serve"],
            "Bytes a second a request body must average after `http.body-timeout` (default: \(limits.minimumBodyRate))."
        ),
        Setting(
            "http.max-streams", "max-streams", ["serve"],
            "Live-stream clients, SSE and WebSocket together (default: \(limits.maxStreams))."),
        Setting(
            "http.backlog", "backlog", ["serve"],
            "Connections waiting to be accepted, the listen backlog (default: \(limits.backlog); the kernel's somaxconn caps it)."
        ),
        Setting(
            "http.abuse-penalty", "abuse-penalty", ["serve"],
            "Seconds a client's new connections are refused after 5 protocol errors within a minute: unreadable "
                + "requests, HTTP/2 connections closed for abuse (default: \(seconds(limits.abusePenalty)); 0: never, as behind a proxy)."
        ),
        Setting(
            "http.registrations-per-minute", "registrations-per-minute", ["serve"],
            "Device registrations per client per minute, bursts of twice that (default: \(http.registrationsPerMinute); 0: no limit)."
        ),
        Setting(
            "http.metrics", "metrics", ["serve"],
            "Who may read /metrics: loopback (the default: clients on 127.0.0.0/8 and ::1, as Prometheus on this "
                + "host), token (with the admin token as a Bearer token, as Prometheus' authorization sends it), "
                + "open, or off."),
        Setting(
            "proxy.trusted", "trusted-proxies", ["serve"],
            "The reverse proxies in front (addresses or networks, such as 127.0.0.1 or 10.0.0.0/8; a list, "
                + "comma-separated as a flag or variable): a request from one is counted against the client its "
                + "`proxy.header` names (the right-most address not itself a trusted proxy) in every per-client "
                + "limit and log line, and the proxy's own connections have no per-client cap; from any other "
                + "peer the header is ignored (default: none).", valueName: "list"),
        Setting(
            "proxy.header", nil, ["serve"],
            "The header the trusted proxies set: x-forwarded-for (nginx's `$proxy_add_x_forwarded_for`) or "
                + "forwarded (RFC 7239's `for=`) (default: x-forwarded-for)."),
        Setting(
            "admin.token", "admin-token", ["serve"],
            "The operator's token for /api/admin/... (none closes them). A flag's value is visible to other users "
                + "in the process list: prefer admin.token-file or NOHIT_ADMIN_TOKEN."),
        Setting(
            "admin.token-file", "admin-token-file", ["serve"],
            "A file holding the operator's token (its first line; not with admin.token); keep it readable by its "
                + "owner only.", valueName: "file"),
        Setting(
            "scoreboard.keep-finished-minutes", "keep-finished-minutes", ["serve"],
            "Minutes a finished game of the day before stays on the default scoreboard (default: \(http.keepFinishedMinutes); its games "
                + "still under way stay until they end)."),
        // Where games come from.
        Setting(
            "source", "source", ["serve"],
            "Where live games come from: replay (a Retrosheet day, replay.date) or statsapi (MLB's Stats API; "
                + "default: replay)."),
        Setting(
            "statsapi.url", "statsapi-url", ["serve"],
            "The Stats API's base URL, for source statsapi (default: https://statsapi.mlb.com/api/; a "
                + "`nohit fake-statsapi` for tests)."),
        Setting(
            "statsapi.push-url", "statsapi-push-url", ["serve"],
            "The Gameday push's base URL (a WebSocket per game; a message brings the game's request forward), or "
                + "off to poll only (default: wss://ws.statsapi.mlb.com/api/ for MLB's Stats API, the same host's "
                + "ws:// or wss:// for another)."),
        Setting(
            "statsapi.date", "statsapi-date", ["serve"],
            "With source statsapi: follow this official date (YYYY-MM-DD) instead of today's (a fake Stats API's "
                + "day)."),
        Setting(
            "replay.date", "date", pipeline + ["fake-statsapi"],
            "The day to replay as live (YYYY-MM-DD; serve also takes --replay)."),
        Setting(
            "replay.speed", "speed", pipeline + ["fake-statsapi"],
            "Clock speed: 60 plays an hour in a minute; 0 runs as fast as possible (default: "
                + "\(Int(ServiceSettings.Replay.serveSpeed)) for serve, \(Int(ServiceSettings.Replay.replaySpeed)) for "
                + "replay)."),
        Setting(
            "retrosheet.data", "data", pipeline + ["fake-statsapi"],
            "Retrosheet data: a directory of season folders or of Retrosheet's season zips (the hall of fame "
                + "reads <dir>/<season> or <dir>/<season>eve.zip), a season folder or zip, or event files; a list "
                + "(default: Data/retrosheet, the bundled 2020 season)."),
        Setting(
            "deals.files", "deals", pipeline,
            "Deal rule files added to the shipped rules (Data/deals/rules.json); a list. A malformed one stops "
                + "the start with file, rule and reason.", valueName: "file"),
        // The database.
        Setting(
            "store.data-dir", "data-dir", withStore,
            "Directory for the database and the service's keys (default: \(StoreLocation.defaultDataDir))."),
        Setting(
            "store.database", "database", withStore,
            "The database: an SQLite file (default: <data-dir>/nohit.sqlite), or postgres://user@host/db for "
                + "several instances sharing one PostgreSQL database.", valueName: "file-or-url"),
        Setting(
            "store.secrets-key", "secrets-key", withStore,
            "The key that seals stored secrets (webhook and Web Push), 32 bytes base64 in a file kept apart from "
                + "the database (default: secrets.key beside it; created only while the database holds no sealed "
                + "secret). Instances sharing a PostgreSQL database must all be given the same key.",
            valueName: "file"),
        Setting(
            "store.instance-id", "instance-id", withStore,
            "This instance's name among those sharing a PostgreSQL database (default: host, process id, random)."),
        Setting(
            "store.lease-seconds", "lease-seconds", withStore,
            "PostgreSQL: how long a game followed or a delivery being sent stays an instance's without a renewal "
                + "(default: \(StoreLocation.defaultLeaseSeconds) s; renewed every quarter of it). A stopped instance's games are taken over, and its "
                + "deliveries in doubt sent again, this long after its last renewal."),
        // Delivery.
        Setting(
            "delivery.concurrency", "concurrency", pipeline,
            "Requests in flight per channel (default: \(ServiceSettings.Delivery.defaultConcurrency))."),
        Setting(
            "delivery.request-timeout", "request-timeout", pipeline,
            "Deadline of each provider request, in seconds (default: 10)."),
        Setting(
            "delivery.stale-after-minutes", "stale-after-minutes", pipeline,
            "Minutes after its moment that an alert is still worth sending, by the service's clock (a replay's "
                + "runs at its speed): its apns-expiration and Web Push TTL, and no retry after it (default: \(Int(ProviderSettings.defaultStaleAfter / 60)))."
        ),
        Setting(
            "delivery.allow-private-networks", "allow-private-networks", pipeline,
            "Allow webhook and Web Push URLs into loopback and private networks (default: no; --no-allow-private-"
                + "networks turns it off): at registration, and when connecting (the addresses a name resolves "
                + "to are checked)."),
        Setting(
            "apns.fake", "fake-apns", pipeline,
            "A directory written by `nohit fake-apns`: use that fake APNs (its URL, CA and key). `nohit fake-apns` "
                + "writes there when not given --dir.", valueName: "dir"),
        Setting(
            "apns.url", "apns-url", pipeline,
            "APNs base URL for both environments (default: Apple's, https://api.push.apple.com and "
                + "https://api.sandbox.push.apple.com)."),
        Setting(
            "apns.key", "apns-key", pipeline,
            "The APNs provider key (.p8), from your Apple Developer account (Certificates, Identifiers & Profiles "
                + "> Keys); with its key id and team id.", valueName: "file"),
        Setting(
            "apns.key-id", "apns-key-id", pipeline,
            "The APNs key id: 10 letters and digits, shown beside the key in the developer account."),
        Setting(
            "apns.team-id", "apns-team-id", pipeline,
            "The APNs team id: 10 letters and digits, under Membership details in the developer account."),
        Setting(
            "apps.file", "apps", withStore,
            "The apps this server sends to (several on one server): a JSON file {\"apps\": [{\"id\", \"topic\" "
                + "(the bundle id), \"environment\" (a device's default), \"apns\": {\"key\", \"key-id\", \"team-id\"} "
                + "(another team's key), \"web-origin\" (its web page's origin, allowed across origins)}]}. With "
                + "apps declared, a device registers for one of them "
                + "(`devices add --app ID`; the API's topic must be one of theirs).", valueName: "file"),
        Setting(
            "apns.transport", "apns-transport", pipeline,
            "How APNs requests travel: http2 (the lean client, default) or async-http-client (under a "
                + "heavily loaded machine its HTTP/2 requests have twice stalled once the connection's "
                + "flow-control window ran out: a known, intermittent fault, so http2 is the default)."),
        Setting(
            "apns.connections", "apns-connections", pipeline,
            "HTTP/2 connections per APNs host, http2 transport (default: 8)."),
        Setting(
            "apns.broadcast", nil, pipeline,
            "Broadcast channels for the apps' Live Activities (iOS 18): true (default) makes a channel per followed "
                + "bid and delay, broadcasts each change on it and names it in push-to-start; false updates each "
                + "activity by its own token (turn it off for an app without the Broadcast capability); the "
                + "channels made while it was on are still broadcast on and deleted after their games."),
        Setting(
            "apns.start-budget", nil, pipeline,
            "Live Activities started by push on one device in any hour, 1 to 50 (default: 8, under Apple's "
                + "undocumented budget of about ten): a start past it waits for the budget, and is dropped, said, "
                + "if its bid is over by then."),
        Setting(
            "apns.trust-ca", "trust-ca", pipeline, "Also trust this certificate authority (PEM); a list.",
            valueName: "file"),
        Setting(
            "vapid.key", "vapid-key", pipeline,
            "The Web Push VAPID key (PEM; default: <data-dir>/vapid.pem, created at the first start; refused "
                + "when missing while Web Push subscriptions exist). Back it up and never replace it: browsers' "
                + "subscriptions are bound to it.", valueName: "file"),
        Setting(
            "vapid.subject", "vapid-subject", pipeline,
            "The VAPID subject: a mailto: or https: contact (default: mailto:operator@localhost)."),
        Setting(
            "webpush.transport", "web-push-transport", pipeline,
            "How Web Push requests travel: http2 (the lean client, a pool per push service; a service without "
                + "HTTP/2 is reached over HTTP/1.1 for an hour, then asked again; default) or http1."),
        Setting(
            "feedback.url", "feedback-url", pipeline,
            "The operator's feedback hook (as gorush's): an https URL told once of every device a provider said is "
                + "gone (pruned), signed as Standard Webhooks with feedback.secret: {\"type\": \"device.pruned\", "
                + "\"data\": {device_id, channel, address, reason, pruned_at}}; sent until it answers 2xx, under one "
                + "webhook-id."),
        Setting(
            "feedback.secret", nil, pipeline,
            "The feedback hook's signing secret (whsec_ and the base64 of 24 to 64 bytes); in the environment or "
                + "the file only."),
        Setting(
            "log.level", "log-level", pipeline,
            "Log level: trace, debug, info, notice (default), warning, error or critical."),
        // The Keen API's limits: in the file or the environment only.
        Setting(
            "analytics.events-per-minute-per-key", nil, ["serve"],
            "Keen events accepted per write key per minute, in bursts of a sixth of that (default: \(analytics.eventsPerMinutePerKey); 0: no "
                + "limit)."),
        Setting(
            "analytics.events-per-minute-per-client", nil, ["serve"],
            "Keen events accepted per client per minute, in bursts of a sixth of that (default: \(analytics.eventsPerMinutePerClient); 0: no "
                + "limit)."),
        Setting(
            "analytics.queries-per-minute-per-key", nil, ["serve"],
            "Keen queries per read key per minute (default: \(analytics.queriesPerMinutePerKey); 0: no limit)."),
        Setting(
            "analytics.queries-per-minute-per-client", nil, ["serve"],
            "Keen queries per client per minute (default: \(analytics.queriesPerMinutePerClient); 0: no limit)."),
        Setting(
            "analytics.query-seconds", nil, ["serve"],
            "Seconds a Keen query may run before it stops itself with Keen's timeout error (default: \(Int(analytics.querySeconds)))."
        ),
        Setting(
            "analytics.query-memory-mb", nil, ["serve"],
            "Megabytes a Keen query may hold before it stops itself (default: \(analytics.queryMemoryBytes / 1_048_576))."
        ),
        Setting(
            "analytics.concurrent-queries", nil, ["serve"],
            "Keen queries running at once (default: the cores less one); a free turn goes to the waiting query of "
                + "the project's client served least recently, and a query gives its turn to another client's after "
                + "20 ms."),
        Setting(
            "analytics.body-mb-in-flight", nil, ["serve"],
            "Megabytes of Keen request bodies being read at once, all clients together, a quarter of them (or "
                + "the largest batch) from one client; each body's bytes are counted as they come (default: \(analytics.bodyBytesInFlight / 1_048_576))."
        ),
        Setting(
            "analytics.properties-per-collection", nil, ["serve"],
            "Distinct property names an event collection may hold: an event bringing one more is refused alone, "
                + "InvalidPropertyNameError (default: \(analytics.propertiesPerCollection))."),
        Setting(
            "analytics.collections-per-project", nil, ["serve"],
            "Event collections a project may hold: an event for one more is refused alone (default: \(analytics.collectionsPerProject))."
        ),
        Setting(
            "analytics.saved-queries-per-project", nil, ["serve"],
            "Saved queries a project may hold; one more is refused (default: \(analytics.savedQueriesPerProject))."),
        Setting(
            "analytics.datasets-per-project", nil, ["serve"],
            "Cached datasets a project may hold; one more is refused (default: \(analytics.datasetsPerProject))."),
    ]

    /// The help of the flag that sets `key`.
    static func help(_ key: String) -> ArgumentHelp {
        guard let setting = reference.first(where: { $0.key == key }) else {
            preconditionFailure("\(key) is not a settings key")
        }
        return ArgumentHelp(
            "\(setting.help) [\(key), \(environmentName(key))]", valueName: setting.valueName)
    }

    /// `docs/configuration.md`, as `nohit settings --markdown` prints it.
    static var markdown: String {
        var lines = [
            "# Configuration reference",
            "",
            "<!-- Made by `nohit settings --markdown` from the code's own list; a test checks this file against it. -->",
            "",
            "`serve`, `replay`, `devices` and `analytics` read each setting from its flag, then its `NOHIT_*`",
            "environment variable (the key in capitals, `.` and `-` as `_`), then a JSON file given by `--config FILE`",
            "or `$NOHIT_CONFIG` (the key as nested objects: `http.port` is `{\"http\": {\"port\": 8080}}`), then the",
            "default. A value in the wrong form, or an unknown key in the file, is an error naming the key and where",
            "it may be set — never a silent default. A list is an array in the file and comma-separated in the",
            "environment. Without `retrosheet.data`, the seasons are read from `$NOHIT_RETROSHEET`, else",
            "`Data/retrosheet` (the bundled 2020 season) in the working directory.",
            "",
            "| key | flag | environment | what it sets |",
            "|---|---|---|---|",
        ]
        for setting in reference {
            let flag =
                setting.flag.map { "`--\($0)` (\(setting.commands.joined(separator: ", ")))" }
                ?? "(file or environment only)"
            let help = setting.help.replacing("|", with: "\\|")
            lines.append("| `\(setting.key)` | \(flag) | `\(environmentName(setting.key))` | \(help) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// `nohit settings`: every setting, its flag, variable and meaning.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "List every setting: its key, flag, NOHIT_* variable and what it sets.")

    @Flag(help: "Print docs/configuration.md (a Markdown table).") var markdown = false

    func run() throws {
        if markdown {
            print(Settings.markdown, terminator: "")
            return
        }
        for setting in Settings.reference {
            let flag = setting.flag.map { "--\($0) (\(setting.commands.joined(separator: ", ")))" } ?? "(no flag)"
            print("\(setting.key)  \(flag)  \(Settings.environmentName(setting.key))")
            print("    \(setting.help)")
        }
    }
}

struct OpenAPICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract: "Print the API's OpenAPI 3.1 document, as GET /openapi.json serves it (or docs/api.md).")

    @Flag(help: "Print docs/api.md: every endpoint and schema in Markdown.") var markdown = false

    func run() throws {
        if markdown {
            print(OpenAPIReference.markdown(), terminator: "")
        } else {
            print(String(decoding: OpenAPIDocument.served, as: UTF8.self))
        }
    }
}
