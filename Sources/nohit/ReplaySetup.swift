import Alerts
import ArgumentParser
import Clocks
import Delivery
import Foundation
import Logging
import Pipeline
import Retrosheet
import Storage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `nohit replay` and `nohit serve` both set up before a day is played: the day's games, the
/// database (recovered from an unclean stop), the delivery channels, and the replay clock — for
/// instances sharing a PostgreSQL database, the run they play the day in together, on one clock.
struct ReplaySetup {
    var games: [ReplayGame]
    var places: [String]
    var database: any ServiceStore
    var settings: ProviderSettings
    var channels: ProviderChannels
    /// The operator's feedback hook, when `feedback.url` is set.
    var feedback: FeedbackHook?
    var clock: any WallClock
    /// The clock when the day runs as fast as possible (speed 0).
    var manual: ManualWallClock?
    /// The run the instances sharing the database play the day in, if they do.
    var run: SharedRun?

    /// Checks what both commands take: the clock speed and the requests in flight.
    static func validate(speed: Double, concurrency: Int) throws {
        guard speed >= 0 && speed.isFinite else { throw ValidationError("--speed must be 0 or more, not \(speed)") }
        guard (1...10_000).contains(concurrency) else {
            throw ValidationError("--concurrency must be 1 to 10,000, not \(concurrency)")
        }
    }

    /// The day's games and where they were read, before anything is opened or written: a day
    /// that cannot be read leaves nothing behind.
    static func day(_ date: String, settings: Settings) throws -> (games: [ReplayGame], places: [String]) {
        let places = try retrosheetPlaces(settings)
        return (try games(on: date, places: places), places)
    }

    static func prepare(
        day: (games: [ReplayGame], places: [String]), speed: Double, settings: Settings, store: OpenedStore,
        location: StoreLocation, providers: ProviderOptions, logger: Logger
    ) async throws -> ReplaySetup {
        let (games, places) = day
        let date = games.first?.info.date ?? ""
        let firstPitch = games.map(\.start).min()!
        let virtualStart = firstPitch.addingTimeInterval(-60)
        var run: SharedRun?
        let manual: ManualWallClock?
        let clock: any WallClock
        if let coordination = store.coordination {
            guard speed > 0 else {
                throw ValidationError(
                    "instances sharing a PostgreSQL database replay a day on a shared clock: give --speed N (N > 0); "
                        + "--speed 0 (as fast as possible) needs the SQLite database")
            }
            // Instances started while the day is still being played join its run (and its clock);
            // a later start plays the day again in a new run (moments already stored send nothing).
            let lastEnd = games.map(\.end).max() ?? firstPitch
            let length = lastEnd.timeIntervalSince(virtualStart) / speed
            let shared = try await coordination.joinRun(
                key: "replay \(date) x\(speed)", epoch: Date().timeIntervalSince1970,
                notBefore: Date().addingTimeInterval(-length - 60))
            run = shared
            manual = nil
            clock = ScaledWallClock(
                virtualStart: virtualStart, speed: speed, realStart: Date(timeIntervalSince1970: shared.epoch))
        } else {
            manual = speed == 0 ? ManualWallClock(virtualStart) : nil
            clock = manual ?? ScaledWallClock(virtualStart: virtualStart, speed: speed)
        }
        let delivery = try await prepareDelivery(
            settings: settings, store: store, location: location, providers: providers, clock: clock, logger: logger)
        return ReplaySetup(
            games: games, places: places, database: store.store, settings: delivery.settings,
            channels: delivery.channels, feedback: delivery.feedback, clock: clock, manual: manual, run: run)
    }

    /// The Retrosheet games of a day, or exit status 2 with the reason.
    static func games(on date: String, places: [String]) throws -> [ReplayGame] {
        let missing = places.filter { !FileManager.default.fileExists(atPath: $0) }
        guard missing.isEmpty else {
            StandardStreams.writeError(
                "nohit: no Retrosheet data at \(missing.joined(separator: ", ")) (from "
                    + "\(FileManager.default.currentDirectoryPath)); the 2020 season that comes with nohit is "
                    + "Data/retrosheet in its source directory: run nohit from there, or pass --data DIR "
                    + "(a directory of season folders; NOHIT_RETROSHEET_DATA), or set NOHIT_RETROSHEET to that "
                    + "directory\n")
            throw ExitCode(2)
        }
        do {
            return try ReplaySchedule.games(on: date, data: places)
        } catch {
            StandardStreams.writeError("nohit: \(error)\n")
            throw ExitCode(2)
        }
    }

    /// Where Retrosheet seasons are read (the hall of fame, replays).
    static func retrosheetPlaces(_ settings: Settings) throws -> [String] {
        let data = try settings.strings("retrosheet.data") ?? []
        return data.isEmpty ? RetrosheetData.defaultPlaces() : data
    }

    /// The operator's feedback hook from `feedback.url` and `feedback.secret`, or nil when none is
    /// set. Its URL is the operator's: reached on loopback too, with the providers' extra CAs.
    static func feedbackHook(
        settings: Settings, providers: ProviderSettings, store: any FeedbackStore, logger: Logger
    ) throws -> FeedbackHook? {
        guard let url = try settings.string("feedback.url") else { return nil }
        guard let target = HTTP1Client.Target(url: url) else {
            throw ValidationError("feedback.url (--feedback-url) must be an https URL, not '\(url)'")
        }
        guard let secret = try settings.string("feedback.secret") else {
            throw ValidationError(
                "feedback.url needs its signing secret: NOHIT_FEEDBACK_SECRET (whsec_...), or feedback.secret in the "
                    + "configuration file")
        }
        var configuration = HTTP1Client.Configuration()
        configuration.extraCertificateAuthorities = providers.extraCertificateAuthorities
        configuration.endpointGuard = providers.endpointGuard
        configuration.endpointGuard.trusted.insert(EndpointGuard.Endpoint(host: target.host, port: target.port))
        do {
            return try FeedbackHook(
                store: store, url: url, secret: secret, client: try HTTP1Client(configuration: configuration),
                clock: SystemWallClock(), logger: logger)
        } catch let error as StandardWebhooks.SecretError {
            throw ValidationError("feedback.secret: \(error)")
        }
    }

    /// One line per provider saying it is ready, and with what (or why not): at every start, so
    /// that an operator sees the APNs key, team and hosts in use before the first alert.
    static func readiness(_ settings: ProviderSettings, unavailable: [ChannelKind: String]) -> [(String, ready: Bool)] {
        var lines: [(String, ready: Bool)] = []
        let hasServerKey = settings.apnsKey != nil && !settings.apnsKeyID.isEmpty && !settings.apnsTeamID.isEmpty
        if let reason = unavailable[.apns] {
            lines.append(
                (
                    "APNs not ready: \(reason) (--apns-key, --apns-key-id, --apns-team-id; or --fake-apns DIR): "
                        + "APNs and Live Activity alerts wait in the outbox", false
                ))
        } else {
            let hosts =
                settings.apnsProductionURL == settings.apnsSandboxURL
                ? "both environments at \(settings.apnsProductionURL)"
                : "production at \(settings.apnsProductionURL), sandbox at \(settings.apnsSandboxURL)"
            let signer =
                hasServerKey
                ? "key id \(settings.apnsKeyID), team \(settings.apnsTeamID)"
                : "for the apps with keys of their own only (no server-wide key)"
            lines.append(
                (
                    "APNs ready: \(signer), \(hosts); each device's topic (its app's bundle id) and environment as "
                        + "registered", true
                ))
        }
        for app in settings.apps {
            let signed = app.key != nil || hasServerKey
            let signer =
                app.key != nil
                ? "its own key id \(app.keyID), team \(app.teamID)"
                : hasServerKey
                    ? "the server's key"
                    : "no key, so its alerts cannot be signed: declare one for it, or a server-wide one"
            lines.append(
                ("APNs app \(app.id) (\(app.topic)): \(signer); devices default to \(app.environment.rawValue)", signed)
            )
        }
        lines.append(
            (
                "Web Push ready: VAPID subject \(settings.vapidSubject), public key "
                    + VAPID(key: settings.vapidKey, subject: settings.vapidSubject).publicKeyBase64URL, true
            ))
        lines.append(
            (
                "webhooks ready: signed as Standard Webhooks"
                    + (settings.endpointGuard.allowPrivateNetworks ? ", private networks allowed" : ""), true
            ))
        return lines
    }

    /// The delivery channels, once the database is recovered from an unclean stop: what every
    /// source needs.
    static func prepareDelivery(
        settings: Settings, store: OpenedStore, location: StoreLocation, providers: ProviderOptions,
        clock: any WallClock, logger: Logger
    ) async throws -> (settings: ProviderSettings, channels: ProviderChannels, feedback: FeedbackHook?) {
        let providerSettings = try providers.settings(settings, dataDir: location.dataDir) { line in
            // Flushed at once: the demo's alerts show up even when standard output is a file.
            print("console: \(line)")
            fflush(nil)
        }
        // Before the channels: nothing to shut down when the hook's settings are wrong.
        let feedback = try feedbackHook(
            settings: settings, providers: providerSettings, store: store.store, logger: logger)
        let channels = try ProviderChannels(providerSettings)
        for (line, ready) in readiness(providerSettings, unavailable: channels.unavailable) {
            if ready { logger.notice("\(line)") } else { logger.warning("\(line)") }
        }

        let recovery: RecoveryReport
        do {
            // SQLite: every attempt left unfinished; PostgreSQL: those whose instance's lease lapsed.
            recovery = try await store.store.recoverInDoubt(now: clock.now())
        } catch {
            try? await channels.shutdown()
            throw error
        }
        if !recovery.requeued.isEmpty || !recovery.superseded.isEmpty {
            StandardStreams.writeError(
                "nohit: recovered after an unclean stop: \(recovery.requeued.count) in-doubt alerts queued again, "
                    + "\(recovery.superseded.count) superseded by later alerts\n")
        }
        if let feedback { logger.notice("feedback hook ready: every pruned device is told to \(feedback.url)") }
        return (providerSettings, channels, feedback)
    }
}
