import Alerts
import ArgumentParser
import Clocks
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
/// database (recovered from an unclean stop), the delivery channels, and the replay clock.
struct ReplaySetup {
    var games: [ReplayGame]
    var places: [String]
    var database: SQLiteStore
    var settings: ProviderSettings
    var channels: ProviderChannels
    var clock: any WallClock
    /// The clock when the day runs as fast as possible (speed 0).
    var manual: ManualWallClock?

    /// Checks what both commands take: the clock speed and the requests in flight.
    static func validate(speed: Double, concurrency: Int) throws {
        guard speed >= 0 && speed.isFinite else { throw ValidationError("--speed must be 0 or more") }
        guard (1...10_000).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 10,000") }
    }

    static func prepare(
        date: String, speed: Double, settings: Settings, store: StoreOptions, providers: ProviderOptions,
        logger: Logger
    ) async throws -> ReplaySetup {
        let places = try retrosheetPlaces(settings)
        let games = try self.games(on: date, places: places)
        let firstPitch = games.map(\.start).min()!
        let manual = speed == 0 ? ManualWallClock(firstPitch.addingTimeInterval(-60)) : nil
        let clock: any WallClock =
            manual ?? ScaledWallClock(virtualStart: firstPitch.addingTimeInterval(-60), speed: speed)
        let delivery = try await prepareDelivery(
            settings: settings, store: store, providers: providers, clock: clock, logger: logger)
        return ReplaySetup(
            games: games, places: places, database: delivery.database, settings: delivery.settings,
            channels: delivery.channels, clock: clock, manual: manual)
    }

    /// The Retrosheet games of a day, or exit status 2 with the reason.
    static func games(on date: String, places: [String]) throws -> [ReplayGame] {
        let missing = places.filter { !FileManager.default.fileExists(atPath: $0) }
        guard missing.isEmpty else {
            StandardStreams.writeError(
                "nohit: no Retrosheet data at \(missing.joined(separator: ", ")) (from "
                    + "\(FileManager.default.currentDirectoryPath)); the 2020 season that comes with nohit is "
                    + "Data/retrosheet in its source directory: run nohit from there, or pass --data DIR "
                    + "(a directory of season folders)\n")
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

    /// The database (recovered from an unclean stop) and the delivery channels: what every
    /// source needs.
    static func prepareDelivery(
        settings: Settings, store: StoreOptions, providers: ProviderOptions, clock: any WallClock, logger: Logger
    ) async throws -> (database: SQLiteStore, settings: ProviderSettings, channels: ProviderChannels) {
        let location = try store.location(settings)
        let database = try location.open()
        let providerSettings = try providers.settings(settings, dataDir: location.dataDir) { line in
            // Flushed at once: the demo's alerts show up even when standard output is a file.
            print("console: \(line)")
            fflush(nil)
        }
        let channels = try ProviderChannels(providerSettings)
        for (kind, reason) in channels.unavailable.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            logger.warning(
                "channel unavailable; its alerts stay queued",
                metadata: ["channel": "\(kind.rawValue)", "reason": "\(reason)"])
        }

        let recovery: RecoveryReport
        do {
            recovery = try await database.recoverInDoubt(now: clock.now())
        } catch {
            try? await channels.shutdown()
            throw error
        }
        if !recovery.requeued.isEmpty || !recovery.superseded.isEmpty {
            StandardStreams.writeError(
                "nohit: recovered after an unclean stop: \(recovery.requeued.count) in-doubt alerts queued again, "
                    + "\(recovery.superseded.count) superseded by later alerts\n")
        }
        return (database, providerSettings, channels)
    }
}
