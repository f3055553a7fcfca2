import Alerts
import Baseball
import Clocks
import Deals
import Delivery
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Retrosheet
import Scores
import Storage
import TestSupport
import Testing

@testable import Pipeline
@testable import Server

/// Every endpoint through Hummingbird's router, on the real day of Giolito's no-hitter
/// (2020-08-25) replayed into a real SQLite store.
/// The last change the hub handed out (the fixture stops the day on one).
final class LastChange: GameChangeConsumer, @unchecked Sendable {
    // Guarded by the lock.
    private let lock = NSLock()
    private var change: GameChange?
    func consume(_ change: GameChange) async throws { lock.withLock { self.change = change } }
    func take() -> GameChange? {
        lock.withLock {
            defer { change = nil }
            return change
        }
    }
}

@Suite struct APIServerTests {
    static let day = "2020-08-25"

    /// A store, a board and a stream fed by the day's replay, through the game hub as `nohit
    /// serve` builds it (through the change `until` accepts, or all of the day).
    struct Fixture {
        let store: SQLiteStore
        let board: LiveBoard
        let feed: LiveFeed
        let seasons: SeasonLibrary
        let clock: ManualWallClock
        /// The server's options: a test sets what it needs before it asks.
        var options = APIServer.Options()
        let directory: String

        var api: APIServer {
            APIServer(store: store, board: board, feed: feed, seasons: seasons, clock: clock, options: options)
        }

        init(until stop: (@Sendable (GameChange) -> Bool)? = nil) async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("api-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            store = try SQLiteStore(path: directory + "/nohit.sqlite")
            let games = try ReplaySchedule.games(on: APIServerTests.day, data: [TestData.path("retrosheet")])
            board = LiveBoard()
            feed = LiveFeed()
            let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
            self.clock = clock
            seasons = SeasonLibrary(places: [TestData.path("retrosheet")])
            // HummingbirdTesting's live client opens its connection before the test body runs and
            // sends nothing on it until the body's first request, which on a saturated machine came
            // after the 10-second header deadline (the server closed it: "I/O on closed channel").
            // Tests of the deadline itself set their own limits.
            var limits = ConnectionLimits()
            limits.headerTimeout = .seconds(600)
            options.gate = ConnectionGate(limits: limits)
            let pipeline = AlertPipeline(store: store, channels: [], clock: clock)
            let last = LastChange()
            let places = [TestData.path("retrosheet")]
            let deals = DealDesk(
                rules: try DealRuleFile.load([DealRuleFile.shippedPath]), store: store, publisher: pipeline.publisher,
                seasonFiles: { season in
                    (try? EventFiles.expand(places.map { "\($0)/\(season)" }.filter(FileManager.default.fileExists)))
                        ?? []
                })
            options.deals = deals
            let hub = GameHub(
                consumers: [
                    AlertConsumer(publisher: pipeline.publisher), DealConsumer(desk: deals),
                    LiveConsumer(board: board, feed: feed), last,
                ])
            // The replay source's timeline, stopped after the change `stop` accepts (once every
            // game is on the schedule: the timeline says those first).
            for entry in ReplayTimeline(games: games, announced: clock.now()).entries {
                clock.advance(to: entry.time)
                try await hub.receive(entry.item, gameID: entry.gameID, at: entry.time)
                guard let change = last.take() else { continue }
                if case .scheduled = entry.item { continue }
                if stop?(change) == true { break }
            }
        }

        func test(_ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
            try await buildHTTPApplication(api).test(.router, body)
        }

        /// Through a real socket, with the WebSocket upgrade, as `nohit serve` runs it.
        func live(logger: Logger? = nil, _ body: @Sendable (any TestClientProtocol) async throws -> Void)
            async throws
        {
            try await buildHTTPApplication(api, logger: logger).test(.live, body)
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// Reads the API's answers into the product's own types, as a client would (snake_case keys,
    /// ISO 8601 dates).
    static let reader: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// The day's pitches between plays that change what the board says (a foul with two strikes
    /// after a foul says nothing new), as the replay says them.
    static func pitchEvents() throws -> Int {
        let games = try ReplaySchedule.games(on: day, data: [TestData.path("retrosheet")])
        var last: [String: AtBat] = [:]
        var applied: [String: Int] = [:]
        var count = 0
        for entry in ReplayTimeline(games: games).entries {
            switch entry.item {
            case .updates(let list):
                applied[entry.gameID, default: 0] += list.count
                last[entry.gameID] = nil
            case .atBat(let atBat) where atBat.afterUpdates == applied[entry.gameID, default: 0]:
                if last[entry.gameID] != atBat { count += 1 }
                last[entry.gameID] = atBat
            default: break
            }
        }
        return count
    }

    static func json(_ buffer: ByteBuffer) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView), options: [.fragmentsAllowed])
    }

    static func message(_ buffer: ByteBuffer) throws -> String {
        let object = try json(buffer) as? [String: Any]
        return (object?["error"] as? [String: Any])?["message"] as? String ?? ""
    }

    static func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// The content type every JSON body is sent with.
    static let jsonType: HTTPFields = [.contentType: "application/json"]

    @Test func healthAndMetrics() async throws {
        var fixture = try await Fixture()
        fixture.options.outbox = fixture.store
        defer { fixture.remove() }
        // The score events among them (ScoreboardTests checks when they come).
        var scores = 0
        for event in fixture.feed.keptEvents(after: 0) {
            if event.kind == .score { scores += 1 }
            if event.id >= fixture.feed.lastID { break }
        }
        let scoreEvents = scores
        #expect(scoreEvents > 0)
        let pitchEvents = try Self.pitchEvents()
        #expect(pitchEvents > 2000)
        try await fixture.test { client in
            try await client.execute(uri: "/healthz", method: .get) { response throws in
                #expect(response.status == .ok)
                #expect(try Self.json(response.body) as? [String: String] == ["status": "ok"])
            }
            // A replayed day is always current; the database answers.
            try await client.execute(uri: "/readyz", method: .get) { response throws in
                #expect(response.status == .ok)
                let answer = try #require(try Self.json(response.body) as? [String: Any])
                #expect(answer["status"] as? String == "ready")
                #expect(answer["degraded"] as? [String] == [])
                let checks = try #require(answer["checks"] as? [String: [String: Any]])
                #expect(checks["database"]?["ok"] as? Bool == true)
                #expect(checks["source"]?["kind"] as? String == "replay")
            }
            try await client.execute(uri: "/metrics", method: .get) { response throws in
                let text = String(buffer: response.body)
                #expect(text.contains("nohit_games{status=\"final\"} 16"))
                #expect(text.contains("nohit_games{status=\"live\"} 0"))
                #expect(
                    text.contains("nohit_build_info{version=\"\(BuildInfo.version)\",swift=\"\(BuildInfo.swift)\"} 1"))
                // 10 moments; a game event per change: each game's schedule, lineups, start and end
                // (4 × 16), every update that changed the game (1,465 of 1,568: a placeholder
                // record before a substitution changes nothing by itself) and every pitch between
                // plays that moved the count; the score events.
                #expect(text.contains("nohit_live_events_total \(10 + 1_465 + 64 + pitchEvents + scoreEvents)"))
                // No devices: the moments planned nothing.
                #expect(text.contains("nohit_outbox{state=\"pending\"} 0"))
            }
        }
    }

    @Test func metricsCountDeliveriesAndLatenciesPerChannel() async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        let statistics = DeliveryStatistics(metrics: fixture.options.metrics.factory)
        statistics.record(.apns, .delivered)
        statistics.record(.apns, .delivered)
        statistics.record(.apns, .tokenRefresh)
        statistics.recordLatency(.apns, 0.2)
        statistics.recordLatency(.apns, 3)
        statistics.record(.webPush, .retried)
        try await fixture.test { client in
            try await client.execute(uri: "/metrics", method: .get) { response throws in
                let lines = Set(String(buffer: response.body).split(separator: "\n").map(String.init))
                for line in [
                    #"nohit_deliveries_total{channel="apns",outcome="delivered"} 2"#,
                    #"nohit_deliveries_total{channel="web-push",outcome="retried"} 1"#,
                    #"nohit_deliveries_total{channel="web-push",outcome="delivered"} 0"#,
                    #"nohit_provider_token_refreshes_total{channel="apns"} 1"#,
                    #"nohit_alert_latency_seconds_bucket{channel="apns",le="0.1"} 0"#,
                    #"nohit_alert_latency_seconds_bucket{channel="apns",le="0.25"} 1"#,
                    #"nohit_alert_latency_seconds_bucket{channel="apns",le="2.5"} 1"#,
                    #"nohit_alert_latency_seconds_bucket{channel="apns",le="5.0"} 2"#,
                    #"nohit_alert_latency_seconds_bucket{channel="apns",le="+Inf"} 2"#,
                    #"nohit_alert_latency_seconds_sum{channel="apns"} 3.2"#,
                    #"nohit_alert_latency_seconds_count{channel="apns"} 2"#,
                    #"nohit_alert_latency_seconds_count{channel="web-push"} 0"#,
                ] {
                    #expect(lines.contains(line), "\(line)")
                }
            }
        }
    }

    @Test func webUIAndItsConfiguration() async throws {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        fixture.options.vapidPublicKey = "BKey"
        try await fixture.test { client in
            try await client.execute(uri: "/", method: .get) { response throws in
                #expect(response.status == .ok)
                let page = String(buffer: response.body)
                #expect(page.contains("<script type=\"module\" src=\"/js/main.js\"></script>"))
                #expect(page.contains("copyrighted by Retrosheet"))
            }
            for file in ["/js/main.js", "/js/live.js", "/style.css", "/sw.js"] {
                try await client.execute(uri: file, method: .get) { #expect($0.status == .ok, "\(file)") }
            }
            try await client.execute(uri: "/api/config", method: .get) { response throws in
                let configuration = try #require(try Self.json(response.body) as? [String: Any])
                #expect(configuration["vapid_public_key"] as? String == "BKey")
                #expect(configuration["attempt_outs"] as? Int == 12)
                #expect((configuration["seasons"] as? [String])?.contains("2020") == true)
                // No analytics here: the page is not told of a project.
                #expect(configuration["analytics"] == nil)
            }
            // Keen's clients pointed at a server without analytics hear why, as Keen says it.
            for (uri, method) in [
                ("/3.0/projects/app/events", HTTPRequest.Method.post), ("/3.0/projects/app/queries/count", .get),
            ] {
                try await client.execute(uri: uri, method: method) { response throws in
                    #expect(response.status == .notFound)
                    let body = try #require(try Self.json(response.body) as? [String: Any])
                    #expect(body["error_code"] as? String == "ResourceNotFoundError")
                    #expect((body["message"] as? String)?.contains("no analytics") == true)
                }
            }
        }
    }

    /// The checked-in OpenAPI document is served, and every operation in it is routed.
    @Test func openAPIDocumentMatchesTheRoutes() async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            let document = try await client.execute(uri: "/openapi.json", method: .get) { response throws in
                #expect(response.status == .ok)
                return try #require(try Self.json(response.body) as? [String: Any])
            }
            #expect(document["openapi"] as? String == "3.1.0")
            // The lists and the pattern that live in code are filled in from it.
            let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
            let preferences = try #require(
                (schemas["Preferences"] as? [String: Any])?["properties"] as? [String: [String: Any]])
            #expect(
                (preferences["favourite_teams"]?["items"] as? [String: Any])?["enum"] as? [String]
                    == TeamDirectory.currentCodes)
            let zones = try #require(
                ((preferences["quiet_hours"]?["properties"] as? [String: Any])?["time_zone"] as? [String: Any])?["enum"]
                    as? [String])
            #expect(zones == Preferences.timeZones.sorted())
            #expect(zones.contains("America/Chicago") && zones.contains("UTC"))
            let variants = try #require((schemas["DeviceRegistration"] as? [String: Any])?["oneOf"] as? [[String: Any]])
            let urlPatterns = variants.flatMap { variant in
                ["url", "endpoint"].compactMap {
                    ((variant["properties"] as? [String: Any])?[$0] as? [String: Any])?["pattern"] as? String
                }
            }
            #expect(urlPatterns == [Registrar.urlPattern, Registrar.urlPattern])
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            let operations = paths.flatMap { path, item in
                item.keys.filter { $0 != "parameters" }.map { "\($0.uppercased()) \(path)" }
            }
            #expect(
                Set(operations) == [
                    "GET /healthz", "GET /readyz", "GET /metrics", "GET /api/config", "GET /api/games",
                    "GET /api/admin/deliveries/failed",
                    "GET /api/scoreboard", "GET /api/standings",
                    "GET /api/games/{id}", "GET /api/games/{id}/live-activity-channel", "GET /api/widget",
                    "GET /api/devices/{id}/widget",
                    "GET /api/attempts", "GET /api/moments", "GET /api/hall-of-fame/{season}", "GET /api/stream",
                    "GET /api/ws", "POST /api/devices", "GET /api/devices/{id}/preferences",
                    "PUT /api/devices/{id}/preferences",
                    "GET /api/admin/outbox", "GET /api/admin/devices", "POST /api/admin/devices/{id}/disable",
                    "POST /api/admin/devices/{id}/test",
                    "GET /api/admin/metrics", "GET /api/admin/projects",
                    "GET /api/deals/today", "GET /api/deals/history", "GET /api/deals/{rule}/history",
                ])
            // Each one answers (the streams are tested on their own: they never end; a bid's channel,
            // which needs an app and a service with an APNs key, in LiveActivityChannelRouteTests).
            let registration = #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit"}"#
            let device = try await client.execute(
                uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(registration)
            ) {
                try #require(try Self.json($0.body) as? [String: String])
            }
            let authorized: HTTPFields = [
                .authorization: "Bearer \(device["secret"] ?? "")", .contentType: "application/json",
            ]
            for operation in operations
            where !["GET /api/stream", "GET /api/ws", "GET /api/games/{id}/live-activity-channel"].contains(operation)
                && operation != "POST /api/devices" && !operation.contains("/admin/")
            {
                let parts = operation.split(separator: " ")
                let uri = parts[1].replacingOccurrences(of: "{season}", with: "2020")
                    .replacingOccurrences(of: "{rule}", with: "papa-johns-dc-nationals")
                    .replacingOccurrences(
                        of: "{id}", with: parts[1].hasPrefix("/api/games/") ? "CHA202008250" : device["id"] ?? "")
                let method: HTTPRequest.Method = parts[0] == "PUT" ? .put : .get
                // Readiness gives the database 2 s to answer: on a loaded machine it may say 503 for
                // a moment, and is asked again.
                var attempts = operation == "GET /readyz" ? 20 : 1
                while attempts > 0 {
                    attempts -= 1
                    let status = try await client.execute(
                        uri: uri, method: method, headers: authorized, body: Self.body("{}")
                    ) { response in
                        if response.status != .ok && attempts == 0 {
                            Issue.record("\(operation): \(response.status) \(String(buffer: response.body))")
                        }
                        return response.status
                    }
                    if status == .ok { break }
                }
            }
            try await client.execute(uri: "/api/nothing-here", method: .get) { #expect($0.status == .notFound) }
        }
    }

    /// Is pizza half price today? After Aug 25 2020 (the replay's day) no Nationals game of the 25th
    /// qualified; the season's history has the 24th (9-3 over the Marlins on the 23rd) and no day
    /// of a game not yet played; a device subscribes to a deal the server has, not to another.
    @Test func dealsTodayHistoryAndSubscriptions() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/deals/today", method: .get) { response in
                let body = try #require(try Self.json(response.body) as? [String: Any])
                let deals = try #require(body["deals"] as? [[String: Any]])
                let papaJohns = try #require(deals.first { $0["rule"] as? String == "papa-johns-dc-nationals" })
                // The fixture's clock stands at the day's last play, past midnight in Washington.
                #expect(papaJohns["day"] as? String == "2020-08-26")
                #expect(papaJohns["on"] as? Bool == false)
                #expect(papaJohns["in_force"] as? Bool == true)
                #expect(papaJohns["condition"] as? String == "the Nationals win and the Nationals score 7 or more runs")
                #expect((papaJohns["sources"] as? [String])?.isEmpty == false)
            }
            try await client.execute(
                uri: "/api/deals/papa-johns-dc-nationals/history?season=2020", method: .get
            ) { response in
                let body = try #require(try Self.json(response.body) as? [String: Any])
                let days = try #require(body["days"] as? [[String: Any]]).compactMap { $0["date"] as? String }
                #expect(days.contains("2020-08-24"))
                #expect(days.allSatisfy { $0 <= "2020-08-26" })
                #expect((body["by_franchise"] as? [[String: Any]])?.first?["team"] as? String == "WAS")
            }
            try await client.execute(uri: "/api/deals/no-such-deal/history", method: .get) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/api/deals/history?season=99", method: .get) {
                #expect($0.status == .badRequest)
            }
            let registration = #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit"}"#
            let device = try await client.execute(
                uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(registration)
            ) {
                try #require(try Self.json($0.body) as? [String: String])
            }
            let authorized: HTTPFields = [
                .authorization: "Bearer \(device["secret"] ?? "")", .contentType: "application/json",
            ]
            let uri = "/api/devices/\(device["id"] ?? "")/preferences"
            try await client.execute(
                uri: uri, method: .put, headers: authorized, body: Self.body(#"{"deals":["pizza-hut-nowhere"]}"#)
            ) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("'pizza-hut-nowhere' is not a deal of this server"))
            }
            try await client.execute(
                uri: uri, method: .put, headers: authorized,
                body: Self.body(#"{"deals":["papa-johns-dc-nationals","papa-johns-dc-nationals"]}"#)
            ) { response in
                #expect(response.status == .ok)
                let body = try #require(try Self.json(response.body) as? [String: Any])
                #expect(body["deals"] as? [String] == ["papa-johns-dc-nationals"])
            }
        }
    }

    @Test func gamesAndTheNoHittersTimeline() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/games", method: .get) { response throws in
                // Where the stream stood: a page opens /api/stream?after= it.
                #expect(response.headers[HTTPField.Name("X-Stream-Position")!] == "\(fixture.feed.lastID)")
                let games = try #require(try Self.json(response.body) as? [[String: Any]])
                #expect(games.count == 16)
                #expect(games.allSatisfy { $0["status"] as? String == "final" })
            }
            try await client.execute(uri: "/api/games/CHA202008250", method: .get) { response throws in
                #expect(response.status == .ok)
                let timeline = try #require(try Self.json(response.body) as? [String: Any])
                let game = try #require(timeline["game"] as? [String: Any])
                #expect((game["home"] as? [String: Any])?["runs"] as? Int == 4)
                #expect((game["away"] as? [String: Any])?["runs"] as? Int == 0)
                let bids = try #require(game["bids"] as? [[String: Any]])
                let white = try #require(bids.first { $0["team"] as? String == "CWS" })
                #expect(white["side"] as? String == "home")
                #expect(white["status"] as? String == "official")
                #expect(white["pitchers"] as? [String] == ["Lucas Giolito"])
                #expect(white["outs"] as? Int == 27)
                #expect(white["perfect"] as? Bool == false)
                let moments = try #require(timeline["moments"] as? [[String: Any]])
                #expect(moments.count == 8)
                #expect(moments.last?["kind"] as? String == "completed")
                #expect(moments.last?["title"] as? String == "No-hitter! Lucas Giolito")
            }
            try await client.execute(uri: "/api/games/XXX202008250", method: .get) { response throws in
                #expect(response.status == .notFound)
                #expect(try Self.message(response.body).contains("no game XXX202008250"))
            }
            // As the web app's address names them: the date and MLB's abbreviations (and the game
            // of a doubleheader).
            for (address, id) in [
                ("2020-08-25-PIT-CWS", "CHA202008250"), ("2020-08-25-LAA-HOU-1", "HOU202008251"),
                ("2020-08-25-LAA-HOU-2", "HOU202008252"),
            ] {
                try await client.execute(uri: "/api/games/\(address)", method: .get) { response throws in
                    #expect(response.status == .ok)
                    let timeline = try #require(try Self.json(response.body) as? [String: Any])
                    #expect((timeline["game"] as? [String: Any])?["id"] as? String == id)
                }
            }
        }
    }

    @Test func attemptsAreTheBidsHitlessThroughFourInnings() async throws {
        // Stop the day when Giolito has finished the 7th hitless.
        let fixture = try await Fixture { step in
            step.moments.contains { $0.id == "CHA202008250-home-hitless-innings-21" }
        }
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/attempts", method: .get) { response throws in
                let attempts = try #require(try Self.json(response.body) as? [[String: Any]])
                // Cristian Javier's bid (HOU) was broken up in the 5th; Giolito's is the only one.
                #expect(attempts.count == 1)
                let bid = try #require(attempts.first?["bid"] as? [String: Any])
                #expect(bid["team"] as? String == "CWS")
                #expect(bid["status"] as? String == "alive")
                #expect(bid["outs"] as? Int == 21)
                #expect(bid["innings"] as? Int == 7)
                let game = try #require(attempts.first?["game"] as? [String: Any])
                #expect(game["status"] as? String == "live")
                // The play that made the third out: the half is over, the next not begun.
                #expect(game["half"] as? String == "top")
                #expect(game["outs"] as? Int == 3)
                #expect(game["inning"] as? Int == 7)
            }
        }
    }

    @Test func recentMomentsAreBounded() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/moments?limit=3", method: .get) { response throws in
                let moments = try #require(try Self.json(response.body) as? [[String: Any]])
                #expect(
                    moments.map { $0["id"] as? String } == [
                        "CHA202008250-home-completed-27", "CHA202008250-home-ninth-inning-out-26",
                        "CHA202008250-home-ninth-inning-out-25",
                    ])
            }
            for bad in ["0", "201", "many"] {
                try await client.execute(uri: "/api/moments?limit=\(bad)", method: .get) { response throws in
                    #expect(response.status == .badRequest)
                    #expect(try Self.message(response.body).contains("limit must be 1 to 200"))
                }
            }
        }
    }

    /// Nothing from the future of a replay: before the day's first pitch, 2020's Hall of Fame has
    /// neither of its no-hitters (Giolito's is that night, Alec Mills's in September); once the day
    /// is played, Giolito's leads it, and Mills's is still to come.
    @Test func hallOfFameOfASeason() async throws {
        let played = try await Fixture()
        defer { played.remove() }
        try await played.test { client in
            try await client.execute(uri: "/api/hall-of-fame/2020?limit=2", method: .get) { response throws in
                #expect(response.status == .ok)
                let entries = try #require(try Self.json(response.body) as? [[String: Any]])
                #expect(entries.map { $0["rank"] as? Int } == [1, 2])
                #expect(entries.first?["game_id"] as? String == "CHA202008250")
                #expect(!entries.contains { $0["game_id"] as? String == "MIL202009130" })
                #expect(entries.first?["outs_before_first_hit"] as? Int == 27)
                #expect(entries.first?["ending"] as? String == "No-hitter")
                let giolito = try #require(entries.first { $0["game_id"] as? String == "CHA202008250" })
                #expect(giolito["pitchers"] as? [String] == ["Lucas Giolito"])
                #expect(giolito["hitless"] as? String == "9 innings")
                let team = try #require(giolito["pitching_team"] as? [String: Any])
                #expect(team["abbreviation"] as? String == "CWS")
                #expect(team["name"] as? String == "Chicago White Sox")
                #expect(team["mlb_id"] as? Int == 145)
            }
        }
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/hall-of-fame/2020?limit=25", method: .get) { response throws in
                #expect(response.status == .ok)
                let entries = try #require(try Self.json(response.body) as? [[String: Any]])
                #expect(entries.count == 25)
                #expect(entries.allSatisfy { ($0["date"] as? String ?? "9") < "2020-08-25" }, "\(entries.prefix(3))")
            }
            for season in ["1899", "20x0"] {
                try await client.execute(uri: "/api/hall-of-fame/\(season)", method: .get) { response throws in
                    #expect(response.status == .notFound)
                    #expect(try Self.message(response.body).contains("no Retrosheet data for season \(season)"))
                }
            }
        }
    }

    static let token = String(repeating: "ab", count: 32)

    /// A Live Activity's token with the bid it shows (its attributes' game and team pitching):
    /// stored with it and said back; half a bid, a bid it cannot read, or a bid for another channel
    /// is refused, naming the field.
    @Test func aLiveActivityTokenNamesTheBidItShows() async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            // A Live Activity's token with the bid it shows: stored with it, and said back.
            let activity =
                #"{"channel":"live-activity","token":"\#(Self.token)","topic":"com.example.nohit","game_id":"CHA202008250","pitching_team":"CWS"}"#
            try await client.execute(
                uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(activity)
            ) { response throws in
                #expect(response.status == .created)
                let answer = try #require(try Self.json(response.body) as? [String: String])
                #expect(answer["game_id"] == "CHA202008250" && answer["pitching_team"] == "CWS")
                let id = try #require(answer["id"].flatMap(UUID.init(uuidString:)))
                let device = try #require(try await fixture.store.device(id: id))
                #expect(
                    device.channel
                        == .liveActivity(
                            token: Self.token, environment: .production, topic: "com.example.nohit",
                            bid: ActivityBid(gameID: "CHA202008250", pitchingTeam: "CWS")))
                _ = try await fixture.store.delete(id: id)
            }
            let bad: [(String, String)] = [
                (
                    #"{"channel":"live-activity","token":"\#(Self.token)","topic":"com.example.nohit","game_id":"CHA202008250"}"#,
                    "pitching_team: is required with game_id"
                ),
                (
                    #"{"channel":"live-activity","token":"\#(Self.token)","topic":"com.example.nohit","game_id":"CHA/2","pitching_team":"CWS"}"#,
                    "game_id: must be the activity's game id"
                ),
                (
                    #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit","game_id":"CHA202008250","pitching_team":"CWS"}"#,
                    "game_id: is not a field of a apns device"
                ),
            ]
            for (body, reason) in bad {
                try await client.execute(
                    uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(body)
                ) { response throws in
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(try Self.message(response.body).contains(reason), "\(body)")
                }
            }
        }
    }

    @Test func registeringADeviceAndItsBadInput() async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            let good =
                #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit","environment":"sandbox","preferences":{"threshold_innings":7,"favourite_teams":["CWS"]}}"#
            try await client.execute(uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(good))
            { response throws in
                #expect(response.status == .created)
                let answer = try #require(try Self.json(response.body) as? [String: String])
                let id = try #require(answer["id"].flatMap(UUID.init(uuidString:)))
                let device = try #require(try await fixture.store.device(id: id))
                #expect(device.preferences.thresholdInnings == 7)
                #expect(device.preferences.favouriteTeams == ["CHA"])
                #expect(Registrar.verify(secret: answer["secret"] ?? "", of: device))
            }
            // The app reinstalled registers its token again: the new device replaces the old one,
            // so the phone gets each alert once.
            let first = try #require(try await fixture.store.activeDevices().first)
            try await client.execute(uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(good))
            { response throws in
                #expect(response.status == .created)
                let answer = try #require(try Self.json(response.body) as? [String: String])
                let id = try #require(answer["id"].flatMap(UUID.init(uuidString:)))
                #expect(try await fixture.store.activeDevices().map(\.id) == [id])
                let replaced = try #require(try await fixture.store.device(id: first.id))
                guard case .disabled(let reason, _) = replaced.status else {
                    Issue.record("the first device is still active")
                    return
                }
                #expect(reason == "replaced by device \(id.uuidString): the same APNs token registered again")
            }
            _ = try await fixture.store.delete(id: first.id)
            // `development`, the entitlement's name for the sandbox, is stored as sandbox; no
            // environment is production.
            for (given, stored) in [("\"development\"", APNsEnvironment.sandbox), (nil, .production)] {
                let body =
                    #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit""#
                    + (given.map { #","environment":\#($0)"# } ?? "") + "}"
                try await client.execute(
                    uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(body)
                ) { response throws in
                    #expect(response.status == .created)
                    let answer = try #require(try Self.json(response.body) as? [String: String])
                    #expect(answer["environment"] == stored.rawValue, "\(body)")
                    let id = try #require(answer["id"].flatMap(UUID.init(uuidString:)))
                    let device = try #require(try await fixture.store.device(id: id))
                    #expect(device.channel == .apns(token: Self.token, environment: stored, topic: "com.example.nohit"))
                    _ = try await fixture.store.delete(id: id)
                }
            }
            // A push-to-start token: updates by channel unless the app says token (iOS 17.2-17.x).
            for (given, stored) in [(nil, ActivityUpdates.channel), ("token", .token)] {
                let body =
                    #"{"channel":"live-activity-start","token":"\#(Self.token.uppercased())","topic":"com.example.nohit""#
                    + (given.map { #","updates":"\#($0)""# } ?? "") + "}"
                try await client.execute(
                    uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(body)
                ) { response throws in
                    #expect(response.status == .created)
                    let answer = try #require(try Self.json(response.body) as? [String: String])
                    #expect(answer["updates"] == stored.rawValue && answer["topic"] == "com.example.nohit")
                    let id = try #require(answer["id"].flatMap(UUID.init(uuidString:)))
                    let device = try #require(try await fixture.store.device(id: id))
                    #expect(
                        device.channel
                            == .liveActivityStart(
                                token: Self.token, environment: .production, topic: "com.example.nohit",
                                updates: stored))
                    _ = try await fixture.store.delete(id: id)
                }
            }
            let bad: [(String, HTTPResponse.Status, String)] = [
                (
                    #"{"channel":"live-activity-start","token":"\#(Self.token)","topic":"com.example.nohit","updates":"push"}"#,
                    .badRequest, "updates: must be channel (iOS 18) or token (iOS 17.2-17.x), not 'push'"
                ),
                (
                    #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit","updates":"token"}"#,
                    .badRequest, "updates: is not a field of a apns device"
                ),
                (
                    #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit","environment":"prod"}"#,
                    .badRequest, "environment: must be sandbox (or development"
                ),
                (#"{"channel":"apns","token":"xyz","topic":"com.example.nohit"}"#, .badRequest, "token"),
                (
                    #"{"channel":"carrier-pigeon"}"#, .badRequest,
                    "must be apns, live-activity, live-activity-start, web-push or webhook"
                ),
                (#"{"channel":"apns","topic":"com.example.nohit"}"#, .badRequest, "token: is required"),
                // Well formed, but into a private network: the operator's policy (403).
                (
                    #"{"channel":"webhook","url":"https://10.0.0.1/hook","secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}"#,
                    .forbidden, "url: points into"
                ),
                (
                    #"{"channel":"webhook","url":"https://hooks.example.com/a{b}","secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}"#,
                    .badRequest, "url: is not a URL this service takes"
                ),
                (
                    #"{"channel":"webhook","url":"https://hooks.example.com/","secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw","token":"ab"}"#,
                    .badRequest, "token: is not a field of a webhook device"
                ),
                (
                    #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit","environment":null}"#,
                    .badRequest, "environment: must not be null"
                ),
                (
                    #"{"channel":"apns","token":"\#(Self.token)","topic":"t","preferences":{"threshold_innings":3}}"#,
                    .badRequest, "threshold_innings"
                ),
                (#"{"channel":"apns","#, .badRequest, "expects a key in quotes"),
                (
                    #"{"channel":"apns","token":"\#(String(repeating: "a", count: 20_000))"}"#, .contentTooLarge,
                    "larger than 16384 bytes"
                ),
            ]
            for (body, status, reason) in bad {
                try await client.execute(
                    uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(body)
                ) { response throws in
                    #expect(response.status == status, "\(body.prefix(80))")
                    #expect(try Self.message(response.body).contains(reason), "\(body.prefix(80))")
                }
            }
            // Only the good one was stored.
            #expect(try await fixture.store.deviceCount() == 1)
        }
    }

    /// A declared app's web page on another origin may register its Web Push subscription and
    /// read the configuration (CORS); another origin's page gets no CORS headers.
    @Test func aDeclaredWebOriginMayRegisterAcrossOrigins() async throws {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        fixture.options.webOrigins = ["https://scored.example.com"]
        try await fixture.test { client in
            try await client.execute(
                uri: "/api/devices", method: .options,
                headers: [
                    .origin: "https://scored.example.com", .accessControlRequestMethod: "POST",
                    .accessControlRequestHeaders: "content-type",
                ]
            ) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowOrigin] == "https://scored.example.com")
                #expect(response.headers[.accessControlAllowMethods]?.contains("POST") == true)
                #expect(response.headers[.accessControlAllowHeaders]?.contains("Content-Type") == true)
                #expect(response.headers[.vary] == "Origin")
            }
            var headers = Self.jsonType
            headers[.origin] = "https://scored.example.com"
            let subscription =
                #"{"channel":"webhook","url":"https://hooks.example.com/h","secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}"#
            try await client.execute(
                uri: "/api/devices", method: .post, headers: headers, body: Self.body(subscription)
            ) { response in
                #expect(response.status == .created)
                #expect(response.headers[.accessControlAllowOrigin] == "https://scored.example.com")
            }
            // A refusal is readable by the page too.
            try await client.execute(
                uri: "/api/devices", method: .post, headers: headers, body: Self.body(#"{"channel":"pigeon"}"#)
            ) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.accessControlAllowOrigin] == "https://scored.example.com")
            }
            try await client.execute(uri: "/api/config", method: .get, headers: [.origin: "https://scored.example.com"])
            { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == "https://scored.example.com")
            }
            // Another origin, or a route that is not the devices': no CORS.
            try await client.execute(
                uri: "/api/devices", method: .options,
                headers: [.origin: "https://evil.example.net", .accessControlRequestMethod: "POST"]
            ) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
                #expect(response.status == .methodNotAllowed)
            }
            headers[.origin] = "https://evil.example.net"
            try await client.execute(
                uri: "/api/devices", method: .post, headers: headers, body: Self.body(subscription)
            ) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            try await client.execute(uri: "/api/games", method: .get, headers: [.origin: "https://scored.example.com"])
            { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
        }
    }

    @Test func operatorEndpointsNeedTheAdminToken() async throws {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        fixture.options.outbox = fixture.store
        let closed = fixture.api.router()
        try await Application(router: closed).test(.router) { client in
            try await client.execute(uri: "/api/admin/outbox", method: .get) { response throws in
                #expect(response.status == .forbidden)
                #expect(try Self.message(response.body).contains("without an admin token"))
            }
        }
        fixture.options.adminToken = "s3cret-admin"
        // Two analytics projects: the web app's own (the Metrics page's default) and an app's.
        let web = try await fixture.store.createProject(name: "No-Hitter Alerts web", id: "web", now: Date())
        _ = try await fixture.store.createProject(name: "Scored", id: "scored", now: Date())
        fixture.options.analytics = AnalyticsAPI(store: fixture.store, clock: fixture.clock)
        fixture.options.webAnalytics = .init(projectID: "web", writeKey: web.writeKey)
        try await fixture.test { client in
            try await client.execute(uri: "/api/admin/projects", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/api/admin/projects", method: .get, headers: [.authorization: "Bearer s3cret-admin"]
            ) { response throws in
                let answer = try #require(try Self.json(response.body) as? [String: Any])
                #expect(answer["default"] as? String == "web")
                let projects = try #require(answer["projects"] as? [[String: String]])
                #expect(
                    Set(projects) == [
                        ["id": "web", "name": "No-Hitter Alerts web"], ["id": "scored", "name": "Scored"],
                    ])
            }
            let registration = #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit"}"#
            let device = try await client.execute(
                uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(registration)
            ) {
                try #require(try Self.json($0.body) as? [String: String])
            }
            let admin: HTTPFields = [.authorization: "Bearer s3cret-admin"]
            try await client.execute(uri: "/api/admin/devices", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/api/admin/devices", method: .get, headers: [.authorization: "Bearer s3cret-admiN"]
            ) { response throws in
                #expect(response.status == .unauthorized)
                #expect(try Self.message(response.body).contains("wrong admin token"))
            }
            try await client.execute(uri: "/api/admin/devices", method: .get, headers: admin) { response throws in
                let counts = try #require(try Self.json(response.body) as? [String: Any])
                #expect(counts["total"] as? Int == 1)
                #expect(counts["active_by_channel"] as? [String: Int] == ["apns": 1])
            }
            try await client.execute(uri: "/api/admin/outbox", method: .get, headers: admin) { response throws in
                #expect(
                    try Self.json(response.body) as? [String: Int] == [
                        "pending": 0, "sending": 0, "delivered": 0, "failed": 0, "superseded": 0, "held": 0,
                    ])
            }
            let disable = "/api/admin/devices/\(device["id"] ?? "")/disable"
            try await client.execute(uri: disable, method: .post, headers: admin) { #expect($0.status == .ok) }
            try await client.execute(uri: "/api/admin/devices/\(UUID())/disable", method: .post, headers: admin) {
                #expect($0.status == .notFound)
            }
            try await client.execute(uri: "/api/admin/devices", method: .get, headers: admin) { response throws in
                let counts = try #require(try Self.json(response.body) as? [String: Any])
                #expect(counts["total"] as? Int == 1)
                #expect(counts["active"] as? Int == 0)
            }
        }
    }

    @Test func preferencesNeedTheDevicesSecret() async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            let registration = #"{"channel":"apns","token":"\#(Self.token)","topic":"com.example.nohit"}"#
            let answer = try await client.execute(
                uri: "/api/devices", method: .post, headers: Self.jsonType, body: Self.body(registration)
            ) {
                try #require(try Self.json($0.body) as? [String: String])
            }
            let id = try #require(answer["id"])
            let secret = try #require(answer["secret"])
            let uri = "/api/devices/\(id)/preferences"
            let authorized: HTTPFields = [.authorization: "Bearer \(secret)", .contentType: "application/json"]

            try await client.execute(uri: uri, method: .get) { response throws in
                #expect(response.status == .unauthorized)
                #expect(try Self.message(response.body).contains("secret is required"))
            }
            try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer wrong"]) {
                response throws in
                #expect(response.status == .unauthorized)
                #expect(try Self.message(response.body).contains("with this secret"))
            }
            // An unknown device gets the same answer as a wrong secret: ids are not told apart.
            try await client.execute(uri: "/api/devices/\(UUID())/preferences", method: .get, headers: authorized) {
                response throws in
                #expect(response.status == .unauthorized)
                #expect(try Self.message(response.body).contains("with this secret"))
            }
            try await client.execute(uri: "/api/devices/nope/preferences", method: .get, headers: authorized) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(uri: uri, method: .get, headers: authorized) { response throws in
                let preferences = try #require(try Self.json(response.body) as? [String: Any])
                #expect(preferences["threshold_innings"] as? Int == 6)
                #expect(preferences["frequency"] as? String == "every-inning")
            }
            // Invalid: refused, nothing changes.
            for (body, reason) in [
                (#"{"threshold_innings":12}"#, "threshold_innings"),
                (#"{"spoiler_delay_seconds":600}"#, "spoiler_delay_seconds"),
                (#"{"min_odds":1.25}"#, "min_odds: must be a share above 0 and at most 1"),
                (#"{"min_odds":0}"#, "min_odds"),
                (#"{"quiet_hours":{"start":"25:00","end":"08:00","time_zone":"America/Chicago"}}"#, "quiet_hours"),
                (#"{"frequency":"hourly"}"#, "not valid preferences"),
                // Strict JSON: a key twice, a key in another case, a time with a sign.
                (#"{"threshold_innings":5,"threshold_innings":7}"#, "has the key 'threshold_innings' twice"),
                (#"{"thresholdInnings":5}"#, "unknown key 'thresholdInnings'"),
                (#"{"quiet_hours":{"start":"23:00","end":"08:00","time_zone":"UTC","tz":"UTC"}}"#, "unknown key 'tz'"),
                (#"{"quiet_hours":{"start":"+23:00","end":"08:00","time_zone":"America/Chicago"}}"#, "HH:MM"),
                (#"{"jinx_safe":true} trailing"#, "has more after the value"),
                // Score alerts: their own switches, real clubs, names a person can read.
                (#"{"kinds":["final-score"]}"#, "score_alerts turns it on or off"),
                (#"{"score_alerts":{"final":false}}"#, "unknown key 'final'"),
                (#"{"team_names":[{"team":"XYZ","name":"Zeds"}]}"#, "team_names: 'XYZ' is not an MLB club"),
                (#"{"team_names":[{"team":"CWS","name":""}]}"#, "team_names.CWS"),
                // Each entry as sent, one a later entry replaces included (found by schemathesis).
                (
                    #"{"team_names":[{"team":"STL","name":"\#(String(repeating: "*", count: 41))"},{"team":"STL","name":"Cards"}]}"#,
                    "team_names.STL"
                ),
                (#"{"team_names":[{"team":"CWS","name":"   "}]}"#, "team_names.CWS"),
                (
                    #"{"team_names":["#
                        + Array(repeating: #"{"team":"CWS","name":"Sox"}"#, count: 31).joined(separator: ",")
                        + "]}", "team_names: at most 30 entries"
                ),
            ] {
                try await client.execute(uri: uri, method: .put, headers: authorized, body: Self.body(body)) {
                    response throws in
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(try Self.message(response.body).contains(reason), "\(body)")
                }
            }
            // Only JSON in UTF-8 is read: another type, another encoding.
            var plain = authorized
            plain[.contentType] = "text/plain"
            try await client.execute(uri: uri, method: .put, headers: plain, body: Self.body(#"{"jinx_safe":true}"#)) {
                response throws in
                #expect(response.status == .unsupportedMediaType)
                #expect(try Self.message(response.body).contains("application/json"))
            }
            let utf16 = ByteBuffer(
                bytes: Array(#"{"jinx_safe":true}"#.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
            try await client.execute(uri: uri, method: .put, headers: authorized, body: utf16) { response throws in
                #expect(response.status == .badRequest)
                #expect(try Self.message(response.body).contains("not UTF-8"))
            }
            #expect(try await fixture.store.preferences(deviceID: UUID(uuidString: id)!) == Preferences())
            // Valid: stored and read back.
            let change =
                #"{"favourite_teams":["CHA","MIL"],"quiet_hours":{"start":"23:00","end":"08:00","time_zone":"America/Chicago"},"jinx_safe":true,"score_alerts":{"lead_change":true},"team_names":[{"team":"CWS","name":"Sox"}]}"#
            try await client.execute(uri: uri, method: .put, headers: authorized, body: Self.body(change)) {
                #expect($0.status == .ok)
            }
            let stored = try #require(try await fixture.store.preferences(deviceID: UUID(uuidString: id)!))
            #expect(stored.favouriteTeams == ["CHA", "MIL"])
            #expect(stored.quietHours == .init(start: 23 * 60, end: 8 * 60, timeZone: "America/Chicago"))
            #expect(stored.jinxSafe)
            #expect(stored.thresholdInnings == 6)
            #expect(stored.scoreAlerts == .init(finalScore: true, gameStart: false, leadChange: true))
            #expect(stored.teamNames == ["CHA": "Sox"])
            // A team named twice, by either code, keeps its last name (schemathesis sent one).
            let twice = #"{"team_names":[{"team":"CWS","name":"Pale Hose"},{"team":"CHA","name":"Sox"}]}"#
            try await client.execute(uri: uri, method: .put, headers: authorized, body: Self.body(twice)) {
                #expect($0.status == .ok)
            }
            #expect(try await fixture.store.preferences(deviceID: UUID(uuidString: id)!)?.teamNames == ["CHA": "Sox"])
            try await client.execute(uri: uri, method: .get, headers: authorized) { response throws in
                let preferences = try #require(try Self.json(response.body) as? [String: Any])
                let quiet = try #require(preferences["quiet_hours"] as? [String: String])
                #expect(quiet == ["start": "23:00", "end": "08:00", "time_zone": "America/Chicago"])
                #expect(preferences["min_odds"] is NSNull)
                // Read back in MLB's abbreviations, whichever code was sent.
                #expect(preferences["favourite_teams"] as? [String] == ["CWS", "MIL"])
                #expect(preferences["team_names"] as? [[String: String]] == [["team": "CWS", "name": "Sox"]])
            }
            // Quiet hours the server would not keep are refused with the field and why.
            for (body, words) in [
                (#"{"quiet_hours":{"start":"22:00","end":"22:00","time_zone":"UTC"}}"#, "no quiet time at all"),
                (#"{"quiet_hours":{"start":"","end":"08:00","time_zone":"UTC"}}"#, "quiet_hours.start: is empty"),
            ] {
                try await client.execute(uri: uri, method: .put, headers: authorized, body: Self.body(body)) {
                    response in
                    #expect(response.status == .badRequest)
                    let message = try Self.message(response.body)
                    #expect(message.contains(words), "\(message)")
                }
            }
            #expect(
                try await fixture.store.preferences(deviceID: UUID(uuidString: id)!)?.quietHours == stored.quietHours)
            // Odds alerts: a share, read back; null turns them off again.
            try await client.execute(
                uri: uri, method: .put, headers: authorized, body: Self.body(#"{"min_odds":0.25}"#)
            ) {
                #expect($0.status == .ok)
            }
            #expect(try await fixture.store.preferences(deviceID: UUID(uuidString: id)!)?.minOdds == 0.25)
            try await client.execute(uri: uri, method: .get, headers: authorized) { response throws in
                #expect((try Self.json(response.body) as? [String: Any])?["min_odds"] as? Double == 0.25)
            }
            try await client.execute(
                uri: uri, method: .put, headers: authorized, body: Self.body(#"{"min_odds":null}"#)
            ) {
                #expect($0.status == .ok)
            }
            #expect(try await fixture.store.preferences(deviceID: UUID(uuidString: id)!)?.minOdds == nil)
        }
    }
}
