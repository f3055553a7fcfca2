import Alerts
import Assembly
import AsyncHTTPClient
import Clocks
import Crypto
import Deals
import Foundation
import NIOCore
import NIOFoundationCompat
import Pipeline
import Synchronization
import TestSupport
import Testing

/// The service as the composition root builds it, in this process: what `nohit replay` and
/// `nohit serve` run, started here the way they start it.
@Suite struct NoHitServiceTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("assembly-\(UUID())")

    /// Lines a console device was sent.
    final class Console: Sendable {
        private let lines = Mutex<[String]>([])
        func write(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    func settings(source: ServiceSettings.Source, http: ServiceSettings.HTTP? = nil, console: Console) throws
        -> ServiceSettings
    {
        var providers = ProviderSettings(vapidKey: P256.Signing.PrivateKey())
        providers.writeConsole = { console.write($0) }
        return ServiceSettings(
            store: StoreLocation(dataDir: folder.path), source: source, http: http,
            delivery: .init(providers: providers), retrosheetPlaces: [TestData.path("retrosheet")],
            dealRules: try DealRuleFile.load(adding: []))
    }

    /// Giolito's day replayed as fast as it goes, to its end: every alert of the console device
    /// sent once, the completed no-hitter carrying its last out and what it means (looked up by
    /// the history warmer while the bid went on), the day's progress said.
    @Test func aDayReplayedToItsEndSendsEveryAlertAndNamesWhatTheNoHitterMeans() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let games = try ServiceSettings.Replay.games(on: "2020-08-25", places: [TestData.path("retrosheet")])
        let console = Console()
        let settings = try settings(
            source: .replay(.init(date: "2020-08-25", games: games, speed: 0, endsWithTheDay: true)), console: console)
        // The default preferences: told at the 6th, 7th and 8th innings and at the last out.
        let device = Device(
            id: UUID(), channel: .console(label: "me"), registeredAt: Date(timeIntervalSince1970: 0), secretHash: "")
        let collected = Collected()
        var hooks = NoHitService.Hooks()
        hooks.consumers = [collected]
        try await NoHitService.withService(settings, hooks: hooks) { service in
            try await service.store.store.register(device)
            _ = try await service.run()
            #expect(service.progress?.isDone == true)
            #expect(service.alerts.counts.value.deliveries == 4)
        }
        let completed = try #require(collected.moments.first { $0.kind == .completed })
        #expect(completed.gameID == "CHA202008250")
        #expect(completed.lastPlay == "Erik Gonzalez lines out to right field")
        #expect(completed.meaning?.hasPrefix("The White Sox's first no-hitter") == true, "\(completed.meaning ?? "-")")
        #expect(console.all.count == 4)
        #expect(console.all.last?.contains("No-hitter! Lucas Giolito") == true, "\(console.all)")
    }

    /// The HTTP API of the assembled service, on a port of its own, fed by a caller that says
    /// what happens (as the benchmarks drive it): the games it was told of are on the board.
    @Test func aDrivenServiceServesWhatItIsTold() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let games = try ServiceSettings.Replay.games(on: "2020-08-25", places: [TestData.path("retrosheet")])
        let clock = ManualWallClock(games.map(\.start).min()!.addingTimeInterval(-60))
        var http = ServiceSettings.HTTP()
        http.port = 0
        let settings = try settings(source: .driven(clock: clock), http: http, console: Console())
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        var hooks = NoHitService.Hooks()
        hooks.onListening = { listening.yield($0) }
        try await NoHitService.withService(settings, hooks: hooks) { service in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { _ = try await service.run() }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                for entry in ReplayTimeline(games: games, announced: clock.now()).entries.prefix(40) {
                    clock.advance(to: entry.time)
                    try await service.hub.receive(entry.item, gameID: entry.gameID, at: entry.time)
                }
                // A bound for a server that never answers, not a measure of speed (30 s was not
                // enough for a starved CI run).
                let response = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/games?date=2020-08-25"), timeout: .seconds(300)
                )
                #expect(response.status == .ok)
                let body = String(decoding: Data(buffer: try await response.body.collect(upTo: 1 << 22)), as: UTF8.self)
                #expect(body.contains("CHA202008250"), "\(body.prefix(300))")
                group.cancelAll()
            }
        }
    }

    /// Every moment a game change carries.
    final class Collected: GameChangeConsumer {
        private let state = Mutex<[Moment]>([])
        var moments: [Moment] { state.withLock { $0 } }

        func consume(_ change: GameChange) async throws {
            state.withLock { $0 += change.moments }
        }
    }
}
