import ArgumentParser
import Assembly
import Configuration
import Crypto
import Delivery
import Dispatch
import FakeProviders
import Foundation
import Logging
import Pipeline
import Server

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the service keeps its state (the data directory, and the database: an SQLite file in it
/// by default, or PostgreSQL for several instances) and where it reads its configuration.
struct StoreOptions: ParsableArguments {
    @Option(help: Settings.help("store.data-dir"))
    var dataDir: String?

    @Option(help: Settings.help("store.database"))
    var database: String?

    @Option(help: Settings.help("store.secrets-key"))
    var secretsKey: String?

    @Option(help: Settings.help("store.instance-id"))
    var instanceID: String?

    @Option(help: Settings.help("store.lease-seconds"))
    var leaseSeconds: Int?

    @Option(
        help: ArgumentHelp(
            "A JSON configuration file (default: $NOHIT_CONFIG). Flags, then NOHIT_* variables, override it.",
            valueName: "file"))
    var config: String?

    @Option(help: Settings.help("apps.file"))
    var apps: String?

    var flags: [String: ConfigContent] {
        var flags: [String: ConfigContent] = [:]
        if let apps { flags["apps.file"] = .string(apps) }
        if let dataDir { flags["store.data-dir"] = .string(dataDir) }
        if let database { flags["store.database"] = .string(database) }
        if let secretsKey { flags["store.secrets-key"] = .string(secretsKey) }
        if let instanceID { flags["store.instance-id"] = .string(instanceID) }
        if let leaseSeconds { flags["store.lease-seconds"] = .int(leaseSeconds) }
        return flags
    }

    /// The settings from these flags, `more` flags of the command, the environment and the file.
    func settings(_ more: [String: ConfigContent] = [:]) async throws -> Settings {
        try await Settings.load(flags: flags.merging(more) { $1 }, file: config)
    }

    /// Where the database is, by the settings.
    func location(_ settings: Settings) throws -> StoreLocation {
        let dataDir = try settings.string("store.data-dir", default: StoreLocation.defaultDataDir)
        let instance = try settings.string("store.instance-id")
        if let instance, instance.wholeMatch(of: /[A-Za-z0-9._:-]{1,100}/) == nil {
            throw ValidationError("the instance id must be 1 to 100 letters, digits, '.', '_', ':' or '-'")
        }
        let lease = try settings.int("store.lease-seconds", default: StoreLocation.defaultLeaseSeconds)
        guard (2...600).contains(lease) else {
            throw ValidationError("the lease must be 2 to 600 seconds, not \(lease)")
        }
        return StoreLocation(
            dataDir: dataDir, database: try settings.string("store.database"),
            secretsKey: try settings.string("store.secrets-key"), instanceID: instance, leaseSeconds: lease)
    }

    /// Opens the database that the flags, environment and file name, for `body`. A command that
    /// only reads (`existing`) refuses a database that is not there instead of creating one.
    func withStore<Result: Sendable>(
        existing: Bool = false, _ body: @Sendable (OpenedStore) async throws -> Result
    ) async throws -> Result {
        try await location(try await settings()).withStore(
            existing: existing, notice: { StandardStreams.writeError("nohit: \($0)\n") }, body)
    }
}

/// How to reach the push providers.
struct ProviderOptions: ParsableArguments {
    @Option(help: Settings.help("apns.fake"))
    var fakeApns: String?

    @Option(help: Settings.help("apns.url"))
    var apnsURL: String?

    @Option(help: Settings.help("apns.key"))
    var apnsKey: String?

    @Option(help: Settings.help("apns.key-id"))
    var apnsKeyID: String?

    @Option(help: Settings.help("apns.team-id"))
    var apnsTeamID: String?

    @Option(help: Settings.help("apns.transport"))
    var apnsTransport: String?

    @Option(help: Settings.help("apns.connections"))
    var apnsConnections: Int?

    @Option(help: Settings.help("apns.trust-ca"))
    var trustCA: [String] = []

    @Option(help: Settings.help("vapid.key"))
    var vapidKey: String?

    @Option(help: Settings.help("vapid.subject"))
    var vapidSubject: String?

    @Option(help: Settings.help("webpush.transport"))
    var webPushTransport: String?

    @Flag(inversion: .prefixedNo, help: Settings.help("delivery.allow-private-networks"))
    var allowPrivateNetworks: Bool?

    @Option(help: Settings.help("feedback.url"))
    var feedbackURL: String?

    @Option(help: Settings.help("delivery.request-timeout"))
    var requestTimeout: Int?

    @Option(help: Settings.help("delivery.stale-after-minutes"))
    var staleAfterMinutes: Int?

    var flags: [String: ConfigContent] {
        var flags: [String: ConfigContent] = [:]
        for (key, value) in [
            ("apns.fake", fakeApns), ("apns.url", apnsURL), ("apns.key", apnsKey), ("apns.key-id", apnsKeyID),
            ("apns.team-id", apnsTeamID), ("apns.transport", apnsTransport), ("vapid.key", vapidKey),
            ("vapid.subject", vapidSubject), ("webpush.transport", webPushTransport), ("feedback.url", feedbackURL),
        ] {
            if let value { flags[key] = .string(value) }
        }
        if let apnsConnections { flags["apns.connections"] = .int(apnsConnections) }
        if let requestTimeout { flags["delivery.request-timeout"] = .int(requestTimeout) }
        if let staleAfterMinutes { flags["delivery.stale-after-minutes"] = .int(staleAfterMinutes) }
        if !trustCA.isEmpty { flags["apns.trust-ca"] = .stringArray(trustCA) }
        if let allowPrivateNetworks { flags["delivery.allow-private-networks"] = .bool(allowPrivateNetworks) }
        return flags
    }

    /// The providers' settings, every file they name read; a VAPID key that is not there yet is
    /// made here and written (`newVAPIDKeyFile`) once the store is open.
    func settings(
        _ config: Settings, dataDir: String, console: @escaping @Sendable (String) -> Void
    ) throws -> (settings: ProviderSettings, newVAPIDKeyFile: String?) {
        do {
            let vapidPath =
                try config.string("vapid.key") ?? (dataDir as NSString).appendingPathComponent("vapid.pem")
            let exists = FileManager.default.fileExists(atPath: vapidPath)
            var settings = ProviderSettings(
                vapidKey: exists ? try KeyFiles.readSigningKey(vapidPath) : P256.Signing.PrivateKey())
            settings.vapidSubject = try config.string("vapid.subject", default: "mailto:operator@localhost")
            let timeout = try config.int("delivery.request-timeout", default: 10)
            guard (1...600).contains(timeout) else {
                throw ValidationError("the request timeout must be 1 to 600 seconds, not \(timeout)")
            }
            settings.requestTimeout = .seconds(Int64(timeout))
            let staleAfter = try config.int(
                "delivery.stale-after-minutes", default: Int(ProviderSettings.defaultStaleAfter / 60))
            guard (1...1440).contains(staleAfter) else {
                throw ValidationError("minutes an alert stays worth sending must be 1 to 1440, not \(staleAfter)")
            }
            settings.staleAfter = TimeInterval(staleAfter * 60)
            settings.writeConsole = console
            func transport(_ key: String, of provider: String) throws -> TransportChoice {
                let name = try config.string(key, default: TransportChoice.http2.rawValue)
                guard let transport = TransportChoice(rawValue: name) else {
                    throw ValidationError("the \(provider) transport must be http2 or async-http-client, not '\(name)'")
                }
                return transport
            }
            settings.apnsTransport = try transport("apns.transport", of: "APNs")
            let webPush = try config.string("webpush.transport", default: WebPushTransport.http2.rawValue)
            guard let webPushTransport = WebPushTransport(rawValue: webPush) else {
                throw ValidationError(
                    "the Web Push transport must be http2 or http1, not '\(webPush)'"
                        + (webPush == "async-http-client"
                            ? " (AsyncHTTPClient cannot check the address a push endpoint resolves to)" : ""))
            }
            settings.webPushTransport = webPushTransport
            settings.endpointGuard.allowPrivateNetworks = try config.bool(
                "delivery.allow-private-networks", default: false)
            settings.apnsConnections = try config.int("apns.connections", default: 8)
            settings.broadcast = try config.bool("apns.broadcast", default: true)
            guard (1...64).contains(settings.apnsConnections) else {
                throw ValidationError("APNs connections must be 1 to 64, not \(settings.apnsConnections)")
            }
            if let fakeApns = try config.string("apns.fake") {
                let path = (fakeApns as NSString).appendingPathComponent("fake-apns.json")
                let fake: FakeProviderDescription
                do {
                    fake = try JSONDecoder().decode(
                        FakeProviderDescription.self, from: Data(KeyFiles.readText(path).utf8))
                } catch let failure as KeyFiles.Failure {
                    throw failure
                } catch {
                    throw KeyFiles.Failure(path: path, reason: "is not what `nohit fake-apns` writes: \(error)")
                }
                settings.apnsProductionURL = fake.url
                settings.apnsSandboxURL = fake.url
                settings.apnsKey = try KeyFiles.readSigningKey(fake.key)
                settings.apnsKeyID = fake.keyID
                settings.apnsTeamID = fake.teamID
                settings.extraCertificateAuthorities.append(try KeyFiles.readText(fake.ca))
                // The operator named this fake: its endpoints (webhooks, Web Push) are reached on
                // loopback without opening private networks to every user's URL.
                if let origin = HTTP1Client.Target(url: fake.url) {
                    settings.endpointGuard.trusted.insert(EndpointGuard.Endpoint(host: origin.host, port: origin.port))
                }
            }
            if let apnsURL = try config.string("apns.url") {
                settings.apnsProductionURL = apnsURL
                settings.apnsSandboxURL = apnsURL
            }
            let apnsKey = try config.string("apns.key")
            if let apnsKey { settings.apnsKey = try KeyFiles.readSigningKey(apnsKey) }
            if let apnsKeyID = try config.string("apns.key-id") {
                settings.apnsKeyID = try Self.appleID(apnsKeyID, "key id", "--apns-key-id")
            }
            if let apnsTeamID = try config.string("apns.team-id") {
                settings.apnsTeamID = try Self.appleID(apnsTeamID, "team id", "--apns-team-id")
            }
            try Self.checkAPNsKey(
                key: apnsKey ?? (settings.apnsKey == nil ? nil : "of the fake APNs"), keyID: settings.apnsKeyID,
                teamID: settings.apnsTeamID)
            if let apnsKey, let warning = Self.keyFileMismatch(apnsKey, keyID: settings.apnsKeyID) {
                StandardStreams.writeError("nohit: \(warning)\n")
            }
            if let apps = try config.string("apps.file") { settings.apps = try AppsFile.load(apps) }
            for path in try config.strings("apns.trust-ca") ?? [] {
                settings.extraCertificateAuthorities.append(try KeyFiles.readText(path))
            }
            return (settings, exists ? nil : vapidPath)
        } catch let error as ValidationError {
            throw error
        } catch {
            throw StartError("\(error)")
        }
    }
}

extension ProviderOptions {
    /// An Apple key id or team id: 10 upper-case letters and digits, as the developer account shows it.
    static func appleID(_ text: String, _ what: String, _ flag: String) throws -> String {
        guard text.utf8.count == 10, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) })
        else {
            throw ValidationError(
                "the APNs \(what) (\(flag)) must be 10 upper-case letters and digits, as your Apple Developer "
                    + "account shows it (e.g. ABCDE12345), not '\(text)' (\(text.count) characters)")
        }
        return text
    }

    /// Apple names each key file after its key id (`AuthKey_ABCDE12345.p8`): a file named for
    /// another id than the one given is most likely the wrong pair, which Apple refuses with
    /// InvalidProviderToken on the first push. Said at start (a renamed file is not refused).
    static func keyFileMismatch(_ path: String, keyID: String) -> String? {
        let name = (path as NSString).lastPathComponent
        guard !keyID.isEmpty, let named = name.wholeMatch(of: /AuthKey_([A-Z0-9]{10})\.p8/)?.1, named != keyID
        else { return nil }
        return "warning: the APNs key file \(name) is named for key id \(named), but the key id given is \(keyID): "
            + "Apple names each key file after its key id, and refuses a token signed with one key under "
            + "another's id (InvalidProviderToken); check that they belong together"
    }

    /// An APNs provider key goes with its key id and team id: a missing one is named.
    static func checkAPNsKey(key: String?, keyID: String, teamID: String) throws {
        let whereToFind =
            "both are in your Apple Developer account: the key id beside the key (Certificates, Identifiers & "
            + "Profiles > Keys), the team id under Membership details"
        switch (key != nil, keyID.isEmpty, teamID.isEmpty) {
        case (true, true, true):
            throw ValidationError(
                "the APNs key \(key!) needs its key id and team id: give --apns-key-id and --apns-team-id "
                    + "(NOHIT_APNS_KEY_ID, NOHIT_APNS_TEAM_ID); \(whereToFind)")
        case (true, true, false):
            throw ValidationError(
                "the APNs key \(key!) needs its key id: give --apns-key-id (NOHIT_APNS_KEY_ID); \(whereToFind)")
        case (true, false, true):
            throw ValidationError(
                "the APNs key \(key!) needs its team id: give --apns-team-id (NOHIT_APNS_TEAM_ID); \(whereToFind)")
        case (false, false, _), (false, _, false):
            throw ValidationError(
                "an APNs key id or team id without the key: give the .p8 file with --apns-key (NOHIT_APNS_KEY)")
        default:
            break
        }
    }
}

/// Log level for the service's diagnostics (on standard error).
struct LoggingOptions: ParsableArguments {
    @Option(help: Settings.help("log.level"))
    var logLevel: String?

    var flags: [String: ConfigContent] { logLevel.map { ["log.level": .string($0)] } ?? [:] }

    func bootstrap(_ settings: Settings) throws {
        let name = try settings.string("log.level", default: "notice")
        guard let level = Logger.Level(rawValue: name) else {
            StandardStreams.writeError(
                "nohit: log level '\(name)' is not one of trace, debug, info, notice, warning, error, critical\n")
            throw ExitCode(2)
        }
        LoggingSystem.bootstrap { label in
            var handler = StandardErrorLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
