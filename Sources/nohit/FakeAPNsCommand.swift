import ArgumentParser
import Configuration
import Crypto
import FakeProviders
import Foundation
import Pipeline
import UnixSignals

/// `nohit fake-apns`: a local APNs and Web Push provider for tests, benchmarks and the demo.
struct FakeAPNsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fake-apns",
        abstract: "Run a local fake APNs (HTTP/2 over TLS) and Web Push service.",
        discussion: """
            A certificate authority is generated on every start. The provider key is read from --key, or \
            created there when missing. The directory gets ca.pem, the key, and fake-apns.json (URL, CA, key, \
            key id, team id), which `nohit replay --fake-apns DIR` reads; the same JSON is printed on standard \
            output once listening.

            APNs: POST /3/device/<token> checks the headers, the provider JWT and the payload size, then \
            answers by token prefix: 400 BadDeviceToken, 403 Forbidden, 410 Unregistered (4100: unregistered \
            long ago), 413 PayloadTooLarge, 429/500/503 fail then succeed, 60a GOAWAY then succeed, 57a11 \
            stall then succeed, e0 expired provider token; any other hex token is accepted. GET /accepted \
            lists every accepted apns-id with how many times (GET /accepted/count: the counts alone; GET \
            /accepted/timeline: each moment's first and last acceptance, CLOCK_MONOTONIC nanoseconds); \
            GET /notifications/<apns-id> shows one; \
            GET /stats counts statuses; POST /reset forgets everything.

            Broadcast push (iOS 18), on the same host for both of Apple's (management and broadcasts) and both \
            environments: POST /1/apps/<bundle>/channels {"message-storage-policy": 0|1, "push-type": \
            "LiveActivity"} makes a channel (201, apns-channel-id; at most 10,000 an app: TooManyChannels), GET \
            and DELETE of it with apns-channel-id (204), GET /1/apps/<bundle>/all-channels lists them; POST \
            /4/broadcasts/apps/<bundle> refuses in Apple's order (MissingChannelId, MissingPushType, \
            InvalidPushType, BadExpirationDate, BadPriority, ChannelNotRegistered, PayloadEmpty, 413 above 5,120 \
            bytes). A device's activity subscribes when a push-to-start names input-push-channel, or by POST \
            /channels/<id>/subscribers {"devices": [...]}; GET /broadcasts says what each broadcast reached, GET \
            /channels/<bundle> each channel's subscribers. A push-to-start (event start) past a device's budget \
            (--start-budget in --start-window) is refused with 429 TooManyRequests; GET /starts lists those \
            accepted and counts those refused. POST /channels/stall {"stall": true} makes channels without \
            answering (a sender killed meanwhile leaves one it never learned of), until false.

            Web Push: POST /webpush/subscriptions creates a subscription (endpoint and keys, as a browser \
            would get); POST /webpush/<id> checks VAPID and decrypts (aes128gcm); GET /webpush/<id>/messages \
            shows what it decrypted. Webhooks: POST /webhooks/endpoints, then POST /webhooks/<id> verifies \
            Standard Webhooks signatures.
            """
    )

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 0

    @Option(
        help: ArgumentHelp(
            "Directory for ca.pem, the key and fake-apns.json: the one serve and replay read as --fake-apns "
                + "(default: apns.fake, NOHIT_APNS_FAKE, else nohit-data/fake-apns).", valueName: "dir"))
    var dir: String?

    @Option(
        help: ArgumentHelp(
            "A JSON configuration file (default: $NOHIT_CONFIG): its apns.fake is the directory.", valueName: "file"))
    var config: String?

    @Option(
        help: ArgumentHelp("The provider key (.p8) to accept (default: <dir>/AuthKey_<key-id>.p8).", valueName: "file"))
    var key: String?

    @Option(help: "The key id the JWT must carry.")
    var keyID = "FAKEKEY001"

    @Option(help: "The team id the JWT must carry.")
    var teamID = "FAKETEAM01"

    @Option(help: "Attempts of a scripted failure (429, 5xx, GOAWAY, stall) that fail before one succeeds.")
    var failuresBeforeSuccess = 1

    @Option(
        help:
            "Push-to-start starts one device accepts per --start-window seconds; past it 429 TooManyRequests (0: none)."
    )
    var startBudget = 10

    @Option(help: "The push-to-start budget's window, in seconds.")
    var startWindow = 3600

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535, not \(port)") }
        guard startBudget >= 0, startWindow > 0 else {
            throw ValidationError("--start-budget must be 0 or more and --start-window more than 0")
        }
        guard (0...100).contains(failuresBeforeSuccess) else {
            throw ValidationError("--failures-before-success must be 0 to 100, not \(failuresBeforeSuccess)")
        }
        _ = try ProviderOptions.appleID(keyID, "key id", "--key-id")
        _ = try ProviderOptions.appleID(teamID, "team id", "--team-id")
    }

    /// `path` from the root: fake-apns.json is read from wherever the service is started.
    static func absolute(_ path: String) -> String {
        let full =
            path.hasPrefix("/")
            ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
        return (full as NSString).standardizingPath
    }

    func run() async throws {
        // The directory serve and replay are told to use (apns.fake), unless --dir names another.
        var flags: [String: ConfigContent] = [:]
        if let dir { flags["apns.fake"] = .string(dir) }
        let settings = try await Settings.load(flags: flags, file: config)
        let dir = try settings.string("apns.fake", default: "nohit-data/fake-apns")
        guard !dir.isEmpty else { throw ValidationError("the fake's directory (--dir, apns.fake) is empty") }
        let keyPath = key ?? (dir as NSString).appendingPathComponent("AuthKey_\(keyID).p8")
        let caPath = (dir as NSString).appendingPathComponent("ca.pem")
        let signingKey: P256.Signing.PrivateKey
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            signingKey = try KeyFiles.signingKey(at: keyPath).key
        } catch {
            StandardStreams.writeError("nohit: \(error)\n")
            throw ExitCode(2)
        }
        var configuration = FakeProviderConfiguration(
            verificationKey: signingKey.publicKey, keyID: keyID, teamID: teamID)
        configuration.failuresBeforeSuccess = failuresBeforeSuccess
        configuration.startBudget = startBudget > 0 ? startBudget : nil
        configuration.startWindow = TimeInterval(startWindow)
        let server: FakeProviderServer
        do {
            server = try await FakeProviderServer.start(host: host, port: port, configuration: configuration)
        } catch {
            StandardStreams.writeError(
                "nohit: \(SystemErrors.listening(error, host: host, port: port) ?? "cannot listen on \(host):\(port): \(error)")\n"
            )
            throw ExitCode(2)
        }
        let description = FakeProviderDescription(
            url: server.baseURL, ca: Self.absolute(caPath), key: Self.absolute(keyPath), keyID: keyID, teamID: teamID)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(description)
        do {
            try Data(server.authority.caCertificatePEM.utf8).write(to: URL(fileURLWithPath: caPath), options: .atomic)
            try json.write(
                to: URL(fileURLWithPath: (dir as NSString).appendingPathComponent("fake-apns.json")), options: .atomic)
        } catch {
            StandardStreams.writeError("nohit: cannot write to \(dir): \(error)\n")
            try? await server.shutdown()
            throw ExitCode(2)
        }
        try StandardStreams.writeOutput(Array(json) + [0x0A])
        StandardStreams.writeError("nohit: fake APNs and Web Push listening on \(server.baseURL)\n")

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) {
                    try? await server.shutdown()
                    return
                }
            }
            try await server.waitUntilClosed()
            tasks.cancelAll()
        }
    }
}
