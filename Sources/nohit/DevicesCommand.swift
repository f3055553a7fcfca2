import Alerts
import ArgumentParser
import Delivery
import Foundation

/// `nohit devices`: register devices from the command line (the demo, tests, benchmarks).
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Register and count devices.",
        subcommands: [Add.self, Seed.self, List.self]
    )

    /// The demo app's bundle id: the default topic of devices registered here.
    static let demoTopic = "com.example.nohit"

    /// A refused registration in the command's words: the flag, not the API's field.
    static func describe(_ error: RegistrationError) -> String {
        let flags = [
            "preferences.threshold_innings": "--threshold",
            "preferences.favourite_threshold_innings":
                "--favourite-threshold", "preferences.favourite_teams": "--favourite",
            "preferences.spoiler_delay_seconds": "--spoiler-delay", "preferences.quiet_hours": "--quiet-hours",
            "preferences.quiet_hours.time_zone": "--quiet-hours", "preferences.deals": "--deal",
            "preferences.min_odds": "--min-odds",
            "token": "the token",
            "topic": "--topic", "endpoint": "--web-push", "p256dh": "--p256dh", "auth": "--auth", "url": "--webhook",
            "secret": "--webhook-secret", "label": "--console", "game_id": "--game-id",
            "pitching_team": "--pitching-team",
        ]
        return "\(flags[error.field] ?? error.field) \(error.reason)"
    }

    /// An APNs environment named on the command line (default: production, as the API's).
    static func environment(_ name: String?) throws -> APNsEnvironment {
        guard let name else { return .byDefault }
        guard let environment = APNsEnvironment(name: name) else {
            throw ValidationError(
                "--environment must be sandbox (debug builds from Xcode; development, the entitlement's name for "
                    + "it, is read as sandbox) or production (TestFlight, App Store), not '\(name)'")
        }
        return environment
    }

    /// `--updates`: how an activity started by push hears the bid (channel when not given).
    static func updates(_ name: String?) throws -> ActivityUpdates {
        guard let name else { return .channel }
        guard let updates = ActivityUpdates(rawValue: name) else {
            throw ValidationError(
                "--updates must be channel (iOS 18: the bid's broadcast channel) or token (iOS 17.2-17.x: the "
                    + "activity's own token), not '\(name)'")
        }
        return updates
    }

    /// The preference flags shared by `add` and `seed`.
    struct PreferenceOptions: ParsableArguments {
        @Option(help: "Alert once a bid is hitless through this many complete innings (4-9).")
        var threshold = 6

        @Option(help: "A favourite team (Retrosheet code, e.g. CHA); repeat for more.")
        var favourite: [String] = []

        @Option(help: "The threshold for favourite teams' games (4-9).")
        var favouriteThreshold = 4

        @Option(help: "once-per-bid, every-inning or every-out-in-ninth.")
        var frequency = Preferences.Frequency.everyInning.rawValue

        @Option(help: ArgumentHelp("Quiet hours, e.g. 23:00-08:00@America/Chicago.", valueName: "hh:mm-hh:mm@zone"))
        var quietHours: String?

        @Option(help: "Hold each alert this many seconds (0-300).")
        var spoilerDelay = 0

        @Flag(help: "Never spell out the word.")
        var jinxSafe = false

        @Option(help: "A deal rule id to get an alert for when it triggers; repeat for more.")
        var deal: [String] = []

        @Option(
            help: ArgumentHelp(
                "Alert when the odds of history pass this share (0.25: a quarter of such bids since 1950 "
                    + "ended as no-hitters), at the first out they do, instead of at --threshold.",
                valueName: "share"))
        var minOdds: Double?

        func preferences() throws -> Preferences {
            var preferences = Preferences()
            preferences.thresholdInnings = threshold
            preferences.favouriteTeams = favourite.map { $0.uppercased() }
            preferences.favouriteThresholdInnings = favouriteThreshold
            guard let frequency = Preferences.Frequency(rawValue: frequency) else {
                throw ValidationError("--frequency must be once-per-bid, every-inning or every-out-in-ninth")
            }
            preferences.frequency = frequency
            preferences.spoilerDelaySeconds = spoilerDelay
            preferences.jinxSafe = jinxSafe
            if let quietHours { preferences.quietHours = try Self.quietHours(quietHours) }
            preferences.deals = deal
            preferences.minOdds = minOdds
            return preferences
        }

        static func quietHours(_ text: String) throws -> Preferences.QuietHours {
            let parts = text.split(separator: "@", maxSplits: 1)
            let times = parts.first?.split(separator: "-") ?? []
            func minutes(_ clock: Substring) -> Int? {
                let hm = clock.split(separator: ":")
                guard hm.count == 2, let h = Int(hm[0]), let m = Int(hm[1]), (0..<24).contains(h), (0..<60).contains(m)
                else { return nil }
                return h * 60 + m
            }
            guard parts.count == 2, times.count == 2, let start = minutes(times[0]), let end = minutes(times[1]) else {
                throw ValidationError("--quiet-hours '\(text)' is not hh:mm-hh:mm@Time/Zone")
            }
            return Preferences.QuietHours(start: start, end: end, timeZone: String(parts[1]))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Register one device and print its id and secret.")

        @OptionGroup var store: StoreOptions
        @OptionGroup var preferenceOptions: PreferenceOptions

        @Option(help: "An APNs device token (hex).") var apns: String?
        @Option(help: "A Live Activity push token (hex).") var liveActivity: String?
        @Option(
            help: """
                A push-to-start token (hex, iOS 17.2 and later): the server starts a bid's Live Activity on the \
                device.
                """)
        var liveActivityStart: String?
        @Option(
            help: """
                With --live-activity-start: how the started activity hears the bid's changes, channel (iOS 18: \
                the bid's broadcast channel; the default) or token (iOS 17.2-17.x: the activity's own token, \
                which the app registers).
                """)
        var updates: String?
        @Option(
            name: .customLong("game-id"),
            help: """
                With --live-activity: the game of the bid the activity shows (its attributes' game_id, with \
                --pitching-team); the activity then hears that bid only.
                """)
        var gameID: String?
        @Option(help: "With --live-activity and --game-id: the abbreviation of the team pitching in that bid.")
        var pitchingTeam: String?
        @Option(help: "The app's bundle id, the APNs topic (default: com.example.nohit, the demo's).")
        var topic: String?
        @Option(help: "One of the apps of --apps FILE (apps.file): its bundle id and default environment.")
        var app: String?
        @Option(
            help: """
                sandbox (debug builds from Xcode; development, the aps-environment entitlement's name for it, \
                is read as sandbox) or production (TestFlight, App Store); default: the app's, or production.
                """)
        var environment: String?
        @Option(help: "A Web Push endpoint (with --p256dh and --auth).") var webPush: String?
        // Base64url may begin with '-' (one secret in 64): the next argument is the value, whatever it looks like.
        @Option(parsing: .unconditional, help: "The subscription's p256dh key (base64url).") var p256dh = ""
        @Option(parsing: .unconditional, help: "The subscription's auth secret (base64url).") var auth = ""
        @Option(help: "A webhook URL (https).") var webhook: String?
        @Option(help: "The webhook's signing secret (whsec_...; created when absent).") var webhookSecret = ""
        @Option(help: "Print alerts on the replay's standard output, under this label.") var console: String?
        @Flag(help: "Allow webhook and Web Push URLs into loopback and private networks.")
        var allowPrivateNetworks = false

        /// `--game-id` and `--pitching-team`: both or neither.
        func activityBid() throws -> ActivityBid? {
            switch (gameID, pitchingTeam) {
            case (nil, nil): return nil
            case (let game?, let team?): return ActivityBid(gameID: game, pitchingTeam: team)
            default: throw ValidationError("--game-id and --pitching-team go together (the activity's bid)")
            }
        }

        func run() async throws {
            let declared = try await store.settings().string("apps.file").map(AppsFile.load) ?? []
            var environment = try DevicesCommand.environment(self.environment)
            var topic = self.topic ?? DevicesCommand.demoTopic
            let apple = apns != nil || liveActivity != nil || liveActivityStart != nil
            if app == nil, self.topic == nil, !declared.isEmpty, apple {
                throw ValidationError(
                    "this server declares apps (\(declared.map(\.id).joined(separator: ", "))): give --app ID")
            }
            if let app {
                guard self.topic == nil else { throw ValidationError("give --app or --topic, not both") }
                guard let found = declared.first(where: { $0.id == app }) else {
                    throw ValidationError(
                        declared.isEmpty
                            ? "--app \(app): no apps are declared (--apps FILE, apps.file)"
                            : "--app \(app) is not one of \(declared.map(\.id).joined(separator: ", "))")
                }
                topic = found.topic
                if self.environment == nil { environment = found.environment }
            }
            let channels: [DeviceChannel] = [
                apns.map { .apns(token: $0, environment: environment, topic: topic) },
                try liveActivity.map {
                    .liveActivity(token: $0, environment: environment, topic: topic, bid: try activityBid())
                },
                try liveActivityStart.map {
                    .liveActivityStart(
                        token: $0, environment: environment, topic: topic, updates: try DevicesCommand.updates(updates))
                },
                webPush.map { .webPush(endpoint: $0, p256dh: p256dh, auth: auth) },
                webhook.map { .webhook(url: $0, secret: webhookSecret) },
                console.map { .console(label: $0) },
            ].compactMap { $0 }
            guard channels.count == 1 else {
                throw ValidationError(
                    "give exactly one of --apns, --live-activity, --live-activity-start, --web-push, --webhook, --console"
                )
            }
            // An option of another channel would be stored nowhere: said, not ignored.
            let given = [
                ("--topic", self.topic != nil, apple), ("--app", app != nil, apple),
                ("--environment", self.environment != nil, apple),
                ("--updates", updates != nil, liveActivityStart != nil),
                ("--game-id", gameID != nil, liveActivity != nil),
                ("--pitching-team", pitchingTeam != nil, liveActivity != nil),
                ("--p256dh", !p256dh.isEmpty, webPush != nil), ("--auth", !auth.isEmpty, webPush != nil),
                ("--webhook-secret", !webhookSecret.isEmpty, webhook != nil),
            ]
            if let (option, _, _) = given.first(where: { $0.1 && !$0.2 }) {
                let owner =
                    switch option {
                    case "--p256dh", "--auth": "--web-push"
                    case "--webhook-secret": "--webhook"
                    case "--updates": "--live-activity-start"
                    case "--game-id", "--pitching-team": "--live-activity"
                    default: "--apns, --live-activity and --live-activity-start"
                    }
                throw ValidationError("\(option) is for \(owner) devices only")
            }
            let registration: Registration
            do {
                var registrar = Registrar(allowPrivateNetworks: allowPrivateNetworks)
                registrar.apps = Dictionary(
                    uniqueKeysWithValues: declared.map { ($0.id, (topic: $0.topic, environment: $0.environment)) })
                registration = try registrar.register(
                    RegistrationRequest(channel: channels[0], preferences: try preferenceOptions.preferences()),
                    at: Date())
            } catch let error as RegistrationError {
                StandardStreams.writeError("nohit: device refused: \(DevicesCommand.describe(error))\n")
                throw ExitCode(1)
            }
            let replaced = try await store.withStore { opened in try await opened.store.register(registration.device) }
            print("id: \(registration.device.id.uuidString.lowercased())")
            for id in replaced {
                StandardStreams.writeError(
                    "nohit: replaced device \(id.uuidString.lowercased()), which had the same address (now disabled): "
                        + "one phone or browser gets each alert once\n")
            }
            print("secret: \(registration.secret)")
            if case .liveActivityStart(_, _, _, let updates) = registration.device.channel {
                print("updates: \(updates.rawValue)")
            }
            if case .liveActivity(_, _, _, let bid?) = registration.device.channel {
                print("bid: \(bid.gameID), \(bid.pitchingTeam) pitching")
            }
            switch registration.device.channel {
            case .apns(_, let environment, let topic), .liveActivity(_, let environment, let topic, _),
                .liveActivityStart(_, let environment, let topic, _):
                print("topic: \(topic)")
                print("environment: \(environment.rawValue)")
                let defaults =
                    app != nil
                    ? []
                    : [
                        self.topic == nil ? "--topic (your app's bundle id)" : nil,
                        self.environment == nil ? "--environment sandbox (a debug build run from Xcode)" : nil,
                    ].compactMap { $0 }
                if !defaults.isEmpty {
                    StandardStreams.writeError(
                        "nohit: stored the default \(self.topic == nil ? "topic" : "")"
                            + (defaults.count == 2 ? " and " : "") + (self.environment == nil ? "environment" : "")
                            + "; for your own app give \(defaults.joined(separator: " and "))\n")
                }
            case .webhook(_, let secret) where webhookSecret.isEmpty:
                // Made here: the receiver needs it to check each delivery's webhook-signature.
                print("webhook signing secret: \(secret)")
                StandardStreams.writeError(
                    "nohit: the webhook signing secret is shown once: give it to the receiver, which checks each "
                        + "delivery's webhook-signature with it (Standard Webhooks)\n")
            default:
                break
            }
        }
    }

    struct Seed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "seed",
            abstract: "Register many APNs devices with random tokens (tests, benchmarks, the demo).",
            discussion: """
                Every device gets the preferences given by the options; with --mix they vary: 7 in 10 keep \
                them, the others follow a favourite team, want one alert per bid, or every out in the 9th. Tokens and choices come from \
                --seed, so the same command registers the same devices.
                """)

        @OptionGroup var store: StoreOptions
        @OptionGroup var preferenceOptions: PreferenceOptions

        @Option(help: "How many devices.") var count: Int
        @Option(help: "The app's bundle id, the APNs topic.") var topic = DevicesCommand.demoTopic
        @Option(help: "sandbox (or development) or production.")
        var environment = APNsEnvironment.byDefault.rawValue
        @Option(
            help: """
                Start every token with these hex digits: the fake APNs scripts its answers by prefix (see \
                `nohit fake-apns --help`). Without it tokens start with 'a', which the fake always accepts.
                """)
        var tokenPrefix = "a"
        @Flag(help: "Register Live Activity tokens instead of alert tokens.") var liveActivity = false
        @Flag(help: "Vary preferences across devices.") var mix = false
        @Option(help: "Seed for tokens and preferences.") var seed: UInt64 = 1

        static let teams = [
            "ANA", "ARI", "ATL", "BAL", "BOS", "CHA", "CHN", "CIN", "CLE", "COL", "DET", "HOU", "KCA", "LAN", "MIA",
            "MIL", "MIN", "NYA", "NYN", "OAK", "PHI", "PIT", "SDN", "SEA", "SFN", "SLN", "TBA", "TEX", "TOR", "WAS",
        ]

        func run() async throws {
            guard count > 0 && count <= 10_000_000 else {
                throw ValidationError("--count must be 1 to 10,000,000, not \(count)")
            }
            let environment = try DevicesCommand.environment(environment)
            let base = try preferenceOptions.preferences()
            var random = SplitMix64(seed: seed)
            let registrar = Registrar()
            let now = Date()
            var devices: [Device] = []
            devices.reserveCapacity(count)
            for index in 0..<count {
                var token = tokenPrefix.lowercased()
                while token.count < 64 { token += String(format: "%016llx", random.next()) }
                token = String(token.prefix(64))
                var preferences = base
                if mix {
                    switch index % 10 {
                    case 7:
                        preferences.favouriteTeams = [Self.teams[Int(random.next() % UInt64(Self.teams.count))]]
                    case 8:
                        preferences.frequency = .oncePerBid
                    case 9:
                        preferences.favouriteTeams = [Self.teams[Int(random.next() % UInt64(Self.teams.count))]]
                        preferences.frequency = .everyOutInNinth
                        preferences.thresholdInnings = 7
                    default:
                        break
                    }
                }
                let channel: DeviceChannel =
                    liveActivity
                    ? .liveActivity(token: token, environment: environment, topic: topic)
                    : .apns(token: token, environment: environment, topic: topic)
                do {
                    devices.append(
                        try registrar.register(
                            RegistrationRequest(channel: channel, preferences: preferences),
                            id: UUID(random: &random), at: now
                        ).device)
                } catch {
                    StandardStreams.writeError("nohit: device refused: \(DevicesCommand.describe(error))\n")
                    throw ExitCode(1)
                }
            }
            let name = try await store.withStore { [devices] opened in
                for start in stride(from: 0, to: devices.count, by: 10_000) {
                    try await opened.store.register(
                        contentsOf: Array(devices[start..<min(start + 10_000, devices.count)]))
                }
                return opened.name
            }
            print("registered \(count) device\(count == 1 ? "" : "s") in \(name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Count registered devices by channel and status.")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let (active, total) = try await store.withStore(existing: true) { opened in
                (try await opened.store.activeDevices(), try await opened.store.deviceCount())
            }
            let byChannel = Dictionary(grouping: active, by: \.channel.kind)
            for kind in ChannelKind.allCases {
                print("\(kind.rawValue): \(byChannel[kind]?.count ?? 0) active")
            }
            print("disabled: \(total - active.count)")
        }
    }
}

/// A small seeded generator (SplitMix64), so seeded devices are the same every time.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension UUID {
    /// A version 4 UUID from `random`.
    init(random: inout SplitMix64) {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in stride(from: 0, to: 16, by: 8) {
            withUnsafeBytes(of: random.next()) { bytes.replaceSubrange(index..<index + 8, with: $0) }
        }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        self.init(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
