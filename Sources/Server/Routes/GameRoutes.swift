import Alerts
import Baseball
import Clocks
import Foundation
import HTTPTypes
import Hummingbird
import Scores
import Storage

/// Games and the scoreboard: today's games and one game's page, the scoreboard of a day, the
/// current attempts, the latest moments, the public widget feed and a season's hall of fame.
struct GameRoutes: Sendable {
    let board: LiveBoard
    let feed: LiveFeed
    let store: any MomentStore
    let seasons: SeasonLibrary
    let widget: WidgetFeed
    let clock: any WallClock
    /// Outs a side must be hitless through to count as a current attempt.
    let attemptOuts: Int
    /// How long a finished game of the day before stays on the default scoreboard.
    let keepFinished: TimeInterval

    func add(to api: RouterGroup<APIRequestContext>) {
        api.get("games") { _, _ in
            // The stream's position is read before the games: a client that opens the stream with
            // `?after=` it misses nothing that happened after this answer (what it gets twice is
            // the same state again).
            let position = feed.lastID
            var response = try API.json(board.all)
            response.headers[HTTPField.Name("X-Stream-Position")!] = "\(position)"
            return response
        }
        api.get("scoreboard") { request, _ in
            let date = try API.date(request.uri.queryParameters.get("date"), name: "date")
            let games = board.all
            let day = date ?? games.map(\.date).max() ?? ""
            let shown = Scoreboard.games(
                games, day: day, asked: date != nil, now: clock.now(), keepFinished: keepFinished)
            return try API.json(Scoreboard(date: day, games: shown))
        }
        api.get("games/:id") { _, context in
            let id = try context.parameters.require("id")
            guard let detail = board.detail(id: id) else { throw API.error(.notFound, "no game \(id) today") }
            let moments = try await store.moments(gameID: id, scoreAlerts: false)
            return try API.json(
                GameTimeline(
                    game: detail.game, pitchers: detail.pitchers, plays: detail.plays,
                    moments: moments.map(MomentView.init)))
        }
        api.get("widget") { request, _ in
            let teams: [String]
            do {
                teams = try WidgetFeed.teams(request.uri.queryParameters.get("teams"))
            } catch {
                throw API.error(.badRequest, "\(error)")
            }
            return Self.widget(widget.response(teams: teams), request: request)
        }
        api.get("attempts") { _, _ in
            let attempts = board.all.flatMap { game in
                game.attempts(minimumOuts: attemptOuts).map { Attempt(game: game, bid: $0) }
            }
            return try API.json(attempts)
        }
        api.get("moments") { request, _ in
            let limit = try API.limit(request, default: 50)
            return try API.json(try await store.recentMoments(limit: limit).map(MomentView.init))
        }
        api.get("hall-of-fame/:season") { request, context in
            let season = try context.parameters.require("season")
            let limit = try API.limit(request, default: 25)
            guard let sides = try await seasons.hallOfFame(season: season) else {
                throw API.error(.notFound, "no Retrosheet data for season \(season)")
            }
            return try API.json(
                sides.prefix(limit).enumerated().map { HallOfFameEntry(rank: $0.offset + 1, side: $0.element) })
        }
    }

    /// A widget feed's answer: 304 without a body when `If-None-Match` names its `ETag`.
    static func widget(_ feed: WidgetFeed.Response, request: Request) -> Response {
        var headers = HTTPFields()
        headers[.eTag] = feed.etag
        headers[.cacheControl] = feed.cacheControl
        if WidgetFeed.matches(request.headers[.ifNoneMatch], etag: feed.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: feed.body))
    }
}
