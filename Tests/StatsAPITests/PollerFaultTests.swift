import Alerts
import Baseball
import Clocks
import FakeStatsAPI
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Pipeline
import Retrosheet
import Synchronization
import TestSupport
import Testing

@testable import StatsAPI

/// The poller against the fake Stats API over HTTP, on one injected clock: faults on the way, a
/// re-scored play or two, and polling etiquette.
@Suite(.serialized) struct PollerFaultTests {
    static let day = "2020-08-25"

    /// Records each request with the clock's time.
    struct RecordingTransport: StatsAPITransport {
        var inner: HTTPStatsAPITransport
        var clock: any WallClock
        let log = Log()

        final class Log: Sendable {
            let entries = Mutex<[(path: String, time: Date)]>([])
        }

        func get(_ path: String, query: [(String, String)]) async throws -> Data {
            log.entries.withLock { $0.append((path, clock.now())) }
            return try await inner.get(path, query: query)
        }
    }

    /// What the Stats API source says, followed as the server follows it (the game hub), and
    /// collected from the game changes.
    final class Collected: GameChangeConsumer {
        struct State {
            var moments: [Moment] = []
            var rescores = 0
            var final = Set<String>()
        }

        let state = Mutex(State())

        func consume(_ change: GameChange) async throws {
            state.withLock { state in
                for event in change.events {
                    switch event {
                    case .moment(let moment): state.moments.append(moment)
                    case .revision: state.rescores += 1
                    case .final: state.final.insert(change.game.gameID)
                    default: break
                    }
                }
            }
        }
    }

    /// Runs the day on a manual clock, three minutes of game time at a step (each game is polled
    /// once a step), calling `at` before each.
    static func run(
        games: [ReplayGame], collected: Collected,
        at: @escaping @Sendable (Date, FakeStatsAPIServer) throws -> Void = { _, _ in }
    ) async throws -> (RecordingTransport, FakeStatsAPIServer, GameHub) {
        let first = games.map(\.start).min()!
        let last = games.map(\.end).max()!
        let clock = ManualWallClock(first.addingTimeInterval(-120))
        let server = FakeStatsAPIServer(date: day, games: games, clock: clock, wait: 10, stall: .seconds(10))
        let app = Application(router: server.router())
        let hub = GameHub(consumers: [collected])
        let transport = try await app.test(.live) { client in
            let port = try #require(client.port)
            let recording = RecordingTransport(
                inner: HTTPStatsAPITransport(
                    client: .shared, baseURL: "http://127.0.0.1:\(port)/api/", timeout: .seconds(8)),
                clock: clock)
            let poller = StatsAPIPoller(
                transport: recording, clock: clock, logger: Logger(label: "test.poller"), officialDates: { _ in [day] })
            let source = StatsAPISource(poller: poller, sink: hub)
            let polling = Task { try await source.run() }
            var now = clock.now()
            while now < last.addingTimeInterval(1800) && collected.state.withLock({ $0.final.count }) < games.count {
                try at(now, server)
                now = now.addingTimeInterval(180)
                clock.advance(to: now)
                // Let the poller's requests for this step finish (it sleeps again) before time moves on.
                try await Task.sleep(for: .milliseconds(1))
                for _ in 0..<20_000 where clock.sleeperCount == 0 {
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            polling.cancel()
            _ = try? await polling.value
            return recording
        }
        return (transport, server, hub)
    }

    static func retrosheetMoments(_ games: [ReplayGame], people: GumboWriter.People) throws -> [Moment] {
        games.flatMap { game in
            GameFollower.moments(
                gameID: game.record.id, starters: game.record.startingAppearances,
                homeBatsFirst: game.record.homeBatsFirst, updates: game.updates.map(\.update), result: game.result
            ).moments.map { RetrosheetEquivalenceTests.translated($0, people: people) }
        }
    }

    @Test func throughFaultsAndRescoringsThePollerKeepsEveryGameRight() async throws {
        let games = try ReplaySchedule.games(on: Self.day, data: [TestData.path("retrosheet")])
        let people = GumboWriter.People(games: games)
        let expected = try Self.retrosheetMoments(games, people: people)
        let giolito = try #require(games.first { $0.record.id == "CHA202008250" })
        let astros = try #require(games.first { $0.record.id == "HOU202008251" })
        let giolitoPk = GumboWriter.gamePk(giolito)
        let astrosPk = GumboWriter.gamePk(astros)
        // When to re-score: Giolito's walk (4th) becomes a hit after the 7th; the two hits that
        // broke the Astros' bid in the 5th become errors right after the second of them.
        func time(_ game: ReplayGame, afterPlay matches: (PlayUpdate) -> Bool) -> Date {
            game.updates.first { if case .play(let record) = $0.update { matches(record) } else { false } }!.time
        }
        let killAt = time(giolito) { $0.inning == 8 && $0.battingSide == .away }
        let reviveAt = time(astros) { $0.inning == 5 && $0.play?.eventType == .double }.addingTimeInterval(1)
        let faultsAt = giolito.start.addingTimeInterval(3600)

        let collected = Collected()
        let injected = Mutex(Set<String>())
        let (transport, server, hub) = try await Self.run(games: games, collected: collected) { now, server in
            func once(_ name: String, _ when: Date, _ faults: [FakeStatsAPIServer.Fault]) throws {
                guard now >= when, injected.withLock({ $0.insert(name).inserted }) else { return }
                for fault in faults { try server.inject(fault) }
            }
            try once(
                "faults", faultsAt,
                [
                    .init(kind: .serverError, game: giolitoPk, count: 3), .init(kind: .truncated, game: giolitoPk),
                    .init(kind: .stale, game: giolitoPk), .init(kind: .badPatch, game: giolitoPk),
                    .init(kind: .timeout, game: giolitoPk), .init(kind: .serverError, count: 2),
                ])
            // The walk to Erik González becomes a single; the Astros' two hits become errors.
            let walk = server.feed(giolito, at: now).liveData.plays.allPlays.first {
                $0.result.eventType == "walk" && $0.about.halfInning == "top"
            }
            try once(
                "kill", killAt, [.init(kind: .rescore, game: giolitoPk, play: walk?.about.atBatIndex, to: "single")])
            let hits = server.feed(astros, at: now).liveData.plays.allPlays.filter {
                $0.about.halfInning == "top" && ["single", "double"].contains($0.result.eventType ?? "")
            }
            if hits.count >= 2 {
                try once(
                    "revive", reviveAt,
                    hits.prefix(2).map {
                        .init(kind: .rescore, game: astrosPk, play: $0.about.atBatIndex, to: "field_error")
                    })
            }
        }
        #expect(injected.withLock { $0 } == ["faults", "kill", "revive"])
        #expect(server.pendingFaults.isEmpty)
        let state = collected.state.withLock { $0 }
        #expect(state.final.count == games.count)
        #expect(state.rescores == 2)
        // Each update said is applied once, by its game's follower: the poller reads whole feeds
        // again and again, the source says only what is new (a re-scored game's whole list, once),
        // and the translation applies nothing.
        let updates = await hub.updatesReceived
        #expect(updates > 1_000)
        #expect(await hub.applications == updates)
        #expect(await hub.problems.isEmpty)
        let ids = state.moments.map(\.id)
        #expect(Set(ids).count == ids.count, "a moment came twice")

        // Every other game: exactly the Retrosheet moments.
        let untouched = { (moment: Moment) in
            ![giolito.record.id, astros.record.id].contains(moment.gameID) && !moment.kind.isScore
        }
        #expect(Set(state.moments.filter(untouched).map(\.id)) == Set(expected.filter(untouched).map(\.id)))
        // Giolito's bid dies when the walk becomes a hit: broken up, never completed.
        let white = state.moments.filter { $0.gameID == giolito.record.id && $0.pitchingSide == .home }
        #expect(white.contains { $0.kind == .brokenUp })
        #expect(!white.contains { $0.kind == .completed })
        #expect(!white.contains { $0.kind == .hitlessInnings && $0.outs > 21 })
        // The Astros' bid comes back when its two hits become errors, and is broken again later.
        let astrosBid = state.moments.filter { $0.gameID == astros.record.id && $0.pitchingSide == .home }
        #expect(astrosBid.contains { $0.kind == .revived })
        #expect(astrosBid.filter { $0.kind == .brokenUp }.count == 2)

        // Polling etiquette on the injected clock: each game's feed no more often than its wait
        // (10 s), the schedule at most once a minute.
        let entries = transport.log.entries.withLock { $0 }
        var last: [String: Date] = [:]
        for entry in entries {
            let key =
                entry.path.hasPrefix("v1/schedule")
                ? "schedule" : String(entry.path.split(separator: "/").prefix(3).joined(separator: "/"))
            if let previous = last[key] {
                let gap = entry.time.timeIntervalSince(previous)
                #expect(
                    gap >= (key == "schedule" ? 60 : 10), "\(entry.path) asked again after \(gap) s at \(entry.time)")
            }
            last[key] = entry.time
        }
    }
}
