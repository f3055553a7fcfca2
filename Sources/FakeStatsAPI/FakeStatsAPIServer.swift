import Clocks
import Foundation
import HTTPTypes
import Hummingbird
import JSON
import NIOCore
import Retrosheet
import StatsAPI
import Synchronization

/// `nohit fake-statsapi`: a day's Retrosheet games served as MLB's Stats API shows games in
/// progress — schedule, live feed, diffPatch, timestamps — on a clock, with faults injected on
/// request.
package final class FakeStatsAPIServer: Sendable {
    /// A fault the next matching responses carry.
    package enum FaultKind: String, Sendable, Codable, CaseIterable {
        /// 500 Internal Server Error.
        case serverError = "server-error"
        /// No answer for a minute.
        case timeout
        /// The first half of the body only.
        case truncated
        /// The feed as it was ten minutes of game time ago: its timecode goes backwards.
        case stale
        /// A diffPatch whose operations do not apply.
        case badPatch = "bad-patch"
        /// A play re-scored from then on (default: the latest hit becomes an error).
        case rescore
        /// Push: the next message is not sent.
        case pushDrop = "push-drop"
        /// Push: the next message is sent `seconds` of game clock late (default 5).
        case pushDelay = "push-delay"
        /// Push: the next message is sent twice.
        case pushDuplicate = "push-duplicate"
        /// Push: the socket is closed instead of the next message.
        case pushDisconnect = "push-disconnect"
        /// Push: the socket stays open but says nothing more, not even its heartbeat.
        case pushSilence = "push-silence"

        static let push: Set<FaultKind> = [.pushDrop, .pushDelay, .pushDuplicate, .pushDisconnect, .pushSilence]
    }

    package struct Fault: Sendable, Codable, Hashable {
        package var kind: FaultKind
        /// Only this game's requests (any when nil).
        package var game: Int?
        /// How many responses carry it (rescoring lasts).
        package var count: Int?
        /// Rescore: the play (at-bat index; default the game's latest hit) and its new event type.
        package var play: Int?
        package var to: String?
        /// Push delay: how late, in seconds of the game clock.
        package var seconds: Double?

        package init(
            kind: FaultKind, game: Int? = nil, count: Int? = nil, play: Int? = nil, to: String? = nil,
            seconds: Double? = nil
        ) {
            self.kind = kind
            self.game = game
            self.count = count
            self.play = play
            self.to = to
            self.seconds = seconds
        }
    }

    package let date: String
    package let games: [ReplayGame]
    package let people: GumboWriter.People
    package let clock: any WallClock
    /// `metaData.wait`: the seconds clients are asked to wait between polls.
    package let wait: Int
    private let faults = Mutex<[Fault]>([])
    /// Re-scored plays by game: at-bat index → event type; and when each game was last
    /// re-scored (the feed's timecode moves then, as MLB's does).
    private let rescored = Mutex<[Int: [Int: String]]>([:])
    let rescoredAt = Mutex<[Int: Date]>([:])
    /// Each game's documents as first served under each timecode: what a client that holds that
    /// timecode has, so a diffPatch from it carries every change since — re-scorings included.
    private let served = Mutex<[Int: [String: JSONValue]]>([:])
    let requests = Mutex<[String: Int]>([:])

    /// How long a `timeout` fault keeps the client waiting.
    package let stall: Duration

    /// Each game's synthetic ABS challenges by game pk, with `--abs` (none without).
    package let absPlans: [Int: SyntheticABS.Plan]

    package init(
        date: String, games: [ReplayGame], clock: any WallClock, wait: Int = 10, stall: Duration = .seconds(60),
        abs: SyntheticABS? = nil
    ) {
        self.absPlans =
            abs.map { abs in
                Dictionary(
                    games.map { (GumboWriter.gamePk($0), abs.plan($0)) }, uniquingKeysWith: { first, _ in first })
            } ?? [:]
        self.stall = stall
        self.date = date
        self.games = games
        self.people = GumboWriter.People(games: games)
        self.clock = clock
        self.wait = wait
    }

    package func game(pk: Int) -> ReplayGame? { games.first { GumboWriter.gamePk($0) == pk } }

    /// A feed depends only on how many updates and pitches it shows, whether it is over, and the
    /// re-scored plays: each one is built and read as JSON once.
    private struct DocumentKey: Hashable {
        var pk: Int
        var shown: Int
        /// The pitches of the plate appearance under way.
        var pitches: Int
        var status: String
        var rescored: [Int: String]
        var rescoredAt: Date?
    }

    private let documents = Mutex<[DocumentKey: JSONValue]>([:])

    /// The feed of `game` at `time` as a JSON document.
    package func document(_ game: ReplayGame, at time: Date) throws -> JSONValue {
        let pk = GumboWriter.gamePk(game)
        let shown = game.updates.prefix { $0.time <= time }.count
        let pitches = GumboWriter.pitchesShown(game, at: time).count
        let status = GumboWriter.statusCode(game, shown: shown, pitched: pitches > 0, at: time)
        let at = rescoredAt.withLock { $0[pk] }.flatMap { $0 <= time ? $0 : nil }
        let key = DocumentKey(
            pk: pk, shown: shown, pitches: pitches, status: status,
            rescored: at == nil ? [:] : rescored.withLock { $0[pk] ?? [:] },
            rescoredAt: at)
        let document: JSONValue
        if let known = documents.withLock({ $0[key] }) {
            document = known
        } else {
            document = try JSONValue(parsing: try Self.encoder.encode(feed(game, at: time)))
            documents.withLock { $0[key] = document }
        }
        if let stamp = document["metaData"]?["timeStamp"]?.string {
            served.withLock { served in
                if served[pk]?[stamp] == nil { served[pk, default: [:]][stamp] = document }
            }
        }
        return document
    }

    /// The feed of `game` at `time`, with the re-scored plays.
    package func feed(_ game: ReplayGame, at time: Date) -> GameFeed {
        var feed = GumboWriter.feed(game, at: time, people: people, abs: absPlans[GumboWriter.gamePk(game)])
        feed.metaData.wait = wait
        let applies = rescoredAt.withLock { $0[feed.gamePk] }.map { $0 <= time } ?? false
        let overrides = applies ? rescored.withLock { $0[feed.gamePk] ?? [:] } : [:]
        for (index, type) in overrides where feed.liveData.plays.allPlays.indices.contains(index) {
            guard feed.liveData.plays.allPlays[index].about.isComplete else { continue }
            let old = feed.liveData.plays.allPlays[index].result.eventType
            feed.liveData.plays.allPlays[index].result.eventType = type
            feed.liveData.plays.allPlays[index].result.event = type
            for runner in feed.liveData.plays.allPlays[index].runners.indices
            where feed.liveData.plays.allPlays[index].runners[runner].details.eventType == old {
                feed.liveData.plays.allPlays[index].runners[runner].details.eventType = type
            }
        }
        if !overrides.isEmpty { feed.liveData.plays.currentPlay = feed.liveData.plays.allPlays.last }
        if let at = rescoredAt.withLock({ $0[feed.gamePk] }), at <= time,
            GumboWriter.timeStamp(at) > feed.metaData.timeStamp
        {
            feed.metaData.timeStamp = GumboWriter.timeStamp(at)
        }
        return feed
    }

    /// Faults not yet served.
    package var pendingFaults: [Fault] { faults.withLock { $0 } }

    /// Requests served, by route (for tests of polling etiquette).
    package var requestCounts: [String: Int] { requests.withLock { $0 } }

    package func inject(_ fault: Fault) throws {
        if fault.kind == .rescore {
            guard let pk = fault.game, let game = game(pk: pk) else {
                throw HTTPError(.badRequest, message: "rescore needs the game (its gamePk)")
            }
            let plays = feed(game, at: clock.now()).liveData.plays.allPlays
            let hits: Set<String> = ["single", "double", "triple", "home_run"]
            guard
                let index = fault.play
                    ?? plays.last(where: { $0.about.isComplete && hits.contains($0.result.eventType ?? "") })?
                    .about.atBatIndex,
                plays.indices.contains(index), plays[index].about.isComplete
            else {
                throw HTTPError(.badRequest, message: "game \(pk) has no such completed play to re-score")
            }
            let type = fault.to ?? "field_error"
            guard GumboGame.eventType(type) != nil else {
                throw HTTPError(.badRequest, message: "'\(type)' is not an event type")
            }
            rescored.withLock { $0[pk, default: [:]][index] = type }
            rescoredAt.withLock { $0[pk] = clock.now() }
            return
        }
        faults.withLock { $0.append(fault) }
    }

    /// Takes the first pending fault for `game` (or any game) of the given kinds.
    func takeFault(game: Int?, kinds: Set<FaultKind>) -> Fault? {
        faults.withLock { faults in
            guard
                let index = faults.firstIndex(where: {
                    kinds.contains($0.kind) && ($0.game == nil || $0.game == game)
                })
            else { return nil }
            let fault = faults[index]
            let left = (fault.count ?? 1) - 1
            if left <= 0 { faults.remove(at: index) } else { faults[index].count = left }
            return fault
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static func timecode(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .gmt
        formatter.dateFormat = "yyyyMMdd_HHmmss"
        return formatter.date(from: text)
    }

    /// Answers with `body`, or with the fault the request draws.
    private func respond(_ data: Data, game: Int?, route: String) async throws -> Response {
        requests.withLock { $0[route, default: 0] += 1 }
        if let fault = takeFault(game: game, kinds: [.serverError, .timeout, .truncated]) {
            switch fault.kind {
            case .serverError: throw HTTPError(.internalServerError, message: "injected fault")
            case .timeout: try await Task.sleep(for: stall)
            case .truncated: return Self.json(data.prefix(data.count / 2))
            default: break
            }
        }
        return Self.json(data)
    }

    static func json(_ data: Data) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json;charset=UTF-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    func feedTime(_ pk: Int) -> Date {
        if takeFault(game: pk, kinds: [.stale]) != nil { return clock.now().addingTimeInterval(-600) }
        return clock.now()
    }

    package func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: UnknownRouteMiddleware())
        router.get("api/v1/schedule") { [self] request, _ in
            let asked = request.uri.queryParameters.get("date") ?? date
            let now = clock.now()
            let games = asked == date ? games.map { GumboWriter.scheduleGame($0, at: now, people: people) } : []
            let schedule = Schedule(
                totalGames: games.count, dates: games.isEmpty ? [] : [ScheduleDate(date: asked, games: games)])
            return try await respond(try Self.encoder.encode(schedule), game: nil, route: "schedule")
        }
        router.get("api/v1.1/game/:pk/feed/live") { [self] request, context in
            let pk = try context.parameters.require("pk", as: Int.self)
            guard let game = game(pk: pk) else { throw HTTPError(.notFound, message: "no game \(pk)") }
            let time =
                request.uri.queryParameters.get("timecode").flatMap(Self.timecode)?.addingTimeInterval(0.999)
                ?? feedTime(pk)
            return try await respond(try document(game, at: time).encoded(), game: pk, route: "feed")
        }
        router.get("api/v1.1/game/:pk/feed/live/diffPatch") { [self] request, context in
            let pk = try context.parameters.require("pk", as: Int.self)
            guard let game = game(pk: pk) else { throw HTTPError(.notFound, message: "no game \(pk)") }
            let now = feedTime(pk)
            let current = try document(game, at: now)
            guard let text = request.uri.queryParameters.get("startTimecode"), let since = Self.timecode(text),
                since <= now
            else {
                // Without a usable start, the whole feed.
                return try await respond(try current.encoded(), game: pk, route: "diffPatch")
            }
            // A timecode is to the second: the feed it names holds every update within that second.
            let before =
                try served.withLock { $0[pk]?[text] } ?? document(game, at: since.addingTimeInterval(0.999))
            var patch = JSONPatch.diff(from: before, to: current)
            if takeFault(game: pk, kinds: [.badPatch]) != nil {
                patch.operations.insert(.remove(path: JSONPointer(tokens: ["liveData", "noSuchMember"])), at: 0)
            }
            let body: JSONValue = patch.operations.isEmpty ? .array([]) : .array([.object(["diff": patch.document])])
            return try await respond(try body.encoded(), game: pk, route: "diffPatch")
        }
        router.get("api/v1.1/game/:pk/feed/live/timestamps") { [self] _, context in
            let pk = try context.parameters.require("pk", as: Int.self)
            guard let game = game(pk: pk) else { throw HTTPError(.notFound, message: "no game \(pk)") }
            let now = clock.now()
            let stamps = Array(Set(pushTimes(game, pk: pk).filter { $0 <= now }.map(GumboWriter.timeStamp))).sorted()
            return try await respond(try Self.encoder.encode(stamps), game: pk, route: "timestamps")
        }
        router.post("faults") { [self] request, context in
            var request = request
            let body = try await request.collectBody(upTo: 16 * 1024)
            let fault: Fault
            do {
                fault = try JSONDecoder().decode(Fault.self, from: Data(body.readableBytesView))
            } catch {
                throw HTTPError(
                    .badRequest,
                    message:
                        "a fault is {\"kind\": one of \(FaultKind.allCases.map(\.rawValue)), \"game\", \"count\", \"play\", \"to\"}"
                )
            }
            try inject(fault)
            return Response(status: .accepted)
        }
        router.delete("faults") { [self] _, _ in
            faults.withLock { $0.removeAll() }
            return Response(status: .noContent)
        }
        router.get("faults") { [self] _, _ in
            Self.json(try Self.encoder.encode(faults.withLock { $0 }))
        }
        router.get("requests") { [self] _, _ in
            Self.json(try Self.encoder.encode(requestCounts))
        }
        router.get("clock") { [self] _, _ in
            // The game clock now beside CLOCK_MONOTONIC: when the feed shows a play, on the machine's
            // clock (what a latency benchmark measures from).
            let speed: Double =
                switch clock {
                case let scaled as ScaledWallClock: scaled.speed
                case is ManualWallClock: 0
                default: 1
                }
            let now = clock.now()
            let monotonic = MonotonicClock.nanoseconds()
            return Self.json(
                try JSONSerialization.data(withJSONObject: [
                    "now": now.timeIntervalSince1970, "monotonic_ns": monotonic, "speed": speed,
                ]))
        }
        return router
    }
}

/// A request for a route this fake does not have is answered 404 with the routes it has (a route
/// that exists answers its own 404s, such as "no game 123").
struct UnknownRouteMiddleware<Context: RequestContext>: RouterMiddleware {
    static var routes: String {
        "GET /api/v1/schedule?date=, /api/v1.1/game/{pk}/feed/live[?timecode=], "
            + "/api/v1.1/game/{pk}/feed/live/diffPatch?startTimecode=, /api/v1.1/game/{pk}/feed/live/timestamps, "
            + "GET|POST|DELETE /faults, GET /requests, GET /clock"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound && error.body == nil {
            throw HTTPError(
                .notFound,
                message: "no route for \(request.method.rawValue) \(request.uri.path): this fake Stats API serves "
                    + Self.routes)
        }
    }
}
