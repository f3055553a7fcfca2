import Alerts
import Foundation
import GRDB

/// Devices and what each subscribes to (`DeviceStore`, `SubscriptionStore`).
extension SQLiteStore {
    @discardableResult
    package func register(_ device: Device) async throws -> [UUID] {
        try await register(contentsOf: [device])
    }

    @discardableResult
    package func register(contentsOf devices: [Device]) async throws -> [UUID] {
        guard !devices.isEmpty else { return [] }
        let columns = try devices.map { try ChannelColumns($0.channel, sealing: secrets) }
        try ChannelColumns.refuseSharedAddresses(columns)
        return try await database.write { db in
            let exists = try db.cachedStatement(sql: "SELECT 1 FROM devices WHERE id = ?")
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO devices (id, channel, address, environment, topic, key1, key2, preferences, secret_hash,
                        registered_at, active, status_reason, status_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            var replaced: [UUID] = []
            for (device, address) in zip(devices, columns) {
                if try Bool.fetchOne(exists, arguments: [device.id.text(uppercase: true)]) == true {
                    throw StoreError.duplicate("device", key: "\(device.id)")
                }
                let preferences = try Self.encode(device.preferences)
                var (active, reason, at): (Bool, String?, Double?) = (true, nil, nil)
                if case .disabled(let why, let when) = device.status {
                    (active, reason, at) = (false, why, when.timeIntervalSince1970)
                } else {
                    replaced += try Self.replaceHolders(db, of: address, by: device.id, at: device.registeredAt)
                }
                try insert.execute(arguments: [
                    device.id.text(uppercase: true), address.kind, address.address, address.environment,
                    address.topic, address.key1, address.key2, preferences, device.secretHash,
                    device.registeredAt.timeIntervalSince1970, active, reason, at,
                ])
                try Self.replaceFavourites(db, deviceID: device.id, teams: device.preferences.favouriteTeams)
            }
            return replaced
        }
    }

    /// Disables the other active devices holding `columns`' push address (the same app registering
    /// again): their ids.
    @discardableResult
    static func replaceHolders(_ db: Database, of columns: ChannelColumns, by id: UUID, at date: Date) throws -> [UUID]
    {
        guard columns.isPersonalAddress else { return [] }
        let holding = try db.cachedStatement(
            sql: """
                SELECT id FROM devices
                WHERE address = ? AND active = 1 AND channel = ? AND coalesce(topic, '') = ? AND id <> ?
                """)
        let holders = try String.fetchAll(
            holding, arguments: [columns.address, columns.kind, columns.topic ?? "", id.text(uppercase: true)])
        for holder in holders {
            try db.execute(
                sql: "UPDATE devices SET active = 0, status_reason = ?, status_at = ? WHERE id = ?",
                arguments: [columns.replacedReason(by: id), date.timeIntervalSince1970, holder])
        }
        return holders.compactMap(UUID.init(uuidString:))
    }

    package func device(id: UUID) async throws -> Device? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM devices WHERE id = ?", arguments: [id.text(uppercase: true)]).map {
                try self.device($0)
            }
        }
    }

    package func secretHash(deviceID: UUID) async throws -> String? {
        try await database.read { db in
            try String.fetchOne(
                db, sql: "SELECT secret_hash FROM devices WHERE id = ?", arguments: [deviceID.text(uppercase: true)])
        }
    }

    package func updateChannel(id: UUID, to channel: DeviceChannel, at date: Date) async throws -> Bool {
        try await updateChannel(id: id, from: nil, to: channel, at: date)
    }

    package func keepChannel(id: UUID, address: String, to channel: DeviceChannel, at date: Date) async throws -> Bool {
        try await updateChannel(id: id, from: address, to: channel, at: date)
    }

    /// `from`: the address the device must still have, active.
    private func updateChannel(id: UUID, from: String?, to channel: DeviceChannel, at date: Date) async throws -> Bool {
        let address = try ChannelColumns(channel, sealing: secrets)
        return try await database.write { db in
            let found =
                if let from {
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM devices WHERE id = ? AND active = 1 AND address = ?",
                        arguments: [id.text(uppercase: true), from])
                } else {
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM devices WHERE id = ?", arguments: [id.text(uppercase: true)])
                }
            guard found == true else { return false }
            try Self.replaceHolders(db, of: address, by: id, at: date)
            try db.execute(
                sql: """
                    UPDATE devices SET channel = ?, address = ?, environment = ?, topic = ?, key1 = ?, key2 = ?,
                        registered_at = ?, active = 1, status_reason = NULL, status_at = NULL
                    WHERE id = ?
                    """,
                arguments: [
                    address.kind, address.address, address.environment, address.topic, address.key1,
                    address.key2, date.timeIntervalSince1970, id.text(uppercase: true),
                ])
            return db.changesCount > 0
        }
    }

    package func disable(id: UUID, reason: String, at date: Date) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE devices SET active = 0, status_reason = ?, status_at = ? WHERE id = ?",
                arguments: [reason, date.timeIntervalSince1970, id.text(uppercase: true)])
            return db.changesCount > 0
        }
    }

    package func delete(id: UUID) async throws -> Bool {
        try await database.write { db in
            try db.execute(
                sql: "DELETE FROM favourite_teams WHERE device_id = ?", arguments: [id.text(uppercase: true)])
            try db.execute(sql: "DELETE FROM devices WHERE id = ?", arguments: [id.text(uppercase: true)])
            return db.changesCount > 0
        }
    }

    package func activeDevices() async throws -> [Device] {
        try await database.read { db in try self.devices(db, sql: Queries.activeDevices) }
    }

    package func deviceChanges(after version: Int?) async throws -> DeviceChanges {
        try await database.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT version, removals FROM device_changes WHERE id = 1")
            let current: Int = row?["version"] ?? 0
            let removals: Int = row?["removals"] ?? 0
            let devices =
                if let version {
                    try self.devices(
                        db, sql: "SELECT * FROM devices WHERE version > ? ORDER BY registered_at, id",
                        arguments: [version])
                } else {
                    try self.devices(db, sql: Queries.activeDevices)
                }
            return DeviceChanges(version: current, removals: removals, devices: devices)
        }
    }

    /// Devices, read one row at a time: the directory's full read would otherwise hold every
    /// row's copy at once beside the devices made from them (for 100,000 devices, about 90 MB
    /// the allocator kept, in pieces, after it was freed).
    func devices(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Device] {
        // Devices share a handful of preference sets: each distinct one is decoded once.
        var decoded: [String: Preferences] = [:]
        var devices: [Device] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() {
            devices.append(
                try device(row) { text in
                    if let known = decoded[text] { return known }
                    let preferences = try Self.decode(Preferences.self, text)
                    decoded[text] = preferences
                    return preferences
                })
        }
        return devices
    }

    package func devicesVersion() async throws -> Int {
        try await database.read { db in
            try Int.fetchOne(db, sql: "SELECT version FROM device_changes WHERE id = 1") ?? 0
        }
    }

    package func deviceCount() async throws -> Int {
        try await database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM devices") ?? 0 }
    }

    package func ping() async throws {
        _ = try await database.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    // MARK: Subscriptions

    package func preferences(deviceID: UUID) async throws -> Preferences? {
        try await database.read { db in
            guard
                let text = try String.fetchOne(
                    db, sql: "SELECT preferences FROM devices WHERE id = ?", arguments: [deviceID.text(uppercase: true)]
                )
            else { return nil }
            return try Self.decode(Preferences.self, text)
        }
    }

    package func updatePreferences(deviceID: UUID, to preferences: Preferences) async throws -> Bool {
        let text = try Self.encode(preferences)
        return try await database.write { db in
            try db.execute(
                sql: "UPDATE devices SET preferences = ? WHERE id = ?",
                arguments: [text, deviceID.text(uppercase: true)])
            guard db.changesCount > 0 else { return false }
            try Self.replaceFavourites(db, deviceID: deviceID, teams: preferences.favouriteTeams)
            return true
        }
    }

    package func deviceIDs(favouring team: String) async throws -> [UUID] {
        try await database.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT f.device_id FROM favourite_teams f JOIN devices d ON d.id = f.device_id
                    WHERE f.team = ? AND d.active = 1 ORDER BY f.device_id
                    """, arguments: [team.uppercased()]
            ).compactMap { UUID(text: $0) }
        }
    }

    static func replaceFavourites(_ db: Database, deviceID: UUID, teams: [String]) throws {
        try db.execute(
            sql: "DELETE FROM favourite_teams WHERE device_id = ?", arguments: [deviceID.text(uppercase: true)])
        for team in Set(teams.map { $0.uppercased() }) {
            try db.execute(
                sql: "INSERT INTO favourite_teams (device_id, team) VALUES (?, ?)",
                arguments: [deviceID.text(uppercase: true), team])
        }
    }
}
