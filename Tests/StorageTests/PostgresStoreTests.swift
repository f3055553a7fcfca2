import Alerts
import Foundation
import TestSupport
import Testing

@testable import Storage

/// What only the PostgreSQL store does: migrations once for instances starting together, rows
/// claimed by several instances without overlap, leases that lapse and are taken back, and one
/// moment recorded by two instances at once.
@Suite(.postgres) struct PostgresStoreTests {
    /// Runs `body` with `count` stores (instances) on one new schema; the schema is dropped after.
    /// Leases of an hour unless a test's are its point (`leases`): a loaded machine can let 20 s
    /// of the database's clock pass in the middle of a test (a game's lease lapsed so in CI).
    static func withStores(
        _ count: Int, leaseSeconds: Double = 3600, leases: [Double]? = nil,
        _ body: @Sendable ([PostgresStore]) async throws -> Void
    ) async throws {
        let location = try PostgresStore.Location(url: try #require(TestPostgres.url(schema: "instances")))
        let secrets = SecretBox.ephemeral()
        @Sendable func open(_ index: Int, _ stores: [PostgresStore]) async throws {
            guard index < count else {
                try await body(stores)
                try await stores[0].dropSchema()
                return
            }
            try await PostgresStore.withStore(
                location, secrets: secrets, instance: "instance-\(index)", leaseSeconds: leases?[index] ?? leaseSeconds
            ) { store in
                try await open(index + 1, stores + [store])
            }
        }
        try await open(0, [])
    }

    /// A run is joined while an instance in it is alive, even once its day's clock is over (a
    /// replacement started while the others still deliver); with none left, a late start begins a
    /// new run.
    @Test func aLateInstanceJoinsTheRunWhileAnInstanceInItIsAlive() async throws {
        try await Self.withStores(2) { stores in
            let first = try await stores[0].joinRun(key: "day", epoch: 1, notBefore: Date(timeIntervalSinceNow: -60))
            // Begun before the window (notBefore is after it began): joined for the live instance.
            let late = try await stores[1].joinRun(key: "day", epoch: 2, notBefore: Date(timeIntervalSinceNow: 60))
            #expect(late.id == first.id && late.epoch == 1)
            try await stores[0].leave()
            try await stores[1].leave()
            let fresh = try await stores[0].joinRun(key: "day", epoch: 3, notBefore: Date(timeIntervalSinceNow: 60))
            #expect(fresh.id != first.id && fresh.epoch == 3)
        }
    }

    @Test func instancesStartingTogetherMigrateOnce() async throws {
        let location = try PostgresStore.Location(url: try #require(TestPostgres.url(schema: "migrate")))
        let secrets = SecretBox.ephemeral()
        let applied = try await withThrowingTaskGroup(of: [String].self) { group in
            for index in 0..<4 {
                group.addTask {
                    try await PostgresStore.withStore(location, secrets: secrets, instance: "m\(index)") {
                        try await $0.appliedMigrations()
                    }
                }
            }
            return try await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        let names = PostgresStore.migrations.map(\.name)
        // Every store saw each migration applied exactly once.
        #expect(applied.allSatisfy { $0 == names })
        try await PostgresStore.withStore(location, secrets: secrets) { try await $0.dropSchema() }
    }

    @Test(arguments: [
        ("mysql://u@h/db", "is not a postgres:// URL"),
        ("postgres:///db", "names no host"),
        ("postgres://h/db", "names no user"),
        ("postgres://u@h/", "names no database"),
        ("postgres://u@h/db?sslmode=maybe", "sslmode must be disable, prefer or require"),
        ("postgres://u@h/db?schema=Drop;", "the schema must be a lower-case SQL name"),
        ("postgres://u@h/db?pool=3", "unknown database URL parameter 'pool'"),
    ])
    func aMalformedURLSaysWhatIsWrong(url: String, message: String) {
        #expect {
            _ = try PostgresStore.Location(url: url)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func aPasswordIsNeverPrinted() throws {
        let location = try PostgresStore.Location(url: "postgres://nohit:s3cret@db.example:6543/alerts?schema=x")
        #expect("\(location)" == "postgres://nohit@db.example:6543/alerts?schema=x")
        #expect(location.password == "s3cret")
    }

    /// Three instances claim from 3,000 rows at once: each row goes to exactly one of them.
    @Test func instancesClaimDisjointRows() async throws {
        try await Self.withStores(3) { stores in
            let phones = (0..<3000).map { _ in Fixtures.device(Fixtures.apns) }
            try await stores[0].register(contentsOf: phones)
            let moment = Fixtures.moment()
            try await stores[1].record(
                moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: phones))
            let claims = try await withThrowingTaskGroup(of: [UUID].self) { group in
                for store in stores {
                    group.addTask {
                        var mine: [UUID] = []
                        while true {
                            let claimed = try await store.claim(channel: .apns, now: moment.occurredAt, limit: 100)
                            if claimed.isEmpty { return mine }
                            mine += claimed.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [[UUID]]()) { $0.append($1) }
            }
            let all = claims.flatMap { $0 }
            #expect(all.count == 3000)
            #expect(Set(all).count == 3000)
            #expect(claims.filter { !$0.isEmpty }.count >= 2, "one instance took every row: \(claims.map(\.count))")
            let owners = try await stores[0].outboxRows().compactMap(\.leaseOwner)
            #expect(
                Set(owners) == Set(claims.enumerated().filter { !$0.element.isEmpty }.map { "instance-\($0.offset)" }))
        }
    }

    /// A claim that committed but whose answer was lost (its connection dropped at the commit, or
    /// the attempt was given up) is in no dispatcher's hands: the live instance does not renew its
    /// rows, so their lease lapses and they are taken back in doubt and sent, not held for ever.
    @Test func rowsOfAClaimWhoseAnswerWasLostAreNotRenewedForEver() async throws {
        try await Self.withStores(1, leases: [1]) { stores in
            let instance = stores[0]
            let phones = (0..<3).map { _ in Fixtures.device(Fixtures.apns) }
            try await instance.register(contentsOf: phones)
            let moment = Fixtures.moment()
            try await instance.record(
                moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: phones))
            let lost = try await instance.claim(channel: .apns, now: moment.occurredAt, limit: 2)
            let kept = try await instance.claim(channel: .apns, now: moment.occurredAt, limit: 1)
            #expect(lost.count == 2 && kept.count == 1)
            // The first claim's answer never reached a dispatcher.
            instance.held.withLock { $0.subtract(lost.map(\.id)) }
            let deadline = ContinuousClock.now + .seconds(60)
            var requeued: Set<UUID> = []
            while !requeued.isSuperset(of: lost.map(\.id)) && ContinuousClock.now < deadline {
                // Renewed every round: the held row's lease (it may lapse too on a loaded machine,
                // whose rounds can take over its second); the lost rows' never.
                requeued.formUnion(try await instance.maintainLeases(now: moment.occurredAt).requeued)
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(requeued.isSuperset(of: lost.map(\.id)))
            let rows = Dictionary(uniqueKeysWithValues: try await instance.outboxRows().map { ($0.id, $0) })
            #expect(lost.allSatisfy { rows[$0.id]?.state == 0 })
        }
    }

    /// An instance that stops renewing loses its rows: another takes them back in doubt (same
    /// delivery ids, queued again), and the first one's late outcomes land nowhere. Rows whose
    /// lease has not run out stay their instance's. (The stopped instance's lease is 0 s: its
    /// claims lapse at once, whatever the machine's load; the other's is ten minutes.)
    @Test func aLapsedLeaseIsTakenBackAndTheOldOwnersOutcomesAreIgnored() async throws {
        try await Self.withStores(2, leases: [0, 600]) { stores in
            let (stopped, alive) = (stores[0], stores[1])
            let phones = (0..<4).map { _ in Fixtures.device(Fixtures.apns) }
            try await stopped.register(contentsOf: phones)
            let moment = Fixtures.moment()
            try await stopped.record(
                moment, payloads: Fixtures.payloads(moment), deliveries: Fixtures.deliveries(moment, to: phones))
            let kept = try await alive.claim(channel: .apns, now: moment.occurredAt, limit: 2)
            let lost = try await stopped.claim(channel: .apns, now: moment.occurredAt, limit: 2)
            #expect(lost.count == 2 && kept.count == 2)
            // The instance whose lease lapsed must not send what it claimed; the other may.
            #expect(lost.allSatisfy { !stopped.mayStillSend($0) })
            #expect(kept.allSatisfy { alive.mayStillSend($0) })
            // The stopped instance's rows are taken back; the other's stay its own, renewed.
            let report = try await alive.maintainLeases(now: moment.occurredAt)
            #expect(Set(report.requeued) == Set(lost.map(\.id)))
            #expect(report.superseded.isEmpty)
            #expect(report.takenFrom == ["instance-0": 2])
            #expect(try await alive.maintainLeases(now: moment.occurredAt) == RecoveryReport())
            #expect(kept.allSatisfy { alive.mayStillSend($0) })
            // The stopped instance's late answer changes nothing; the rows are pending again.
            try await stopped.complete(lost.map { .delivered(id: $0.id, at: moment.occurredAt) })
            let rows = try await alive.outboxRows()
            let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
            for delivery in lost {
                #expect(byID[delivery.id]?.state == 0)
                #expect(byID[delivery.id]?.resentInDoubt == 1)
                #expect(byID[delivery.id]?.takenFrom == "instance-0")
            }
            for delivery in kept { #expect(byID[delivery.id]?.leaseOwner == "instance-1") }
            // Sent again under the same delivery ids.
            let again = try await alive.claim(channel: .apns, now: moment.occurredAt, limit: 10)
            #expect(Set(again.map(\.id)) == Set(lost.map(\.id)))
            #expect(again.allSatisfy { $0.attempts == 2 })
            // Its own outcomes land.
            try await alive.complete(kept.map { .delivered(id: $0.id, at: moment.occurredAt) })
            #expect(try await alive.outboxCounts().delivered == 2)
        }
    }

    /// Two instances derive the same moment at once: it is stored once, with one row per device.
    @Test func aMomentRecordedByTwoInstancesAtOnceIsStoredOnce() async throws {
        try await Self.withStores(2) { stores in
            let phones = (0..<2000).map { _ in Fixtures.device(Fixtures.apns) }
            try await stores[0].register(contentsOf: phones)
            let moment = Fixtures.moment()
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for store in stores {
                    group.addTask {
                        try await store.record(
                            moment, payloads: Fixtures.payloads(moment),
                            deliveries: Fixtures.deliveries(moment, to: phones))
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.filter { $0 }.count == 1 && results.count == 2)
            #expect(try await stores[1].outboxCounts().pending == 2000)
        }
    }
}
