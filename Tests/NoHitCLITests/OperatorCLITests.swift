import Crypto
import FakeProviders
import Foundation
import GRDB
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The command line as an operator meets it (issue 38, "a CLI that never surprises"): each case
/// runs `nohit` in a scratch directory, on loopback only, and checks the words it prints.
@Suite(.ownThreads) final class OperatorCLITests: Sendable {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-operator-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func nohit(_ arguments: [String], environment: [String: String] = [:]) throws -> Executable.Output {
        try Executable.run("nohit", arguments, in: folder, environment: environment)
    }

    static let token = String(repeating: "ab", count: 32)

    @Test func versionIsPrinted() throws {
        let result = try nohit(["--version"])
        #expect(result.status == 0)
        #expect(result.standardOutput.wholeMatch(of: /nohit \d+\.\d+\.\d+ \(Swift [0-9.+a-z ]+\)\n/) != nil)
    }

    /// `devices list` only reads: a mistyped data directory is named, and nothing is created.
    @Test func aReadOnlyCommandRefusesAMissingDatabase() throws {
        for command in [["devices", "list"], ["analytics", "project", "list"]] {
            let result = try nohit(command + ["--data-dir", "typo"])
            #expect(result.status == 2)
            #expect(result.standardError.contains("nohit: no database at typo/nohit.sqlite (from "))
            #expect(result.standardError.contains("this command only reads and creates none"))
            #expect(!FileManager.default.fileExists(atPath: path("typo")))
        }
    }

    /// The first command that writes says what it made and that the key is backed up with the
    /// database; the next says nothing of the kind.
    @Test func theFirstStartSaysWhatItCreatedAndWhatToBackUp() throws {
        let first = try nohit(["devices", "add", "--data-dir", "data", "--console", "me"])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(
            first.standardError.contains(
                "nohit: first start: created data/, data/nohit.sqlite (the database), data/secrets.key (the key "
                    + "sealing stored webhook and Web Push secrets); back up the key along with the database"))
        let second = try nohit(["devices", "add", "--data-dir", "data", "--console", "you"])
        #expect(second.status == 0)
        #expect(!second.standardError.contains("first start"))
    }

    /// A push-to-start token from the command line: updates by channel unless `--updates token`;
    /// a wrong `--updates`, or one given for another channel, is refused saying why.
    @Test func aPushToStartTokenIsAddedWithHowItsActivityHearsTheBid() throws {
        let token = String(repeating: "c0", count: 32)
        let added = try nohit([
            "devices", "add", "--data-dir", "data", "--live-activity-start", token, "--topic", "org.example.nohit",
            "--updates", "token",
        ])
        #expect(added.status == 0, "\(added.standardError)")
        #expect(
            added.standardOutput.contains("updates: token") && added.standardOutput.contains("topic: org.example.nohit")
        )
        #expect(
            try nohit(["devices", "list", "--data-dir", "data"]).standardOutput.contains(
                "live-activity-start: 1 active"))
        let wrong = try nohit([
            "devices", "add", "--data-dir", "data", "--live-activity-start", token, "--updates", "push",
        ])
        #expect(wrong.status != 0)
        #expect(
            wrong.standardError.contains("--updates must be channel (iOS 18: the bid's broadcast channel) or token"))
        let misplaced = try nohit(["devices", "add", "--data-dir", "data", "--console", "me", "--updates", "token"])
        #expect(misplaced.status != 0)
        #expect(misplaced.standardError.contains("--updates is for --live-activity-start devices only"))
        // The token of an activity it started, with the bid the activity shows.
        let activity = try nohit([
            "devices", "add", "--data-dir", "data", "--live-activity", String(repeating: "c1", count: 32),
            "--topic", "org.example.nohit", "--game-id", "CHA202008250", "--pitching-team", "CWS",
        ])
        #expect(activity.status == 0, "\(activity.standardError)")
        #expect(activity.standardOutput.contains("bid: CHA202008250, CWS pitching"), "\(activity.standardOutput)")
        let half = try nohit([
            "devices", "add", "--data-dir", "data", "--live-activity", String(repeating: "c2", count: 32),
            "--game-id", "CHA202008250",
        ])
        #expect(half.status != 0)
        #expect(half.standardError.contains("--game-id and --pitching-team go together"), "\(half.standardError)")
        let badTeam = try nohit([
            "devices", "add", "--data-dir", "data", "--live-activity", String(repeating: "c2", count: 32),
            "--game-id", "CHA202008250", "--pitching-team", "C W S",
        ])
        #expect(badTeam.status != 0)
        #expect(badTeam.standardError.contains("--pitching-team must be the abbreviation"), "\(badTeam.standardError)")
    }

    /// With the secrets key moved away, a database holding sealed secrets is refused and no new
    /// key is written (one would never open them); a database without any gets its key.
    @Test func noKeyIsMadeForADatabaseHoldingSealedSecrets() throws {
        let added = try nohit([
            "devices", "add", "--data-dir", "data", "--webhook", "https://hooks.example.com/nohit",
        ])
        #expect(added.status == 0, "\(added.standardError)")
        try FileManager.default.moveItem(atPath: path("data/secrets.key"), toPath: path("secrets.key.backup"))
        for command in [["devices", "list"], ["devices", "add", "--console", "me"]] {
            let refused = try nohit(command + ["--data-dir", "data"])
            #expect(refused.status == 2)
            #expect(
                refused.standardError.contains(
                    "nohit: the secrets key data/secrets.key is missing, but the database data/nohit.sqlite holds 1 "
                        + "secret sealed with it"))
            #expect(refused.standardError.contains("restore the key from your backup"))
            #expect(!FileManager.default.fileExists(atPath: path("data/secrets.key")))
        }
        try FileManager.default.moveItem(atPath: path("secrets.key.backup"), toPath: path("data/secrets.key"))
        #expect(try nohit(["devices", "list", "--data-dir", "data"]).standardOutput.contains("webhook: 1 active"))

        let plain = try nohit(["devices", "add", "--data-dir", "plain", "--console", "me"])
        try FileManager.default.removeItem(atPath: path("plain/secrets.key"))
        let again = try nohit(["devices", "list", "--data-dir", "plain"])
        #expect(plain.status == 0 && again.status == 0, "\(again.standardError)")
        #expect(FileManager.default.fileExists(atPath: path("plain/secrets.key")))
    }

    /// The same on PostgreSQL: the key file is kept in the data directory; a database holding
    /// secrets sealed with it is refused without it; a migration from a newer nohit is refused.
    @Test(.postgres) func postgresKeepsItsKeyAndRefusesAFutureMigration() throws {
        let url = try #require(TestPostgres.url(schema: "operator"))
        let store = ["--database", url, "--data-dir", "data"]
        let added = try nohit(["devices", "add", "--webhook", "https://hooks.example.com/nohit"] + store)
        #expect(added.status == 0, "\(added.standardError)")
        #expect(added.standardError.contains("first start: created data/, data/secrets.key"))
        try FileManager.default.removeItem(atPath: path("data/secrets.key"))
        let refused = try nohit(["devices", "list"] + store)
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("nohit: the secrets key data/secrets.key is missing, but the database"))
        #expect(refused.standardError.contains("holds 1 secret sealed with it"))
        #expect(!FileManager.default.fileExists(atPath: path("data/secrets.key")))

        let fresh = try #require(TestPostgres.url(schema: "operatorfuture"))
        let made = try nohit(["devices", "add", "--console", "me", "--database", fresh, "--data-dir", "other"])
        #expect(made.status == 0, "\(made.standardError)")
        let schema = try #require(fresh.firstMatch(of: /schema=(\w+)/)?.1)
        let server = try #require(TestPostgres.url)
        // psql comes with the PostgreSQL server the suite runs beside.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "psql", server, "-qc", "INSERT INTO \(schema).schema_migrations (name) VALUES ('99 from the future')",
        ]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let future = try nohit(["devices", "list", "--database", fresh, "--data-dir", "other"])
        #expect(future.status == 2)
        let missing = try #require(TestPostgres.url(schema: "operatormissing"))
        let mistyped = try nohit(["devices", "list", "--database", missing, "--data-dir", "other"])
        #expect(mistyped.status == 2)
        #expect(mistyped.standardError.contains("holds none): give the database the service uses"))
        #expect(future.standardError.contains("was migrated by a newer nohit (its migration '99 from the future'"))
    }

    /// A database a newer nohit migrated is refused with what to do, and left as it was.
    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        _ = try nohit(["devices", "add", "--data-dir", "data", "--console", "me"])
        let database = path("data/nohit.sqlite")
        try DatabaseQueue(path: database).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('99 from the future')")
        }
        func contents() throws -> [String] {
            try DatabaseQueue(path: database).read { db in
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
                    + String.fetchAll(db, sql: "SELECT id FROM devices ORDER BY id")
            }
        }
        let before = try contents()
        let refused = try nohit(["devices", "list", "--data-dir", "data"])
        #expect(try contents() == before, "the database was changed")
        #expect(refused.status == 2)
        #expect(
            refused.standardError.contains(
                "nohit: the database data/nohit.sqlite was migrated by a newer nohit (its migration '99 from the "
                    + "future' is unknown to this one): run that version, or restore a backup made before the upgrade"))
    }

    /// A negative number is read as the option's value and named out of range, not "missing".
    @Test func negativeAndOutOfRangeValuesAreNamed() throws {
        let cases: [([String], String)] = [
            (
                ["devices", "seed", "--data-dir", "d", "--count", "-5"],
                "nohit: --count must be 1 to 10,000,000, not -5"
            ),
            (
                ["devices", "add", "--data-dir", "d", "--console", "me", "--spoiler-delay", "-5"],
                "nohit: device refused: --spoiler-delay must be 0 to 300, not -5"
            ),
            (
                ["devices", "add", "--data-dir", "d", "--console", "me", "--threshold", "12"],
                "nohit: device refused: --threshold must be 4 to 9, not 12"
            ),
            (
                ["replay", "--date", "2020-08-25", "--speed", "-1", "--data-dir", "d"],
                "--speed must be 0 or more, not -1.0"
            ),
            (["fake-apns", "--port", "-1"], "--port must be 0 to 65535, not -1"),
            (["fake-statsapi", "--date", "2020-08-25", "--wait", "0"], "--wait must be 1 to 300 seconds, not 0"),
            (
                ["serve", "--date", "2020-08-25", "--port", "70000", "--data-dir", "d"],
                "the port must be 0 to 65535, not 70000"
            ),
            (["hall-of-fame", "--limit", "-3", "."], "--limit must be 0 (all) or more, not -3"),
        ]
        for (arguments, message) in cases {
            let result = try nohit(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
            #expect(!result.standardError.contains("Missing value"), "\(arguments)")
        }
    }

    /// A setting found wrong while the command runs is one `nohit:` line, status 2, no usage text.
    @Test func aConfigurationFileThatIsNotJSONIsNamedByLineAndColumn() throws {
        try Data("{\"http\": {\n  port: 8080}}\n".utf8).write(to: folder.appendingPathComponent("bad.json"))
        let result = try nohit(["devices", "list", "--config", "bad.json", "--data-dir", "d"])
        #expect(result.status == 2)
        #expect(
            result.standardError.hasPrefix("nohit: the configuration file bad.json is not JSON: line 2, column 3: "))
        #expect(result.standardError.contains("\n    port: 8080}}\n    ^\n"))
        #expect(!result.standardError.contains("Usage:"))
        try Data("  \n".utf8).write(to: folder.appendingPathComponent("empty.json"))
        let empty = try nohit(["devices", "list", "--config", "empty.json", "--data-dir", "d"])
        #expect(
            empty.standardError
                == "nohit: the configuration file empty.json is not JSON: it is empty (a file of no settings holds {})\n"
        )
        // A trailing comma, which Foundation's reader lets pass and JSON does not: named where it is.
        try Data("{\"http\": {\"port\": 8080,\n  \"host\": \"a,}\"},\n}\n".utf8).write(
            to: folder.appendingPathComponent("comma.json"))
        let comma = try nohit(["devices", "list", "--config", "comma.json", "--data-dir", "d"])
        #expect(comma.status == 2)
        #expect(
            comma.standardError
                == "nohit: the configuration file comma.json is not JSON: line 2, column 17: a comma before '}', "
                + "which JSON does not allow\n", "\(comma.standardError)")
        try Data(#"{"apps": [{"id": "a", "topic": "com.x.y"},]}"#.utf8).write(
            to: folder.appendingPathComponent("apps.json"))
        let apps = try nohit([
            "devices", "add", "--apps", "apps.json", "--app", "a", "--apns", Self.token, "--data-dir", "d",
        ])
        #expect(
            apps.standardError.contains("the apps file apps.json is not JSON: line 1, column 42: a comma before ']'"),
            "\(apps.standardError)")
    }

    /// `devices add --apns` says the topic and environment it stored, and that they are the
    /// demo's when not given; `--webhook` shows the signing secret it made, once.
    @Test func devicesAddSaysWhatItStored() throws {
        let apns = try nohit(["devices", "add", "--data-dir", "d", "--apns", Self.token])
        #expect(apns.status == 0, "\(apns.standardError)")
        // The API's default environment: production, the environment of every TestFlight and App
        // Store build.
        #expect(apns.standardOutput.contains("\ntopic: com.example.nohit\nenvironment: production\n"))
        #expect(
            apns.standardError.contains(
                "nohit: stored the default topic and environment; for your own app give --topic (your app's bundle "
                    + "id) and --environment sandbox (a debug build run from Xcode)"))
        let own = try nohit([
            "devices", "add", "--data-dir", "d", "--apns", Self.token, "--topic", "com.acme.nohit", "--environment",
            "production",
        ])
        #expect(own.standardOutput.contains("\ntopic: com.acme.nohit\nenvironment: production\n"))
        #expect(!own.standardError.contains("default"))
        let wrong = try nohit(["devices", "add", "--data-dir", "d", "--apns", Self.token, "--environment", "prod"])
        #expect(
            wrong.standardError.contains(
                "--environment must be sandbox (debug builds from Xcode; development, the entitlement's name for it, "
                    + "is read as sandbox) or production (TestFlight, App Store), not 'prod'"
            ))
        // Apple's entitlement names the sandbox `development`: read as sandbox, stored as sandbox.
        let development = try nohit([
            "devices", "add", "--data-dir", "d", "--apns", String(repeating: "cd", count: 32), "--environment",
            "development",
        ])
        #expect(development.status == 0, "\(development.standardError)")
        #expect(development.standardOutput.contains("\nenvironment: sandbox\n"))

        let webhook = try nohit(["devices", "add", "--data-dir", "d", "--webhook", "https://hooks.example.com/x"])
        #expect(webhook.status == 0, "\(webhook.standardError)")
        let secret = try #require(webhook.standardOutput.firstMatch(of: /webhook signing secret: (whsec_\S+)\n/)?.1)
        #expect(secret.count > 30)
        #expect(webhook.standardError.contains("the webhook signing secret is shown once"))
        let given = try nohit([
            "devices", "add", "--data-dir", "d", "--webhook", "https://hooks.example.com/y", "--webhook-secret",
            String(secret),
        ])
        #expect(given.status == 0 && !given.standardOutput.contains("whsec_"))

        // A browser's auth secret whose base64url begins with '-' (one in 64) is the value, not an option.
        func base64url(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let auth = base64url(Data([0xF8] + (1..<16).map { UInt8($0) }))
        #expect(auth.hasPrefix("-"))
        let dashed = try nohit([
            "devices", "add", "--data-dir", "d", "--allow-private-networks", "--web-push", "https://127.0.0.1:9/push",
            "--p256dh", base64url(P256.KeyAgreement.PrivateKey().publicKey.x963Representation), "--auth", auth,
        ])
        #expect(dashed.status == 0, "\(dashed.standardError)")

        // An option of another channel is named, not ignored; nothing is stored then.
        for (options, message) in [
            (
                ["--console", "me", "--topic", "com.acme.nohit"],
                "--topic is for --apns, --live-activity and --live-activity-start devices only"
            ),
            (
                ["--webhook", "https://hooks.example.com/z", "--environment", "production"],
                "--environment is for --apns"
            ),
            (["--apns", Self.token, "--auth", "abc"], "--auth is for --web-push devices only"),
            (["--console", "me", "--webhook-secret", "whsec_x"], "--webhook-secret is for --webhook devices only"),
        ] {
            let refused = try nohit(["devices", "add", "--data-dir", "d"] + options)
            #expect(refused.status == 2, "\(options)")
            #expect(refused.standardError.contains(message), "\(refused.standardError)")
        }
        // The same token again (the app reinstalled): the device holding it is replaced, and said.
        let first = try #require(apns.standardOutput.firstMatch(of: /id: (\S+)\n/)?.1)
        let again = try nohit(["devices", "add", "--data-dir", "d", "--apns", Self.token])
        #expect(again.status == 0)
        #expect(
            again.standardError.contains("nohit: replaced device \(first), which had the same address (now disabled)"),
            "\(again.standardError)")
        let list = try nohit(["devices", "list", "--data-dir", "d"])
        #expect(list.status == 0)
    }

    /// APNs credentials: the key id and team id are Apple's 10 characters, and a key without
    /// one of them names the one missing and where to find it.
    @Test func apnsCredentialsAreCheckedAndAMissingOneNamed() throws {
        let fake = try nohit(["fake-apns", "--port", "0", "--dir", "fa", "--key-id", "ABC"])
        #expect(fake.standardError.contains("the APNs key id (--key-id) must be 10 upper-case letters and digits"))
        // A provider key as Apple's .p8 files hold one (PKCS #8, P-256).
        let key = path("AuthKey_TEST.p8")
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: key))
        let day = ["replay", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d"]
        let base = day + ["--apns-key", key]
        let cases: [([String], String)] = [
            (
                [],
                "nohit: the APNs key \(key) needs its key id and team id: give --apns-key-id and --apns-team-id"
            ),
            (["--apns-team-id", "ABCDE12345"], "nohit: the APNs key \(key) needs its key id: give --apns-key-id"),
            (["--apns-key-id", "ABCDE12345"], "nohit: the APNs key \(key) needs its team id: give --apns-team-id"),
            (
                ["--apns-key-id", "ABCDE12345", "--apns-team-id", "ABCD"],
                "nohit: the APNs team id (--apns-team-id) must be 10 upper-case letters and digits, as your Apple "
                    + "Developer account shows it (e.g. ABCDE12345), not 'ABCD' (4 characters)"
            ),
        ]
        for (more, message) in cases {
            let result = try nohit(base + more)
            #expect(result.status == 2, "\(more)")
            #expect(result.standardError.contains(message), "\(more): \(result.standardError)")
        }
        let noKey = try nohit(day + ["--apns-key-id", "ABCDE12345"])
        #expect(
            noKey.standardError.contains("an APNs key id or team id without the key: give the .p8 file with --apns-key")
        )
        // A key file named for another key id than the one given: warned of, not refused.
        let named = path("AuthKey_ABCDE12345.p8")
        try FileManager.default.copyItem(atPath: key, toPath: named)
        let mismatch = try nohit(
            day + ["--apns-key", named, "--apns-key-id", "FGHIJ67890", "--apns-team-id", "TEAM123456", "--quiet"])
        #expect(
            mismatch.standardError.contains(
                "nohit: warning: the APNs key file AuthKey_ABCDE12345.p8 is named for key id ABCDE12345, but the key "
                    + "id given is FGHIJ67890"), "\(mismatch.standardError)")
        let matched = try nohit(
            day + ["--apns-key", named, "--apns-key-id", "ABCDE12345", "--apns-team-id", "TEAM123456", "--quiet"])
        #expect(!matched.standardError.contains("warning: the APNs key file"), "\(matched.standardError)")
    }

    /// A replay that plans no alert says why, each time with what to do; one that does says which
    /// providers are ready.
    @Test func aReplayThatPlansNoAlertSaysWhy() throws {
        let replay = [
            "replay", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d", "--quiet",
        ]
        let empty = try nohit(replay)
        #expect(empty.status == 0, "\(empty.standardError)")
        #expect(
            empty.standardError.contains(
                "nohit: no alerts: no device is registered in d/nohit.sqlite: add one first (nohit devices add "
                    + "--console me, or devices seed --count N)"))
        #expect(empty.standardError.contains("APNs not ready: no APNs provider key"))
        #expect(empty.standardError.contains("Web Push ready: VAPID subject mailto:operator@localhost, public key B"))
        #expect(empty.standardError.contains("first start: created d/vapid.pem (the Web Push VAPID key)"))
        _ = try nohit(["devices", "add", "--data-dir", "d", "--console", "me"])
        let again = try nohit(replay)
        #expect(
            again.standardError.contains(
                "nohit: no alerts: every moment of this day was already stored in d/nohit.sqlite (by an earlier run, "
                    + "or another instance sharing it), and none is planned twice (not even for devices added since): "
                    + "replay it into a new --data-dir"))
        // Settings reach `replay` too: the day from the environment.
        let fresh = try nohit(
            ["replay", "--data", TestData.path("retrosheet"), "--data-dir", "fresh", "--quiet"],
            environment: ["NOHIT_REPLAY_DATE": "2020-08-25"])
        #expect(fresh.status == 0, "\(fresh.standardError)")
        #expect(fresh.standardError.contains("nohit: 2020-08-25: 16 games"))
    }

    /// `fake-apns.json` names its files from the root, so a service started elsewhere reads them.
    @Test func fakeAPNsWritesAbsolutePaths() async throws {
        let process = Process()
        process.executableURL = Executable.productsDirectory.appendingPathComponent("nohit")
        process.arguments = ["fake-apns", "--port", "0", "--dir", "fa"]
        process.currentDirectoryURL = folder
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        // The description is printed once listening, after the file is written.
        let line = try await Executable.onThread { output.fileHandleForReading.availableData }
        let printed = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        let written = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("fa/fake-apns.json")))
                as? [String: Any])
        for description in [printed, written] {
            let ca = try #require(description["ca"] as? String)
            let key = try #require(description["key"] as? String)
            #expect(ca == folder.appendingPathComponent("fa/ca.pem").standardizedFileURL.path)
            #expect(key == folder.appendingPathComponent("fa/AuthKey_FAKEKEY001.p8").standardizedFileURL.path)
        }
    }

    /// The hard open-file limit, when it is above 1,024 (then a soft limit of 1,024 can be raised).
    static let hardOpenFileLimit: Int? = {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_max > 1024 else {
            return nil
        }
        return limit.rlim_max > rlim_t(Int.max) ? Int.max : Int(limit.rlim_max)
    }()

    /// `serve` started under a soft open-file limit of 1,024 raises it to the hard limit (a live
    /// stream holds a descriptor per client) and says so; here it then stops on a port in use.
    @Test(.enabled(if: hardOpenFileLimit != nil, "the hard open-file limit is 1,024 or less: nothing to raise"))
    func serveRaisesItsOpenFileLimitToTheHardOne() async throws {
        let (listener, port) = try Self.occupyPort()
        defer { close(listener) }
        let nohit = Executable.productsDirectory.appendingPathComponent("nohit").path
        let result = try Executable.run(
            "/bin/sh",
            [
                "-c",
                "ulimit -Sn 1024 && exec \"$0\" serve --date 2020-08-25 --data \"$1\" --data-dir d --port \"$2\"",
                nohit, TestData.path("retrosheet"), "\(port)",
            ], in: folder)
        #expect(result.status != 0)
        #expect(result.standardError.contains("open-file limit raised to the hard limit"), "\(result.standardError)")
        #expect(result.standardError.contains("limit.before=1024"))
        #expect(result.standardError.contains("limit.after=\(Self.hardOpenFileLimit ?? 0)"))
    }

    /// A port in use is said in the operator's words, by every command that listens.
    @Test func aPortInUseIsNamedWithWhatToDo() async throws {
        let (listener, port) = try Self.occupyPort()
        defer { close(listener) }
        let cases: [[String]] = [
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d", "--port",
                "\(port)",
            ],
            ["fake-statsapi", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--port", "\(port)"],
            ["fake-apns", "--dir", "fa", "--port", "\(port)"],
        ]
        for arguments in cases {
            let result = try await Executable.onThread { try self.nohit(arguments) }
            #expect(result.status == 2, "\(arguments)")
            #expect(
                result.standardError.contains(
                    "nohit: port \(port) on 127.0.0.1 is in use: choose another with --port (0 picks a free one)"),
                "\(arguments): \(result.standardError)")
            #expect(!result.standardError.contains("errno"))
        }
    }

    /// `serve` and `fake-statsapi` take the day as `--date`, as `replay` does (`--replay` stays),
    /// and `serve` says where to open it and how to stop it.
    @Test func everyCommandTakesTheDayAsDate() async throws {
        for flag in ["--date", "--replay"] {
            let (process, address) = try Executable.start(
                "nohit",
                [
                    "serve", flag, "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", path("d\(flag)"),
                    "--port", "0", "--speed", "0",
                ])
            defer {
                process.terminate()
                process.waitUntilExit()
            }
            #expect(address.hasPrefix("http://127.0.0.1:"))
        }
        let banner = try Executable.startCollecting(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", path("b"),
                "--port", "0",
            ],
            until: "stops gracefully")
        #expect(banner.contains("nohit: serving 2020-08-25 (16 games) at speed 60.0 on http://127.0.0.1:"))
        #expect(banner.contains("/ in a browser; Ctrl-C (or SIGTERM) stops gracefully\n"))
        for flag in ["--date", "--replay"] {
            let (process, address) = try Executable.start(
                "nohit", ["fake-statsapi", flag, "2020-08-25", "--data", TestData.path("retrosheet"), "--port", "0"])
            defer {
                process.terminate()
                process.waitUntilExit()
            }
            #expect(address.hasSuffix("/api"), "\(address)")
            // A route it does not have is named, with the ones it has.
            let (body, response) = try await URLSession.shared.data(from: URL(string: address + "/v1/scheduled")!)
            #expect((response as? HTTPURLResponse)?.statusCode == 404)
            let message =
                ((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] as? [String: Any])?[
                    "message"] as? String ?? ""
            #expect(
                message.contains(
                    "no route for GET /api/v1/scheduled: this fake Stats API serves GET /api/v1/schedule?date="),
                "\(message)")
        }
        // The fake Stats API reads the day, speed and data as serve does: from NOHIT_* variables too.
        let fake = try Executable.startCollecting(
            "nohit", ["fake-statsapi", "--port", "0"], until: "/api/",
            keepRunning: false, in: folder,
            environment: [
                "NOHIT_REPLAY_DATE": "2020-08-25", "NOHIT_REPLAY_SPEED": "30",
                "NOHIT_RETROSHEET_DATA": TestData.path("retrosheet"),
            ])
        #expect(
            fake.output.contains("nohit: fake Stats API for 2020-08-25 (16 games) at speed 30.0 on"), "\(fake.output)")
        // The fake APNs writes where serve and replay look for it (apns.fake, NOHIT_APNS_FAKE).
        let apns = try Executable.startCollecting(
            "nohit", ["fake-apns"], until: " listening on ", keepRunning: false, in: folder,
            environment: ["NOHIT_APNS_FAKE": "shared-fake"])
        #expect(apns.output.contains("nohit: fake APNs and Web Push listening on https://127.0.0.1:"), "\(apns.output)")
        #expect(
            FileManager.default.fileExists(
                atPath: folder.appendingPathComponent("shared-fake/fake-apns.json").path), "\(apns.output)")
        let missing = try nohit(["fake-statsapi"], environment: ["NOHIT_REPLAY_DATE": ""])
        #expect(missing.status == 2)
        #expect(missing.standardError.contains("give the day to serve: --date YYYY-MM-DD"), "\(missing.standardError)")
    }

    /// docs/api.md is what `nohit openapi --markdown` prints from the OpenAPI document, which
    /// names every operation the router has (`openAPIDocumentMatchesTheRoutes`); and `nohit
    /// openapi` prints the document as served.
    @Test func theAPIReferenceIsTheOpenAPIDocument() throws {
        let generated = try nohit(["openapi", "--markdown"])
        #expect(generated.status == 0)
        let page = try String(contentsOf: TestData.packageRoot.appendingPathComponent("docs/api.md"), encoding: .utf8)
        #expect(
            generated.standardOutput == page,
            "docs/api.md is out of date: swift run nohit openapi --markdown > docs/api.md")
        let document = try nohit(["openapi"])
        let parsed = try #require(
            try JSONSerialization.jsonObject(with: Data(document.standardOutput.utf8)) as? [String: Any])
        let paths = try #require(parsed["paths"] as? [String: Any])
        var operations = 0
        for (path, item) in paths {
            for method in (item as? [String: Any] ?? [:]).keys where ["get", "put", "post", "delete"].contains(method) {
                operations += 1
                #expect(
                    page.contains("### \(method.uppercased()) \(path)\n"), "\(method) \(path) is not in docs/api.md")
            }
        }
        #expect(operations >= 25)
        let schemas = try #require((parsed["components"] as? [String: Any])?["schemas"] as? [String: Any])
        for name in schemas.keys { #expect(page.contains("### \(name)\n"), "schema \(name) is not in docs/api.md") }
        // Every link within the page lands on one of its headings.
        let anchors = Set(
            page.split(separator: "\n").filter { $0.hasPrefix("#") }.map { heading in
                String(
                    heading.drop { $0 == "#" }.dropFirst().lowercased().compactMap { character -> Character? in
                        character == " "
                            ? "-"
                            : (character.isLetter || character.isNumber || "-_".contains(character))
                                ? character : nil
                    })
            })
        for link in page.matches(of: /\]\(#([a-z0-9_-]+)\)/) {
            #expect(anchors.contains(String(link.1)), "a link to #\(link.1), which is no heading")
        }
    }

    /// docs/configuration.md is what `nohit settings --markdown` prints, and every flag it names is
    /// one the commands it lists take.
    @Test func theConfigurationReferenceIsTheCodesOwnList() throws {
        let generated = try nohit(["settings", "--markdown"])
        #expect(generated.status == 0)
        let page = try String(
            contentsOf: TestData.packageRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        #expect(
            generated.standardOutput == page,
            "docs/configuration.md is out of date: swift run nohit settings --markdown > docs/configuration.md")
        var helps: [String: String] = [:]
        let commands = [
            "serve": ["serve"], "replay": ["replay"], "devices": ["devices", "add"],
            "analytics": ["analytics", "project", "create"], "fake-statsapi": ["fake-statsapi"],
        ]
        var rows = 0
        for line in page.split(separator: "\n") where line.hasPrefix("| `") {
            rows += 1
            guard let match = line.firstMatch(of: /\| `--([a-z-]+)` \(([a-z, ]+)\) \|/) else { continue }
            for command in match.2.split(separator: ", ").map(String.init) {
                let arguments = try #require(commands[command], "\(command)")
                if helps[command] == nil { helps[command] = try nohit(arguments + ["--help"]).standardOutput }
                #expect(helps[command]?.contains("--\(match.1)") == true, "\(command) has no --\(match.1)")
            }
        }
        #expect(rows > 40)
    }

    /// A fake APNs refusing some tokens (400 BadDeviceToken, 410 Unregistered, 413 PayloadTooLarge):
    /// the devices it says are gone are pruned; the operator's failed-deliveries list shows each
    /// refusal with its device, channel and reason, and the counts by reason; the operator's
    /// feedback hook (the fake's Standard Webhooks receiver, which checks the signature) is told
    /// of each pruned device once, even when the day is replayed again.
    @Test func theOperatorSeesFailedDeliveriesAndIsToldOfPrunedDevicesOnce() async throws {
        let server = try await startFakeAPNs()
        defer { Task { try? await server.shutdown() } }
        let hook = server.state.webhookEndpoint(id: "operator-feedback", baseURL: server.baseURL)

        for (index, (prefix, count)) in [("400", 2), ("410", 2), ("413", 1), ("a", 1)].enumerated() {
            let seeded = try nohit([
                "devices", "seed", "--data-dir", "d", "--count", "\(count)", "--token-prefix", prefix, "--threshold",
                "4", "--seed", "\(index + 1)",
            ])
            #expect(seeded.status == 0, "\(seeded.standardError)")
        }
        let replay = [
            "replay", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d", "--fake-apns",
            path("fa"), "--quiet", "--feedback-url", hook.url,
        ]
        let first = try await Executable.onThread {
            try self.nohit(replay, environment: ["NOHIT_FEEDBACK_SECRET": hook.secret])
        }
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardError.contains("4 devices pruned"), "\(first.standardError)")
        #expect(first.standardError.contains("APNs ready: key id FAKEKEY001, team FAKETEAM01"))
        #expect(first.standardError.contains("feedback hook ready: every pruned device is told to \(hook.url)"))
        // Once more: nothing new is pruned, nothing is told twice.
        let again = try await Executable.onThread {
            try self.nohit(replay, environment: ["NOHIT_FEEDBACK_SECRET": hook.secret])
        }
        #expect(again.status == 0, "\(again.standardError)")
        let told = try #require(server.state.webhookMessages(id: "operator-feedback"))
        #expect(told.count == 4, "\(told.map(\.id))")
        #expect(Set(told.map(\.id)).count == 4)
        let events = try told.map { try #require(try JSONSerialization.jsonObject(with: $0.body) as? [String: Any]) }
        #expect(events.allSatisfy { $0["type"] as? String == "device.pruned" })
        let data = events.compactMap { $0["data"] as? [String: Any] }
        #expect(
            data.compactMap { $0["reason"] as? String }.sorted() == [
                "BadDeviceToken", "BadDeviceToken", "Unregistered", "Unregistered",
            ])
        #expect(data.allSatisfy { $0["channel"] as? String == "apns" && ($0["address"] as? String)?.count == 64 })
        #expect(data.allSatisfy { ($0["address"] as? String)?.hasPrefix("4") == true })
        // Without its secret the hook is refused before anything starts.
        let unsigned = try nohit(replay)
        #expect(unsigned.status == 2)
        #expect(unsigned.standardError.contains("feedback.url needs its signing secret: NOHIT_FEEDBACK_SECRET"))

        try Data("operator-token\n".utf8).write(to: folder.appendingPathComponent("admin-token"))
        // Readable by others, it is said at start, with how to mend it.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path("admin-token"))
        let open = try Executable.startCollecting(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", path("d"),
                "--port", "0", "--admin-token-file", path("admin-token"),
            ], until: " on http://")
        #expect(open.contains("may be read by other users of this machine (mode 644): chmod 600"), "\(open)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path("admin-token"))
        let (serve, address) = try Executable.start(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", path("d"),
                "--port", "0", "--admin-token-file", path("admin-token"),
            ])
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        var request = URLRequest(url: URL(string: address + "/api/admin/deliveries/failed?limit=200")!)
        request.setValue("Bearer operator-token", forHTTPHeaderField: "Authorization")
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let answer = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let recent = try #require(answer["recent"] as? [[String: Any]])
        let counts = try #require(answer["counts"] as? [[String: Any]])
        let reasons = Dictionary(grouping: recent) { $0["reason"] as? String ?? "" }
        #expect(Set(reasons.keys) == ["BadDeviceToken", "Unregistered", "413 PayloadTooLarge"], "\(reasons.keys)")
        // The devices said to be gone are disabled; the one whose alert was too large is not.
        #expect(reasons["BadDeviceToken"]?.allSatisfy { $0["device"] as? String == "disabled" } == true)
        #expect(reasons["Unregistered"]?.allSatisfy { $0["device"] as? String == "disabled" } == true)
        #expect(reasons["413 PayloadTooLarge"]?.allSatisfy { $0["device"] as? String == "active" } == true)
        #expect(Set(reasons["BadDeviceToken"]?.compactMap { $0["device_id"] as? String } ?? []).count == 2)
        #expect(
            recent.allSatisfy { $0["channel"] as? String == "apns" && ($0["failed_at"] as? String)?.isEmpty == false })
        #expect(answer["failed"] as? Int == recent.count)
        #expect(
            counts.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == recent.count
                && counts.contains { $0["reason"] as? String == "Unregistered" && $0["count"] as? Int == 2 })
    }

    /// Several apps on one server: each app's bundle id and default environment from the apps
    /// file, a device registered for one of them, and each app's pushes signed with its own key
    /// when it has one (here the fake APNs knows only the server's key, so the other team's app is
    /// refused InvalidProviderToken — its key was the one used).
    @Test func severalAppsOnOneServerEachWithItsKey() async throws {
        let server = try await startFakeAPNs()
        defer { Task { try? await server.shutdown() } }
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(
            to: URL(fileURLWithPath: path("AuthKey_OTHERKEY01.p8")))
        try Data(
            """
            {"apps": [
              {"id": "alerts", "topic": "com.example.nohit", "environment": "production"},
              {"id": "scored", "topic": "com.example.scored", "environment": "sandbox",
               "apns": {"key": "AuthKey_OTHERKEY01.p8", "key-id": "OTHERKEY01", "team-id": "OTHERTEAM1"},
               "web-origin": "https://Scored.Example.com:443/"}
            ]}
            """.utf8
        ).write(to: folder.appendingPathComponent("apps.json"))

        let alerts = try nohit([
            "devices", "add", "--data-dir", "d", "--apps", "apps.json", "--app", "alerts", "--apns",
            String(repeating: "a1", count: 32), "--threshold", "4",
        ])
        #expect(alerts.status == 0, "\(alerts.standardError)")
        #expect(alerts.standardOutput.contains("\ntopic: com.example.nohit\nenvironment: production\n"))
        #expect(!alerts.standardError.contains("default"))
        let scored = try nohit([
            "devices", "add", "--data-dir", "d", "--apps", "apps.json", "--app", "scored", "--apns",
            String(repeating: "a2", count: 32), "--threshold", "4",
        ])
        #expect(scored.standardOutput.contains("\ntopic: com.example.scored\nenvironment: sandbox\n"))
        let unknown = try nohit([
            "devices", "add", "--data-dir", "d", "--apps", "apps.json", "--app", "widgets", "--apns",
            String(repeating: "a3", count: 32),
        ])
        #expect(unknown.standardError.contains("nohit: --app widgets is not one of alerts, scored"))
        let unnamed = try nohit([
            "devices", "add", "--data-dir", "d", "--apps", "apps.json", "--apns", String(repeating: "a3", count: 32),
        ])
        #expect(unnamed.status == 2)
        #expect(unnamed.standardError.contains("nohit: this server declares apps (alerts, scored): give --app ID"))
        let other = try nohit([
            "devices", "add", "--data-dir", "d", "--apps", "apps.json", "--topic", "com.example.other", "--apns",
            String(repeating: "a3", count: 32),
        ])
        #expect(
            other.standardError.contains(
                "device refused: --topic 'com.example.other' is not an app of this server (com.example.nohit, "
                    + "com.example.scored)"))

        let replay = try await Executable.onThread {
            try self.nohit([
                "replay", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d",
                "--fake-apns", self.path("fa"), "--apps", "apps.json", "--quiet",
            ])
        }
        #expect(replay.status == 0, "\(replay.standardError)")
        #expect(
            replay.standardError.contains(
                "APNs app alerts (com.example.nohit): the server's key; devices default to production"))
        #expect(
            replay.standardError.contains(
                "APNs app scored (com.example.scored): its own key id OTHERKEY01, team OTHERTEAM1; devices default to "
                    + "sandbox"))
        let accepted = server.state.accepted
        #expect(!accepted.isEmpty)
        #expect(
            accepted.allSatisfy { server.state.notification(apnsID: $0.apnsID)?.topic == "com.example.nohit" })
        // Delivered: the devices' pushes, and the broadcasts on the bid's channels.
        let broadcasts = server.state.acceptedBroadcasts.count
        #expect(broadcasts > 0)
        #expect(
            replay.standardError.contains("this run: \(accepted.count + broadcasts) delivered"),
            "\(replay.standardError)")
        // The other team's app: its own key signed its pushes, which this fake refuses: held, not
        // failed (HeldDeliveriesCLITests follows them to the mended key).
        #expect(replay.standardError.contains(" 0 failed, \(accepted.count) held"), "\(replay.standardError)")

        // The API: a device names its app (or a declared app's topic), and is told what was stored.
        let (api, address) = try Executable.start(
            "nohit",
            [
                "serve", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", path("d"),
                "--port", "0", "--apps", path("apps.json"),
            ])
        defer {
            api.terminate()
            api.waitUntilExit()
        }
        func register(_ body: String) async throws -> (Int, [String: Any]) {
            var request = URLRequest(url: URL(string: address + "/api/devices")!)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            return (
                (response as? HTTPURLResponse)?.statusCode ?? 0,
                try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
            )
        }
        let token = String(repeating: "a4", count: 32)
        let (created, stored) = try await register(#"{"channel": "apns", "token": "\#(token)", "app": "scored"}"#)
        #expect(created == 201)
        #expect(stored["topic"] as? String == "com.example.scored" && stored["environment"] as? String == "sandbox")
        #expect(stored["app"] as? String == "scored")
        let (unknownApp, why) = try await register(#"{"channel": "apns", "token": "\#(token)", "app": "widgets"}"#)
        #expect(unknownApp == 400)
        #expect(
            ((why["error"] as? [String: Any])?["message"] as? String)?.contains(
                "'widgets' is not an app of this server")
                == true)
        let (elsewhere, _) = try await register(
            #"{"channel": "apns", "token": "\#(token)", "topic": "com.example.other"}"#)
        #expect(elsewhere == 400)
        let (document, _) = try await URLSession.shared.data(from: URL(string: address + "/openapi.json")!)
        let schemas = try #require(
            ((try JSONSerialization.jsonObject(with: document) as? [String: Any])?["components"] as? [String: Any])?[
                "schemas"] as? [String: Any])
        let variants = try #require((schemas["DeviceRegistration"] as? [String: Any])?["oneOf"] as? [[String: Any]])
        for title in ["apns", "live-activity", "live-activity-start"] {
            let variant = try #require(variants.first { $0["title"] as? String == title })
            let properties = try #require(variant["properties"] as? [String: [String: Any]])
            #expect(properties["app"]?["enum"] as? [String] == ["alerts", "scored"], "\(title)")
            #expect(
                properties["topic"]?["enum"] as? [String] == ["com.example.nohit", "com.example.scored"], "\(title)")
        }
        // The scored app's web page, served from its own origin, may register here (CORS preflight).
        var preflight = URLRequest(url: URL(string: address + "/api/devices")!)
        preflight.httpMethod = "OPTIONS"
        preflight.setValue("https://scored.example.com", forHTTPHeaderField: "Origin")
        preflight.setValue("POST", forHTTPHeaderField: "Access-Control-Request-Method")
        let (_, allowed) = try await URLSession.shared.data(for: preflight)
        #expect((allowed as? HTTPURLResponse)?.statusCode == 204)
        #expect(
            (allowed as? HTTPURLResponse)?.value(forHTTPHeaderField: "Access-Control-Allow-Origin")
                == "https://scored.example.com")

        let bad = folder.appendingPathComponent("bad-apps.json")
        try Data(
            #"{"apps": [{"id": "a", "topic": "com.x.y", "apns": {"key": "missing.p8", "key-id": "ABC", "team-id": "T"}}]}"#
                .utf8
        )
        .write(to: bad)
        let refused = try nohit([
            "replay", "--date", "2020-08-25", "--data", TestData.path("retrosheet"), "--data-dir", "d", "--apps",
            "bad-apps.json",
        ])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("the apps file bad-apps.json, app 'a'"), "\(refused.standardError)")
        for origin in ["http://scored.example.com", "https://scored.example.com/app", "scored.example.com"] {
            try Data(#"{"apps": [{"id": "a", "topic": "com.x.y", "web-origin": "\#(origin)"}]}"#.utf8).write(to: bad)
            let refused = try nohit([
                "devices", "add", "--data-dir", "d", "--apps", "bad-apps.json", "--app", "a", "--console", "x",
            ])
            #expect(refused.status == 2, "\(origin)")
            #expect(
                refused.standardError.contains(
                    "app 'a': web-origin must be an origin, https://host[:port] (http only for localhost), with no "
                        + "path, not '\(origin)'"), "\(refused.standardError)")
        }
    }

    /// A fake APNs in this process (so a test reads what it received), described in `fa/` as
    /// `nohit fake-apns` describes itself, for `--fake-apns fa`.
    func startFakeAPNs() async throws -> FakeProviderServer {
        let key = P256.Signing.PrivateKey()
        let server = try await FakeProviderServer.start(
            configuration: FakeProviderConfiguration(
                verificationKey: key.publicKey, keyID: "FAKEKEY001", teamID: "FAKETEAM01"))
        try FileManager.default.createDirectory(atPath: path("fa"), withIntermediateDirectories: true)
        try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: path("fa/key.p8")))
        try Data(server.authority.caCertificatePEM.utf8).write(to: URL(fileURLWithPath: path("fa/ca.pem")))
        try JSONSerialization.data(withJSONObject: [
            "url": server.baseURL, "ca": path("fa/ca.pem"), "key": path("fa/key.p8"), "key_id": "FAKEKEY001",
            "team_id": "FAKETEAM01",
        ]).write(to: URL(fileURLWithPath: path("fa/fake-apns.json")))
        return server
    }

    /// A socket bound to a free loopback port and listening, and that port.
    static func occupyPort() throws -> (Int32, Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        try #require(bound == 0 && listen(descriptor, 1) == 0)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
