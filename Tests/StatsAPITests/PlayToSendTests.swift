import Alerts
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

    /// Giolito's game read as the poller reads it, one feed at each of its updates, said by the
    /// Stats API source into a hub, each read `delay` after its play; its alerts to a console
    /// device sent before the next read.
    func deliver(acknowledgedAfter delay: TimeInterval, playedOnThisClock: Bool) async throws
        -> DeliveryStatistics.Counts
    {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "CHA202008250" })
        let people = GumboWriter.People(games: games)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("play-to-send-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("store.sqlite").path)
        // A replayed day's plays are years before this server's clock.
        let shift = playedOnThisClock ? 0 : Date().timeIntervalSince(game.start)
        let clock = ManualWallClock(game.start.addingTimeInterval(shift))
        try await store.register(
            Device(
                id: UUID(), channel: .console(label: "fan"), registeredAt: clock.now().addingTimeInterval(-3600),
                secretHash: ""))
        let pipeline = AlertPipeline(store: store, channels: [ConsoleChannel(write: { _ in })], clock: clock)
        let hub = GameHub(consumers: [AlertConsumer(publisher: pipeline.publisher)])
        let source = StatsAPISource(
            poller: StatsAPIPoller(transport: Unanswered(), clock: clock, logger: Logger(label: "test")), sink: hub,
            playTimes: pipeline.statistics.playTimes)

        let stop = StopSignal()
        let dispatching = Task { try await pipeline.runDispatchers(stop: stop) }
        for (time, update) in game.updates {
            let gumbo = try GumboGame(GumboWriter.feed(game, at: time, people: people))
            // The feed's time of its latest play: a play's own, to the millisecond MLB writes (a
            // substitution between plate appearances shows with the next one).
            if case .play(let record) = update, record.play != nil {
                let played = try #require(gumbo.playedAt)
                #expect(abs(played.timeIntervalSince(time)) < 0.001, "\(record) at \(time): \(played)")
            }
            clock.advance(to: time.addingTimeInterval(shift + delay))
            try await source.say(gumbo)
            try await pipeline.waitUntilIdle()
        }
        stop.request()
        try await dispatching.value
        return try #require(pipeline.statistics.snapshot.byChannel[.console])
    }

    /// A transport the test never calls (the source is told the feed directly).
    struct Unanswered: StatsAPITransport {
        func get(_ path: String, query: [(String, String)]) async throws -> Data {
            throw TransportError(path: path, reason: "not asked in this test")
        }
    }

    @Test func eachAlertIsMeasuredFromItsOwnPlay() async throws {
        let counts = try await deliver(acknowledgedAfter: 0.8, playedOnThisClock: true)
        // Each hitless inning from the device's threshold on, and the no-hitter.
        #expect(counts.delivered >= 3)
        // Every alert sent, each from its own play to its acknowledgement on the (stopped) clock.
        #expect(counts.playToSend.totalCount == UInt64(counts.delivered))
        #expect((799_000...801_000).contains(counts.playToSend.min))
        #expect((799_000...801_000).contains(counts.playToSend.max))
    }

    @Test func aReplayedDaysPlayIsNotMeasured() async throws {
        // The feed's plays are 2020's: the source does not keep this server's clock.
        let counts = try await deliver(acknowledgedAfter: 0.8, playedOnThisClock: false)
        #expect(counts.delivered >= 3)
        #expect(counts.playToSend.totalCount == 0)
    }

    @Test func anActionInThePlateAppearanceUnderWayIsTheLatestPlay() throws {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "CHA202008250" })
        let time = game.updates[20].time
        var feed = GumboWriter.feed(game, at: time, people: GumboWriter.People(games: games))
        let completed = try #require(GumboGame(feed).playedAt)
        // A plate appearance under way: a pitch, then a pickoff a minute later, then another pitch.
        func event(_ index: Int, _ type: String, after seconds: TimeInterval) -> Lenient<PlayEvent> {
            .value(
                PlayEvent(
                    index: index, type: type, details: .init(),
                    endTime: GumboWriter.isoMilliseconds(completed.addingTimeInterval(seconds))))
        }
        var current = try #require(feed.liveData.plays.allPlays.last)
        current.about.atBatIndex += 1
        current.about.isComplete = false
        current.about.endTime = nil
        current.playEvents = [event(0, "pitch", after: 20), event(1, "pickoff", after: 60)]
        feed.liveData.plays.allPlays.append(current)
        #expect(abs(try #require(GumboGame(feed).playedAt).timeIntervalSince(completed) - 60) < 0.001)
        // A pitch is not a play: the pickoff stays the latest.
        feed.liveData.plays.allPlays[feed.liveData.plays.allPlays.count - 1].playEvents.append(
            event(2, "pitch", after: 80))
        #expect(abs(try #require(GumboGame(feed).playedAt).timeIntervalSince(completed) - 60) < 0.001)
    }
}
