import AsyncHTTPClient
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
            // A graceful stop cancels the request: that is no failure of the API's.
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
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
/// at the feed's `metaData.wait` and, with the Gameday push, as soon as a message says the feed
/// moved (at most once a second a game). A failed request backs off with full jitter;
/// a patch that does not apply, or a response that is not a whole feed, brings the whole feed;
/// a response older than the one kept is ignored; a feed whose timecode stops moving while the
/// game is live is fetched whole again. Every game whose feed changed is handed to `onGame`,
/// read into the engine's form (every game of the schedule to `onSchedule` too, at each schedule
/// request); a game keeps its last good state through bad responses.
package struct StatsAPIPoller: Sendable {
    package let transport: any StatsAPITransport
    package let clock: any WallClock
    package let logger: Logger
    /// The official dates to follow at a time: by default the date in New York and the day before.
    package let officialDates: @Sendable (Date) -> [String]
    /// How often the schedule is asked for, the wait and backoff bounds, when a stalled feed is
    /// read whole, and when a game another instance polls is asked about again.
    package let settings: PollMachine.Settings
    package let random: @Sendable () -> Double
    /// Whether this instance polls a game's feed now (several instances share the games: one polls
    /// each); asked before every request. A game not polled here is asked about again after
    /// `settings.claimInterval`, and its feed is read whole when it is taken up.
    package let shouldPoll: @Sendable (_ gameID: String) async throws -> Bool
    /// Where each request's outcome is recorded (`/readyz`, the metrics).
    package let health: PollerHealth?
    /// The Gameday push: a message for a game brings its request forward (nil: polling only).
    package let push: (any GamedayPushing)?

    package init(
        transport: any StatsAPITransport, clock: any WallClock, logger: Logger,
        officialDates: @escaping @Sendable (Date) -> [String] = StatsAPIPoller.defaultDates,
        settings: PollMachine.Settings = PollMachine.Settings(), health: PollerHealth? = nil,
        push: (any GamedayPushing)? = nil, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        shouldPoll: @escaping @Sendable (_ gameID: String) async throws -> Bool = { _ in true }
    ) {
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.officialDates = officialDates
        self.settings = settings
        self.health = health
        self.push = push
        self.random = random
        self.shouldPoll = shouldPoll
    }

    /// The same poller, asking `shouldPoll` before each game's request.
    package func asking(_ shouldPoll: @escaping @Sendable (_ gameID: String) async throws -> Bool) -> StatsAPIPoller {
        StatsAPIPoller(
            transport: transport, clock: clock, logger: logger, officialDates: officialDates, settings: settings,
            health: health, push: push, random: random, shouldPoll: shouldPoll)
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

    /// Polls until cancelled: each round the schedule when it is due, the push's nudges, the games
    /// due; then it waits for the next thing due (or a push message).
    package func run(
        onSchedule: @escaping @Sendable (ScheduleGame) async throws -> Void = { _ in },
        onGame: @escaping @Sendable (GumboGame) async throws -> Void
    ) async throws {
        defer { push?.follow([]) }
        var machine = PollMachine(settings: settings, now: clock.now())
        while !Task.isCancelled {
            let now = clock.now()
            guard let scheduled = await schedule(&machine, now: now) else { return }
            // Outside the request's error handling: a failure downstream ends the poller.
            for game in scheduled { try await onSchedule(game) }
            takeNudges(&machine, now: now)
            let due = try await due(&machine, now: now)
            if !due.isEmpty {
                let answers = await fetch(due.map { ($0, machine.request($0)) })
                // Stopping: the requests were cut short, not refused.
                if Task.isCancelled { return }
                for (pk, answer) in answers {
                    if let game = act(on: machine.answered(pk, answer, now: now, random: random()), pk: pk) {
                        try await onGame(game)
                    }
                }
            }
            health?.roundEnded(at: clock.now(), next: machine.wake())
            guard await sleep(until: max(machine.wake(), clock.now())) else { return }
        }
    }

    /// The schedule's games when it is due ([] when not), nil when the poller is stopping.
    private func schedule(_ machine: inout PollMachine, now: Date) async -> [ScheduleGame]? {
        guard let dates = machine.scheduleDates(now: now, official: officialDates(now)) else { return [] }
        var scheduled: [ScheduleGame] = []
        do {
            for date in dates {
                let games = try await schedule(date)
                log(machine.scheduled(games, date: date, earlier: date != dates.first, now: now))
                scheduled += games
            }
            machine.scheduleSucceeded(now: now)
        } catch is CancellationError {
            return nil
        } catch {
            health?.failed(error, at: clock.now())
            log([machine.scheduleFailed(error, now: now, random: random())])
        }
        return scheduled
    }

    /// What the push said since the last round: each game's request brought forward.
    private func takeNudges(_ machine: inout PollMachine, now: Date) {
        guard let push else { return }
        push.follow(machine.listening)
        for (pk, timeStamp) in push.nudges.take() where machine.nudged(pk, timeStamp: timeStamp, now: now) {
            logger.trace("push nudge", metadata: ["game.pk": "\(pk)", "timecode": "\(timeStamp)"])
        }
    }

    /// The games to request now: those due that this instance polls (another instance's are asked
    /// about again later, and read whole if they come here).
    private func due(_ machine: inout PollMachine, now: Date) async throws -> [Int] {
        var due: [Int] = []
        for (pk, gameID) in machine.due(now: now) {
            if let gameID, try await !shouldPoll(gameID) {
                machine.declined(pk, now: now)
                continue
            }
            due.append(pk)
        }
        return due
    }

    /// The requests made at once, each answer parsed; in game order.
    private func fetch(_ requests: [(Int, PollMachine.Request)]) async -> [(Int, PollMachine.Answer)] {
        await withTaskGroup(of: (Int, PollMachine.Answer).self) { group in
            for (pk, request) in requests {
                group.addTask {
                    let query = request.query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
                    do {
                        return (pk, PollMachine.Answer(.success(try await transport.get(request.path, query: query))))
                    } catch {
                        return (pk, .failed(error))
                    }
                }
            }
            var answers: [(Int, PollMachine.Answer)] = []
            for await answer in group { answers.append(answer) }
            return answers.sorted { $0.0 < $1.0 }
        }
    }

    /// Records and logs what an answer meant: the game to hand on when its feed changed.
    private func act(on outcome: PollMachine.Outcome, pk: Int) -> GumboGame? {
        let at = clock.now()
        switch outcome.kind {
        case .failed(let error):
            health?.failed(error, at: at)
            health?.failed(pk: pk, at: at)
        case .unreadable:
            health?.failed(PollerHealth.Unreadable(), at: at)
            health?.failed(pk: pk, at: at)
        case .changed, .unchanged:
            health?.answered(at: at)
            health?.answered(
                pk: pk, gameID: outcome.game?.gameID ?? outcome.gameID, feedTimeStamp: outcome.timeStamp,
                readable: true, at: at)
        }
        log(outcome.notes)
        return outcome.game
    }

    /// Waits until `wake`, or a push message, whichever comes first; false when cancelled.
    private func sleep(until wake: Date) async -> Bool {
        guard let push else {
            do {
                try await clock.sleep(until: wake)
                return true
            } catch {
                return false
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(until: wake) }
            group.addTask { await push.nudges.wait() }
            await group.next()
            group.cancelAll()
        }
        return !Task.isCancelled
    }

    func log(_ notes: [PollMachine.Note]) {
        for note in notes { logger.log(level: note.level, "\(note.message)", metadata: note.metadata) }
    }

    func schedule(_ date: String) async throws -> [ScheduleGame] {
        let data = try await transport.get(
            "v1/schedule",
            query: [("sportId", "1"), ("date", date), ("hydrate", "linescore,flags,broadcasts(all),probablePitcher")])
        let games = try JSONDecoder().decode(Schedule.self, from: data).games
        health?.answered(at: clock.now())
        return games
    }
}
