import ArgumentParser
import Foundation
import Pipeline

/// `nohit push test --device ID`: one real push to one registered device through the provider
/// the settings configure (as `serve` would send it), and what the provider said.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "Send pushes by hand.", subcommands: [Test.self])

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Send one test push to a device through the configured provider and print its answer.",
            discussion: """
                The device (its id, as `nohit devices add` or the API printed it) gets a notification \
                \"No-Hitter Alerts: a test push\" through APNs, Web Push or its webhook, with the same \
                provider settings `serve` uses (give the same flags, variables or --config). Exit status 0 \
                when the provider accepted it, 1 otherwise. Nothing is stored; the device is not changed \
                whatever the provider says.
                """)

        @OptionGroup var store: StoreOptions
        @OptionGroup var providers: ProviderOptions
        @Option(help: "The device's id.") var device: String

        func run() async throws {
            guard let id = UUID(uuidString: device) else {
                throw ValidationError(
                    "--device must be a device's id (a UUID, as devices add printed it), not '\(device)'")
            }
            let config = try await store.settings(providers.flags)
            let location = try store.location(config)
            let (settings, missingVAPIDKey) = try providers.settings(config, dataDir: location.dataDir) { line in
                print("console: \(line)")
            }
            let found = try await location.withStore(existing: true) { opened in try await opened.store.device(id: id) }
            guard let found else {
                throw ValidationError("no device \(id.uuidString.lowercased()) in \(location.databasePath)")
            }
            if case .webPush = found.channel, let missingVAPIDKey {
                throw ValidationError(
                    "no VAPID key at \(missingVAPIDKey): a Web Push subscription works only with the key it was made "
                        + "with (the one serve made at its first start; --vapid-key names another)")
            }
            if case .disabled(let reason, _) = found.status {
                StandardStreams.writeError("nohit: the device is disabled (\(reason)); sending the test push anyway\n")
            }
            let channels = try ProviderChannels(settings)
            let result = await PushTest.send(to: found, through: channels, now: Date())
            try? await channels.shutdown()
            if result.accepted {
                print(result.summary)
            } else {
                StandardStreams.writeError("nohit: \(result.summary)\n")
                throw ExitCode(1)
            }
        }
    }
}
