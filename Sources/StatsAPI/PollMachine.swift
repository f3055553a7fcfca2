import Baseball
import Foundation
import JSON
import Logging

/// The poller's decisions, without I/O: when the schedule is asked for and for which dates, which
/// games are due, which request each gets (a diffPatch after the timecode kept, or the whole feed),
/// and what each answer means for the game (a patch applied, a feed older than the one kept, a
/// failure backed off, a feed that stopped moving, a game over). ``StatsAPIPoller`` makes the
/// requests and sleeps; the machine is given the times, the answers and the random draws, and
/// says what to log.
package struct PollMachine: Sendable {
    package struct Settings: Sendable {
        package var scheduleInterval: TimeInterval = 60
        /// Used when a feed gives no wait hint, and as the floor of every backoff.
        package var defaultWait = 10
        package var maximumBackoff: TimeInterval = 300
        /// A live game whose timecode has not moved for this long is fetched whole again.
        package var staleAfter: TimeInterval = 600
        /// How long before a game another instance polls is asked about again.
        package var claimInterval: TimeInterval = 5
        /// The least time between two requests for a game that a push message brings forward.
        package var nudgeInterval: TimeInterval = 1
        /// How often a game is asked for again, `nudgeInterval` apart, when its feed is older than
        /// the timecode a push message named (the message came before the feed moved).
        package var nudgeRetries = 3

        package init() {}
    }

    /// One game as the poller keeps it.
    package struct Track: Sendable {
        package var pk: Int
        var document: JSONValue?
        package var timeStamp: String?
        package var nextPoll: Date
        package var failures = 0
        var lastChange: Date
        var reported: (timeStamp: String, status: String, updates: Int)?
        var problems = Set<String>()
        package var done = false
        /// Where to watch, from the schedule (the live feed does not carry it).
        var broadcasts: [Broadcast] = []
        /// The service's id of the game (from the schedule).
        package var gameID: String?
        /// When the game's last request was made.
        var lastRequest: Date?
        /// The newest timecode a push message named that the feed kept has not reached, and the
        /// requests made for it so far.
        var pushed: String?
        var pushRetries = 0
    }

    /// A line for the log.
    package struct Note: Sendable {
        package var level: Logger.Level
        package var message: String
        package var metadata: Logger.Metadata
    }

    /// The request for a game's feed.
    package struct Request: Sendable, Equatable {
        package var path: String
        package var query: [String: String]
    }

    package let settings: Settings
    package internal(set) var tracks: [Int: Track] = [:]
    package private(set) var nextSchedule: Date
    private var scheduleFailures = 0
    private var finishedDates = Set<String>()

    package init(settings: Settings = Settings(), now: Date) {
        self.settings = settings
        self.nextSchedule = now
    }

    // MARK: The schedule

    /// The dates to ask the schedule for now (nil: not yet): today's, and the day before's until
    /// its games are over.
    package func scheduleDates(now: Date, official: [String]) -> [String]? {
        guard now >= nextSchedule else { return nil }
        return official.enumerated().filter { $0.offset == 0 || !finishedDates.contains($0.element) }.map(\.element)
    }

    /// A date's schedule came: its games are followed (from their first pitch); `earlier` says
    /// whether it is the day before (done with once its games are over).
    package mutating func scheduled(_ games: [ScheduleGame], date: String, earlier: Bool, now: Date) -> [Note] {
        if earlier && games.allSatisfy({ [.final, .postponed, .cancelled].contains($0.status.phase) })
            && games.allSatisfy({ tracks[$0.gamePk]?.done ?? true })
        {
            finishedDates.insert(date)
        }
        var notes: [Note] = []
        for game in games {
            notes += follow(game, now: now)
            tracks[game.gamePk]?.broadcasts = game.carriage
            tracks[game.gamePk]?.gameID = game.gameID
        }
        return notes
    }

    /// Every date of the schedule came.
    package mutating func scheduleSucceeded(now: Date) {
        scheduleFailures = 0
        nextSchedule = now.addingTimeInterval(settings.scheduleInterval)
    }

    /// The schedule did not come: asked again after a backoff (returned), the games kept.
    package mutating func scheduleFailed(_ error: any Error, now: Date, random: Double) -> Note {
        scheduleFailures += 1
        let delay = backoff(failures: scheduleFailures, floor: settings.scheduleInterval, random: random)
        nextSchedule = now.addingTimeInterval(delay)
        return Note(
            level: .warning, message: "schedule request failed; keeping the games known",
            metadata: ["error": "\(error)", "retry.seconds": "\(Int(delay))"])
    }

    /// Starts following a scheduled game once it is under way (or over, to read its last state).
    mutating func follow(_ game: ScheduleGame, now: Date) -> [Note] {
        guard tracks[game.gamePk] == nil else { return [] }
        switch game.status.phase {
        case .live, .final, .unknown:
            tracks[game.gamePk] = Track(pk: game.gamePk, nextPoll: now, lastChange: now)
            if case .unknown(let code) = game.status.phase {
                return [
                    Note(
                        level: .notice, message: "unknown game status; following as if live",
                        metadata: ["game.pk": "\(game.gamePk)", "status": "\(code)"])
                ]
            }
            return []
        case .postponed, .cancelled, .suspended:
            // Kept out of the polling; a resumption comes back under its new date.
            tracks[game.gamePk] = Track(pk: game.gamePk, nextPoll: now, lastChange: now, done: true)
            return [
                Note(
                    level: .notice, message: "game not played today",
                    metadata: [
                        "game.pk": "\(game.gamePk)",
                        "status": "\(game.status.detailedState ?? game.status.codedGameState)",
                        "reschedule": "\(game.rescheduleDate ?? game.resumeDate ?? "none")",
                    ])
            ]
        case .notStarted:
            // Warm-up is not live; the feed is read from the scheduled first pitch on (a game can
            // start and make plays between two schedule requests).
            let start = ISO8601DateFormatter().date(from: game.gameDate) ?? now
            tracks[game.gamePk] = Track(pk: game.gamePk, nextPoll: max(now, start), lastChange: now)
            return []
        }
    }

    // MARK: The games

    /// The games whose feed is due, in game order, with the service's id of each.
    package func due(now: Date) -> [(pk: Int, gameID: String?)] {
        tracks.values.filter { !$0.done && $0.nextPoll <= now }.map { ($0.pk, $0.gameID) }.sorted { $0.pk < $1.pk }
    }

    /// Another instance polls the game: asked about again later, and read whole if it comes here.
    package mutating func declined(_ pk: Int, now: Date) {
        tracks[pk]?.document = nil
        tracks[pk]?.nextPoll = now.addingTimeInterval(settings.claimInterval)
    }

    /// What to ask for a game: the changes since the timecode kept, or the whole feed.
    package func request(_ pk: Int) -> Request {
        if let track = tracks[pk], track.document != nil, let since = track.timeStamp {
            return Request(path: "v1.1/game/\(pk)/feed/live/diffPatch", query: ["startTimecode": since])
        }
        return Request(path: "v1.1/game/\(pk)/feed/live", query: [:])
    }

    /// A push message said the game's feed moved to `timeStamp`: its request comes now (at most one
    /// per `nudgeInterval`), unless the feed kept is newer (a message late), the game is over, or
    /// its requests are backing off after failures. A timecode is to the second: a message naming
    /// the second of the feed kept may bring a change made later in that second. True when the
    /// request was brought forward.
    @discardableResult
    package mutating func nudged(_ pk: Int, timeStamp: String, now: Date) -> Bool {
        guard var track = tracks[pk], !track.done, track.failures == 0 else { return false }
        if let kept = track.timeStamp, timeStamp < kept { return false }
        if track.pushed.map({ $0 < timeStamp }) ?? true {
            track.pushed = timeStamp
            track.pushRetries = 0
        }
        let at = max(now, track.lastRequest.map { $0.addingTimeInterval(settings.nudgeInterval) } ?? now)
        guard at < track.nextPoll else {
            tracks[pk] = track
            return false
        }
        track.nextPoll = at
        tracks[pk] = track
        return true
    }

    /// The games to listen to on the push: those followed and not over.
    package var listening: Set<Int> { Set(tracks.values.filter { !$0.done }.map(\.pk)) }

    /// When the next thing is due (the schedule, or a game).
    package func wake() -> Date {
        ([nextSchedule] + tracks.values.filter { !$0.done }.map(\.nextPoll)).min() ?? nextSchedule
    }

    /// Exponential backoff with full jitter, never under `floor` (the wait the API asks for).
    func backoff(failures: Int, floor: TimeInterval, random: Double) -> TimeInterval {
        let ceiling = min(settings.maximumBackoff, floor * pow(2, Double(min(failures, 16))))
        return max(floor, random * ceiling)
    }
}
