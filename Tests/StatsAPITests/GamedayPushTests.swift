import Alerts
import Clocks
import FakeStatsAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import Logging
import Pipeline
import Retrosheet
import Synchronization
import TestSupport
import Testing

@testable import StatsAPI

/// The poller with the Gameday push against the fake Stats API over loopback, on one injected
/// clock: Giolito's no-hitter (2020-08-25, shipped) played update by update. With the push each
/// change is read at the clock instant it is published; through the push's faults (a message
/// dropped, late, twice; the socket closed; the socket silent) every play is still read, by the
/// fallback poll at the feed's wait, and the moments are the same, in the same order, once each.
@Suite(.serialized) struct GamedayPushTests {
    typealias Fault = FakeStatsAPIServer.Fault

    /// How late (game clock) each change of the feed was read, the moments said, and the
    /// requests made, with or without the push and its faults.
    struct Run {
        var lateness: [TimeInterval] = []
        /// The changes during which a socket was opened again (after a fault, or when a loaded
        /// machine delayed the heartbeats past the silence limit): their messages may be lost.
        var reopened: Set<Int> = []
        var moments: [Moment] = []
        var requests: [Date] = []
        var sockets = 0
    }

    /// Plays the game's changes one by one. At each: the clock moves to it; a change the push
    /// announces must be read at that instant (waited for, up to five minutes of real time); one it does
    /// not (a fault, or no push) is read by the next poll the poller planned (the clock moves to
    /// it). `faults` are injected before the change of their index.
    static func play(push: Bool, faults: [Int: Fault] = [:]) async throws -> Run {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "CHA202008250" })
        let pk = GumboWriter.gamePk(game)
        let clock = ManualWallClock(game.start.addingTimeInterval(-30))
        let server = FakeStatsAPIServer(date: "2020-08-25", games: [game], clock: clock, wait: 10)
        let times = server.pushTimes(game, pk: pk)
        let app = Application(
            router: server.router(),
            server: .http1WebSocketUpgrade(webSocketRouter: server.pushRouter(heartbeat: .milliseconds(100))))
        let collected = PollerFaultTests.Collected()
        let hub = GameHub(consumers: [collected])
        return try await app.test(.live) { client in
            let port = try #require(client.port)
            let transport = PollerFaultTests.RecordingTransport(
                inner: HTTPStatsAPITransport(
                    client: .shared, baseURL: "http://127.0.0.1:\(port)/api/",
                    timeout: .seconds(Int64(Stepper.requestDeadline))),
                clock: clock)
            // A message's request at once: the clock stands still between changes, so a request
            // held to a second after the last one would wait for a move that never comes (the
            // spacing is PollMachineTests').
            var settings = PollMachine.Settings()
            settings.nudgeInterval = 0
            let health = PollerHealth(now: clock.now(), timeout: 10)
            let pushClient = GamedayPushClient(
                baseURL: "ws://127.0.0.1:\(port)/api/", logger: Logger(label: "test.push"), silence: .seconds(5))
            let poller = StatsAPIPoller(
                transport: transport, clock: clock, logger: Logger(label: "test.poller"),
                officialDates: { _ in ["2020-08-25"] }, settings: settings, health: health,
                push: push ? pushClient : nil)
            // The push's sockets in their service, beside the source (as the service runs them).
            let polling = Task { [poller] in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await pushClient.run() }
                    group.addTask { try await StatsAPISource(poller: poller, sink: hub).run() }
                    try await group.next()
                    group.cancelAll()
                }
            }
            defer { polling.cancel() }
            let stepper = Stepper(
                clock: clock, transport: transport, health: health, server: server, pk: pk, push: push)
            var run = try await stepper.play(times: times, faults: faults)
            #expect(await Stepper.settle { collected.state.withLock { $0.final.contains(game.record.id) } })
            run.moments = collected.state.withLock { $0.moments }
            run.requests = transport.log.entries.withLock { $0.filter { $0.path.contains("/game/") }.map(\.time) }
            run.sockets = server.requestCounts["push", default: 0]
            polling.cancel()
            _ = try? await polling.value
            return run
        }
    }

    /// Moves the clock change by change and waits for what each move brings.
    struct Stepper {
        let clock: ManualWallClock
        let transport: PollerFaultTests.RecordingTransport
        let health: PollerHealth
        let server: FakeStatsAPIServer
        let pk: Int
        let push: Bool

        func answered() -> Int { health.snapshot.games[pk]?.answered ?? 0 }
        /// Whether the feed read shows the change at `time` (a timecode is to the second).
        func reached(_ time: Date) -> Bool {
            let second = Date(timeIntervalSince1970: time.timeIntervalSince1970.rounded(.down))
            return health.snapshot.games[pk]?.feedTime.map { $0 >= second } ?? false
        }
        func sockets() -> Int { server.requestCounts["push", default: 0] }

        /// Each request's deadline (real time): a loaded machine can take seconds to answer one.
        static let requestDeadline: Double = 60

        /// Waits (real time, bounded) until `condition` holds. The bound is generous: every wait
        /// here is for something that comes (or for a sign it will not, a socket opened again),
        /// and on a loaded machine the tasks that bring it can wait for a thread (CI once saw the
        /// poller's first request more than a minute after the poller began).
        static func settle(_ seconds: Double = 300, _ condition: () -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while !condition() {
                if ContinuousClock.now > deadline { return false }
                try? await Task.sleep(for: .milliseconds(1))
            }
            return true
        }

        /// The poll the poller planned: a wait after its last request for the game.
        func nextPoll() -> Date? {
            transport.log.entries.withLock { $0.last { $0.path.contains("/game/") }?.time }?.addingTimeInterval(10)
        }

        func failures() -> Int { health.snapshot.games[pk]?.failed ?? 0 }

        /// Moves the clock to the planned poll and waits for its answer. A request that failed (a
        /// loaded machine can make one miss its deadline) is asked again after its backoff, longer
        /// than the wait: the clock follows the poller's own plan then, as its last round left it.
        func poll() async -> Bool {
            let before = answered()
            for _ in 0..<8 {
                var target = max(clock.now(), nextPoll() ?? clock.now())
                let snapshot = health.snapshot
                // The game's last request failed, or the game is not known yet (the schedule's
                // request failed: CI saw it miss its deadline on a loaded machine): the poller's
                // next round is when it asks again.
                let game = snapshot.games[pk]
                if game.map({ game in game.lastSuccess.map { $0 < game.lastRequest } ?? true }) ?? true,
                    let planned = snapshot.nextRound
                {
                    target = max(target, planned)
                }
                let failed = failures()
                let roundBefore = snapshot.lastRound
                clock.advance(to: target)
                // Past the request's deadline: a request that was not answered has failed by then
                // (waiting exactly the deadline raced it: CI saw the poll given up on as it timed out).
                // A new round that did not reach the game (its schedule failed again) is over too.
                let bound = Self.requestDeadline + 30
                let over = {
                    let round = health.snapshot.lastRound
                    let newRound = round != roundBefore && round.map { $0 >= target } ?? false
                    return answered() > before || failures() > failed || (health.snapshot.games[pk] == nil && newRound)
                }
                guard await Self.settle(bound, over) else { return false }
                if answered() > before { return true }
                // That one failed too: its round's plan, once the round is over.
                guard await Self.settle(bound, { health.snapshot.lastRound.map { $0 >= target } ?? false }) else {
                    return false
                }
            }
            return false
        }

        /// What the poller had done when a poll did not come: for the failure's message.
        func diagnosis() -> String {
            let snapshot = health.snapshot
            return "clock \(clock.now()), planned \(String(describing: nextPoll())), requests \(snapshot.requests), "
                + "game \(String(describing: snapshot.games[pk])), last round \(String(describing: snapshot.lastRound)), "
                + "next round \(String(describing: snapshot.nextRound)), last failure \(snapshot.lastFailureReason ?? "none")"
        }

        func play(times: [Date], faults: [Int: Fault]) async throws -> Run {
            // The schedule, and the socket open before the first pitch.
            #expect(await Self.settle { transport.log.entries.withLock { $0.count } >= 1 })
            if push { #expect(await Self.settle { sockets() >= 1 }) }
            // The fault each change meets (one with a count meets the next changes too).
            var meets: [Int: Fault] = [:]
            for (index, fault) in faults {
                for next in index..<(index + (fault.count ?? 1)) { meets[next] = fault }
            }
            var run = Run()
            for (index, time) in times.enumerated() {
                // The polls due before the change, as a running clock makes them.
                while let next = nextPoll(), next < time {
                    // Not waited for again: a poll that does not come ends the run (it once went
                    // on asking until CI's limit).
                    try #require(await poll(), "no poll at its wait: \(diagnosis())")
                }
                let fault = meets[index]
                if let fault = faults[index] { try server.inject(fault) }
                let opened = sockets()
                let before = answered()
                let pollDue = nextPoll().map { $0 <= time } ?? true
                let pending = server.pendingFaults.reduce(0) { $0 + ($1.count ?? 1) }
                clock.advance(to: time)
                // The fake met the fault at this change before the clock moves on (else it would
                // meet it at a later change, or time a late message from a later clock).
                if push, fault != nil {
                    #expect(await Self.settle { server.pendingFaults.reduce(0) { $0 + ($1.count ?? 1) } < pending })
                }
                // A message comes now, later on the game clock, or not at all.
                let delay = fault?.kind == .pushDelay ? fault?.seconds ?? 5 : 0
                let announced = push && (fault == nil || fault?.kind == .pushDuplicate)
                if announced {
                    _ = await Self.settle { reached(time) || sockets() > opened }
                } else if pollDue {
                    _ = await Self.settle { answered() > before }
                }
                var read = reached(time)
                if !read, push, delay > 0, delay < 10 {
                    clock.advance(to: time.addingTimeInterval(delay))
                    read = await Self.settle { reached(time) || sockets() > opened } && reached(time)
                }
                while !read {
                    try #require(await poll(), "no poll at its wait: \(diagnosis())")
                    read = reached(time)
                    if clock.now().timeIntervalSince(time) > 60 { break }
                }
                #expect(
                    read,
                    "change \(index) at \(time) never read: feed \(server.feed(server.games[0], at: time).metaData.timeStamp), read \(String(describing: health.snapshot.games[pk]))"
                )
                run.lateness.append(clock.now().timeIntervalSince(time))
                if sockets() > opened { run.reopened.insert(index) }
                // A socket the fault closed or silenced is opened again before the next change.
                if push, let fault, [.pushDisconnect, .pushSilence].contains(fault.kind) {
                    #expect(await Self.settle { sockets() > opened })
                }
            }
            return run
        }
    }

    /// The times Giolito's game's feed moves, as the fake pushes them.
    static func changeTimes() throws -> [Date] {
        let games = try ReplaySchedule.games(on: "2020-08-25", data: [TestData.path("retrosheet")])
        let game = try #require(games.first { $0.record.id == "CHA202008250" })
        let clock = ManualWallClock(game.start)
        return FakeStatsAPIServer(date: "2020-08-25", games: [game], clock: clock).pushTimes(
            game, pk: GumboWriter.gamePk(game))
    }

    /// The most requests for the game within any minute of the game clock.
    static func busiestMinute(_ requests: [Date]) -> Int {
        var most = 0
        var start = 0
        for end in requests.indices {
            while requests[end].timeIntervalSince(requests[start]) >= 60 { start += 1 }
            most = max(most, end - start + 1)
        }
        return most
    }

    static func percentile(_ values: [TimeInterval], _ fraction: Double) -> TimeInterval {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    @Test func withThePushEveryChangeIsReadWhenPublishedAndThroughItsFaultsNoneIsLost() async throws {
        let polled = try await Self.play(push: false)
        let pushed = try await Self.play(push: true)
        // Faults on the push, spread over the game: the changes they hit are read by the fallback
        // poll; a duplicate costs no request, a late message no second reading.
        // The short delay on a change with no other within 5 s after it.
        let times = try Self.changeTimes()
        let delayed = try #require((30..<40).first { times[$0 + 1].timeIntervalSince(times[$0]) > 5 })
        let faults: [Int: Fault] = [
            10: .init(kind: .pushDrop), 20: .init(kind: .pushDuplicate), delayed: .init(kind: .pushDelay, seconds: 3),
            45: .init(kind: .pushDisconnect), 50: .init(kind: .pushSilence), 55: .init(kind: .pushDelay, seconds: 30),
            62: .init(kind: .pushDrop, count: 3),
        ]
        let faulted = try await Self.play(push: true, faults: faults)

        // The changes a fault hit, and those published before the fallback poll read it (that
        // poll reads them too, late).
        var hit = Set(faults.keys).union([63, 64])
        for index in hit.sorted() {
            let readAt = times[index].addingTimeInterval(faulted.lateness[index])
            hit.formUnion((index..<times.count).prefix { times[$0] <= readAt })
        }
        let clean = faulted.lateness.indices.filter { !hit.contains($0) && !faulted.reopened.contains($0) }
        print(
            "push latency (game clock, change published → read), \(pushed.lateness.count) changes: "
                + "poll only p50 \(Self.percentile(polled.lateness, 0.5)) s, p99 \(Self.percentile(polled.lateness, 0.99)) s; "
                + "push p50 \(Self.percentile(pushed.lateness, 0.5)) s, p99 \(Self.percentile(pushed.lateness, 0.99)) s; "
                + "with faults, the changes they hit: \(hit.sorted().map { faulted.lateness[$0] }) s")
        print(
            "requests for the game in its busiest minute: poll only \(Self.busiestMinute(polled.requests)), "
                + "push \(Self.busiestMinute(pushed.requests)), push with faults \(Self.busiestMinute(faulted.requests)); "
                + "in all \(polled.requests.count), \(pushed.requests.count), \(faulted.requests.count); "
                + "sockets opened \(pushed.sockets), \(faulted.sockets)")

        // With the push every change is read at the instant it is published.
        #expect(pushed.lateness.indices.allSatisfy { pushed.lateness[$0] == 0 || pushed.reopened.contains($0) })
        #expect(pushed.reopened.count < 5)
        #expect(clean.allSatisfy { faulted.lateness[$0] == 0 })
        // Polling alone reads them up to a wait (10 s) late.
        #expect(polled.lateness.allSatisfy { $0 <= 10 } && polled.lateness.contains { $0 > 0 })
        // A fault costs latency only: the fallback poll at the feed's wait.
        #expect(hit.allSatisfy { faulted.lateness[$0] <= 10 })
        #expect(faulted.lateness[delayed] == 3 || faulted.reopened.contains(delayed))
        // No storm: within a minute, at most one request per second the push brought forward and
        // the polls at the wait; a duplicate costs none.
        #expect(Self.busiestMinute(faulted.requests) <= 66)
        #expect(pushed.requests.count <= polled.requests.count + pushed.lateness.count)
        #expect(faulted.sockets >= 3)
        // The same moments, in the same order, once each, whatever the path.
        let expected = polled.moments.map(\.id)
        #expect(!expected.isEmpty && Set(expected).count == expected.count)
        #expect(pushed.moments.map(\.id) == expected)
        #expect(faulted.moments.map(\.id) == expected)
        #expect(polled.moments.contains { $0.kind == .completed })
    }
}
