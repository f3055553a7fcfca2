import FakeStatsAPI
import Foundation
import Retrosheet
import TestSupport
import Testing

@testable import StatsAPI

/// The poller's decisions on their own: no socket, no clock but the times given, the answers
/// made by the fake Stats API's writer from Giolito's game (2020-08-25, shipped with the
/// repository).
@Suite struct PollMachineTests {
    struct Day {
        let games: [ReplayGame]
        let people: GumboWriter.People
        let giolito: ReplayGame
        let pk: Int

        init() throws {
            games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
            people = GumboWriter.People(games: games)
            giolito = try #require(games.first { $0.record.id == "CHA202008250" })
            pk = GumboWriter.gamePk(giolito)
        }

        /// The game's whole feed as the Stats API would answer at `time`.
        func feed(at time: Date) throws -> Data {
            try JSONEncoder().encode(GumboWriter.feed(giolito, at: time, people: people))
        }

        func schedule(at time: Date) -> [ScheduleGame] {
            games.map { GumboWriter.scheduleGame($0, at: time, people: people) }
        }

        /// A machine that has the day's schedule and the game's whole feed as of `time`.
        func following(at time: Date) throws -> PollMachine {
            var machine = PollMachine(now: time)
            _ = machine.scheduled(schedule(at: time), date: PollMachineTests.dates[0], earlier: false, now: time)
            _ = machine.answered(pk, PollMachine.Answer(.success(try feed(at: time))), now: time, random: 0.5)
            return machine
        }
    }

    static let dates = ["2020-08-25", "2020-08-24"]

    @Test func theScheduleIsAskedForEachMinuteAndGamesArePolledFromTheirFirstPitch() throws {
        let day = try Day()
        // Two hours before the day's first pitch.
        let before = day.games.map(\.start).min()!.addingTimeInterval(-7200)
        var machine = PollMachine(now: before)
        #expect(machine.scheduleDates(now: before, official: Self.dates) == Self.dates)
        _ = machine.scheduled(day.schedule(at: before), date: Self.dates[0], earlier: false, now: before)
        // The day before has no games: it is over, and not asked for again.
        _ = machine.scheduled([], date: Self.dates[1], earlier: true, now: before)
        machine.scheduleSucceeded(now: before)
        #expect(machine.scheduleDates(now: before + 30, official: Self.dates) == nil)
        #expect(machine.scheduleDates(now: before + 60, official: Self.dates) == [Self.dates[0]])
        // Not started: not due before the first pitch, due from it.
        #expect(machine.due(now: before).isEmpty)
        #expect(machine.wake() == before + 60)
        #expect(!machine.due(now: day.giolito.start - 1).contains { $0.pk == day.pk })
        #expect(machine.due(now: day.giolito.start).contains { $0.pk == day.pk && $0.gameID == "CHA202008250" })
    }

    @Test func theWholeFeedFirstThenWhatChangedSinceItsTimecode() throws {
        let day = try Day()
        let time = day.giolito.start.addingTimeInterval(3600)
        var machine = PollMachine(now: time)
        _ = machine.scheduled(day.schedule(at: time), date: Self.dates[0], earlier: false, now: time)
        #expect(machine.request(day.pk) == .init(path: "v1.1/game/\(day.pk)/feed/live", query: [:]))
        let first = machine.answered(
            day.pk, PollMachine.Answer(.success(try day.feed(at: time))), now: time, random: 0.5)
        #expect(first.game?.gamePk == day.pk)
        #expect(first.notes.isEmpty)
        let stamp = try #require(machine.tracks[day.pk]?.timeStamp)
        #expect(
            machine.request(day.pk)
                == .init(path: "v1.1/game/\(day.pk)/feed/live/diffPatch", query: ["startTimecode": stamp]))
        // Not again before the feed's wait.
        let next = try #require(machine.tracks[day.pk]?.nextPoll)
        #expect(next > time)
        #expect(!machine.due(now: time).contains { $0.pk == day.pk })
        // The same feed again (a diffPatch may answer with the whole feed): nothing new to say.
        let same = machine.answered(
            day.pk, PollMachine.Answer(.success(try day.feed(at: time))), now: next, random: 0.5)
        #expect(same.game == nil)
        // A later feed is news; an older one than that is ignored, with a note.
        let later = machine.answered(
            day.pk, PollMachine.Answer(.success(try day.feed(at: time + 900))), now: next, random: 0.5)
        #expect(later.game != nil)
        let older = machine.answered(
            day.pk, PollMachine.Answer(.success(try day.feed(at: time))), now: next, random: 0.5)
        #expect(older.game == nil)
        #expect(older.notes.map(\.message) == ["feed older than the one kept; ignored"])
    }

    /// Each answer is one outcome the poller acts on, decided by the machine alone: a changed game
    /// (handed on), nothing new, unreadable (a body that is not JSON, or JSON that is not a live
    /// feed: counted as the game's failure, backed off) or failed (no answer).
    @Test func eachAnswerIsOneOutcome() throws {
        let day = try Day()
        let time = day.giolito.start.addingTimeInterval(3600)
        var machine = PollMachine(now: time)
        _ = machine.scheduled(day.schedule(at: time), date: Self.dates[0], earlier: false, now: time)
        func kind(_ outcome: PollMachine.Outcome) -> String {
            switch outcome.kind {
            case .changed: "changed"
            case .unchanged: "unchanged"
            case .unreadable: "unreadable"
            case .failed: "failed"
            }
        }
        let feed = try day.feed(at: time)
        let first = machine.answered(day.pk, PollMachine.Answer(.success(feed)), now: time, random: 0.5)
        #expect(kind(first) == "changed" && first.game?.gamePk == day.pk)
        #expect(first.gameID == day.giolito.record.id && first.timeStamp == machine.tracks[day.pk]?.timeStamp)
        #expect(
            kind(machine.answered(day.pk, PollMachine.Answer(.success(feed)), now: time + 10, random: 0.5))
                == "unchanged")
        let html = machine.answered(
            day.pk, PollMachine.Answer(.success(Data("<html>".utf8))), now: time + 20, random: 0)
        #expect(kind(html) == "unreadable")
        #expect(machine.tracks[day.pk]?.failures == 1)
        let notAFeed = machine.answered(
            day.pk, PollMachine.Answer(.success(Data(#"{"gamePk": 1}"#.utf8))), now: time + 30, random: 0)
        #expect(kind(notAFeed) == "unreadable")
        #expect(machine.tracks[day.pk]?.failures == 2)
        let failed = machine.answered(
            day.pk, .failed(TransportError(path: "x", reason: "HTTP 503")), now: time + 40, random: 0)
        #expect(kind(failed) == "failed")
        #expect(failed.notes.map(\.message) == ["feed request failed; the game keeps its last good state"])
        // The game kept its last good state through all of it.
        #expect(machine.tracks[day.pk]?.timeStamp == first.timeStamp)
    }

    /// A push message brings the game's request forward, once per newer timecode and no more
    /// often than one a second; a duplicate or a late message (the feed kept is as new) changes
    /// nothing, nor does one while the game's requests back off after failures.
    @Test func aPushMessageBringsTheRequestForwardOnlyForANewerFeed() throws {
        let day = try Day()
        let time = day.giolito.start.addingTimeInterval(3600)
        var machine = try day.following(at: time)
        let kept = try #require(machine.tracks[day.pk]?.timeStamp)
        #expect(machine.tracks[day.pk]?.nextPoll == time + 10)
        #expect(machine.listening.contains(day.pk))
        // An older feed than the one kept (a message late): nothing.
        var moved = machine.nudged(day.pk, timeStamp: "20200825_000000", now: time + 2)
        #expect(!moved)
        // A newer one: now, but not sooner than a second after the last request.
        let newer = GumboWriter.feed(day.giolito, at: time + 300, people: day.people).metaData.timeStamp
        #expect(newer > kept)
        moved = machine.nudged(day.pk, timeStamp: newer, now: time + 0.2)
        #expect(moved)
        #expect(machine.tracks[day.pk]?.nextPoll == time + 1)
        #expect(machine.due(now: time + 1).contains { $0.pk == day.pk })
        // Its answer is older than the message said (the feed had not moved yet): asked again a
        // second later, three times at most, then the feed's wait.
        var now = time + 1
        for _ in 0..<3 {
            _ = machine.answered(day.pk, PollMachine.Answer(.success(try day.feed(at: time))), now: now, random: 0.5)
            #expect(machine.tracks[day.pk]?.nextPoll == now + 1)
            now += 1
        }
        _ = machine.answered(day.pk, PollMachine.Answer(.success(try day.feed(at: time))), now: now, random: 0.5)
        #expect(machine.tracks[day.pk]?.nextPoll == now + 10)
        // The feed caught up: a message naming an older second changes nothing.
        _ = machine.answered(
            day.pk, PollMachine.Answer(.success(try day.feed(at: time + 300))), now: now + 10, random: 0.5)
        moved = machine.nudged(day.pk, timeStamp: kept, now: now + 11)
        #expect(!moved)
        #expect(machine.tracks[day.pk]?.nextPoll == now + 20)
        // A message sent twice (the same update id) is taken once; the newest timecode waits.
        let nudges = PushNudges()
        nudges.add(pk: day.pk, timeStamp: newer, updateID: "a")
        nudges.add(pk: day.pk, timeStamp: newer, updateID: "a")
        #expect(nudges.take() == [day.pk: newer])
        nudges.add(pk: day.pk, timeStamp: newer, updateID: "a")
        #expect(nudges.take().isEmpty && nudges.received == 3)
        // Backing off after a failure: the backoff stands.
        _ = machine.answered(
            day.pk, .failed(TransportError(path: "x", reason: "HTTP 500")), now: now + 20, random: 0.99)
        let backoff = try #require(machine.tracks[day.pk]?.nextPoll)
        moved = machine.nudged(day.pk, timeStamp: GumboWriter.timeStamp(time + 900), now: now + 21)
        #expect(!moved)
        #expect(machine.tracks[day.pk]?.nextPoll == backoff)
    }

    @Test func aFailureIsBackedOffWithJitterAndABadPatchBringsTheWholeFeed() throws {
        let day = try Day()
        let time = day.giolito.start.addingTimeInterval(3600)
        var machine = try day.following(at: time)
        // Failures: at least the default wait (10 s), at most double it each time, drawn in between.
        let failed = machine.answered(
            day.pk, .failed(TransportError(path: "x", reason: "HTTP 500")), now: time, random: 0.99)
        #expect(failed.notes.map(\.message) == ["feed request failed; the game keeps its last good state"])
        #expect(machine.tracks[day.pk]?.failures == 1)
        #expect(abs(machine.tracks[day.pk]!.nextPoll.timeIntervalSince(time) - 19.8) < 0.001)
        _ = machine.answered(day.pk, .failed(TransportError(path: "x", reason: "HTTP 500")), now: time, random: 0.1)
        #expect(machine.tracks[day.pk]?.nextPoll == time + 10)
        // The game is still followed from its diffPatch: what it had is kept.
        #expect(machine.request(day.pk).path.hasSuffix("diffPatch"))
        // A patch that does not apply: the whole feed next, after the default wait.
        let patch = Data(#"[{"diff":[{"op":"replace","path":"/nowhere/at/all","value":1}]}]"#.utf8)
        let bad = machine.answered(day.pk, PollMachine.Answer(.success(patch)), now: time, random: 0.5)
        #expect(bad.notes.map(\.message) == ["patch did not apply; the whole feed comes next time"])
        #expect(machine.request(day.pk).path.hasSuffix("/feed/live"))
        #expect(machine.tracks[day.pk]?.nextPoll == time + 10)
        // A good answer clears the failures.
        _ = machine.answered(
            day.pk, PollMachine.Answer(.success(try day.feed(at: time + 60))), now: time + 10, random: 0.5)
        #expect(machine.tracks[day.pk]?.failures == 0)
    }

    @Test func aFeedThatStopsMovingIsReadWholeAndAFinishedGameIsNoLongerPolled() throws {
        let day = try Day()
        let time = day.giolito.start.addingTimeInterval(3600)
        var machine = try day.following(at: time)
        // The same feed for more than ten minutes while the game is live.
        let stuck = machine.answered(
            day.pk, PollMachine.Answer(.success(try day.feed(at: time))), now: time + 601, random: 0.5)
        #expect(stuck.notes.map(\.message) == ["feed has not moved; fetching it whole next time"])
        #expect(machine.request(day.pk).path.hasSuffix("/feed/live"))
        // Over: its last state is said, and it is done.
        let end = day.giolito.end.addingTimeInterval(600)
        let final = machine.answered(day.pk, PollMachine.Answer(.success(try day.feed(at: end))), now: end, random: 0.5)
        #expect(final.game?.isFinal == true)
        #expect(machine.tracks[day.pk]?.done == true)
        #expect(!machine.due(now: end + 3600).contains { $0.pk == day.pk })
    }

    @Test func aGameAnotherInstancePollsIsAskedAboutAgainAndReadWholeWhenItComesHere() throws {
        let day = try Day()
        let time = day.giolito.start.addingTimeInterval(3600)
        var machine = try day.following(at: time)
        machine.declined(day.pk, now: time + 20)
        #expect(machine.tracks[day.pk]?.nextPoll == time + 25)
        #expect(machine.request(day.pk).path.hasSuffix("/feed/live"))
    }

    @Test func theScheduleFailingIsBackedOffAndTheGamesKept() throws {
        let day = try Day()
        let time = day.giolito.start
        var machine = PollMachine(now: time)
        _ = machine.scheduled(day.schedule(at: time), date: Self.dates[0], earlier: false, now: time)
        let note = machine.scheduleFailed(
            TransportError(path: "v1/schedule", reason: "HTTP 500"), now: time, random: 0.75)
        #expect(note.message == "schedule request failed; keeping the games known")
        // Floor 60 s, ceiling 120 s after one failure: 0.75 × 120 = 90 s.
        #expect(machine.nextSchedule == time + 90)
        #expect(machine.tracks.count == day.games.count)
    }
}
