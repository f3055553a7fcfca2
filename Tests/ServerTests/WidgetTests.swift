import Alerts
import Baseball
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Scores
import Synchronization
import Testing

@testable import Server

/// `GET /api/widget`: the compact feed of a few teams' games, its `ETag` / `If-None-Match`, its
/// cache hints, and a device's own feed; on the replayed 2020-08-25.
@Suite struct WidgetTests {
    struct Answer: Sendable {
        var status: HTTPResponse.Status
        var etag: String?
        var cacheControl: String?
        var body: Data
        var feed: Widget.Body? { try? APIServerTests.reader.decode(Widget.Body.self, from: body) }
    }

    static func get(_ client: any TestClientProtocol, _ uri: String, headers: HTTPFields = [:]) async throws -> Answer {
        try await client.execute(uri: uri, method: .get, headers: headers) { response in
            Answer(
                status: response.status, etag: response.headers[.eTag], cacheControl: response.headers[.cacheControl],
                body: Data(response.body.readableBytesView))
        }
    }

    @Test func aFinalDayIsSmallCachedAndAnsweredWith304WhenUnchanged() async throws {
        let fixture = try await APIServerTests.Fixture()
        defer { fixture.remove() }
        try await fixture.test { client in
            // MLB's abbreviation or Retrosheet's code, any case.
            let first = try await Self.get(client, "/api/widget?teams=CWS,pit")
            #expect(first.status == .ok)
            let feed = try #require(first.feed)
            #expect(feed.date == "2020-08-25")
            #expect(feed.games.count == 1)
            let game = try #require(feed.games.first)
            #expect(game.id == "CHA202008250")
            #expect((game.away.team, game.away.runs, game.home.team, game.home.runs) == ("PIT", 0, "CWS", 4))
            #expect(game.status == "Final" && game.state == "final")
            #expect(game.noHitter == "CWS")
            #expect(feed.next == 3600)
            #expect(first.cacheControl == "public, max-age=60")
            let etag = try #require(first.etag)
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
            print("widget body (\(first.body.count) bytes):", String(decoding: first.body, as: UTF8.self))
            #expect(first.body.count <= 200)

            // Nothing changed: 304, no body, the same validator.
            let again = try await Self.get(client, "/api/widget?teams=CHA,PIT", headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified)
            #expect(again.body.isEmpty)
            #expect(again.etag == etag)
            // A list of validators, a weak one, or *.
            for header in ["\"other\", \(etag)", "W/\(etag)", "*"] {
                #expect(
                    try await Self.get(client, "/api/widget?teams=CWS", headers: [.ifNoneMatch: header]).status
                        == .notModified)
            }
            #expect(
                try await Self.get(client, "/api/widget?teams=CWS", headers: [.ifNoneMatch: "\"stale\""]).status == .ok)

            // Every game of the day without teams: about 150 bytes a game.
            let all = try await Self.get(client, "/api/widget")
            let games = try #require(all.feed?.games)
            #expect(games.count == 16)
            #expect(all.body.count / games.count <= 160, "\(all.body.count) bytes for \(games.count) games")
            // Doubleheaders are numbered.
            #expect(games.contains { $0.game == 2 } == games.contains { $0.id.hasSuffix("2") })

            // A team that is not a club: 400 naming it.
            let bad = try await Self.get(client, "/api/widget?teams=CWS,XYZ")
            #expect(bad.status == .badRequest)
            #expect(try APIServerTests.message(ByteBuffer(data: bad.body)).contains("'XYZ' is not a major league club"))
        }
    }

    /// During a game: refreshed every 10 seconds, the no-hitter in progress marked.
    @Test func aGameUnderWayAsksToBeAskedAgainSoon() async throws {
        let fixture = try await APIServerTests.Fixture { change in
            change.game.info.id == "CHA202008250" && (change.game.state?.pitching(.home).outs ?? 0) >= 15
                && change.game.state?.inning ?? 0 < 9
        }
        defer { fixture.remove() }
        try await fixture.test { client in
            let answer = try await Self.get(client, "/api/widget?teams=CWS")
            let feed = try #require(answer.feed)
            #expect(feed.next == 10)
            #expect(answer.cacheControl == "public, max-age=5")
            let game = try #require(feed.games.first)
            #expect(game.state == "live" && game.outs != nil)
            #expect(game.noHitter == "CWS")
        }
    }

    /// The validator changes with the games it shows, and only with them.
    @Test func theETagFollowsTheTeamsGamesOnly() throws {
        let board = LiveBoard()
        let widget = WidgetFeed(board: board, attemptOuts: 12)
        func follower(_ id: String, away: String, home: String) -> GameFollower {
            var follower = GameFollower(gameID: id)
            let info = GameInfo(
                id: id, date: "2020-08-25", away: .init(club: TeamDirectory.club(away, on: "2020-08-25")!),
                home: .init(club: TeamDirectory.club(home, on: "2020-08-25")!))
            _ = follower.follow(.scheduled(info, start: Date(timeIntervalSince1970: 1_598_397_000)))
            return follower
        }
        var white = follower("CHA202008250", away: "PIT", home: "CHA")
        let yankees = follower("NYA202008250", away: "ATL", home: "NYA")
        board.record(white, at: Date())
        board.record(yankees, at: Date())
        let before = widget.response(teams: ["CHA"])
        #expect(before.next == 60)
        // Another team's game changes: the same bytes, the same validator.
        var later = yankees
        _ = later.follow(.status(GameStatus(.postponed, resumesOn: "2020-08-26"), result: nil))
        board.record(later, at: Date())
        #expect(widget.response(teams: ["CHA"]).etag == before.etag)
        #expect(widget.response(teams: ["NYA"]).etag != widget.response(teams: ["CHA"]).etag)
        // Its own game starts: a new validator.
        _ = white.follow(.status(GameStatus(.live), result: nil))
        board.record(white, at: Date())
        let after = widget.response(teams: ["CHA"])
        #expect(after.etag != before.etag)
        #expect(after.next == 10)
    }

    /// A spoiler delay: the widget shows the games as they stood `delay` seconds ago, never a
    /// change before its time plus the delay; the board keeps five minutes of its states.
    @Test func aDelayedWidgetShowsTheGamesAsTheyStoodThen() throws {
        let board = LiveBoard()
        let widget = WidgetFeed(board: board, attemptOuts: 12)
        let start = Date(timeIntervalSince1970: 1_598_397_000)
        var game = GameFollower(gameID: "CHA202008250")
        let info = GameInfo(
            id: "CHA202008250", date: "2020-08-25", away: .init(club: TeamDirectory.club("PIT", on: "2020-08-25")!),
            home: .init(club: TeamDirectory.club("CHA", on: "2020-08-25")!))
        _ = game.follow(.scheduled(info, start: start))
        board.record(game, at: start.addingTimeInterval(-600))
        _ = game.follow(.status(GameStatus(.live), result: nil))
        board.record(game, at: start)
        _ = game.follow(.status(GameStatus(.postponed, resumesOn: "2020-08-26"), result: nil))
        board.record(game, at: start.addingTimeInterval(100))
        func state(delay: Int, at seconds: TimeInterval) throws -> (String?, Int?) {
            let response = widget.response(teams: [], delay: delay, now: start.addingTimeInterval(seconds))
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let body = try decoder.decode(Widget.Body.self, from: Data(response.body.readableBytesView))
            return (body.games.first?.state, body.delay)
        }
        #expect(try state(delay: 0, at: 110) == ("scheduled", nil))  // postponed: not under way
        #expect(try state(delay: 60, at: 110) == ("live", 60), "the postponement is 10 s old: not shown")
        #expect(try state(delay: 60, at: 160) == ("scheduled", 60))
        #expect(try state(delay: 60, at: 30) == ("scheduled", 60), "30 s in, a minute behind: before the start")
        // Earlier than the game was first on the board: nothing.
        #expect(try state(delay: 300, at: -800) == (nil, 300))
        // Ten minutes on, a state recorded: the states older than five minutes before it are
        // gone but the last of them, the one the span starts in.
        board.record(game, at: start.addingTimeInterval(700))
        let postponed = "Postponed (to 2020-08-26)"
        #expect(board.all(asOf: start.addingTimeInterval(400)).first?.statusText == postponed, "the span's start")
        #expect(board.all(asOf: start.addingTimeInterval(50)).isEmpty, "before the span: not kept")
        // A state recorded with an earlier time (another instance's clock) is not made older.
        _ = game.follow(.status(GameStatus(.live), result: nil))
        board.record(game, at: start.addingTimeInterval(600))
        #expect(board.all(asOf: start.addingTimeInterval(650)).first?.statusText == postponed)
        #expect(board.all(asOf: start.addingTimeInterval(700)).first?.status == .live)
        #expect(throws: WidgetError.self) { try WidgetFeed.delay("301") }
        #expect(throws: WidgetError.self) { try WidgetFeed.delay("soon") }
        #expect(try WidgetFeed.delay("120") == 120 && WidgetFeed.delay(nil) == nil)
    }

    /// A board view's body is made once per board version: the same bytes until a game
    /// changes, then the new state (never the old one kept under the new version).
    @Test func boardViewsAreMadeOncePerVersion() throws {
        let board = LiveBoard()
        let views = BoardViewCache(board: board)
        var game = GameFollower(gameID: "CHA202008250")
        _ = game.follow(
            .scheduled(
                GameInfo(
                    id: "CHA202008250", date: "2020-08-25",
                    away: .init(club: TeamDirectory.club("PIT", on: "2020-08-25")!),
                    home: .init(club: TeamDirectory.club("CHA", on: "2020-08-25")!)),
                start: Date(timeIntervalSince1970: 1_598_397_000)))
        board.record(game, at: Date())
        var made = 0
        func body() throws -> String {
            let version = views.version
            let buffer = try views.body("games", version: version) {
                made += 1
                return try API.body(board.all)
            }
            return String(buffer: buffer)
        }
        let first = try body()
        #expect(try body() == first && made == 1)
        _ = game.follow(.status(GameStatus(.live), result: nil))
        board.record(game, at: Date())
        let live = try body()
        #expect(made == 2 && live != first && live.contains(#""status":"live""#))
        #expect(try body() == live && made == 2)
    }

    @Test func aDeviceGetsItsFavouriteTeamsPrivately() async throws {
        let fixture = try await APIServerTests.Fixture()
        defer { fixture.remove() }
        try await fixture.test { client in
            let registration =
                #"{"channel":"apns","token":"\#(APIServerTests.token)","topic":"com.example.nohit","preferences":{"favourite_teams":["CWS","NYY"]}}"#
            let device = try await client.execute(
                uri: "/api/devices", method: .post, headers: APIServerTests.jsonType,
                body: APIServerTests.body(registration)
            ) { try #require(try APIServerTests.json($0.body) as? [String: String]) }
            let id = try #require(device["id"])
            let mine = try await Self.get(
                client, "/api/devices/\(id)/widget", headers: [.authorization: "Bearer \(device["secret"] ?? "")"])
            #expect(mine.status == .ok)
            #expect(mine.cacheControl?.hasPrefix("private") == true)
            let teams = Set(try #require(mine.feed).games.flatMap { [$0.away.team, $0.home.team] })
            #expect(teams.contains("CWS"))
            #expect(
                try #require(mine.feed).games.allSatisfy {
                    [$0.away.team, $0.home.team].contains { ["CWS", "NYY"].contains($0) }
                })
            let stranger = try await Self.get(
                client, "/api/devices/\(id)/widget", headers: [.authorization: "Bearer nope"])
            #expect(stranger.status == .unauthorized)
        }
    }
}
