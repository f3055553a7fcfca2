import Baseball
import Foundation
import Pipeline
import Storage
import Synchronization
import TestSupport
import Testing

/// The shared game log's next index per game, when a say its caller gave up on answers late (the
/// replay source gives a write a lease and a half, then drops the game and takes it up again from
/// the log). Seen in a fault day: the late answer moved the index back, the source's next items
/// were taken for present or written one place off, and the log held more items than the game.
@Suite(.postgres) struct SharedGameLogTests {
    @Test func aSayAnsweredAfterTheGameWasTakenUpAgainMovesNothing() async throws {
        let location = try PostgresStore.Location(url: try #require(TestPostgres.url(schema: "sharedlog")))
        try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "a", leaseSeconds: 3600) { base in
            let store = LateAppends(base)
            let run = try await base.joinRun(key: "day", epoch: 0, notBefore: .distantPast).id
            try #require(try await base.acquireGame(run: run, gameID: "g"))
            let items: [GameFeedItem] = [
                .lineups([], homeBatsFirst: false), .lineups([], homeBatsFirst: true),
                .status(GameStatus(.final), result: nil),
            ]
            let log = SharedGameLog(store: store, run: run)
            _ = try await log.adopt("g")
            // The first say is written, but its answer held back; its caller gives up on it.
            store.holdNext()
            let late = Task { try await log.say(items[0], gameID: "g", at: Date(timeIntervalSince1970: 0)) }
            await store.waitUntilHeld()
            await log.drop("g")
            #expect(try await log.adopt("g").count == 1, "the held say was written")
            #expect(try await log.say(items[1], gameID: "g", at: Date(timeIntervalSince1970: 1)))
            // Its answer comes now, after the game was taken up again and said further.
            store.release()
            #expect(try await late.value == false, "a say given up on is not the game's any more")
            #expect(try await log.say(items[2], gameID: "g", at: Date(timeIntervalSince1970: 2)))
            let logged = try await base.items(run: run, gameID: "g")
            #expect(logged.map(\.index) == [0, 1, 2])
            #expect(logged.map(\.item) == items, "each item in its place")
            try await base.dropSchema()
        }
    }
}

extension SharedGameLogTests {
    /// The same late say, written only after the game was taken up again (its transaction not yet
    /// committed when the new turn read the log): the new turn starts at the same index, and the
    /// late answer must still move nothing.
    @Test func aSayWrittenAfterTheGameWasTakenUpAgainAtTheSameIndexMovesNothing() async throws {
        let location = try PostgresStore.Location(url: try #require(TestPostgres.url(schema: "sharedlog")))
        try await PostgresStore.withStore(location, secrets: .ephemeral(), instance: "a", leaseSeconds: 3600) { base in
            let store = LateAppends(base)
            let run = try await base.joinRun(key: "day", epoch: 0, notBefore: .distantPast).id
            try #require(try await base.acquireGame(run: run, gameID: "g"))
            let items: [GameFeedItem] = [.lineups([], homeBatsFirst: false), .lineups([], homeBatsFirst: true)]
            let log = SharedGameLog(store: store, run: run)
            _ = try await log.adopt("g")
            store.holdNext(beforeWriting: true)
            let late = Task { try await log.say(items[0], gameID: "g", at: Date(timeIntervalSince1970: 0)) }
            await store.waitUntilHeld()
            await log.drop("g")
            #expect(try await log.adopt("g").isEmpty, "nothing written yet")
            // Written and answered now, before the new turn says anything.
            store.release()
            #expect(try await late.value == false, "a say given up on is not the game's any more")
            #expect(try await log.say(items[0], gameID: "g", at: Date(timeIntervalSince1970: 0)))
            #expect(try await log.say(items[1], gameID: "g", at: Date(timeIntervalSince1970: 1)))
            let logged = try await base.items(run: run, gameID: "g")
            #expect(logged.map(\.index) == [0, 1])
            #expect(logged.map(\.item) == items, "each item once, in its place")
            try await base.dropSchema()
        }
    }
}

/// The store, with an append's answer held back on demand (written, then answered when released),
/// as a write whose answer comes after its caller's deadline.
final class LateAppends: CoordinationStore {
    let base: PostgresStore
    private let state = Mutex<(holdNext: Bool, beforeWriting: Bool, held: CheckedContinuation<Void, Never>?)>(
        (false, false, nil))
    private let heldSignal = AsyncStream<Void>.makeStream()

    init(_ base: PostgresStore) { self.base = base }

    /// Holds the next append's answer (`beforeWriting`: the append itself, written when released).
    func holdNext(beforeWriting: Bool = false) {
        state.withLock { ($0.holdNext, $0.beforeWriting) = (true, beforeWriting) }
    }

    func waitUntilHeld() async {
        for await _ in heldSignal.stream { return }
    }

    func release() { state.withLock { $0.held.take() }?.resume() }

    var instanceID: String { base.instanceID }
    var leaseSeconds: Double { base.leaseSeconds }

    func append(run: String, gameID: String, index: Int, time: Date, item: GameFeedItem) async throws
        -> GameLogAppend
    {
        let (hold, beforeWriting) = state.withLock { state in
            defer { state.holdNext = false }
            return (state.holdNext, state.beforeWriting)
        }
        if hold && beforeWriting { await held() }
        let answer = try await base.append(run: run, gameID: gameID, index: index, time: time, item: item)
        if hold && !beforeWriting { await held() }
        return answer
    }

    private func held() async {
        await withCheckedContinuation { continuation in
            state.withLock { $0.held = continuation }
            heldSignal.continuation.yield()
        }
    }

    func heartbeat(about: String) async throws -> [String] { try await base.heartbeat(about: about) }
    func leave() async throws { try await base.leave() }
    func joinRun(key: String, epoch: Double, notBefore: Date) async throws -> SharedRun {
        try await base.joinRun(key: key, epoch: epoch, notBefore: notBefore)
    }
    func acquireGame(run: String, gameID: String) async throws -> Bool {
        try await base.acquireGame(run: run, gameID: gameID)
    }
    func renewGames(run: String) async throws -> Set<String> { try await base.renewGames(run: run) }
    func releaseGame(run: String, gameID: String) async throws { try await base.releaseGame(run: run, gameID: gameID) }
    func gameOwners(run: String) async throws -> [String: String] { try await base.gameOwners(run: run) }
    func items(run: String, after sequence: Int64, limit: Int) async throws -> [LoggedGameItem] {
        try await base.items(run: run, after: sequence, limit: limit)
    }
    func items(run: String, gameID: String) async throws -> [LoggedGameItem] {
        try await base.items(run: run, gameID: gameID)
    }
    func itemCount(run: String, gameID: String) async throws -> Int {
        try await base.itemCount(run: run, gameID: gameID)
    }
    func lastSequence(run: String) async throws -> Int64 { try await base.lastSequence(run: run) }
    func startSequence(run: String, since: Date) async throws -> Int64 {
        try await base.startSequence(run: run, since: since)
    }
    func watchItems(run: String, _ onAppend: @escaping @Sendable () -> Void) async throws {
        try await base.watchItems(run: run, onAppend)
    }
    func watchOutbox(_ onDue: @escaping @Sendable (String) -> Void) async throws { try await base.watchOutbox(onDue) }
    func gameFollows(run: String) async throws -> [GameFollow] { try await base.gameFollows(run: run) }
}
