import Alerts
import Baseball
import Clocks
import Foundation
import HTTPTypes
import Hummingbird
import Retrosheet
import Scores
import Storage

/// Games and the scoreboard: today's games and one game's page, the scoreboard of a day, the
/// current attempts, the latest moments, the public widget feed and a season's hall of fame.
struct GameRoutes: Sendable {
    let board: LiveBoard
    /// The live feed, and the feeds held back for spoiler delays.
    let feeds: DelayedFeeds
    let store: any MomentStore
    let seasons: SeasonLibrary
    let widget: WidgetFeed
    let views: BoardViewCache
    /// The standings asked, apart from the views: a flood of dates asked clears only these.
    let standingsViews: BoardViewCache
    let clock: any WallClock
    /// Outs a side must be hitless through to count as a current attempt.
    let attemptOuts: Int
    /// How long a finished game of the day before stays on the default scoreboard.
    let keepFinished: TimeInterval

    func add(to api: RouterGroup<APIRequestContext>) {
        api.get("games") { request, _ in
            let delay = try API.delay(request)
            // The stream's position is read before the games: a client that opens the stream with
            // `?after=` it misses nothing that happened after this answer (what it gets twice is
            // the same state again). Held back by a spoiler delay: the games as they stood that
            // long ago, and the position of the stream held back alike.
            let position = feeds.feed(delay: delay).lastID
            var response: Response
            if delay > 0 {
                response = try API.json(board.all(asOf: clock.now().addingTimeInterval(-TimeInterval(delay))))
            } else {
                let version = views.version
                response = API.json(body: try views.body("games", version: version) { try API.body(board.all) })
            }
            response.headers[HTTPField.Name("X-Stream-Position")!] = "\(position)"
            if delay > 0 { response.headers[HTTPField.Name("X-Spoiler-Delay")!] = "\(delay)" }
            return response
        }
        api.get("scoreboard") { request, _ in
            let date = try API.date(request.uri.queryParameters.get("date"), name: "date")
            let delay = try API.delay(request)
            let now = clock.now().addingTimeInterval(-TimeInterval(delay))
            let version = views.version
            let games = delay > 0 ? board.all(asOf: now) : board.all
            let day = date ?? games.map(\.date).max() ?? ""
            let shown = Scoreboard.games(games, day: day, asked: date != nil, now: now, keepFinished: keepFinished)
            guard delay == 0 else { return try API.json(Scoreboard(date: day, games: shown)) }
            // Which games show moves with the clock as well as the board: part of the key.
            let key = "scoreboard \(day) " + shown.map(\.id).joined(separator: ",")
            return API.json(
                body: try views.body(key, version: version) { try API.body(Scoreboard(date: day, games: shown)) })
        }
        api.get("games/:id") { request, context in
            let delay = try API.delay(request)
            let now = clock.now().addingTimeInterval(-TimeInterval(delay))
            let id = Self.gameID(try context.parameters.require("id"), in: board.all)
            guard let detail = delay > 0 ? board.detail(id: id, asOf: now) : board.detail(id: id) else {
                guard delay > 0, board.game(id: id) != nil else { throw API.error(.notFound, "no game \(id) today") }
                throw API.error(
                    .notFound,
                    "game \(id) is not yet known as it stood \(delay) s ago (the spoiler delay): the service began following it since; try again shortly"
                )
            }
            let moments = try await store.moments(gameID: id, scoreAlerts: false).filter { $0.occurredAt <= now }
            var pregame: Pregame?
            if detail.game.status == .scheduled, let follower = board.follower(id: id) {
                let records = try? await seasons.pitcherRecords(before: detail.game.date)
                pregame = Self.pregame(follower, start: detail.game.startTime, records: records ?? nil)
            }
            return try API.json(
                GameTimeline(
                    game: detail.game, pregame: pregame, pitchers: detail.pitchers, box: detail.box,
                    scoring: detail.scoring,
                    plays: detail.plays,
                    moments: moments.map(MomentView.init)))
        }
        api.get("standings") { request, _ in
            let asked = try API.date(request.uri.queryParameters.get("date"), name: "date")
            // Made once per board version, day asked and day of the service's clock (what counts
            // as played): uncached, each request cost about 10 ms of CPU, and 64 connections asking
            // again and again held up everyone's /api/games.
            let version = views.version
            let games = board.all
            let today = Self.clockDay(clock.now())
            let date = asked ?? games.map(\.date).max() ?? today
            let key = "standings:\(date):\(today)"
            if let body = standingsViews.kept(key, version: version) { return API.json(body: body) }
            let season = String(date.prefix(4))
            let held = try await seasons.outcomes(season: season)
            // The board's finished games too: a live day's, or one the season's files lack.
            var outcomes = held ?? []
            let known = Set(outcomes.map(\.gameID))
            outcomes += board.outcomes.filter { !known.contains($0.gameID) }
            // Nothing from the future of a replayed day: a game counts once it is over by the
            // service's clock, as in the hall of fame.
            let happened = Self.happened(board: games, now: clock.now())
            let clubs = outcomes.filter { $0.date.hasPrefix(season) }.flatMap { [$0.away, $0.home] }
            outcomes = outcomes.filter { happened($0.date, $0.gameID) }
            // Without the season's results only games followed to their end before the day count:
            // with none there are no standings to give (not every club at 0-0).
            guard held != nil || outcomes.contains(where: { $0.date < date }) else {
                throw API.error(
                    .notFound,
                    "no results of the \(season) season before \(date): no Retrosheet data, and no game followed to its end before that day"
                )
            }
            let standings = Standings(asOf: date, outcomes: outcomes, clubs: clubs)
            // What is left of the season: Retrosheet's season holds every game of it (those not yet
            // over by the clock are still to play); else the format's length less the games played.
            let unplayed = (held ?? []).filter { !happened($0.date, $0.gameID) }.map {
                var later = $0
                later.date = max($0.date, date)
                return later
            }
            let race = WildCardRace(
                asOf: date, outcomes: outcomes + unplayed, clubs: clubs, wholeSeason: held != nil)
            let body = try API.body(
                StandingsAnswer(
                    date: date,
                    source: held != nil ? "Retrosheet's \(season) season" : "the games this service followed",
                    divisions: standings.divisions, wildCards: race))
            standingsViews.keep(key, version: version, body)
            return API.json(body: body)
        }
        api.get("widget") { request, _ in
            let teams: [String]
            let delay: Int?
            do {
                teams = try WidgetFeed.teams(request.uri.queryParameters.get("teams"))
                delay = try WidgetFeed.delay(request.uri.queryParameters.get("delay"))
            } catch {
                throw API.error(.badRequest, "\(error)")
            }
            guard let delay, delay > 0 else { return Self.widget(widget.response(teams: teams), request: request) }
            return Self.widget(widget.response(teams: teams, delay: delay, now: clock.now()), request: request)
        }
        api.get("attempts") { request, _ in
            let delay = try API.delay(request)
            if delay > 0 {
                return try API.json(
                    board.all(asOf: clock.now().addingTimeInterval(-TimeInterval(delay))).flatMap { game in
                        game.attempts(minimumOuts: attemptOuts).map { Attempt(game: game, bid: $0) }
                    })
            }
            let version = views.version
            return API.json(
                body: try views.body("attempts", version: version) {
                    try API.body(
                        board.all.flatMap { game in
                            game.attempts(minimumOuts: attemptOuts).map { Attempt(game: game, bid: $0) }
                        })
                })
        }
        api.get("moments") { request, _ in
            let limit = try API.limit(request, default: 50)
            // Nothing from the future of a replay: moments an earlier run of the day stored past
            // where the service's clock now stands wait until it gets there again (nor, for a
            // spoiler delay, from its last seconds).
            let now = clock.now().addingTimeInterval(-TimeInterval(try API.delay(request)))
            let recent = try await store.recentMoments(limit: min(limit + 1000, 5000))
            return try API.json(recent.filter { $0.occurredAt <= now }.prefix(limit).map(MomentView.init))
        }
        api.get("hall-of-fame/:season") { request, context in
            let season = try context.parameters.require("season")
            let limit = try API.limit(request, default: 25)
            let delay = try API.delay(request)
            let now = clock.now().addingTimeInterval(-TimeInterval(delay))
            guard let sides = try await seasons.hallOfFame(season: season) else {
                throw API.error(.notFound, "no Retrosheet data for season \(season)")
            }
            let happened = Self.happened(board: delay > 0 ? board.all(asOf: now) : board.all, now: now)
            return try API.json(
                sides.filter { happened($0.date, $0.gameID) }.prefix(limit).enumerated().map {
                    HallOfFameEntry(rank: $0.offset + 1, side: $0.element)
                })
        }
    }

    /// A game before its first pitch: the starters once the lineups are out (else the schedule's
    /// probables) with their W-L and ERA before the day, the batting orders, the venue.
    static func pregame(_ follower: GameFollower, start: Date, records: [String: PitcherRecord]?) -> Pregame {
        let info = follower.info
        let starters = follower.starters
        func side(_ side: Side) -> Pregame.Team {
            let starter = starters.first { $0.side == side && $0.position == Position.pitcher }.map { "\($0.player)" }
            let probable = side == .away ? info.probablePitchers?.away : info.probablePitchers?.home
            let pitcher = (starter ?? probable).map { id -> Pregame.Pitcher in
                let record = records?[id]
                return Pregame.Pitcher(
                    id: id, name: info.players[id] ?? id, wins: records == nil ? nil : record?.wins ?? 0,
                    losses: records == nil ? nil : record?.losses ?? 0,
                    era: records == nil ? nil : record?.era ?? PitcherRecord().era)
            }
            let lineup = starters.filter { $0.side == side && $0.battingSlot > 0 }.sorted {
                $0.battingSlot < $1.battingSlot
            }
            .map {
                Pregame.Batter(
                    slot: Int($0.battingSlot), name: info.name(of: $0.player),
                    position: PlayDescription.positionAbbreviation($0.position))
            }
            return Pregame.Team(team: info.team(side).abbreviation, pitcher: pitcher, lineup: lineup)
        }
        return Pregame(
            firstPitch: start, venue: info.venue, confirmed: !starters.isEmpty, away: side(.away), home: side(.home))
    }

    /// The clock's day in New York (`yyyy-mm-dd`): MLB's day.
    static func clockDay(_ now: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "America/New_York") ?? .gmt
        let parts = calendar.dateComponents([.year, .month, .day], from: now)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// Whether a game (its day, its id) is over by the service's clock: before the board's day
    /// (the latest of its games, else the clock's day in New York), or of that day and final on
    /// the board. A replayed day's Hall of Fame does not crown a no-hitter not yet pitched, nor do
    /// its standings count a game not yet played.
    static func happened(board: [GameSnapshot], now: Date) -> @Sendable (_ date: String, _ gameID: String) -> Bool {
        let today = board.map(\.date).max() ?? clockDay(now)
        let final = Set(board.filter { $0.status == .final }.map(\.id))
        return { date, gameID in date < today || (date == today && final.contains(gameID)) }
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

extension GameRoutes {
    /// The game an address names: its id, or as a fan reads it, `2020-08-25-PIT-CWS` (the date,
    /// MLB's abbreviations of the visitors and the home club, `-1` or `-2` in a doubleheader), as
    /// the web app links to it. An address that names no game on the board is taken as an id.
    static func gameID(_ address: String, in games: [GameSnapshot]) -> String {
        let parts = address.split(separator: "-").map(String.init)
        guard parts.count == 5 || parts.count == 6, parts[0].count == 4 else { return address }
        let date = parts[0...2].joined(separator: "-")
        let number = parts.count == 6 ? Int(parts[5]) : nil
        let found = games.first {
            $0.date == date && $0.away.abbreviation == parts[3] && $0.home.abbreviation == parts[4]
                && ($0.gameNumber ?? 0) == (number ?? 0)
        }
        return found?.id ?? address
    }
}
