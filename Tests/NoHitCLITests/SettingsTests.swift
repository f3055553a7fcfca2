import ArgumentParser
import Assembly
import Clocks
import Crypto
import Delivery
import Foundation
import Pipeline
import Storage
import TestSupport
import Testing

@testable import nohit

/// Settings come from flags, then NOHIT_* variables, then the JSON file, then the default; a value
/// in the wrong form is an error that names the key and where to set it.
@Suite(.ownThreads) struct SettingsTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-settings-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func file(_ json: String) throws -> String {
        let url = folder.appendingPathComponent("\(UUID()).json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    @Test func aFlagWinsOverTheEnvironmentWhichWinsOverTheFile() async throws {
        let path = try file(
            #"{"http": {"port": 1001, "host": "0.0.0.0"}, "replay": {"speed": 30, "date": "2020-08-25"}, "log": {"level": "debug"}}"#
        )
        let settings = try await Settings.load(
            flags: ["http.port": .int(1003)], file: path,
            environment: ["NOHIT_HTTP_PORT": "1002", "NOHIT_HTTP_HOST": "::1"])
        #expect(try settings.int("http.port") == 1003)
        #expect(try settings.string("http.host") == "::1")
        #expect(try settings.string("replay.date") == "2020-08-25")
        // A whole number in the file is a speed too.
        #expect(try settings.double("replay.speed", default: 60) == 30)
        #expect(try settings.string("log.level", default: "notice") == "debug")
        // Nowhere: the default.
        #expect(try settings.int("delivery.concurrency", default: 256) == 256)
        #expect(try settings.string("store.database") == nil)
    }

    @Test func theFileCanComeFromTheEnvironment() async throws {
        let path = try file(#"{"admin": {"token": "from-the-file"}}"#)
        let settings = try await Settings.load(flags: [:], file: nil, environment: ["NOHIT_CONFIG": path])
        #expect(try settings.string("admin.token") == "from-the-file")
        #expect(settings.file == path)
    }

    @Test func listsComeAsArraysInTheFileAndCommaSeparatedInTheEnvironment() async throws {
        let path = try file(#"{"retrosheet": {"data": ["a", "b"]}, "apns": {"trust-ca": "one.pem"}}"#)
        let fromFile = try await Settings.load(flags: [:], file: path, environment: [:])
        #expect(try fromFile.strings("retrosheet.data") == ["a", "b"])
        #expect(try fromFile.strings("apns.trust-ca") == ["one.pem"])
        let fromEnvironment = try await Settings.load(
            flags: [:], file: path, environment: ["NOHIT_RETROSHEET_DATA": "x, y"])
        #expect(try fromEnvironment.strings("retrosheet.data") == ["x", "y"])
    }

    @Test func aBooleanReadsFromTheEnvironmentAndTheFlagCanTurnItOff() async throws {
        let on = try await Settings.load(
            flags: [:], file: nil, environment: ["NOHIT_DELIVERY_ALLOW_PRIVATE_NETWORKS": "true"])
        #expect(try on.bool("delivery.allow-private-networks", default: false))
        let off = try await Settings.load(
            flags: ["delivery.allow-private-networks": .bool(false)], file: nil,
            environment: ["NOHIT_DELIVERY_ALLOW_PRIVATE_NETWORKS": "true"])
        #expect(try !off.bool("delivery.allow-private-networks", default: true))
    }

    /// The connection limits: defaults, a setting from the environment, and a value out of range
    /// named with its key.
    @Test func connectionLimitsAreReadAndChecked() async throws {
        let defaults = try ServiceSettings.HTTP.limits(try await Settings.load(flags: [:], file: nil, environment: [:]))
        #expect(defaults.backlog == 4096)
        #expect(defaults.maxConnectionsPerClient == 256)
        let set = try ServiceSettings.HTTP.limits(
            try await Settings.load(
                flags: ["http.max-streams": .int(7)], file: nil, environment: ["NOHIT_HTTP_BACKLOG": "512"]))
        #expect(set.backlog == 512)
        #expect(set.maxStreams == 7)
        let wrong = try await Settings.load(flags: [:], file: nil, environment: ["NOHIT_HTTP_BACKLOG": "0"])
        let error = #expect(throws: ValidationError.self) { try ServiceSettings.HTTP.limits(wrong) }
        #expect(error.map { "\($0)" }?.contains("http.backlog must be 1 to 65535, not 0") == true)
    }

    /// The admin token from a file (its first line), so that it is not in the process list; not
    /// with the token itself, never empty, and a file that cannot be read is named.
    @Test func theAdminTokenComesFromAFileNotBothAndNeverEmpty() async throws {
        let tokenFile = folder.appendingPathComponent("admin-token")
        try Data("s3cret-operator-token\n".utf8).write(to: tokenFile)
        let fromEnvironment = try await Settings.load(
            flags: [:], file: nil, environment: ["NOHIT_ADMIN_TOKEN_FILE": tokenFile.path])
        #expect(
            try ServiceSettings.HTTP.adminToken(
                given: try fromEnvironment.string("admin.token"), file: try fromEnvironment.string("admin.token-file"))
                == "s3cret-operator-token")
        #expect(try ServiceSettings.HTTP.adminToken(given: "abc", file: nil) == "abc")
        #expect(try ServiceSettings.HTTP.adminToken(given: nil, file: nil) == nil)
        func message(_ given: String?, _ file: String?) -> String {
            do {
                _ = try ServiceSettings.HTTP.adminToken(given: given, file: file)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(message("abc", tokenFile.path).contains("not both"))
        #expect(message(" ", nil).contains("the admin token is empty"))
        let empty = folder.appendingPathComponent("empty-token")
        try Data("\n".utf8).write(to: empty)
        #expect(message(nil, empty.path).contains("is empty: its first line is the token"))
        let missing = folder.appendingPathComponent("no-such-file").path
        #expect(message(nil, missing).contains("cannot read the admin token file \(missing)"))
    }

    @Test func aValueInTheWrongFormIsAnErrorNotTheDefault() async throws {
        let settings = try await Settings.load(flags: [:], file: nil, environment: ["NOHIT_HTTP_PORT": "eighty"])
        let error = #expect(throws: ValidationError.self) { try settings.int("http.port", default: 8080) }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("http.port"))
        #expect(message.contains("NOHIT_HTTP_PORT"))
        #expect(message.contains("--port"))
        #expect(message.contains("'eighty'"))

        let path = try file(#"{"delivery": {"concurrency": "lots"}}"#)
        let fromFile = try await Settings.load(flags: [:], file: path, environment: [:])
        let fileError = #expect(throws: ValidationError.self) { try fromFile.int("delivery.concurrency", default: 1) }
        #expect(fileError.map { "\($0)" }?.contains(path) == true)
    }

    @Test func aFileWithAnUnknownKeyOrNotAnObjectIsRefused() async throws {
        let typo = try file(#"{"http": {"prot": 8080}}"#)
        let error = await #expect(throws: ValidationError.self) {
            try await Settings.load(flags: [:], file: typo, environment: [:])
        }
        #expect(error.map { "\($0)" }?.contains("unknown setting 'http.prot'") == true)

        let unknownSection = try file(#"{"colour": "blue"}"#)
        await #expect(throws: ValidationError.self) {
            try await Settings.load(flags: [:], file: unknownSection, environment: [:])
        }
        let notAnObject = try file("[1, 2]")
        await #expect(throws: ValidationError.self) {
            try await Settings.load(flags: [:], file: notAnObject, environment: [:])
        }
        let truncated = try file(#"{"http": {"port": 80"#)
        let truncatedError = await #expect(throws: ValidationError.self) {
            try await Settings.load(flags: [:], file: truncated, environment: [:])
        }
        #expect(truncatedError.map { "\($0)" }?.contains("is not JSON") == true)
        let missing = folder.appendingPathComponent("absent.json").path
        let missingError = await #expect(throws: ValidationError.self) {
            try await Settings.load(flags: [:], file: missing, environment: [:])
        }
        #expect(missingError.map { "\($0)" }?.contains("cannot read") == true)
    }

    /// Each provider's transport is read from its own key; a name that is not a transport is
    /// refused with the key's provider and the value.
    @Test func eachProviderHasItsOwnTransport() async throws {
        let options = try ProviderOptions.parse([])
        let fromEnvironment = try await Settings.load(
            flags: options.flags, file: nil,
            environment: ["NOHIT_WEBPUSH_TRANSPORT": "http1", "NOHIT_APNS_TRANSPORT": "async-http-client"])
        let settings = try options.settings(fromEnvironment, dataDir: folder.path, console: { _ in }).settings
        #expect(settings.webPushTransport == .http1)
        #expect(settings.apnsTransport == .asyncHTTPClient)
        #expect(!settings.endpointGuard.allowPrivateNetworks)

        // The message goes to standard error, as a user sees it.
        let result = try Executable.run(
            "nohit",
            [
                "replay", "--date", "2020-08-25", "--data-dir", folder.path, "--data",
                TestData.path("retrosheet"), "--web-push-transport", "carrier-pigeon",
            ])
        #expect(result.status == 2)
        #expect(result.standardError.contains("the Web Push transport must be http2 or http1, not 'carrier-pigeon'"))
    }

    /// How long an alert stays worth sending: 30 minutes unless set, 1 to 1440, and both its
    /// expiration (what the publisher stamps on it) and its retry deadline (each dispatcher's policy).
    @Test func theTimeAnAlertStaysWorthSendingIsReadCheckedAndUsed() async throws {
        let defaults = try ProviderOptions.parse([])
        let standard = try defaults.settings(
            try await Settings.load(flags: defaults.flags, file: nil, environment: [:]), dataDir: folder.path,
            console: { _ in }
        ).settings
        #expect(standard.staleAfter == 30 * 60)
        let options = try ProviderOptions.parse(["--stale-after-minutes", "120"])
        let set = try options.settings(
            try await Settings.load(
                flags: options.flags, file: nil, environment: ["NOHIT_DELIVERY_STALE_AFTER_MINUTES": "5"]),
            dataDir: folder.path, console: { _ in }
        ).settings
        #expect(set.staleAfter == 2 * 60 * 60)
        // Out of range: refused, on standard error as a user sees it.
        let result = try Executable.run(
            "nohit",
            [
                "replay", "--date", "2020-08-25", "--data-dir", folder.path, "--data", TestData.path("retrosheet"),
                "--stale-after-minutes", "0",
            ])
        #expect(result.status == 2)
        #expect(result.standardError.contains("minutes an alert stays worth sending must be 1 to 1440, not 0"))

        let pipeline = AlertPipeline(
            store: try SQLiteStore(inMemory: ()), channels: [ConsoleChannel(write: { _ in })], clock: SystemWallClock(),
            staleAfter: set.staleAfter)
        #expect(pipeline.publisher.lifetime == 2 * 60 * 60)
        #expect(pipeline.dispatchers.allSatisfy { $0.settings.policy.staleAfter == 2 * 60 * 60 })
    }

    /// Broadcast channels are on unless `apns.broadcast` is false: then none is made (the channels'
    /// management stays, to delete those made before: `BroadcastChannelsTests`) and the start says
    /// each activity is updated by its own token; the push-to-start budget is read and checked.
    @Test func broadcastChannelsCanBeTurnedOffAndTheStartBudgetIsChecked() async throws {
        let defaults = try ProviderOptions.parse([])
        for (environment, on) in [([String: String](), true), (["NOHIT_APNS_BROADCAST": "false"], false)] {
            var settings = try defaults.settings(
                try await Settings.load(flags: defaults.flags, file: nil, environment: environment),
                dataDir: folder.path, console: { _ in }
            ).settings
            #expect(settings.broadcast == on)
            settings.apnsKey = P256.Signing.PrivateKey()
            settings.apnsKeyID = "KEYID00001"
            settings.apnsTeamID = "TEAMID0001"
            let channels = try ProviderChannels(settings)
            #expect(channels.broadcastClients != nil)
            try await channels.shutdown()
            let lines = DeliverySetup.readiness(settings, unavailable: [:]).map(\.0)
            #expect(lines.contains { $0.hasPrefix("Live Activities: broadcast channels \(on ? "on" : "off")") })
            #expect(on || lines.contains { $0.hasSuffix("channels made before are deleted after their games") })
        }
        let result = try Executable.run(
            "nohit",
            ["replay", "--date", "2020-08-25", "--data-dir", folder.path, "--data", TestData.path("retrosheet")],
            environment: ["NOHIT_APNS_START_BUDGET": "0"])
        #expect(result.status == 2)
        #expect(result.standardError.contains("apns.start-budget must be 1 to 50 starts an hour, not 0"))
    }

    /// Retrosheet data that is not there: the message says where nohit looked and what to do,
    /// and nothing is written.
    @Test func aReplayWithoutRetrosheetDataSaysWhereItLooked() throws {
        let result = try Executable.run(
            "nohit", ["replay", "--date", "2020-08-25", "--data-dir", folder.path, "--data", "/nonexistent/retrosheet"])
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("nohit: no Retrosheet data at /nonexistent/retrosheet (from /"))
        #expect(result.standardError.contains("pass --data DIR (a directory of season folders; NOHIT_RETROSHEET_DATA)"))
        #expect(result.standardError.contains("or set NOHIT_RETROSHEET to that directory"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.isEmpty ?? true)
    }

    /// Declared apps without a server-wide key: the start says which apps' alerts cannot be
    /// signed, instead of an APNs line with an empty key id.
    @Test func appsWithoutAServerKeyAreSaidToBeUnsigned() {
        var settings = ProviderSettings(vapidKey: P256.Signing.PrivateKey())
        settings.apps = [
            APNsApp(id: "alerts", topic: "com.example.nohit", environment: .production),
            APNsApp(
                id: "scored", topic: "com.example.scored", environment: .sandbox, key: P256.Signing.PrivateKey(),
                keyID: "OTHERKEY01", teamID: "OTHERTEAM1"),
        ]
        let lines = DeliverySetup.readiness(settings, unavailable: [:])
        #expect(
            lines.first?.0.hasPrefix("APNs ready: for the apps with keys of their own only (no server-wide key)")
                == true)
        #expect(
            lines.contains {
                $0.0 == "APNs app alerts (com.example.nohit): no key, so its alerts cannot be signed: declare one for "
                    + "it, or a server-wide one; devices default to production" && !$0.ready
            })
        #expect(
            lines.contains {
                $0.0.hasPrefix("APNs app scored (com.example.scored): its own key id OTHERKEY01") && $0.ready
            })
    }

    @Test func everyKeyHasAnEnvironmentName() {
        #expect(Settings.environmentName("store.data-dir") == "NOHIT_STORE_DATA_DIR")
        #expect(Settings.environmentName("admin.token") == "NOHIT_ADMIN_TOKEN")
        #expect(Set(Settings.keys.keys.map(Settings.environmentName)).count == Settings.keys.count)
    }
}
