import Alerts
import Baseball
import Clocks
import Delivery
import FakeStatsAPI
import Foundation
import Logging
import Pipeline
import Retrosheet
import Storage
import TestSupport
import Testing

@testable import StatsAPI

/// `nohit_play_to_send_seconds`: from the Stats API's own time of the play (the latest completed
/// play's `about.endTime`) to the provider's acknowledgement, through the source, the publisher and
/// a dispatcher.
@Suite struct PlayToSendTests {
    @Test func theStatsAPIsTimeOfAPlayIsReadWithOrWithoutItsFraction() throws {
        let whole = try #require(GumboGame.date(iso: "2020-08-26T02:06:25Z"))
        #expect(whole.timeIntervalSince1970 == 1_598_407_585)
        let fraction = try #require(GumboGame.date(iso: "2020-08-26T02:06:25.484Z"))
        #expect(abs(fraction.timeIntervalSince1970 - 1_598_407_585.484) < 0.0005)
        #expect(GumboGame.date(iso: "yesterday") == nil)
    }

    /// Giolito's game as the fake Stats API shows it at its end, said by the Stats API source into
    /// a hub, its alerts to a console device acknowledged `delay` after the play.
    func deliver(acknowledgedAfter delay: TimeInterval, playedOnThisClock: Bool) async throws -> (
        played: Date, counts: DeliveryStatistics.Counts
    ) {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "CHA202008250" })
        let feed = GumboWriter.feed(game, at: game.end, people: GumboWriter.People(games: games))
        let gumbo = try GumboGame(feed)
        let played = try #require(gumbo.playedAt)
        // The last out, to the second the feed writes.
        #expect(abs(played.timeIntervalSince(game.updates.last!.time)) < 1)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("play-to-send-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.sqlite").path)
        let now = playedOnThisClock ? played.addingTimeInterval(delay) : Date()
        try await store.register(
            Device(
                id: UUID(), channel: .console(label: "fan"), registeredAt: now.addingTimeInterval(-3600), secretHash: ""
            ))
        let clock = ManualWallClock(now)
        let pipeline = AlertPipeline(store: store, channels: [ConsoleChannel(write: { _ in })], clock: clock)
        let hub = GameHub(consumers: [AlertConsumer(publisher: pipeline.publisher)])
        var source = StatsAPISource(
            poller: StatsAPIPoller(transport: Unanswered(), clock: clock, logger: Logger(label: "test")), sink: hub)
        source.playTimes = pipeline.statistics.playTimes
        try await source.say(gumbo)

        let stop = StopSignal()
        let dispatching = Task { try await pipeline.runDispatchers(stop: stop) }
        try await pipeline.waitUntilDrained(manual: nil)
        stop.request()
        try await dispatching.value
        return (played, try #require(pipeline.statistics.snapshot.byChannel[.console]))
    }

    /// A transport the test never calls (the source is told the feed directly).
    struct Unanswered: StatsAPITransport {
        func get(_ path: String, query: [(String, String)]) async throws -> Data {
            throw TransportError(path: path, reason: "not asked in this test")
        }
    }

    @Test func anAlertIsMeasuredFromTheSourcesTimeOfItsPlay() async throws {
        let (_, counts) = try await deliver(acknowledgedAfter: 0.8, playedOnThisClock: true)
        #expect(counts.delivered > 0)
        // Every alert sent, from the play to its acknowledgement on the (stopped) clock.
        #expect(counts.playToSend.totalCount == UInt64(counts.delivered))
        #expect((799_000...801_000).contains(counts.playToSend.min))
        #expect((799_000...801_000).contains(counts.playToSend.max))
    }

    @Test func aReplayedDaysPlayIsNotMeasured() async throws {
        // The play's time is 2020's: the source does not keep this server's clock.
        let (_, counts) = try await deliver(acknowledgedAfter: 0, playedOnThisClock: false)
        #expect(counts.delivered > 0)
        #expect(counts.playToSend.totalCount == 0)
    }
}
