import Alerts
import Clocks
import Foundation
import Pipeline
import Retrosheet
import Storage
import Synchronization
import TestSupport
import Testing

/// The broadcast channels when the database fails: a round it fails (unreachable, a full disk)
/// leaves its work to the next (the bid moments it had not handled are noted again, so a channel a
/// bid's first moment asked for is made by the next round, not only at the bid's next moment, which
/// may never come: a bid that ends in the next inning); a channel APNs made as the database failed
/// to keep it is kept once it is back, or deleted and made again; and a round given up on lets no
/// third round in.
extension BroadcastChannelsTests {
    /// A store whose every device call fails as the database unreachable while `failing` is set,
    /// and whose keeping of a channel fails so while `failingUpdates` is (or after it is written,
    /// while `answerLost` is). Its outbox is the store's.
    final class FaultyDevices: DeviceStore, OutboxStore {
        let store: SQLiteStore
        let failing = Atomic(false)
        let failingUpdates = Atomic(false)
        /// Channels are kept, then the call fails as if its answer were lost.
        let answerLost = Atomic(false)
        /// Device calls so far.
        let calls = Atomic(0)
        /// The next `parking` device calls wait until let go (``letGo()``); `parked` of them so far.
        struct Gate {
            var parking = 0
            var parked = 0
            var waiting: [CheckedContinuation<Void, Never>] = []
            var watchers: [UUID: (count: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
        }
        let gate = Mutex(Gate())

        init(_ store: SQLiteStore) { self.store = store }

        func check() async throws {
            calls.add(1, ordering: .relaxed)
            await withCheckedContinuation { continuation in
                let watchers = gate.withLock { gate -> [CheckedContinuation<Bool, Never>]? in
                    guard gate.parking > 0 else { return nil }
                    gate.parking -= 1
                    gate.parked += 1
                    gate.waiting.append(continuation)
                    let reached = gate.watchers.filter { $0.value.count <= gate.parked }
                    for id in reached.keys { gate.watchers[id] = nil }
                    return reached.values.map(\.continuation)
                }
                if let watchers {
                    for watcher in watchers { watcher.resume(returning: true) }
                } else {
                    continuation.resume()
                }
            }
            if failing.load(ordering: .relaxed) { throw StorageFault(.unreachable, detail: "the test's fault") }
        }

        /// Whether `count` calls have parked, waited for up to `seconds`.
        func parked(_ count: Int, within seconds: Int = 30) async -> Bool {
            let id = UUID()
            return await withCheckedContinuation { continuation in
                let already = gate.withLock { gate -> Bool in
                    if gate.parked >= count { return true }
                    gate.watchers[id] = (count, continuation)
                    return false
                }
                if already {
                    continuation.resume(returning: true)
                    return
                }
                Task {
                    try? await Task.sleep(for: .seconds(seconds))
                    gate.withLock { $0.watchers.removeValue(forKey: id) }?.continuation.resume(returning: false)
                }
            }
        }

        /// The first call parked goes on.
        func letGo() {
            gate.withLock { $0.waiting.isEmpty ? nil : $0.waiting.removeFirst() }?.resume()
        }

        func register(_ device: Device) async throws -> [UUID] {
            try await check()
            return try await store.register(device)
        }
        func register(contentsOf devices: [Device]) async throws -> [UUID] {
            try await check()
            return try await store.register(contentsOf: devices)
        }
        func device(id: UUID) async throws -> Device? {
            try await check()
            return try await store.device(id: id)
        }
        func secretHash(deviceID: UUID) async throws -> String? {
            try await check()
            return try await store.secretHash(deviceID: deviceID)
        }
        func updateChannel(id: UUID, to channel: DeviceChannel, at date: Date) async throws -> Bool {
            try await check()
            return try await store.updateChannel(id: id, to: channel, at: date)
        }
        func keepChannel(id: UUID, address: String, to channel: DeviceChannel, at date: Date) async throws -> Bool {
            try await check()
            if failingUpdates.load(ordering: .relaxed) {
                throw StorageFault(.unreachable, detail: "the test's fault, as the channel was kept")
            }
            let kept = try await store.keepChannel(id: id, address: address, to: channel, at: date)
            if answerLost.load(ordering: .relaxed) {
                throw StorageFault(.unreachable, detail: "the test's fault, after the channel was kept")
            }
            return kept
        }
        func disable(id: UUID, reason: String, at date: Date) async throws -> Bool {
            try await check()
            return try await store.disable(id: id, reason: reason, at: date)
        }
        func delete(id: UUID) async throws -> Bool {
            try await check()
            return try await store.delete(id: id)
        }
        func activeDevices() async throws -> [Device] {
            try await check()
            return try await store.activeDevices()
        }
        func deviceCount() async throws -> Int {
            try await check()
            return try await store.deviceCount()
        }
        func ping() async throws {
            try await check()
            try await store.ping()
        }
        func devicesVersion() async throws -> Int {
            try await check()
            return try await store.devicesVersion()
        }
        func deviceChanges(after version: Int?) async throws -> DeviceChanges {
            try await check()
            return try await store.deviceChanges(after: version)
        }

        // The outbox: the store's, as it is.
        func record(_ moment: StoredMoment, payloads: [StoredPayload], deliveries: [NewDelivery]) async throws -> Bool {
            try await store.record(moment, payloads: payloads, deliveries: deliveries)
        }
        func isRecorded(momentID: String) async throws -> Bool { try await store.isRecorded(momentID: momentID) }
        func followers(bidKey: String) async throws -> Set<UUID> { try await store.followers(bidKey: bidKey) }
        func claim(channel: ChannelKind, now: Date, limit: Int) async throws -> [ClaimedDelivery] {
            try await store.claim(channel: channel, now: now, limit: limit)
        }
        func complete(_ results: [DeliveryResult]) async throws { try await store.complete(results) }
        func deliveriesSettled(now: Date) async throws { try await store.deliveriesSettled(now: now) }
        func release(_ ids: [UUID]) async throws { try await store.release(ids) }
        func recoverInDoubt(now: Date) async throws -> RecoveryReport { try await store.recoverInDoubt(now: now) }
        func releaseHeld(now: Date) async throws -> Int { try await store.releaseHeld(now: now) }
        func maintainLeases(now: Date) async throws -> RecoveryReport { try await store.maintainLeases(now: now) }
        func outboxCounts() async throws -> OutboxCounts { try await store.outboxCounts() }
        func failedDeliveries(limit: Int) async throws -> FailedDeliveries {
            try await store.failedDeliveries(limit: limit)
        }
        func hasUnfinished(channels: [ChannelKind], dueBy: Date?) async throws -> Bool {
            try await store.hasUnfinished(channels: channels, dueBy: dueBy)
        }
        func nextDue(channel: ChannelKind) async throws -> Date? { try await store.nextDue(channel: channel) }
        func plannedStarts(since: Date) async throws -> [UUID: [Date]] { try await store.plannedStarts(since: since) }
        func mayStillSend(_ delivery: ClaimedDelivery) -> Bool { store.mayStillSend(delivery) }
        func sendDeadline(_ delivery: ClaimedDelivery) -> ContinuousClock.Instant? { store.sendDeadline(delivery) }
    }

    /// Every change a hub makes.
    final class Changes: GameChangeConsumer {
        let seen = Mutex<[GameChange]>([])
        func consume(_ change: GameChange) async throws { seen.withLock { $0.append(change) } }
    }

    /// The active devices that keep a channel, and the intents (devices whose channel is being made).
    static func channels(among devices: [Device]) -> (kept: [(device: Device, id: String)], intents: [Device]) {
        var kept: [(device: Device, id: String)] = []
        var intents: [Device] = []
        for device in devices {
            guard case .liveActivityChannel(let id, _, _, _) = device.channel else { continue }
            if BroadcastChannelPlan.isIntent(id) { intents.append(device) } else { kept.append((device, id)) }
        }
        return (kept, intents)
    }

    /// Giolito's game through a hub, to the first change with a live bid moment a channel is
    /// wanted for among `devices`.
    static func firstChangeWantingAChannel(among devices: [Device]) async throws -> GameChange {
        let games = try ReplaySchedule.games(on: Self.day, data: [TestData.path("retrosheet")])
            .filter { $0.info.id == "CHA202008250" }
        try #require(games.count == 1)
        let changes = Changes()
        let hub = GameHub(consumers: [changes])
        for entry in ReplayTimeline(games: games).entries {
            try await hub.receive(entry.item, gameID: entry.gameID, at: entry.time)
        }
        let change = try #require(
            changes.seen.withLock { $0 }.first { change in
                let teams = [change.game.info.away.club.franchise, change.game.info.home.club.franchise]
                return change.moments.contains { moment in
                    moment.kind.isBid && moment.kind.bidStillAlive
                        && !BroadcastChannelPlan.wanted(moment, teams: teams, at: change.time, devices: devices).isEmpty
                }
            }, "no change of Giolito's game wants a channel")
        return change
    }

    @Test func aRoundTheDatabaseFailedLeavesItsMomentsToTheNext() async throws {
        let setup = try await Setup()
        defer { Task { [server = setup.server] in try await server.shutdown() } }
        let store = try SQLiteStore(path: setup.path)
        try await store.register(setup.phone(1))
        let change = try await Self.firstChangeWantingAChannel(among: try await store.activeDevices())

        let faulty = FaultyDevices(store)
        let channels = BroadcastChannels(
            clients: setup.clients(), store: store, directory: DeviceDirectory(store: faulty),
            clock: ManualWallClock(change.time))
        faulty.failing.store(true, ordering: .relaxed)
        try await channels.consume(change)
        #expect(await channels.step() == false, "the round did not fail with the database away")
        #expect(channels.counts.created == 0 && channels.counts.failures == 1)
        #expect(setup.server.state.channelCounts.open == 0)

        // Back: the next round, with no moment new, makes the channel; and the one after, nothing more.
        faulty.failing.store(false, ordering: .relaxed)
        #expect(await channels.step())
        #expect(channels.counts.created == 1, "the bid's channel was not made once the database was back")
        #expect(setup.server.state.channelCounts.open == 1)
        #expect(await channels.step())
        #expect(channels.counts.created == 1 && setup.server.state.channelCounts.open == 1)
    }

    enum KeepFault { case updates, answerLost }

    /// A phone, channels over a store whose keeping of a channel fails (`updates`: before it is
    /// written; `answerLost`: after), and Giolito's first change wanting the phone's channel
    /// through a first round, which fails: APNs made the channel, the database did not say it kept it.
    static func firstRoundFailing(
        _ fault: KeepFault
    ) async throws -> (Setup, SQLiteStore, FaultyDevices, ManualWallClock, BroadcastChannels) {
        let setup = try await Setup()
        let store = try SQLiteStore(path: setup.path)
        try await store.register(setup.phone(1))
        let change = try await Self.firstChangeWantingAChannel(among: try await store.activeDevices())
        let faulty = FaultyDevices(store)
        let clock = ManualWallClock(change.time)
        let channels = BroadcastChannels(
            clients: setup.clients(), store: faulty, directory: DeviceDirectory(store: faulty), clock: clock)
        switch fault {
        case .updates: faulty.failingUpdates.store(true, ordering: .relaxed)
        case .answerLost: faulty.answerLost.store(true, ordering: .relaxed)
        }
        try await channels.consume(change)
        #expect(await channels.step() == false, "the round did not fail as the channel was kept")
        #expect(setup.server.state.channelCounts.open == 1, "APNs did not make the channel")
        #expect(channels.counts.created == 0)
        return (setup, store, faulty, clock, channels)
    }

    /// APNs made the channel and the database failed as the service kept it (gave the intent the
    /// channel's id): the next round keeps that channel once the database is back, instead of
    /// leaving the bid without one (its young intent keeps every round from making it again)
    /// until the sweep deleted it as a leak.
    @Test func aChannelMadeAsTheDatabaseFailedIsKeptByTheNextRound() async throws {
        let (setup, store, faulty, clock, channels) = try await Self.firstRoundFailing(.updates)
        defer { Task { [server = setup.server] in try await server.shutdown() } }

        faulty.failingUpdates.store(false, ordering: .relaxed)
        clock.advance(by: 30)
        #expect(await channels.step())
        #expect(channels.counts.created == 1, "the channel APNs made was not kept once the database was back")
        #expect(setup.server.state.channelCounts.open == 1, "a second channel was made")
        let kept = Self.channels(among: try await store.activeDevices())
        #expect(kept.kept.count == 1 && kept.intents.isEmpty)
        let key = try #require(kept.kept.first.flatMap { BroadcastChannelPlan.Key($0.device) })
        #expect(channels.channel(for: key) == kept.kept.first.map(\.id))
    }

    /// Past the grace, a channel the database failed to keep is deleted, with its intent, rather
    /// than kept where a sweep may have ended it: the bid's moment, still noted, makes another.
    @Test func aChannelNotKeptWithinTheGraceIsDeletedAndMadeAgain() async throws {
        let (setup, store, faulty, clock, channels) = try await Self.firstRoundFailing(.updates)
        defer { Task { [server = setup.server] in try await server.shutdown() } }
        let first = try #require(setup.server.state.channels(of: Self.bundle).first?.id)

        faulty.failingUpdates.store(false, ordering: .relaxed)
        clock.advance(by: BroadcastChannels.Settings().leakGrace + 1)
        #expect(await channels.step())
        let open = setup.server.state.channels(of: Self.bundle).map(\.id)
        #expect(!open.contains(first), "the channel not kept within the grace is still on APNs")
        #expect(setup.server.state.channelCounts.deleted == 1 && open.count == 1)
        let left = Self.channels(among: try await store.activeDevices())
        #expect(left.intents.isEmpty, "the intent of the channel deleted is still active")
        #expect(left.kept.map(\.id) == open, "the channel made again is not the one kept")
    }

    /// The keep landed but its answer was lost (the database gone after the commit): past the
    /// window for keeping it again, the round finds it kept, and deletes nothing.
    @Test func aChannelKeptWhoseAnswerWasLostStaysKept() async throws {
        let (setup, store, faulty, clock, channels) = try await Self.firstRoundFailing(.answerLost)
        defer { Task { [server = setup.server] in try await server.shutdown() } }
        let first = try #require(setup.server.state.channels(of: Self.bundle).first?.id)

        faulty.answerLost.store(false, ordering: .relaxed)
        clock.advance(by: BroadcastChannels.Settings().leakGrace)
        #expect(await channels.step())
        #expect(setup.server.state.channels(of: Self.bundle).map(\.id) == [first], "the channel kept was deleted")
        #expect(setup.server.state.channelCounts.deleted == 0)
        let kept = Self.channels(among: try await store.activeDevices())
        #expect(kept.kept.map(\.id) == [first] && kept.intents.isEmpty)
        #expect(channels.counts.created == 1)
    }

    /// A round given up on (past its limit, as `run` does) that ends while the round after it runs
    /// leaves that round's flag alone: a third round does not start beside the second.
    @Test func aRoundGivenUpOnThatEndsLateLetsNoThirdRoundIn() async throws {
        let setup = try await Setup()
        defer { Task { [server = setup.server] in try await server.shutdown() } }
        let store = try SQLiteStore(path: setup.path)
        try await store.register(setup.phone(1))
        let faulty = FaultyDevices(store)
        let channels = BroadcastChannels(
            clients: setup.clients(), store: faulty, directory: DeviceDirectory(store: faulty),
            clock: ManualWallClock(Date(timeIntervalSince1970: 1_598_400_000)))
        faulty.gate.withLock { $0.parking = 2 }
        let first = Task { await channels.step() }
        try #require(await faulty.parked(1), "the first round asked the store nothing")
        channels.giveUpRound()
        let second = Task { await channels.step() }
        try #require(await faulty.parked(2), "the round after the one given up on did not start")
        faulty.letGo()
        _ = await first.value

        let before = faulty.calls.load(ordering: .relaxed)
        #expect(await channels.step())
        #expect(
            faulty.calls.load(ordering: .relaxed) == before,
            "a round started while the round after the one given up on was still running")
        faulty.letGo()
        #expect(await second.value)
    }
}
