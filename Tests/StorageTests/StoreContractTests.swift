import Alerts
import Baseball
import Foundation
import Storage
import TestSupport
import Testing

/// The store implementations every contract suite runs against: SQLite (a file, and in memory),
/// and PostgreSQL when a server is given (`$NOHIT_TEST_POSTGRES`), each test in a schema of its own.
enum StoreFactory: String, CaseIterable, CustomTestStringConvertible {
    case sqliteFile = "SQLite file"
    case sqliteMemory = "SQLite in memory"
    case postgres = "PostgreSQL"

    var testDescription: String { rawValue }

    /// The stores this run has: PostgreSQL only with a server.
    static var available: [StoreFactory] {
        allCases.filter { $0 != .postgres || TestPostgres.isAvailable }
    }

    /// Runs `body` with a new, empty store.
    func withStore(_ body: @Sendable (any ContractStore) async throws -> Void) async throws {
        switch self {
        case .sqliteFile:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "store-\(UUID().uuidString).sqlite"
            ).path
            try await body(try SQLiteStore(path: path))
        case .sqliteMemory:
            try await body(try SQLiteStore(inMemory: ()))
        case .postgres:
            let url = try #require(TestPostgres.url(schema: "contract"))
            // A lease that lapses at once: `recoverInDoubt` right after a claim finds it in doubt,
            // as after a restart (the instance that claimed it is gone).
            try await PostgresStore.withStore(
                try PostgresStore.Location(url: url), secrets: .ephemeral(), leaseSeconds: 0
            ) { store in
                do {
                    try await body(store)
                } catch {
                    try? await store.dropSchema()
                    throw DescribedError(error)
                }
                try await store.dropSchema()
            }
        }
    }
}

/// An error the PostgreSQL driver describes only generically, said with the server's message and
/// SQLSTATE (or the driver's code), so a failure in a loaded run names its cause.
struct DescribedError: Error, CustomStringConvertible {
    let error: any Error
    let description: String

    init(_ error: any Error) {
        self.error = error
        description = PostgresStore.describe(error)
    }
}

/// What the contract suites use of a store: every store protocol, and its outbox rows.
protocol ContractStore: DeviceStore, SubscriptionStore, MomentStore, OutboxStore, DealStore, FeedbackStore {
    func rows() async throws -> [(id: UUID, state: Int, attempts: Int, resentInDoubt: Int, error: String?)]
}

extension SQLiteStore: ContractStore {
    func rows() async throws -> [(id: UUID, state: Int, attempts: Int, resentInDoubt: Int, error: String?)] {
        try await outboxRows()
    }
}

extension PostgresStore: ContractStore {
    func rows() async throws -> [(id: UUID, state: Int, attempts: Int, resentInDoubt: Int, error: String?)] {
        try await outboxRows().map { ($0.id, $0.state, $0.attempts, $0.resentInDoubt, $0.error) }
    }
}

enum Fixtures {
    static let start = Date(timeIntervalSince1970: 1_598_400_000)

    static func device(_ channel: DeviceChannel, at date: Date = start, teams: [String] = []) -> Device {
        var preferences = Preferences()
        preferences.favouriteTeams = teams
        return Device(id: UUID(), channel: channel, preferences: preferences, registeredAt: date, secretHash: "hash")
    }

    /// An APNs channel with a token of its own (one token is one phone: registering it again
    /// replaces the device holding it).
    static var apns: DeviceChannel {
        .apns(token: token(), environment: .sandbox, topic: "com.example.nohit")
    }

    /// A new 64-hex-digit APNs token.
    static func token() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    static func moment(_ kind: Moment.Kind = .hitlessInnings, outs: Int = 18, game: String = "CHA202008250")
        -> StoredMoment
    {
        let moment = Moment(
            id: Moment.id(gameID: game, side: .home, kind: kind, outs: outs), gameID: game, pitchingSide: .home,
            kind: kind, outs: outs, inning: outs / 3, battingSide: .away, outsInInning: 3,
            score: PerSide(away: 0, home: 4), perfect: false, pitchers: [PlayerID("gioll001")!], batter: nil,
            eventType: nil, reason: nil)
        let info = GameInfo(
            id: game, date: "2020-08-25", away: .init(club: TeamDirectory.club("PIT", on: "2020-08-25")!),
            home: .init(club: TeamDirectory.club("CHA", on: "2020-08-25")!))
        return StoredMoment(moment: moment, game: info, occurredAt: start.addingTimeInterval(TimeInterval(outs * 60)))
    }

    static func deliveries(_ moment: StoredMoment, to devices: [Device], due: Date? = nil) -> [NewDelivery] {
        devices.map {
            NewDelivery(
                id: .delivery(momentID: moment.moment.id, deviceID: $0.id), deviceID: $0.id, channel: $0.channel.kind,
                payloadKey: "\(moment.moment.id)/\($0.channel.kind.rawValue)", notBefore: due ?? moment.occurredAt,
                expiresAt: moment.occurredAt.addingTimeInterval(1800), bidKey: "\(moment.moment.gameID)-home",
                momentKind: moment.moment.kind, momentOuts: moment.moment.outs)
        }
    }

    static func payloads(_ moment: StoredMoment) -> [StoredPayload] {
        ChannelKind.allCases.map { StoredPayload(key: "\(moment.moment.id)/\($0.rawValue)", body: Data("\($0)".utf8)) }
    }
}

@Suite struct DeviceStoreContractTests {
    @Test(arguments: StoreFactory.available)
    func manyDevicesRegisterAllOrNone(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let devices = (0..<50).map { _ in Fixtures.device(Fixtures.apns) }
            try await store.register(contentsOf: devices)
            #expect(try await store.deviceCount() == 50)
            let more = (0..<3).map { _ in Fixtures.device(Fixtures.apns) } + [devices[7]]
            await #expect(throws: StoreError.self) { try await store.register(contentsOf: more) }
            #expect(try await store.deviceCount() == 50)
            #expect(try await store.device(id: more[0].id) == nil)
        }
    }

    @Test(arguments: StoreFactory.available)
    func everyChannelRoundTrips(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let channels: [DeviceChannel] = [
                Fixtures.apns, .liveActivity(token: "cd", environment: .production, topic: "com.example.nohit"),
                .liveActivity(
                    token: "ce", environment: .sandbox, topic: "com.example.nohit",
                    bid: ActivityBid(gameID: "CHA202008250", pitchingTeam: "CWS")),
                .webPush(endpoint: "https://push.example.net/x", p256dh: "BKey", auth: "auth"),
                .webhook(url: "https://hooks.example.org/n", secret: "whsec_abc"), .console(label: "demo"),
            ]
            for channel in channels {
                var device = Fixtures.device(channel, teams: ["cha", "NYA"])
                device.preferences.jinxSafe = true
                try await store.register(device)
                var expected = device
                expected.preferences.favouriteTeams = ["cha", "NYA"]
                #expect(try await store.device(id: device.id) == expected)
                #expect(try await store.secretHash(deviceID: device.id) == device.secretHash)
            }
            #expect(try await store.deviceCount() == channels.count)
            #expect(try await store.device(id: UUID()) == nil)
            #expect(try await store.secretHash(deviceID: UUID()) == nil)
        }
    }

    @Test(arguments: StoreFactory.available)
    func duplicateRegistrationIsRefusedAndChangesNothing(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let device = Fixtures.device(Fixtures.apns)
            try await store.register(device)
            var other = device
            other.channel = .console(label: "x")
            await #expect(throws: StoreError.duplicate("device", key: "\(device.id)")) {
                try await store.register(other)
            }
            #expect(try await store.device(id: device.id)?.channel == device.channel)
        }
    }

    @Test(arguments: StoreFactory.available)
    func theSamePushAddressRegisteredAgainReplacesTheDeviceHoldingIt(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let first = Fixtures.device(Fixtures.apns)
            try await store.register(first)
            let later = Fixtures.start.addingTimeInterval(60)
            // The app reinstalled: the same token, a new device.
            let again = Fixtures.device(first.channel, at: later)
            #expect(try await store.register(again) == [first.id])
            #expect(try await store.activeDevices().map(\.id) == [again.id])
            #expect(
                try await store.device(id: first.id)?.status
                    == .disabled(
                        reason: "replaced by device \(again.id.uuidString): the same APNs token registered again",
                        at: later))
            // The replaced device is not replaced twice, and a disabled one is left as it is.
            let third = Fixtures.device(first.channel, at: later)
            #expect(try await store.register(third) == [again.id])
            #expect(try await store.device(id: first.id)?.isActive == false)
            #expect(try await store.activeDevices().map(\.id) == [third.id])

            // Web Push: one subscription endpoint is one browser.
            let browser = Fixtures.device(
                .webPush(endpoint: "https://push.example.net/sub/1", p256dh: "BKey", auth: "a"))
            try await store.register(browser)
            let renewed = Fixtures.device(
                .webPush(endpoint: "https://push.example.net/sub/1", p256dh: "BKey2", auth: "b"))
            #expect(try await store.register(renewed) == [browser.id])
            // Live Activity tokens likewise, and never across channels or topics.
            guard case .apns(let token, _, _) = first.channel else { return }
            let activity = Fixtures.device(
                .liveActivity(token: token, environment: .sandbox, topic: "com.example.nohit"))
            #expect(try await store.register(activity) == [])
            let otherApp = Fixtures.device(.apns(token: token, environment: .sandbox, topic: "com.example.other"))
            #expect(try await store.register(otherApp) == [])
            // Webhooks and consoles may share an address: one endpoint, several preference sets.
            let hooks = (0..<2).map { _ in
                Fixtures.device(.webhook(url: "https://hooks.example.org/n", secret: "whsec_\(UUID())"))
            }
            for hook in hooks { #expect(try await store.register(hook) == []) }
            let consoles = (0..<2).map { _ in Fixtures.device(.console(label: "demo")) }
            #expect(try await store.register(contentsOf: consoles) == [])
            #expect(
                Set(try await store.activeDevices().map(\.id))
                    == Set([third.id, renewed.id, activity.id, otherApp.id] + hooks.map(\.id) + consoles.map(\.id)))
        }
    }

    @Test(arguments: StoreFactory.available)
    func aBatchWithOneTokenTwiceIsRefusedWhole(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let one = Fixtures.device(Fixtures.apns)
            let batch = [Fixtures.device(Fixtures.apns), one, Fixtures.device(one.channel)]
            await #expect(throws: StoreError.self) { try await store.register(contentsOf: batch) }
            #expect(try await store.deviceCount() == 0)
            // In a batch, the device it replaces is returned as for one.
            try await store.register(one)
            let next = [Fixtures.device(Fixtures.apns), Fixtures.device(one.channel)]
            #expect(try await store.register(contentsOf: next) == [one.id])
            #expect(try await store.activeDevices().count == 2)
        }
    }

    @Test(arguments: StoreFactory.available)
    func aTokenRotatedOntoAnotherDevicesTokenReplacesIt(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let old = Fixtures.device(Fixtures.apns)
            let current = Fixtures.device(Fixtures.apns)
            try await store.register(contentsOf: [old, current])
            let later = Fixtures.start.addingTimeInterval(60)
            #expect(try await store.updateChannel(id: current.id, to: old.channel, at: later))
            #expect(try await store.activeDevices().map(\.id) == [current.id])
            #expect(try await store.device(id: old.id)?.isActive == false)
            // Rotating to its own token again replaces nothing.
            #expect(try await store.updateChannel(id: current.id, to: old.channel, at: later))
            #expect(try await store.activeDevices().map(\.id) == [current.id])
            #expect(try await store.updateChannel(id: UUID(), to: Fixtures.apns, at: later) == false)
        }
    }

    @Test(arguments: StoreFactory.available)
    func registrationsOfOneTokenAtOnceLeaveOneActive(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let channel = Fixtures.apns
            let devices = (0..<8).map { _ in Fixtures.device(channel) }
            try await withThrowingTaskGroup { group in
                for device in devices { group.addTask { _ = try await store.register(device) } }
                try await group.waitForAll()
            }
            #expect(try await store.activeDevices().count == 1)
            #expect(try await store.deviceCount() == 8)
        }
    }

    @Test(arguments: StoreFactory.available)
    func disablingAndNewTokens(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let device = Fixtures.device(Fixtures.apns)
            try await store.register(device)
            #expect(try await store.disable(id: device.id, reason: "Unregistered", at: Fixtures.start))
            #expect(try await store.activeDevices().isEmpty)
            #expect(
                try await store.device(id: device.id)?.status == .disabled(reason: "Unregistered", at: Fixtures.start))
            let rotated = DeviceChannel.apns(token: "ef01", environment: .sandbox, topic: "com.example.nohit")
            let later = Fixtures.start.addingTimeInterval(60)
            #expect(try await store.updateChannel(id: device.id, to: rotated, at: later))
            let updated = try await store.device(id: device.id)
            #expect(updated?.channel == rotated)
            #expect(updated?.isActive == true)
            #expect(updated?.registeredAt == later)
            #expect(try await store.disable(id: UUID(), reason: "x", at: later) == false)
            #expect(try await store.delete(id: device.id))
            #expect(try await store.device(id: device.id) == nil)
        }
    }

    @Test(arguments: StoreFactory.available)
    func everyChangeToTheDevicesMovesTheVersion(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            var seen = [try await store.devicesVersion()]
            func moved() async throws -> Bool {
                let now = try await store.devicesVersion()
                defer { seen.append(now) }
                return !seen.contains(now)
            }
            let device = Fixtures.device(Fixtures.apns)
            try await store.register(device)
            #expect(try await moved())
            try await store.register(contentsOf: [Fixtures.device(Fixtures.apns), Fixtures.device(Fixtures.apns)])
            #expect(try await moved())
            var preferences = Preferences()
            preferences.favouriteTeams = ["CHA"]
            #expect(try await store.updatePreferences(deviceID: device.id, to: preferences))
            #expect(try await moved())
            #expect(try await store.disable(id: device.id, reason: "Unregistered", at: Fixtures.start))
            #expect(try await moved())
            #expect(try await store.updateChannel(id: device.id, to: Fixtures.apns, at: Fixtures.start))
            #expect(try await moved())
            #expect(try await store.delete(id: device.id))
            #expect(try await moved())
            // Reads leave it alone.
            _ = try await store.activeDevices()
            _ = try await store.deviceCount()
            #expect(try await store.devicesVersion() == seen.last)
        }
    }

    @Test(arguments: StoreFactory.available)
    func changesAfterAVersionAreTheDevicesTouchedSince(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let first = Fixtures.device(Fixtures.apns)
            let second = Fixtures.device(Fixtures.apns, at: Fixtures.start.addingTimeInterval(1))
            try await store.register(contentsOf: [first, second])
            let all = try await store.deviceChanges(after: nil)
            #expect(all.devices.map(\.id) == [first.id, second.id])
            #expect(all.removals == 0)
            #expect(try await store.deviceChanges(after: all.version).devices.isEmpty)
            // A disabled device is among the changes (so a reader drops it); untouched ones are not.
            #expect(try await store.disable(id: first.id, reason: "Unregistered", at: Fixtures.start))
            let changed = try await store.deviceChanges(after: all.version)
            #expect(changed.devices.map(\.id) == [first.id])
            #expect(changed.devices.first?.isActive == false)
            #expect(changed.version > all.version)
            // The whole read lists active devices only.
            #expect(try await store.deviceChanges(after: nil).devices.map(\.id) == [second.id])
            #expect(try await store.delete(id: second.id))
            #expect(try await store.deviceChanges(after: changed.version).removals == 1)
        }
    }
}

@Suite struct SubscriptionStoreContractTests {
    @Test(arguments: StoreFactory.available)
    func preferencesAndFavourites(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let fan = Fixtures.device(Fixtures.apns, teams: ["CHA"])
            let other = Fixtures.device(.console(label: "x"), teams: ["PIT"])
            try await store.register(fan)
            try await store.register(other)
            #expect(try await store.deviceIDs(favouring: "cha") == [fan.id])
            var preferences = Preferences()
            preferences.favouriteTeams = ["PIT", "MIL"]
            preferences.thresholdInnings = 7
            #expect(try await store.updatePreferences(deviceID: fan.id, to: preferences))
            #expect(try await store.preferences(deviceID: fan.id) == preferences)
            #expect(try await store.deviceIDs(favouring: "CHA").isEmpty)
            #expect(Set(try await store.deviceIDs(favouring: "PIT")) == [fan.id, other.id])
            _ = try await store.disable(id: other.id, reason: "x", at: Fixtures.start)
            #expect(try await store.deviceIDs(favouring: "PIT") == [fan.id])
            #expect(try await store.updatePreferences(deviceID: UUID(), to: preferences) == false)
            #expect(try await store.preferences(deviceID: UUID()) == nil)
        }
    }
}

@Suite struct MomentStoreContractTests {
    @Test(arguments: StoreFactory.available)
    func momentsAreStoredOnceAndListed(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let early = Fixtures.moment(outs: 15)
            let late = Fixtures.moment(outs: 18)
            let elsewhere = Fixtures.moment(outs: 12, game: "MIL202009130")
            for moment in [early, late, elsewhere] {
                #expect(try await store.record(moment, payloads: [], deliveries: []))
            }
            #expect(try await store.record(late, payloads: [], deliveries: []) == false)
            #expect(try await store.moment(id: late.moment.id) == late)
            // A score alert after them: in the game's list when asked for, never among the bids'.
            let final = Fixtures.moment(.finalScore, outs: 27)
            #expect(try await store.record(final, payloads: [], deliveries: []))
            #expect(
                try await store.moments(gameID: "CHA202008250", scoreAlerts: true).map(\.moment.kind) == [
                    .hitlessInnings, .hitlessInnings, .finalScore,
                ])
            #expect(try await store.moments(gameID: "CHA202008250", scoreAlerts: false).map(\.moment.outs) == [15, 18])
            #expect(try await store.recentMoments(limit: 2).map(\.moment.id) == [late.moment.id, early.moment.id])
            #expect(try await store.moment(id: "nope") == nil)
        }
    }
}

@Suite struct OutboxStoreContractTests {
    @Test(arguments: StoreFactory.available)
    func momentAndDeliveriesAreWrittenTogetherOnce(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let devices = (0..<3).map { _ in Fixtures.device(Fixtures.apns) }
            for device in devices { try await store.register(device) }
            let moment = Fixtures.moment()
            #expect(
                try await store.record(
                    moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: devices)))
            // Derived again (a restart): nothing new.
            #expect(
                try await store.record(
                    moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: devices))
                    == false)
            #expect(try await store.outboxCounts().pending == 3)
            // A delivery naming a payload that is not there: the whole write is refused.
            let bad = Fixtures.moment(outs: 21)
            var deliveries = Fixtures.deliveries(bad, to: devices)
            deliveries[1].payloadKey = "missing"
            await #expect(throws: StoreError.self) {
                try await store.record(bad, payloads: Fixtures.payloads(bad), deliveries: deliveries)
            }
            #expect(try await store.moment(id: bad.moment.id) == nil)
            #expect(try await store.outboxCounts().total == 3)
        }
    }

    @Test(arguments: StoreFactory.available)
    func claimsAreDueAndPerChannelAndCountAttempts(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phone = Fixtures.device(Fixtures.apns)
            let hook = Fixtures.device(.webhook(url: "https://hooks.example.org/n", secret: "whsec_x"))
            try await store.register(phone)
            try await store.register(hook)
            let moment = Fixtures.moment()
            let due = moment.occurredAt.addingTimeInterval(30)
            try await store.record(
                moment, payloads: Fixtures.payloads(moment),
                deliveries: Fixtures.deliveries(moment, to: [phone, hook], due: due))
            #expect(try await store.claim(channel: .apns, now: moment.occurredAt, limit: 10).isEmpty)
            #expect(try await store.nextDue(channel: .apns) == due)
            #expect(try await store.hasUnfinished(channels: [.apns], dueBy: nil) == true)
            #expect(try await store.hasUnfinished(channels: [.webhook], dueBy: nil) == true)
            #expect(try await store.hasUnfinished(channels: [.webPush], dueBy: nil) == false)
            #expect(try await store.hasUnfinished(channels: [.webPush, .webhook], dueBy: nil) == true)
            #expect(try await store.hasUnfinished(channels: [.apns], dueBy: moment.occurredAt) == false)
            #expect(try await store.hasUnfinished(channels: [.apns], dueBy: due) == true)
            let claimed = try await store.claim(channel: .apns, now: due, limit: 10)
            #expect(claimed.map(\.deviceID) == [phone.id])
            #expect(claimed.first?.attempts == 1)
            #expect(claimed.first?.channel == phone.channel)
            #expect(claimed.first?.payload == Data("apns".utf8))
            #expect(claimed.first?.id == .delivery(momentID: moment.moment.id, deviceID: phone.id))
            #expect(try await store.claim(channel: .apns, now: due, limit: 10).isEmpty)
            #expect(try await store.outboxCounts().sending == 1)
            try await store.complete([
                .retry(id: claimed[0].id, at: due.addingTimeInterval(5), reason: "503", tokenRefreshed: true)
            ])
            #expect(try await store.claim(channel: .apns, now: due, limit: 10).isEmpty)
            let again = try await store.claim(channel: .apns, now: due.addingTimeInterval(5), limit: 10)
            #expect(again.first?.attempts == 2)
            #expect(again.first?.tokenRefreshed == true)
            #expect(try await store.hasUnfinished(channels: [.apns], dueBy: nil) == true)
            try await store.complete([.delivered(id: again[0].id, at: due.addingTimeInterval(6))])
            #expect(try await store.outboxCounts().delivered == 1)
            #expect(try await store.hasUnfinished(channels: [.apns], dueBy: nil) == false)
        }
    }

    /// A fan-out's WAL is not copied back into the database file while its deliveries are under
    /// way (SQLite would, at the first commit past 1,000 pages of WAL, and again every 1,000):
    /// once nothing is being sent or due, it is.
    @Test func aFanOutPutsOffItsCheckpointUntilNothingIsUnderWay() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite")
            .path
        let store = try SQLiteStore(path: path)
        let phones = (0..<20_000).map { _ in Fixtures.device(Fixtures.apns) }
        try await store.register(contentsOf: phones)
        func fileSize() throws -> Int {
            try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        }
        let before = try fileSize()
        let moment = Fixtures.moment()
        // About 1,500 pages of outbox rows and their index: without the deferral, this commit
        // checkpoints them into the file.
        try await store.record(
            moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: phones))
        #expect(try fileSize() == before)
        let claimed = try await store.claim(channel: .apns, now: moment.occurredAt, limit: 20_000)
        #expect(claimed.count == 20_000)
        try await store.deliveriesSettled(now: moment.occurredAt)
        #expect(try fileSize() == before, "checkpointed while deliveries were being sent")
        try await store.complete(claimed.map { .delivered(id: $0.id, at: moment.occurredAt) })
        #expect(try fileSize() == before)
        try await store.deliveriesSettled(now: moment.occurredAt)
        #expect(try fileSize() > before + 4_000_000, "not checkpointed once nothing was under way")
    }

    /// A store finds the rows it claimed by their ids; one that did not claim them (another
    /// process on the same file, or this one after a restart) finds them by delivery id.
    @Test func deliveriesClaimedByAnotherStoreOnTheFileAreFinishedAndReleased() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite")
            .path
        let claimer = try SQLiteStore(path: path)
        let phones = (0..<3).map { _ in Fixtures.device(Fixtures.apns) }
        try await claimer.register(contentsOf: phones)
        let moment = Fixtures.moment()
        try await claimer.record(
            moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: phones))
        let claimed = try await claimer.claim(channel: .apns, now: moment.occurredAt, limit: 10)
        #expect(claimed.count == 3)
        let other = try SQLiteStore(path: path)
        try await other.complete([
            .delivered(id: claimed[0].id, at: moment.occurredAt),
            .failed(id: claimed[1].id, reason: "400 BadDeviceToken", at: moment.occurredAt),
        ])
        try await other.release([claimed[2].id])
        var counts = try await claimer.outboxCounts()
        #expect([counts.delivered, counts.failed, counts.pending, counts.sending] as [Int] == [1, 1, 1, 0])
        // The claimer still remembers those rows; its answers land on the same rows.
        try await claimer.complete([
            .retry(id: claimed[1].id, at: moment.occurredAt, reason: "503", tokenRefreshed: false)
        ])
        try await claimer.release([claimed[2].id])
        counts = try await other.outboxCounts()
        #expect([counts.delivered, counts.failed, counts.pending, counts.sending] as [Int] == [1, 0, 2, 0])
        let rows = try await other.outboxRows()
        #expect(rows.map(\.attempts).sorted() == [0, 1, 1])
    }

    @Test(arguments: StoreFactory.available)
    func releasedClaimsArePendingAgainWithoutAnAttempt(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phone = Fixtures.device(Fixtures.apns)
            try await store.register(phone)
            let moment = Fixtures.moment()
            try await store.record(
                moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: [phone]))
            let claimed = try await store.claim(channel: .apns, now: moment.occurredAt, limit: 10)
            try await store.release(claimed.map(\.id))
            #expect(try await store.outboxCounts().pending == 1)
            // Releasing twice, or a delivery no longer claimed, changes nothing.
            try await store.release(claimed.map(\.id))
            let again = try await store.claim(channel: .apns, now: moment.occurredAt, limit: 10)
            #expect(again.first?.attempts == 1)
            #expect(try await store.recoverInDoubt(now: moment.occurredAt).requeued == again.map(\.id))
        }
    }

    /// Two alerts in flight to one device, both answered "gone": one event for the feedback hook.
    @Test(arguments: StoreFactory.available)
    func aDevicePrunedTwiceIsToldOnce(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phone = Fixtures.device(Fixtures.apns)
            try await store.register(phone)
            let first = Fixtures.moment(outs: 18)
            let second = Fixtures.moment(outs: 21)
            for moment in [first, second] {
                try await store.record(
                    moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: [phone]))
            }
            let claimed = try await store.claim(channel: .apns, now: second.occurredAt, limit: 2)
            #expect(claimed.count == 2)
            try await store.complete(
                claimed.map { .pruned(id: $0.id, deviceID: phone.id, reason: "Unregistered", at: second.occurredAt) })
            let events = try await store.takeFeedback(now: second.occurredAt, lease: 60, limit: 10)
            #expect(events.map(\.deviceID) == [phone.id])
        }
    }

    @Test(arguments: StoreFactory.available)
    func pruningDisablesTheDeviceAndDropsItsQueue(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phone = Fixtures.device(Fixtures.apns)
            try await store.register(phone)
            let first = Fixtures.moment(outs: 18)
            let second = Fixtures.moment(outs: 21)
            try await store.record(
                first, payloads: Fixtures.payloads(first), deliveries: Fixtures.deliveries(first, to: [phone]))
            try await store.record(
                second, payloads: Fixtures.payloads(second), deliveries: Fixtures.deliveries(second, to: [phone]))
            let claimed = try await store.claim(channel: .apns, now: first.occurredAt, limit: 1)
            try await store.complete([
                .pruned(id: claimed[0].id, deviceID: phone.id, reason: "410 Unregistered", at: first.occurredAt)
            ])
            #expect(try await store.device(id: phone.id)?.isActive == false)
            let counts = try await store.outboxCounts()
            #expect(counts.failed == 2)
            #expect(counts.pending == 0)
            // The operator's list: both rows, the device disabled, the provider's reason first.
            let failed = try await store.failedDeliveries(limit: 10)
            #expect(failed.recent.count == 2)
            #expect(failed.recent.allSatisfy { $0.deviceID == phone.id && $0.deviceActive == false })
            #expect(failed.recent.contains { $0.deliveryID == claimed[0].id && $0.reason == "410 Unregistered" })
            #expect(failed.counts.map(\.count).reduce(0, +) == 2)
            #expect(failed.counts.contains { $0.channel == "apns" && $0.reason == "410 Unregistered" })
            #expect(try await store.failedDeliveries(limit: 1).recent.count == 1)
            // The operator's feedback hook is told once: taken for its lease, sent again after a
            // failure under the same event id, never after it was taken.
            let now = first.occurredAt
            let taken = try await store.takeFeedback(now: now, lease: 60, limit: 10)
            #expect(taken.count == 1)
            let event = try #require(taken.first)
            #expect(event.deviceID == phone.id && event.channel == "apns" && event.reason == "410 Unregistered")
            guard case .apns(let token, _, _) = phone.channel else { throw StoreError.invalid("not an APNs device") }
            #expect(event.address == token && event.attempts == 0)
            #expect(try await store.takeFeedback(now: now, lease: 60, limit: 10).isEmpty, "taken twice in its lease")
            let afterLease = try await store.takeFeedback(now: now.addingTimeInterval(61), lease: 60, limit: 10)
            #expect(afterLease.map(\.eventID) == [event.eventID] && afterLease.first?.attempts == 1)
            try await store.feedbackFailed(event.eventID, retryAt: now.addingTimeInterval(200), reason: "HTTP 503")
            #expect(try await store.takeFeedback(now: now.addingTimeInterval(150), lease: 60, limit: 10).isEmpty)
            let retried = try await store.takeFeedback(now: now.addingTimeInterval(200), lease: 60, limit: 10)
            #expect(retried.map(\.eventID) == [event.eventID])
            try await store.feedbackSent(event.eventID, at: now.addingTimeInterval(201))
            #expect(try await store.takeFeedback(now: now.addingTimeInterval(10_000), lease: 60, limit: 10).isEmpty)
        }
    }

    /// A device deleted or disabled after its alerts were queued gets none of them: claiming
    /// finishes those rows as failed, with the reason, instead of sending them or leaving them
    /// claimed for ever.
    @Test(arguments: StoreFactory.available)
    func queuedAlertsOfRemovedOrDisabledDevicesFailWhenClaimed(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phones = (0..<3).map { _ in Fixtures.device(Fixtures.apns) }
            try await store.register(contentsOf: phones)
            let moment = Fixtures.moment()
            try await store.record(
                moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: phones))
            #expect(try await store.delete(id: phones[0].id))
            #expect(
                try await store.disable(id: phones[1].id, reason: "disabled by the operator", at: moment.occurredAt))
            let claimed = try await store.claim(channel: .apns, now: moment.occurredAt, limit: 10)
            #expect(claimed.map(\.deviceID) == [phones[2].id])
            let counts = try await store.outboxCounts()
            #expect(counts.failed == 2)
            #expect(counts.sending == 1)
            try await store.complete([.delivered(id: claimed[0].id, at: moment.occurredAt)])
            #expect(try await store.hasUnfinished(channels: [.apns]) == false)
            let errors = try await store.rows().compactMap(\.error).sorted()
            #expect(errors == ["device disabled: disabled by the operator", "device removed"])
        }
    }

    @Test(arguments: StoreFactory.available)
    func inDoubtAttemptsAreRequeuedUnlessSuperseded(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phones = (0..<2).map { _ in Fixtures.device(Fixtures.apns) }
            for phone in phones { try await store.register(phone) }
            let seventh = Fixtures.moment(outs: 21)
            let eighth = Fixtures.moment(outs: 24)
            try await store.record(
                seventh, payloads: Fixtures.payloads(seventh), deliveries: Fixtures.deliveries(seventh, to: phones))
            // Both attempts start; the process dies before either outcome is recorded.
            let inFlight = try await store.claim(channel: .apns, now: seventh.occurredAt, limit: 10)
            #expect(inFlight.count == 2)
            // The 8th-inning alert reaches phone 0 (recorded before the crash).
            try await store.record(
                eighth, payloads: Fixtures.payloads(eighth), deliveries: Fixtures.deliveries(eighth, to: [phones[0]]))
            let eighthClaim = try await store.claim(channel: .apns, now: eighth.occurredAt, limit: 10)
            try await store.complete([.delivered(id: eighthClaim[0].id, at: eighth.occurredAt)])

            let report = try await store.recoverInDoubt(now: eighth.occurredAt)
            #expect(report.superseded == [.delivery(momentID: seventh.moment.id, deviceID: phones[0].id)])
            #expect(report.requeued == [.delivery(momentID: seventh.moment.id, deviceID: phones[1].id)])
            let resent = try await store.claim(channel: .apns, now: eighth.occurredAt, limit: 10)
            #expect(resent.map(\.id) == report.requeued)
            #expect(resent.first?.attempts == 2)
        }
    }

    @Test(arguments: StoreFactory.available)
    func followersAreTheDevicesToldTheBidIsOn(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phones = (0..<3).map { _ in Fixtures.device(Fixtures.apns) }
            for phone in phones { try await store.register(phone) }
            let innings = Fixtures.moment(.hitlessInnings, outs: 18)
            let change = Fixtures.moment(.pitchingChange, outs: 19)
            let nextInnings = Fixtures.moment(.hitlessInnings, outs: 21)
            let otherGame = Fixtures.moment(.hitlessInnings, outs: 18, game: "SDN202008250")
            #expect(try await store.isRecorded(momentID: innings.moment.id) == false)
            try await store.record(
                innings, payloads: Fixtures.payloads(innings), deliveries: Fixtures.deliveries(innings, to: [phones[0]])
            )
            // Not an in-progress alert: phones[1] is not told the bid is on by it.
            try await store.record(
                change, payloads: Fixtures.payloads(change), deliveries: Fixtures.deliveries(change, to: [phones[1]]))
            // phones[0] again (kept once), and phones[2].
            try await store.record(
                nextInnings, payloads: Fixtures.payloads(nextInnings),
                deliveries: Fixtures.deliveries(nextInnings, to: [phones[0], phones[2]]))
            try await store.record(
                otherGame, payloads: Fixtures.payloads(otherGame),
                deliveries: Fixtures.deliveries(otherGame, to: [phones[1]]))
            #expect(try await store.followers(bidKey: "CHA202008250-home") == [phones[0].id, phones[2].id])
            #expect(try await store.followers(bidKey: "SDN202008250-home") == [phones[1].id])
            #expect(try await store.followers(bidKey: "CHA202008250-away") == [])
            #expect(try await store.isRecorded(momentID: innings.moment.id))
            #expect(try await store.isRecorded(momentID: change.moment.id))
        }
    }

    /// A moment recorded a second time writes nothing, not even a follower it did not have.
    @Test(arguments: StoreFactory.available)
    func aMomentRecordedAgainWritesNothing(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let phones = (0..<2).map { _ in Fixtures.device(Fixtures.apns) }
            try await store.register(contentsOf: phones)
            let innings = Fixtures.moment(.hitlessInnings, outs: 18)
            #expect(
                try await store.record(
                    innings, payloads: Fixtures.payloads(innings),
                    deliveries: Fixtures.deliveries(innings, to: [phones[0]])
                ))
            #expect(
                try await store.record(
                    innings, payloads: Fixtures.payloads(innings), deliveries: Fixtures.deliveries(innings, to: phones))
                    == false)
            #expect(try await store.rows().count == 1)
            #expect(try await store.followers(bidKey: "CHA202008250-home") == [phones[0].id])
        }
    }
}

@Suite struct DealStoreContractTests {
    @Test(arguments: StoreFactory.available)
    func gamesTriggersAndRevisionsAreKeptOnce(factory: StoreFactory) async throws {
        try await factory.withStore { (store: any ContractStore) async throws in
            let game = StoredDealGame(gameID: "WAS202008230", dealDate: "2020-08-24", body: Data(#"{"runs":9}"#.utf8))
            try await store.saveDealGame(game)
            // A re-scoring replaces the game's state.
            var rescored = game
            rescored.body = Data(#"{"runs":8}"#.utf8)
            try await store.saveDealGame(rescored)
            try await store.saveDealGame(
                StoredDealGame(gameID: "WAS202008250", dealDate: "2020-08-26", body: Data("{}".utf8)))
            #expect(try await store.dealGames(from: "2020-08-24", through: "2020-08-25") == [rescored])
            #expect(try await store.dealGames(from: "2020-08-01", through: "2020-08-31").count == 2)

            let trigger = StoredDealTrigger(
                id: UUID(), ruleID: "papa-johns-dc-nationals", version: 2, gameID: game.gameID, dealDate: game.dealDate,
                createdAt: Fixtures.start, body: Data(#"{"rule":"papa-johns-dc-nationals"}"#.utf8))
            #expect(try await store.recordTrigger(trigger))
            #expect(try await store.recordTrigger(trigger) == false)
            let other = StoredDealTrigger(
                id: UUID(), ruleID: "mcdonalds-dc-nationals", version: 1, gameID: game.gameID, dealDate: game.dealDate,
                createdAt: Fixtures.start.addingTimeInterval(1), body: Data("{}".utf8))
            #expect(try await store.recordTrigger(other))
            // Revisions in order, each as given.
            let first = Data(#"{"runs_for":6,"still":false}"#.utf8)
            let second = Data(#"{"runs_for":7,"still":true}"#.utf8)
            try await store.recordTriggerRevision(id: trigger.id, revision: first)
            try await store.recordTriggerRevision(id: trigger.id, revision: second)
            let stored = try await store.dealTriggers(
                ruleID: "papa-johns-dc-nationals", from: "2020-08-24", through: "2020-08-24")
            #expect(stored.map(\.id) == [trigger.id])
            let revisions = try stored[0].revisions.map { try JSONSerialization.jsonObject(with: $0) as? NSDictionary }
            #expect(revisions == [["runs_for": 6, "still": false], ["runs_for": 7, "still": true]])
            #expect(stored[0].body == trigger.body)
            #expect(
                try await store.dealTriggers(ruleID: nil, from: "2020-08-24", through: "2020-08-24").map(\.id) == [
                    trigger.id, other.id,
                ])
            #expect(try await store.dealTriggers(ruleID: nil, from: "2020-08-25", through: "2020-09-01").isEmpty)
        }
    }
}
