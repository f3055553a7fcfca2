import Alerts
import Foundation
import GRDB

/// How devices, channels and values are written into rows and read back.
extension SQLiteStore {
    /// The channel from a row's address columns, its secrets opened.
    func channel(
        kind: String, address: String, environment: String?, topic: String?, key1: String?, key2: String?
    ) throws -> DeviceChannel? {
        try ChannelColumns(
            kind: kind, address: address, environment: environment, topic: topic, key1: key1, key2: key2
        ).channel(opening: secrets)
    }

    func device(
        _ row: Row, preferences: (String) throws -> Preferences = { try decode(Preferences.self, $0) }
    ) throws -> Device {
        guard let id = UUID(text: row["id"]),
            let channel = try channel(
                kind: row["channel"], address: row["address"], environment: row["environment"], topic: row["topic"],
                key1: row["key1"], key2: row["key2"])
        else { throw StoreError.corrupt("device", key: "\(row["id"] as String)") }
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

    static func encode<Value: Encodable>(_ value: Value) throws -> String { try StoredJSON.encode(value) }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        try StoredJSON.decode(type, text)
    }
}
