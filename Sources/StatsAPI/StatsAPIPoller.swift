import AsyncHTTPClient
import Baseball
import Clocks
import Foundation
import Logging
import NIOCore

/// Where the poller's responses come from: the Stats API over HTTP, or a test's own.
package protocol StatsAPITransport: Sendable {
    /// The body of a 200 answer to GET `path` (relative to the API's base, e.g.
    /// `v1/schedule`); throws for anything else.
    func get(_ path: String, query: [(String, String)]) async throws -> Data
}

/// A response that was not a 200, or did not come.
package struct TransportError: Error, CustomStringConvertible {
    package var path: String
    package var reason: String

    package var description: String { "\(path): \(reason)" }
}

/// The Stats API over AsyncHTTPClient, with a deadline on every request.
package struct HTTPStatsAPITransport: StatsAPITransport {
    package var client: HTTPClient
    /// E.g. `https://statsapi.mlb.com/api/`.
    package var baseURL: String
    package var timeout: TimeAmount
    /// Responses are bounded: a whole live feed is a few MB.
    package var maximumBody = 32 * 1024 * 1024

    package init(client: HTTPClient, baseURL: String, timeout: TimeAmount = .seconds(10)) {
        self.client = client
        self.baseURL = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        self.timeout = timeout
    }

    package func get(_ path: String, query: [(String, String)]) async throws -> Data {
        var components = URLComponents(string: baseURL + path)
        if !query.isEmpty { components?.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        guard let url = components?.url?.absoluteString else { throw TransportError(path: path, reason: "bad URL") }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: timeout)
        } catch {
            throw TransportError(path: path, reason: "\(error)")
        }
        let body = try await response.body.collect(upTo: maximumBody)
        guard response.status == .ok else {
            throw TransportError(path: path, reason: "HTTP \(response.status.code)")
        }
        return Data(body.readableBytesView)
    }
}

/// Follows the day's games on the Stats API: the schedule of the official date (and of the day
/// before until its games are over) at most once a minute, and each live game through diffPatch,
/// never more often than the feed's `metaData.wait`. A failed request backs off with full jitter;
/// a patch that does not apply, or a response that is not a whole feed, brings the whole feed;
/// a response older than the one kept is ignored; a feed whose timecode stops moving while the
/// game is live is fetched whole again. Every game whose feed changed is handed to `onGame`,
/// read into the engine's form (every game of the schedule to `onSchedule` too, at each schedule
/// request); a game keeps its last good state through bad responses.
package struct StatsAPIPoller: Sendable {
    package var transport: any StatsAPITransport
    package var clock: any WallClock
    package var logger: Logger
    /// The official dates to follow at a time: by default the date in New York and the day before.
    package var officialDates: @Sendable (Date) -> [String] = StatsAPIPoller.defaultDates
    package var scheduleInterval: TimeInterval = 60
    /// Used when a feed gives no wait hint, and as the floor of every backoff.
    package var defaultWait = 10
    package var maximumBackoff: TimeInterval = 300
    /// A live game whose timecode has not moved for this long is fetched whole again.
    package var staleAfter: TimeInterval = 600
    package var random: @Sendable () -> Double = { Double.random(in: 0..<1) }
    /// Whether this instance polls a game's feed now (several instances share the games: one polls
    /// each); asked before every request. A game not polled here is asked about again after
    /// `claimInterval`, and its feed is read whole when it is taken up.
    package var shouldPoll: @Sendable (_ gameID: String) async throws -> Bool = { _ in true }
    package var claimInterval: TimeInterval = 5

    package init(transport: any StatsAPITransport, clock: any WallClock, logger: Logger) {
        self.transport = transport
        self.clock = clock
        self.logger = logger
    }

    /// Today in New York (where the league keeps its dates) and yesterday.
    package static func defaultDates(_ now: Date) -> [String] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "America/New_York") ?? .gmt
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = calendar
        formatter.timeZone = calendar.timeZone
        formatter.dateFormat = "yyyy-MM-dd"
        let yesterday = calendar.date(byAdding: .day, value: -1, to: now) ?? now
        return [formatter.string(from: now), formatter.string(from: yesterday)]
    }

    /// One game as the poller keeps it.
    struct Track: Sendable {
        var pk: Int
        var document: JSONValue?
        var timeStamp: String?
        var nextPoll: Date
        var failures = 0
        var lastChange: Date
        var reported: (timeStamp: String, status: String, updates: Int)?
        var problems = Set<String>()
        var done = false
        /// Where to watch, from the schedule (the live feed does not carry it).
        var broadcasts: [Broadcast] = []
        /// The service's id of the game (from the schedule).
        var gameID: String?
    }

    /// Polls until cancelled.
    package func run(
        onSchedule: @escaping @Sendable (ScheduleGame) async throws -> Void = { _ in },
        onGame: @escaping @Sendable (GumboGame) async throws -> Void
    ) async throws {
        var tracks: [Int: Track] = [:]
        var nextSchedule = clock.now()
        var scheduleFailures = 0
        var finishedDates = Set<String>()
        while !Task.isCancelled {
            let now = clock.now()
            if now >= nextSchedule {
                var scheduled: [ScheduleGame] = []
                do {
                    let dates = officialDates(now)
                    for (offset, date) in dates.enumerated() {
                        // The day before only until its games are over.
                        if offset > 0 && finishedDates.contains(date) { continue }
                        let games = try await schedule(date)
                        if offset > 0
                            && games.allSatisfy({ [.final, .postponed, .cancelled].contains($0.status.phase) })
                            && games.allSatisfy({ tracks[$0.gamePk]?.done ?? true })
                        {
                            finishedDates.insert(date)
                        }
                        for game in games {
                            follow(game, in: &tracks, now: now)
                            tracks[game.gamePk]?.broadcasts = game.carriage
                            tracks[game.gamePk]?.gameID = game.gameID
                        }
                        scheduled += games
                    }
                    scheduleFailures = 0
                    nextSchedule = now.addingTimeInterval(scheduleInterval)
                } catch is CancellationError {
                    return
                } catch {
                    scheduleFailures += 1
                    let delay = backoff(failures: scheduleFailures, floor: scheduleInterval)
                    logger.warning(
                        "schedule request failed; keeping the games known",
                        metadata: ["error": "\(error)", "retry.seconds": "\(Int(delay))"])
                    nextSchedule = now.addingTimeInterval(delay)
                }
                // Outside the request's error handling: a failure downstream ends the poller.
                for game in scheduled { try await onSchedule(game) }
            }
            var due: [Int] = []
            for pk in tracks.values.filter({ !$0.done && $0.nextPoll <= now }).map(\.pk).sorted() {
                // Another instance polls it: ask again later, and read it whole if it comes here.
                if let gameID = tracks[pk]?.gameID, try await !shouldPoll(gameID) {
                    tracks[pk]?.document = nil
                    tracks[pk]?.nextPoll = now.addingTimeInterval(claimInterval)
                    continue
                }
                due.append(pk)
            }
            if !due.isEmpty {
                let polled = await withTaskGroup(of: (Track, GumboGame?).self) { group in
                    for pk in due {
                        guard let track = tracks[pk] else { continue }
                        group.addTask { await poll(track) }
                    }
                    var results: [(Track, GumboGame?)] = []
                    for await result in group { results.append(result) }
                    return results
                }
                for (track, game) in polled.sorted(by: { $0.0.pk < $1.0.pk }) {
                    tracks[track.pk] = track
                    if let game { try await onGame(game) }
                }
            }
            let wake = ([nextSchedule] + tracks.values.filter { !$0.done }.map(\.nextPoll)).min() ?? nextSchedule
            do {
                try await clock.sleep(until: max(wake, clock.now()))
            } catch {
                return
            }
        }
    }

    func schedule(_ date: String) async throws -> [ScheduleGame] {
        let data = try await transport.get(
            "v1/schedule",
            query: [("sportId", "1"), ("date", date), ("hydrate", "linescore,flags,broadcasts(all),probablePitcher")])
        return try JSONDecoder().decode(Schedule.self, from: data).games
    }

    /// Starts following a scheduled game once it is under way (or over, to read its last state).
    func follow(_ game: ScheduleGame, in tracks: inout [Int: Track], now: Date) {
        switch game.status.phase {
        case .live, .final, .unknown:
            if tracks[game.gamePk] == nil {
                if case .unknown(let code) = game.status.phase {
                    logger.notice(
                        "unknown game status; following as if live",
                        metadata: ["game.pk": "\(game.gamePk)", "status": "\(code)"])
                }
                tracks[game.gamePk] = Track(pk: game.gamePk, nextPoll: now, lastChange: now)
            }
        case .postponed, .cancelled, .suspended:
            if tracks[game.gamePk] == nil {
                logger.notice(
                    "game not played today",
                    metadata: [
                        "game.pk": "\(game.gamePk)",
                        "status": "\(game.status.detailedState ?? game.status.codedGameState)",
                        "reschedule": "\(game.rescheduleDate ?? game.resumeDate ?? "none")",
                    ])
                // Keep it out of the polling; a resumption comes back under its new date.
                tracks[game.gamePk] = Track(pk: game.gamePk, nextPoll: now, lastChange: now, done: true)
            }
        case .notStarted:
            // Warm-up is not live; the feed is read from the scheduled first pitch on (a game can
            // start and make plays between two schedule requests).
            if tracks[game.gamePk] == nil {
                let start = ISO8601DateFormatter().date(from: game.gameDate) ?? now
                tracks[game.gamePk] = Track(pk: game.gamePk, nextPoll: max(now, start), lastChange: now)
            }
        }
    }

    /// One request for one game; returns the game's track and, when its feed changed, the game.
    /// The next request waits from when this one went out.
    func poll(_ track: Track) async -> (Track, GumboGame?) {
        let now = clock.now()
        var track = track
        let context: Logger.Metadata = ["game.pk": "\(track.pk)", "timecode": "\(track.timeStamp ?? "none")"]
        do {
            var document: JSONValue
            if let cached = track.document, let since = track.timeStamp {
                let response = try JSONValue(
                    parsing: try await transport.get(
                        "v1.1/game/\(track.pk)/feed/live/diffPatch", query: [("startTimecode", since)]))
                switch try DiffPatchResponse(response) {
                case .feed(let whole):
                    document = whole
                case .patches(let patches):
                    document = cached
                    do {
                        for patch in patches { try patch.apply(to: &document) }
                    } catch {
                        // The whole feed comes with the next poll: not sooner than the wait asked for.
                        logger.warning(
                            "patch did not apply; the whole feed comes next time",
                            metadata: context.merging(["error": "\(error)"]) { $1 })
                        track.document = nil
                        track.nextPoll = now.addingTimeInterval(TimeInterval(defaultWait))
                        return (track, nil)
                    }
                }
            } else {
                document = try await whole(track.pk)
            }
            let feed: GameFeed
            do {
                feed = try document.decode(GameFeed.self)
            } catch {
                throw TransportError(
                    path: "game \(track.pk)", reason: "not a live feed: \(Lenient<GameFeed>.describe(error))")
            }
            let wait = TimeInterval(max(1, feed.metaData.wait ?? defaultWait))
            if let kept = track.timeStamp, feed.metaData.timeStamp < kept {
                logger.warning(
                    "feed older than the one kept; ignored",
                    metadata: context.merging(["received": "\(feed.metaData.timeStamp)"]) { $1 })
                track.nextPoll = now.addingTimeInterval(wait)
                return (track, nil)
            }
            var game = try GumboGame(feed)
            game.info.broadcasts = track.broadcasts
            for problem in game.problems where !track.problems.contains(problem) {
                track.problems.insert(problem)
                logger.warning(
                    "feed problem; the game keeps its last good play",
                    metadata: context.merging(["problem": "\(problem)", "timecode": "\(feed.metaData.timeStamp)"]) {
                        $1
                    })
            }
            track.document = document
            track.timeStamp = feed.metaData.timeStamp
            track.failures = 0
            track.nextPoll = now.addingTimeInterval(wait)
            let summary = (feed.metaData.timeStamp, feed.gameData.status.codedGameState, game.updates.count)
            let changed = track.reported.map { $0 != summary } ?? true
            if changed {
                track.reported = summary
                track.lastChange = now
            } else if game.status.phase == .live && now.timeIntervalSince(track.lastChange) > staleAfter {
                logger.warning("feed has not moved; fetching it whole next time", metadata: context)
                track.document = nil
                track.lastChange = now
            }
            if game.isFinal { track.done = true }
            return (track, changed ? game : nil)
        } catch {
            track.failures += 1
            let delay = backoff(failures: track.failures, floor: TimeInterval(defaultWait))
            logger.warning(
                "feed request failed; the game keeps its last good state",
                metadata: context.merging(["error": "\(error)", "retry.seconds": "\(Int(delay))"]) { $1 })
            track.nextPoll = now.addingTimeInterval(delay)
            return (track, nil)
        }
    }

    func whole(_ pk: Int) async throws -> JSONValue {
        try JSONValue(parsing: try await transport.get("v1.1/game/\(pk)/feed/live", query: []))
    }

    /// Exponential backoff with full jitter, never under `floor` (the wait the API asks for).
    func backoff(failures: Int, floor: TimeInterval) -> TimeInterval {
        let ceiling = min(maximumBackoff, floor * pow(2, Double(min(failures, 16))))
        return max(floor, random() * ceiling)
    }
}
