import Alerts
import Clocks
import Foundation
import Pipeline
import Retrosheet
import Storage
import Synchronization
import TestSupport
import Testing

/// A round of the broadcast channels that the database fails (unreachable, a full disk) leaves its
/// work to the next: the bid moments it had not handled are noted again, so a channel a bid's
/// first moment asked for is made by the next round, not only at the bid's next moment (which may
/// never come: a bid that ends in the next inning).
extension BroadcastChannelsTests {
    /// A device store whose every call fails as the database unreachable while `failing` is set.
    final class FaultyDevices: DeviceStore {
        let store: SQLiteStore
        let failing = Atomic(false)

        init(_ store: SQLiteStore) { self.store = store }

        func check() throws {
            if failing.load(ordering: .relaxed) { throw StorageFault(.unreachable, detail: "the test's fault") }
        }

        func register(_ device: Device) async throws -> [UUID] {
            try check()
            return try await store.register(device)
        }
        func register(contentsOf devices: [Device]) async throws -> [UUID] {
            try check()
            return try await store.register(contentsOf: devices)
        }
        func device(id: UUID) async throws -> Device? {
            try check()
            return try await store.device(id: id)
        }
        func secretHash(deviceID: UUID) async throws -> String? {
            try check()
            return try await store.secretHash(deviceID: deviceID)
        }
        func updateChannel(id: UUID, to channel: DeviceChannel, at date: Date) async throws -> Bool {
            try check()
            return try await store.updateChannel(id: id, to: channel, at: date)
        }
        func disable(id: UUID, reason: String, at date: Date) async throws -> Bool {
            try check()
            return try await store.disable(id: id, reason: reason, at: date)
        }
        func delete(id: UUID) async throws -> Bool {
            try check()
            return try await store.delete(id: id)
        }
        func activeDevices() async throws -> [Device] {
            try check()
            return try await store.activeDevices()
        }
        func deviceCount() async throws -> Int {
            try check()
            return try await store.deviceCount()
        }
        func ping() async throws {
            try check()
            try await store.ping()
        }
        func devicesVersion() async throws -> Int {
            try check()
            return try await store.devicesVersion()
        }
        func deviceChanges(after version: Int?) async throws -> DeviceChanges {
            try check()
            return try await store.deviceChanges(after: version)
        }
    }

    /// Every change a hub makes.
    final class Changes: GameChangeConsumer {
        let seen = Mutex<[GameChange]>([])
        func consume(_ change: GameChange) async throws { seen.withLock { $0.append(change) } }
    }

    @Test func aRoundTheDatabaseFailedLeavesItsMomentsToTheNext() async throws {
        let setup = try await Setup()
        defer { Task { [server = setup.server] in try await server.shutdown() } }
        let store = try SQLiteStore(path: setup.path)
        try await store.register(setup.phone(1))
        let devices = try await store.activeDevices()

        // Giolito's game through a hub, to the first change with a live bid moment the phone's
        // channel is wanted for.
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
}
