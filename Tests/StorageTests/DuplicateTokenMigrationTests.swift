import Alerts
import Foundation
import GRDB
import Testing

@testable import Storage

/// A database from before one token meant one device may hold two active devices with one token
/// (the phone got each alert twice): the upgrade keeps the newest of them.
struct DuplicateTokenMigrationTests {
    @Test func theUpgradeKeepsTheNewestDeviceOfEachToken() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dup-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let old = try DatabaseQueue(path: path)
        try SQLiteStore.migrator.migrate(old, upTo: "12 feedback: pruned devices for the operator's hook")
        let token = String(repeating: "ab", count: 32)
        let rows: [(id: String, channel: String, address: String, topic: String?, at: Double)] = [
            ("00000000-0000-0000-0000-000000000001", "apns", token, "com.example.nohit", 100),
            ("00000000-0000-0000-0000-000000000002", "apns", token, "com.example.nohit", 200),
            // Another app's topic, a webhook sharing a URL: both stay.
            ("00000000-0000-0000-0000-000000000003", "apns", token, "com.example.other", 150),
            ("00000000-0000-0000-0000-000000000004", "webhook", "https://hooks.example.com/a", nil, 100),
            ("00000000-0000-0000-0000-000000000005", "webhook", "https://hooks.example.com/a", nil, 200),
        ]
        let preferences = try SQLiteStore.encode(Preferences())
        try await old.write { db in
            for row in rows {
                try db.execute(
                    sql: """
                        INSERT INTO devices (id, channel, address, environment, topic, key1, key2, preferences,
                            secret_hash, registered_at, active)
                        VALUES (?, ?, ?, ?, ?, ?, NULL, ?, 'hash', ?, 1)
                        """,
                    arguments: [
                        row.id, row.channel, row.address, row.topic == nil ? nil : "sandbox", row.topic,
                        row.channel == "webhook" ? "sealed" : nil, preferences, row.at,
                    ])
            }
        }
        try old.close()
        let store = try SQLiteStore(path: path)
        let active = try await store.deviceChanges(after: 0).devices.filter(\.isActive).map {
            $0.id.uuidString.suffix(1)
        }
        #expect(Set(active) == ["2", "3", "4", "5"])
        let replaced = try #require(
            try await store.deviceChanges(after: 0).devices.first { $0.id.uuidString.hasSuffix("1") })
        guard case .disabled(let reason, _) = replaced.status else {
            Issue.record("the older device is still active")
            return
        }
        #expect(reason.hasPrefix("replaced: the same token or subscription was registered again"))
    }
}
