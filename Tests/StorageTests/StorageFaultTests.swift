import Alerts
import Foundation
import GRDB
import Testing
import _ConnectionPoolModule

@testable import Storage

/// A database that cannot grow (SQLite's `max_page_count` at the file's size: SQLite answers
/// `SQLITE_FULL`, as it does when the disk is full) refuses a write whole, and the refusal is a
/// ``StorageFault``; ``StorageHealth/persist(_:stopping:_:)`` waits it out and stores the write
/// once there is room again (issue 57, item 2; `FullDiskTests` fills a real disk).
@Suite struct StorageFaultTests {
    /// A store on a file whose writer may not grow the database past its size now.
    static func fullStore() throws -> (store: SQLiteStore, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nohit-full-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = try SQLiteStore(path: folder.appendingPathComponent("nohit.sqlite").path)
        try setRoom(store, pages: 0)
        return (store, folder)
    }

    /// Lets the database grow by `pages` pages past its size now.
    static func setRoom(_ store: SQLiteStore, pages: Int) throws {
        try store.database.writeWithoutTransaction { db in
            let size = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            try db.execute(sql: "PRAGMA max_page_count = \(size + pages)")
        }
    }

    static func devices(_ count: Int) -> [Device] {
        (0..<count).map { index in
            Device(
                id: UUID(), channel: .console(label: "fan \(index) " + String(repeating: "x", count: 200)),
                registeredAt: Date(timeIntervalSince1970: 1_598_400_000), secretHash: "hash")
        }
    }

    @Test func aWriteTheDatabaseHasNoRoomForIsRefusedWholeAsAFault() async throws {
        let (store, folder) = try Self.fullStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        await #expect {
            _ = try await store.register(contentsOf: Self.devices(2_000))
        } throws: { error in
            StorageFault(error)?.kind == .diskFull
                && "\(StorageFault(error)!)".contains("the disk holding the database is full")
        }
        #expect(try await store.deviceCount() == 0)
        #expect(try await store.database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
        // Other errors are not faults of the machine.
        #expect(StorageFault(StoreError.duplicate("device")) == nil)
        #expect(StorageFault(DatabaseError(resultCode: .SQLITE_CONSTRAINT)) == nil)
    }

    @Test func persistWaitsTheFaultOutAndStoresTheWriteWhenThereIsRoom() async throws {
        let (store, folder) = try Self.fullStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let health = StorageHealth(firstWait: .milliseconds(5), longestWait: .milliseconds(20))
        let devices = Self.devices(2_000)
        let write = Task { try await health.persist("devices") { try await store.register(contentsOf: devices) } }
        // Failing, and nothing stored, until room is made.
        while health.failing == nil { try await Task.sleep(for: .milliseconds(5)) }
        let failing = try #require(health.failing)
        #expect(failing.fault.kind == .diskFull && failing.what == "devices")
        #expect(try await store.deviceCount() == 0)
        try Self.setRoom(store, pages: 10_000)
        _ = try await write.value
        #expect(try await store.deviceCount() == 2_000)
        #expect(health.failing == nil)
        #expect(health.failures >= 1)
    }

    @Test func aStoppingServiceGetsTheFaultAndOtherErrorsAreNotRetried() async throws {
        let (store, folder) = try Self.fullStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let health = StorageHealth(firstWait: .milliseconds(5), longestWait: .milliseconds(20))
        await #expect(throws: StorageFault.self) {
            try await health.persist("devices", stopping: { true }) {
                try await store.register(contentsOf: Self.devices(2_000))
            }
        }
        #expect(health.failures == 1)
        await #expect(throws: StoreError.self) {
            try await health.persist("a duplicate") { () async throws -> Void in throw StoreError.duplicate("device") }
        }
        #expect(health.failures == 1)
        // A spell seen only in refused requests ends a while after its last refusal.
        let brief = StorageHealth(forgetAfter: .milliseconds(50))
        brief.failed(StorageFault(.ioError, detail: "SQLite error 10: disk I/O error"), what: "a request")
        #expect(brief.failing?.fault.kind == .ioError)
        while brief.failing != nil { try await Task.sleep(for: .milliseconds(10)) }
    }
}

extension StorageFaultTests {
    /// PostgresNIO's pool, after failing to connect for a while, refuses at once: that is the
    /// database unreachable (waited out), not an error of the request (which ended two replay
    /// instances 55 s into a PostgreSQL restart); its other refusals are not faults.
    @Test func thePoolRefusingNewConnectionsIsTheDatabaseUnreachable() {
        #expect(StorageFault(ConnectionPoolError.connectionCreationCircuitBreakerTripped)?.kind == .unreachable)
        #expect(StorageFault(ConnectionPoolError.requestCancelled) == nil)
        #expect(StorageFault(ConnectionPoolError.poolShutdown) == nil)
    }
}
