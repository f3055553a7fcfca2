import Alerts
import Baseball
import Foundation
import GRDB

/// How devices, channels and values are written into rows and read back.
extension SQLiteStore {
    struct Address {
        var address: String
        var environment: String?
        var topic: String?
        var key1: String?
        var key2: String?
    }

    /// The row's address columns; the secrets (a webhook's signing secret, a push subscription's
    /// auth secret) sealed.
    func address(of channel: DeviceChannel) throws -> Address {
        switch channel {
        case .apns(let token, let environment, let topic), .liveActivity(let token, let environment, let topic):
            Address(address: token, environment: environment.rawValue, topic: topic)
        case .webPush(let endpoint, let p256dh, let auth):
            Address(address: endpoint, key1: p256dh, key2: try secrets.seal(auth))
        case .webhook(let url, let secret):
            Address(address: url, key1: try secrets.seal(secret))
        case .console(let label):
            Address(address: label)
        }
    }

    /// The channel from a row's address columns, its secrets opened.
    func channel(
        kind: String, address: String, environment: String?, topic: String?, key1: String?, key2: String?
    ) throws -> DeviceChannel? {
        switch ChannelKind(rawValue: kind) {
        case .webPush:
            guard let key1, let key2 else { return nil }
            return .webPush(endpoint: address, p256dh: key1, auth: try secrets.open(key2))
        case .webhook:
            guard let key1 else { return nil }
            return .webhook(url: address, secret: try secrets.open(key1))
        default:
            return Self.plainChannel(
                kind: kind, address: address, environment: environment, topic: topic, key1: key1, key2: key2)
        }
    }

    private static func plainChannel(
        kind: String, address: String, environment: String?, topic: String?, key1: String?, key2: String?
    ) -> DeviceChannel? {
        switch ChannelKind(rawValue: kind) {
        case .apns:
            guard let environment = environment.flatMap(APNsEnvironment.init(rawValue:)), let topic else { return nil }
            return .apns(token: address, environment: environment, topic: topic)
        case .liveActivity:
            guard let environment = environment.flatMap(APNsEnvironment.init(rawValue:)), let topic else { return nil }
            return .liveActivity(token: address, environment: environment, topic: topic)
        case .webPush:
            guard let key1, let key2 else { return nil }
            return .webPush(endpoint: address, p256dh: key1, auth: key2)
        case .webhook:
            guard let key1 else { return nil }
            return .webhook(url: address, secret: key1)
        case .console:
            return .console(label: address)
        case nil:
            return nil
        }
    }

    func device(
        _ row: Row, preferences: (String) throws -> Preferences = { try decode(Preferences.self, $0) }
    ) throws -> Device {
        guard let id = UUID(text: row["id"]),
            let channel = try channel(
                kind: row["channel"], address: row["address"], environment: row["environment"], topic: row["topic"],
                key1: row["key1"], key2: row["key2"])
        else { throw StoreError.corrupt("device \(row["id"] as String)") }
        let active: Bool = row["active"]
        let status: Device.Status =
            active
            ? .active
            : .disabled(reason: row["status_reason"] ?? "", at: Date(timeIntervalSince1970: row["status_at"] ?? 0))
        return Device(
            id: id, channel: channel, preferences: try preferences(row["preferences"]),
            registeredAt: Date(timeIntervalSince1970: row["registered_at"]), secretHash: row["secret_hash"],
            status: status)
    }

    /// The UUID in a text column, read from SQLite's bytes (no String made on the way).
    static func uuid(_ row: Row, _ index: Int) throws -> UUID? {
        try row.withUnsafeData(atIndex: index) { data in data?.withUnsafeBytes { UUID(text: $0) } }
    }

    static func encode<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .secondsSince1970
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError.corrupt("\(type): \(error)")
        }
    }
}
