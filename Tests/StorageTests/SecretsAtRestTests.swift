import Alerts
import Foundation
import GRDB
import Storage
import Testing

/// Webhook signing secrets and Web Push auth secrets are sealed in the database under a key kept
/// beside it, never stored in the clear; a database from before is sealed when opened.
@Suite struct SecretsAtRestTests {
    static func folder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static let webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"

    static func devices() -> [Device] {
        [
            Device(
                id: UUID(), channel: .webhook(url: "https://hooks.example.org/n", secret: webhookSecret),
                registeredAt: Date(), secretHash: "h"),
            Device(
                id: UUID(),
                channel: .webPush(endpoint: "https://push.example.net/x", p256dh: "BPublicKey", auth: auth),
                registeredAt: Date(), secretHash: "h"),
        ]
    }

    /// Every text stored in the devices table, as SQLite has it.
    static func storedTexts(_ path: String) throws -> [String] {
        try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM devices").flatMap { row in
                row.columnNames.compactMap { name -> String? in
                    if case .string(let text) = (row[name] as DatabaseValue).storage { return text }
                    return nil
                }
            }
        }
    }

    @Test func secretsAreSealedAndReadBack() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/nohit.sqlite"
        let store = try SQLiteStore(path: path)
        for device in Self.devices() { try await store.register(device) }
        let texts = try Self.storedTexts(path)
        #expect(!texts.contains(Self.webhookSecret))
        #expect(!texts.contains(Self.auth))
        #expect(texts.filter { $0.hasPrefix(SecretBox.prefix) }.count == 2)
        // Read back whole, also by a store opened again with the same key file.
        let again = try SQLiteStore(path: path)
        let channels = try await again.activeDevices().map(\.channel)
        #expect(channels.contains(.webhook(url: "https://hooks.example.org/n", secret: Self.webhookSecret)))
        #expect(
            channels.contains(.webPush(endpoint: "https://push.example.net/x", p256dh: "BPublicKey", auth: Self.auth)))
        // The database and its key are the owner's alone.
        for file in [path, folder + "/secrets.key"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        // Another key does not open them: the database alone does not give them away.
        let stranger = try SQLiteStore(path: path, secrets: .ephemeral())
        await #expect(throws: StoreError.self) { try await stranger.activeDevices() }
    }

    @Test func aDatabaseFromBeforeIsSealedWhenOpened() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/nohit.sqlite"
        let store = try SQLiteStore(path: path)
        for device in Self.devices() { try await store.register(device) }
        // As an older version wrote them: in the clear.
        try await DatabaseQueue(path: path).write { db in
            try db.execute(
                sql: "UPDATE devices SET key1 = ? WHERE channel = 'webhook'", arguments: [Self.webhookSecret])
            try db.execute(sql: "UPDATE devices SET key2 = ? WHERE channel = 'web-push'", arguments: [Self.auth])
        }
        #expect(try Self.storedTexts(path).contains(Self.webhookSecret))
        let reopened = try SQLiteStore(path: path)
        let texts = try Self.storedTexts(path)
        #expect(!texts.contains(Self.webhookSecret) && !texts.contains(Self.auth))
        #expect(try await reopened.activeDevices().count == 2)
    }
}
