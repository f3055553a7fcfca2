import Clocks
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Pipeline
import Retrosheet
import Scores
import Server
import Synchronization
import TestSupport
import Testing

/// One spoiler delay on every surface: the live stream held back (`DelayedFeeds`), and the
/// board's answers as they stood that long ago.
@Suite(.timeLimit(.minutes(30))) struct SpoilerDelayTests {
    @Test func aDelayIsRoundedUpToTheFeedsKept() {
        let given = [0, 1, 29, 30, 31, 60, 61, 119, 120, 121, 299, 300]
        #expect(given.map(DelayedFeeds.delay(for:)) == [0, 30, 30, 30, 60, 60, 120, 120, 120, 300, 300, 300])
    }

    /// Each event reaches a delayed feed at the time it happened plus the delay, under its own id,
    /// in order, and never before; a delayed client resumes after an id as a live one does.
    @Test func aDelayedFeedIsHandedEachEventAtItsTimePlusTheDelay() async throws {
        let start = Date(timeIntervalSince1970: 1_598_380_000)
        let clock = ManualWallClock(start)
        let live = LiveFeed()
        let delayed = DelayedFeeds(live: live, clock: clock)
        let relay = Task { try await delayed.run() }
        defer { relay.cancel() }
        let minute = delayed.feed(delay: 45)
        #expect(minute !== live && minute === delayed.feed(delay: 60))
        #expect(delayed.feed(delay: 0) === live)
        let subscription = minute.subscribe(after: 0)
        let thirty = delayed.feed(delay: 30).subscribe(after: 0)
        defer { thirty.cancel() }
        clock.advance(to: start.addingTimeInterval(5))
        live.publish(.moment, data: #"{"id":"first"}"#, id: 10, at: start.addingTimeInterval(5))
        // An item from an instance whose clock is behind: never due before the one before it.
        live.publish(.game, data: #"{"id":"g"}"#, key: "g", id: 11, at: start)
        clock.advance(to: start.addingTimeInterval(30))
        live.publish(.moment, data: #"{"id":"second"}"#, id: 20, at: start.addingTimeInterval(30))
        #expect(live.lastID == 20 && delayed.waitingCount == 12)

        clock.advance(to: start.addingTimeInterval(64))
        #expect(minute.lastID == 0, "64 s in, a moment of 5 s in is not yet a minute old")
        clock.advance(to: start.addingTimeInterval(65))
        let first = try #require(await subscription.nextBatch())
        var ids = first.events.map(\.id)
        if ids.count < 2, let more = await subscription.nextBatch() { ids += more.events.map(\.id) }
        #expect(Set(ids) == [10, 11], "both due at 65 s: \(ids)")
        #expect(minute.lastID == 11, "the second moment (30 s in) waits until 90 s")
        // The 30-s feed had all three by 60 s; the 300-s feed none yet.
        var halfMinute: [Int] = []
        while halfMinute.count < 3, let batch = await thirty.nextBatch() { halfMinute += batch.events.map(\.id) }
        #expect(halfMinute.sorted() == [10, 11, 20])
        #expect(delayed.feed(delay: 300).lastID == 0)

        clock.advance(to: start.addingTimeInterval(90))
        let second = try #require(await subscription.nextBatch())
        #expect(second.events.map(\.id) == [20])
        #expect(second.events.first?.data == #"{"id":"second"}"#)
        // A client of the delayed feed resuming after 10 gets what came after, as from the live feed.
        #expect(minute.keptEvents(after: 10).map(\.id) == [11, 20])

        // An item from an instance whose clock is ahead (by 15 minutes) is held from now, not from
        // then: it does not hold back every event after it.
        live.publish(.moment, data: #"{"id":"ahead"}"#, id: 30, at: start.addingTimeInterval(990))
        clock.advance(to: start.addingTimeInterval(150))
        let third = try #require(await subscription.nextBatch())
        #expect(third.events.map(\.id) == [30])
        subscription.cancel()
    }

    /// `?delay=` on the stream, the board, a game and the moments: the service as it stood then.
    @Test func theAPIAnswersAsTheServiceStoodADelayAgo() async throws {
        let fixture = try await APIServerTests.Fixture { step in step.moments.contains { $0.kind == .brokenUp } }
        defer { fixture.remove() }
        let now = fixture.clock.now()
        try await fixture.test { client in
            try await client.execute(uri: "/api/games?delay=45", method: .get) { response throws in
                #expect(response.status == .ok)
                #expect(response.headers[HTTPField.Name("X-Spoiler-Delay")!] == "60")
                let games = try #require(
                    try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]])
                let then = fixture.board.all(asOf: now.addingTimeInterval(-60))
                #expect(games.map { $0["id"] as? String } == then.map(\.id))
                #expect(games.map { $0["outs"] as? Int } == then.map(\.outs))
                #expect(then.map(\.outs) != fixture.board.all.map(\.outs), "a minute makes a difference")
            }
            for uri in [
                "/api/games?delay=301", "/api/stream?delay=-1", "/api/moments?delay=soon", "/api/ws?delay=9999",
            ] {
                try await client.execute(uri: uri, method: .get) { response throws in
                    #expect(response.status == .badRequest, "\(uri)")
                    let message = try APIServerTests.message(response.body)
                    #expect(message.contains("delay must be whole seconds from 0 to 300"), "\(uri): \(message)")
                }
            }
            // The moment that broke the bid up just now is not among those of a minute ago.
            try await client.execute(uri: "/api/moments?limit=5", method: .get) { response throws in
                #expect(String(buffer: response.body).contains(#""kind":"broken-up""#))
            }
            try await client.execute(uri: "/api/moments?limit=5&delay=60", method: .get) { response throws in
                #expect(response.status == .ok)
                #expect(!String(buffer: response.body).contains(#""kind":"broken-up""#))
            }
        }
    }

    /// The whole replayed day of Giolito's no-hitter, a minute behind: at every step of the day the
    /// delayed stream holds no event younger than a minute (moments checked by their own time too),
    /// having had the last moment a minute old, and by the end it has had each moment.
    @Test func aWholeDayAMinuteBehindShowsEveryMomentAndNoneEarly() async throws {
        let games = try ReplaySchedule.games(on: APIServerTests.day, data: [TestData.path("retrosheet")])
        let board = LiveBoard()
        let live = LiveFeed(capacity: 1_000_000)
        let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
        let delayed = DelayedFeeds(live: live, clock: clock)
        let relay = Task { try await delayed.run() }
        defer { relay.cancel() }
        let minute = delayed.feed(delay: 60)
        let client = minute.subscribe(after: 0)
        // The moments the client has had, and those it must have by the end (once known); the
        // newest id it has had after each batch, for the day's steps to wait on.
        let received = Mutex<(got: Set<Int>, expected: Set<Int>?)>(([], nil))
        let (newest, newestSink) = AsyncStream.makeStream(of: Int.self)
        let reader = Task {
            while let batch = await client.nextBatch() {
                let done = received.withLock { received in
                    received.got.formUnion(batch.events.filter { $0.kind == .moment }.map(\.id))
                    return received.expected.map { $0.isSubset(of: received.got) } ?? false
                }
                if let last = batch.events.map(\.id).max(), last > 0 { newestSink.yield(last) }
                if done { break }
            }
            newestSink.finish()
        }
        let hub = GameHub(consumers: [LiveConsumer(board: board, feed: live)])
        // Each live event's id and the time it happened (its change's).
        var happened: [(id: Int, time: Date)] = []
        // The moments among them: each step waits for the last one due to reach the client (so an
        // early relay would have been made by then), not for every event (a loaded machine's
        // thousands of waits outlast the time limit).
        var moments: [(id: Int, time: Date)] = []
        var seen = 0
        var waits = newest.makeAsyncIterator()
        var checked = 0
        var problems: [String] = []
        for entry in ReplayTimeline(games: games, announced: clock.now()).entries {
            clock.advance(to: entry.time)
            let now = clock.now()
            // The last moment a minute old by now reaches the client (waited for, not polled) ...
            let dueMoment = moments.last { $0.time.addingTimeInterval(60) <= now }?.id ?? 0
            while seen < dueMoment, let next = await waits.next() { seen = max(seen, next) }
            let due = happened.last { $0.time.addingTimeInterval(60) <= now }?.id ?? 0
            // ... and, once it has, nothing younger is in the delayed feed.
            let held = minute.lastID
            if held > due { problems.append("at \(now): event \(held) relayed, only up to \(due) a minute old") }
            for event in minute.keptEvents(after: checked) where event.kind == .moment {
                if try Self.occurredAt(event.data).addingTimeInterval(60) > now {
                    problems.append("at \(now): \(event.data.prefix(120))")
                }
            }
            checked = held
            let before = live.lastID
            try await hub.receive(entry.item, gameID: entry.gameID, at: entry.time)
            let added = live.keptEvents(after: before)
            happened += added.map { ($0.id, entry.time) }
            moments += added.filter { $0.kind == .moment }.map { ($0.id, entry.time) }
        }
        #expect(problems.count == 0, "\(problems.count) early: \(problems.prefix(3))")
        let allMoments = Set(moments.map(\.id))
        #expect(allMoments.count >= 10, "the day's bid moments: \(allMoments.count)")
        // Five minutes after the last play, the minute-behind client has had every moment (a
        // heartbeat wakes it to say so when it had them all before).
        received.withLock { $0.expected = allMoments }
        clock.advance(by: 300)
        minute.heartbeat()
        await reader.value
        client.cancel()
        #expect(received.withLock { $0.got } == allMoments)
    }

    static func occurredAt(_ data: String) throws -> Date {
        let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
        let text = try #require(object?["occurred_at"] as? String, "\(data.prefix(200))")
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        return try #require(formatter.date(from: text), "\(text)")
    }
}
