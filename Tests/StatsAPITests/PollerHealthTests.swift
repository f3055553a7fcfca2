import Foundation
import Testing

@testable import StatsAPI

/// What `/readyz` says of the Stats API poller, from its rounds of requests, on a clock the test
/// moves.
struct PollerHealthTests {
    let start = Date(timeIntervalSince1970: 1_600_000_000)

    func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    @Test func readyAfterAnAnswerDegradedAfterARoundOfFailuresReadyAgainAfterAnAnswer() {
        let health = PollerHealth(now: start, timeout: 10)
        #expect(health.snapshot.readiness(now: start).reason == "no answer from the Stats API yet")
        health.answered(at: at(0.1))
        health.roundEnded(at: at(0.2), next: at(1.2))
        #expect(health.snapshot.readiness(now: at(0.5)).ready)
        health.failed(
            TransportError(path: "v1.1/game/1/feed/live/diffPatch?startTimecode=x", reason: "HTTP 500"), at: at(1.3))
        health.failed(TransportError(path: "v1/schedule", reason: "HTTP 503"), at: at(1.4))
        health.roundEnded(at: at(1.5), next: at(11.5))
        let degraded = health.snapshot.readiness(now: at(1.6))
        #expect(!degraded.ready)
        #expect(
            degraded.reason
                == "the Stats API did not answer the last round of requests: HTTP 503 on v1/schedule")
        health.failed(TransportError(path: "v1/schedule", reason: "Deadline exceeded: timeout"), at: at(11.6))
        health.roundEnded(at: at(11.7), next: at(31.7))
        #expect(
            health.snapshot.readiness(now: at(11.8)).reason?.hasPrefix("the Stats API did not answer the last 2 rounds")
                == true)
        #expect(health.snapshot.requests == ["ok": 1, "http": 2, "timeout": 1])
        health.answered(at: at(31.8))
        health.roundEnded(at: at(31.9), next: at(32.9))
        #expect(health.snapshot.readiness(now: at(32)).ready)
    }

    /// Each game's requests, and how late its changes are read by the feed's own clock.
    @Test func eachGamesRequestsAndFeedLag() throws {
        let health = PollerHealth(now: start, timeout: 10)
        #expect(GumboGame.date(timeStamp: "20200913_122640") == start)
        for bad in ["2020091_3122640", "20201313_122640", "2020-09-13T12", "20200913_12264x", ""] {
            #expect(GumboGame.date(timeStamp: bad) == nil, "\(bad)")
        }
        // Read 4 s after the change the feed stamps.
        health.answered(
            pk: 631_377, gameID: "CHA202008250", feedTimeStamp: "20200913_122640", readable: true, at: at(4))
        health.failed(pk: 631_377, at: at(14))
        // The same feed again: no new change, the lag is the first one's.
        health.answered(pk: 631_377, gameID: nil, feedTimeStamp: "20200913_122640", readable: true, at: at(24))
        health.answered(pk: 631_377, gameID: nil, feedTimeStamp: "20200913_122702", readable: true, at: at(31))
        var game = try #require(health.snapshot.games[631_377])
        #expect(game.gameID == "CHA202008250" && game.answered == 3 && game.failed == 1)
        #expect(game.lastSuccess == at(31) && game.feedTime == at(22) && game.feedLag == 9)
        // A replayed day's feed keeps its own day's time: no lag is claimed for it.
        health.answered(pk: 1, gameID: "NYA202008250", feedTimeStamp: "20200825_230000", readable: true, at: at(40))
        #expect(health.snapshot.games[1]?.feedLag == nil && health.snapshot.games[1]?.feedTime != nil)
        // A game not asked about for an hour is dropped.
        health.answered(pk: 2, gameID: nil, feedTimeStamp: nil, readable: true, at: at(40 + 3600))
        #expect(health.snapshot.games.keys.sorted() == [2])
        game = try #require(health.snapshot.games[2])
        #expect(game.feedTime == nil && game.feedLag == nil)
    }

    /// Rounds that ask nothing (games another instance polls, asked about every 5 s) never make
    /// the source look stale while the next request it planned is still to come.
    @Test func roundsThatAskNothingDoNotShortenTheWait() {
        let health = PollerHealth(now: start, timeout: 10)
        health.answered(at: at(0))
        health.roundEnded(at: at(0), next: at(60))
        for second in stride(from: 5.0, through: 70, by: 5) {
            health.roundEnded(at: at(second), next: at(second + 5))
            #expect(health.snapshot.readiness(now: at(second)).ready, "at \(second) s")
        }
    }

    /// A request that never ends (no round ends) makes the source stale once its answer was due:
    /// the planned request, its deadline and 5 s.
    @Test func aRequestThatNeverEndsMakesTheSourceStale() {
        let health = PollerHealth(now: start, timeout: 10)
        health.answered(at: at(0))
        health.roundEnded(at: at(0), next: at(1))
        #expect(health.snapshot.readiness(now: at(15.9)).ready)
        let stale = health.snapshot.readiness(now: at(17))
        #expect(!stale.ready)
        #expect(stale.reason == "no answer from the Stats API for 17 s (one was due 1 s ago)")
    }

    @Test func anAnswerThatCannotBeReadCountsAsUnreadable() {
        let health = PollerHealth(now: start, timeout: 10)
        health.failed(PollerHealth.Unreadable(), at: at(1))
        health.roundEnded(at: at(1), next: at(2))
        #expect(health.snapshot.requests == ["unreadable": 1])
        #expect(
            health.snapshot.readiness(now: at(1)).reason?.hasSuffix("an answer that was not the JSON expected") == true)
    }
}
