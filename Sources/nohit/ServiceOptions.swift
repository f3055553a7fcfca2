import ArgumentParser
import Dispatch
import FakeProviders
import Foundation
import Logging
import Pipeline
import Storage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the service keeps its state: the data directory, the SQLite database in it.
struct StoreOptions: ParsableArguments {
    @Option(help: "Directory for the database and the service's keys.")
    var dataDir = "nohit-data"

    @Option(help: "SQLite database file (default: <data-dir>/nohit.sqlite).")
    var database: String?

    var databasePath: String { database ?? (dataDir as NSString).appendingPathComponent("nohit.sqlite") }

    /// Opens (creating and migrating as needed) the database.
    func open() throws -> SQLiteStore {
        let directory = (databasePath as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            return try SQLiteStore(path: databasePath)
        } catch {
            StandardStreams.writeError("nohit: cannot open the database \(databasePath): \(error)\n")
            throw ExitCode(2)
        }
    }
}

/// How to reach the push providers.
struct ProviderOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A directory written by `nohit fake-apns`: use that fake APNs (its URL, CA and key).",
            valueName: "dir"))
    var fakeApns: String?

    @Option(help: "APNs base URL for both environments (default: Apple's production and sandbox URLs).")
    var apnsURL: String?

    @Option(help: ArgumentHelp("The APNs provider key (.p8).", valueName: "file"))
    var apnsKey: String?

    @Option(help: "The APNs key id (10 characters, from the developer account).")
    var apnsKeyID: String?

    @Option(help: "The APNs team id.")
    var apnsTeamID: String?

    @Option(help: "How APNs requests travel: http2 (the lean client) or async-http-client.")
    var apnsTransport = APNsTransportChoice.http2.rawValue

    @Option(help: "HTTP/2 connections per APNs host (http2 transport).")
    var apnsConnections = 4

    @Option(help: ArgumentHelp("Also trust this certificate authority (PEM).", valueName: "file"))
    var trustCA: [String] = []

    @Option(help: ArgumentHelp("The Web Push VAPID key (PEM; created when missing).", valueName: "file"))
    var vapidKey: String?

    @Option(help: "The VAPID subject: a mailto: or https: contact for push services.")
    var vapidSubject = "mailto:operator@localhost"

    @Option(help: "Deadline of each provider request, in seconds.")
    var requestTimeout = 10

    func settings(dataDir: String, console: @escaping @Sendable (String) -> Void) throws -> ProviderSettings {
        do {
            let vapidPath = vapidKey ?? (dataDir as NSString).appendingPathComponent("vapid.pem")
            var settings = ProviderSettings(vapidKey: try KeyFiles.signingKey(at: vapidPath).key)
            settings.vapidSubject = vapidSubject
            settings.requestTimeout = .seconds(Int64(max(1, requestTimeout)))
            settings.writeConsole = console
            guard let transport = APNsTransportChoice(rawValue: apnsTransport) else {
                throw ValidationError("--apns-transport must be http2 or async-http-client")
            }
            settings.apnsTransport = transport
            settings.apnsConnections = apnsConnections
            if let fakeApns {
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
            }
            if let apnsURL {
                settings.apnsProductionURL = apnsURL
                settings.apnsSandboxURL = apnsURL
            }
            if let apnsKey { settings.apnsKey = try KeyFiles.readSigningKey(apnsKey) }
            if let apnsKeyID { settings.apnsKeyID = apnsKeyID }
            if let apnsTeamID { settings.apnsTeamID = apnsTeamID }
            for path in trustCA { settings.extraCertificateAuthorities.append(try KeyFiles.readText(path)) }
            return settings
        } catch {
            StandardStreams.writeError("nohit: \(error)\n")
            throw ExitCode(2)
        }
    }
}

/// Log level for the service's diagnostics (on standard error).
struct LoggingOptions: ParsableArguments {
    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "notice"

    func bootstrap() throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            StandardStreams.writeError("nohit: --log-level \(logLevel) is not a log level\n")
            throw ExitCode(2)
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// SIGINT and SIGTERM as a request to stop gracefully.
final class TerminationSignals: @unchecked Sendable {
    // Set once in init; dispatch sources are thread-safe to cancel.
    private let sources: [any DispatchSourceSignal]

    /// Calls `handler` with the signal number, on a background queue, each time one arrives.
    init(_ handler: @escaping @Sendable (Int32) -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(number) }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
