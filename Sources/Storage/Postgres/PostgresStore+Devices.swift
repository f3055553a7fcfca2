import Alerts
import Foundation
import PostgresNIO

/// Devices and what each subscribes to (`DeviceStore`, `SubscriptionStore`).
extension PostgresStore: DeviceStore, SubscriptionStore {
    /// The columns a device is read from, in order.
    static let deviceColumns = """
        id, channel, address, environment, topic, key1, key2, preferences, secret_hash, registered_at, active,
        status_reason, status_at
        """
    typealias DeviceRow = (
        UUID, String, String, String?, String?, String?, String?, String, String, Double, Bool, String?, Double?
    )

    @discardableResult
    package func register(_ device: Device) async throws -> [UUID] {
        try await register(contentsOf: [device])
    }

    @discardableResult
    package func register(contentsOf devices: [Device]) async throws -> [UUID] {
        guard !devices.isEmpty else { return [] }
        var seen = Set<UUID>()
        for device in devices where !seen.insert(device.id).inserted {
            throw StoreError.duplicate("device", key: "\(device.id)")
        }
        // Arrays, one per column (nullable text as '' and a missing time as NaN: arrays carry no
        // NULLs here), inserted in one statement.
        var ids: [UUID] = []
        var kinds: [String] = []
        var addresses: [String] = []
        var environments: [String] = []
        var topics: [String] = []
        var keys1: [String] = []
        var keys2: [String] = []
        var preferences: [String] = []
        var hashes: [String] = []
        var registered: [Double] = []
        var active: [Bool] = []
        var reasons: [String] = []
        var statusTimes: [Double] = []
        var favouriteDevices: [UUID] = []
        var favouriteTeams: [String] = []
        // The active push addresses registered again: the devices holding them are replaced.
        var claimants: [Replacement] = []
        let allColumns = try devices.map { try ChannelColumns($0.channel, sealing: secrets) }
        try ChannelColumns.refuseSharedAddresses(allColumns)
        for (device, columns) in zip(devices, allColumns) {
            if device.isActive && columns.isPersonalAddress {
                claimants.append(Replacement(device.id, columns, at: device.registeredAt))
            }
            ids.append(device.id)
            kinds.append(columns.kind)
            addresses.append(columns.address)
            environments.append(columns.environment ?? "")
            topics.append(columns.topic ?? "")
            keys1.append(columns.key1 ?? "")
            keys2.append(columns.key2 ?? "")
            preferences.append(try StoredJSON.encode(device.preferences))
            hashes.append(device.secretHash)
            registered.append(device.registeredAt.timeIntervalSince1970)
            if case .disabled(let reason, let at) = device.status {
                active.append(false)
                reasons.append(reason)
                statusTimes.append(at.timeIntervalSince1970)
            } else {
                active.append(true)
                reasons.append("")
                statusTimes.append(.nan)
            }
            for team in Set(device.preferences.favouriteTeams.map { $0.uppercased() }).sorted() {
                favouriteDevices.append(device.id)
                favouriteTeams.append(team)
            }
        }
        let count = devices.count
        return try await Self.againOnSharedAddress {
            try await self.transaction { connection in
                let logger = self.logger
                for try await existing in try await connection.query(
                    "SELECT id FROM devices WHERE id = ANY(\(ids)) LIMIT 1", logger: logger
                ).decode(UUID.self) {
                    throw StoreError.duplicate("device", key: "\(existing)")
                }
                let replaced = try await Self.replaceHolders(of: claimants, on: connection, logger: logger)
                var top = 0
                for try await version in try await connection.query(
                    "UPDATE device_changes SET version = version + \(count) WHERE id = 1 RETURNING version",
                    logger: logger
                ).decode(Int.self) {
                    top = version
                }
                let versions = (0..<count).map { top - count + 1 + $0 }
                _ = try await connection.query(
                    """
                    INSERT INTO devices (id, channel, address, environment, topic, key1, key2, preferences, secret_hash,
                        registered_at, active, status_reason, status_at, version)
                    SELECT id, channel, address, NULLIF(environment, ''), NULLIF(topic, ''), NULLIF(key1, ''),
                        NULLIF(key2, ''), preferences, secret_hash, registered_at, active, NULLIF(reason, ''),
                        NULLIF(status_at, 'NaN'::float8), version
                    FROM unnest(\(ids)::uuid[], \(kinds)::text[], \(addresses)::text[], \(environments)::text[],
                        \(topics)::text[], \(keys1)::text[], \(keys2)::text[], \(preferences)::text[], \(hashes)::text[],
                        \(registered)::float8[], \(active)::bool[], \(reasons)::text[], \(statusTimes)::float8[],
                        \(versions)::int8[])
                        AS d(id, channel, address, environment, topic, key1, key2, preferences, secret_hash,
                            registered_at, active, reason, status_at, version)
                    """, logger: logger
                ).collect()
                if !favouriteDevices.isEmpty {
                    _ = try await connection.query(
                        """
                        INSERT INTO favourite_teams (device_id, team)
                        SELECT * FROM unnest(\(favouriteDevices)::uuid[], \(favouriteTeams)::text[])
                        ON CONFLICT DO NOTHING
                        """, logger: logger
                    ).collect()
                }
                return replaced
            }
        }
    }

    /// Runs `body` again (up to ten times in all) when it met the one-active-device-per-address
    /// index: another registration of the same token committed first, and the next run replaces it
    /// (each run that meets it lost to one that committed, so ten registrations of one token at
    /// once all land). And once more when it waited out the lock timeout (30 s) behind others: the
    /// device-change counter each registration updates serialises them, and a database slowed by
    /// other work made eight at once wait that long.
    static func againOnSharedAddress<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        var attempt = 1
        var lockWaits = 0
        while true {
            do {
                return try await body()
            } catch
                where attempt < 10 && isUniqueViolation(error)
                && describe(error).contains("devices_one_active_per_address")
            {
                attempt += 1
            } catch  where lockWaits < 1 && (error as? PSQLError)?.serverInfo?[.sqlState] == "55P03" {
                lockWaits += 1
            }
        }
    }

    /// A device claiming a push address, and why the devices holding it are disabled.
    struct Replacement {
        var id: UUID
        var kind: String
        var address: String
        var topic: String
        var reason: String
        var at: Double

        init(_ id: UUID, _ columns: ChannelColumns, at date: Date) {
            self.id = id
            kind = columns.kind
            address = columns.address
            topic = columns.topic ?? ""
            reason = columns.replacedReason(by: id)
            at = date.timeIntervalSince1970
        }
    }

    /// Disables the other active devices holding the claimed push addresses: their ids.
    static func replaceHolders(of claimants: [Replacement], on connection: HeldConnection, logger: Logger)
        async throws -> [UUID]
    {
        guard !claimants.isEmpty else { return [] }
        var replaced: [UUID] = []
        for try await id in try await connection.query(
            """
            UPDATE devices d SET active = false, status_reason = n.reason, status_at = n.at
            FROM unnest(\(claimants.map(\.id))::uuid[], \(claimants.map(\.kind))::text[],
                \(claimants.map(\.address))::text[], \(claimants.map(\.topic))::text[],
                \(claimants.map(\.reason))::text[], \(claimants.map(\.at))::float8[])
                AS n(id, channel, address, topic, reason, at)
            WHERE d.address = n.address AND d.active AND d.channel = n.channel AND coalesce(d.topic, '') = n.topic
                AND d.id <> n.id
            RETURNING d.id
            """, logger: logger
        ).decode(UUID.self) {
            replaced.append(id)
        }
        return replaced
    }

    package func device(id: UUID) async throws -> Device? {
        try await devices("SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE id = \(id)").first
    }

    package func secretHash(deviceID: UUID) async throws -> String? {
        for try await hash in try await client.query(
            "SELECT secret_hash FROM devices WHERE id = \(deviceID)", logger: logger
        ).decode(String.self) {
            return hash
        }
        return nil
    }

    package func updateChannel(id: UUID, to channel: DeviceChannel, at date: Date) async throws -> Bool {
        try await updateChannel(id: id, from: nil, to: channel, at: date)
    }

    package func keepChannel(id: UUID, address: String, to channel: DeviceChannel, at date: Date) async throws -> Bool {
        try await updateChannel(id: id, from: address, to: channel, at: date)
    }

    /// `from`: the address the device must still have, active.
    private func updateChannel(id: UUID, from: String?, to channel: DeviceChannel, at date: Date) async throws -> Bool {
        let columns = try ChannelColumns(channel, sealing: secrets)
        return try await Self.againOnSharedAddress {
            try await self.transaction { connection in
                var found = false
                let query: PostgresQuery =
                    if let from {
                        "SELECT 1 FROM devices WHERE id = \(id) AND active AND address = \(from) FOR UPDATE"
                    } else {
                        "SELECT 1 FROM devices WHERE id = \(id) FOR UPDATE"
                    }
                for try await _ in try await connection.query(query, logger: self.logger).decode(Int.self) {
                    found = true
                }
                guard found else { return false }
                if columns.isPersonalAddress {
                    _ = try await Self.replaceHolders(
                        of: [Replacement(id, columns, at: date)], on: connection, logger: self.logger)
                }
                _ = try await connection.query(
                    """
                    UPDATE devices SET channel = \(columns.kind), address = \(columns.address),
                        environment = \(columns.environment), topic = \(columns.topic), key1 = \(columns.key1),
                        key2 = \(columns.key2), registered_at = \(date.timeIntervalSince1970), active = true,
                        status_reason = NULL, status_at = NULL
                    WHERE id = \(id)
                    """, logger: self.logger
                ).collect()
                return true
            }
        }
    }

    package func disable(id: UUID, reason: String, at date: Date) async throws -> Bool {
        try await changed(
            """
            UPDATE devices SET active = false, status_reason = \(reason), status_at = \(date.timeIntervalSince1970)
            WHERE id = \(id) RETURNING id
            """)
    }

    package func delete(id: UUID) async throws -> Bool {
        try await changed("DELETE FROM devices WHERE id = \(id) RETURNING id")
    }

    /// Runs a statement that returns the ids it changed; whether it changed any.
    func changed(_ query: PostgresQuery) async throws -> Bool {
        try await !client.query(query, logger: logger).collect().isEmpty
    }

    package func activeDevices() async throws -> [Device] {
        try await devices(
            "SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE active ORDER BY registered_at, id")
    }

    package func deviceChanges(after version: Int?) async throws -> DeviceChanges {
        // The counter and the rows from one snapshot.
        try await transaction { connection in
            _ = try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: self.logger)
                .collect()
            var current = 0
            var removals = 0
            for try await (counted, removed) in try await connection.query(
                "SELECT version, removals FROM device_changes WHERE id = 1", logger: self.logger
            ).decode((Int, Int).self) {
                (current, removals) = (counted, removed)
            }
            let query: PostgresQuery =
                if let version {
                    "SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE version > \(version) ORDER BY registered_at, id"
                } else {
                    "SELECT \(unescaped: Self.deviceColumns) FROM devices WHERE active ORDER BY registered_at, id"
                }
            let devices = try await self.devices(try await connection.query(query, logger: self.logger))
            return DeviceChanges(version: current, removals: removals, devices: devices)
        }
    }

    package func devicesVersion() async throws -> Int {
        try await single("SELECT version FROM device_changes WHERE id = 1", as: Int.self) ?? 0
    }

    package func deviceCount() async throws -> Int {
        try await single("SELECT count(*) FROM devices", as: Int.self) ?? 0
    }

    package func ping() async throws {
        _ = try await single("SELECT 1", as: Int.self)
    }

    /// The first column of the first row, if any.
    func single<Value: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: Value.Type) async throws -> Value?
    {
        for try await value in try await client.query(query, logger: logger).decode(Value.self) { return value }
        return nil
    }

    func devices(_ query: PostgresQuery) async throws -> [Device] {
        try await devices(try await client.query(query, logger: logger))
    }

    /// Devices from rows of ``deviceColumns``; each distinct preference text decoded once.
    func devices(_ rows: some AsyncSequence<PostgresRow, any Error>) async throws -> [Device] {
        var decoded: [String: Preferences] = [:]
        var devices: [Device] = []
        for try await row in rows.decode(DeviceRow.self) {
            let preferences: Preferences
            if let known = decoded[row.7] {
                preferences = known
            } else {
                preferences = try StoredJSON.decode(Preferences.self, row.7)
                decoded[row.7] = preferences
            }
            guard
                let channel = try ChannelColumns(
                    kind: row.1, address: row.2, environment: row.3, topic: row.4, key1: row.5, key2: row.6
                ).channel(opening: secrets)
            else { throw StoreError.corrupt("device", key: "\(row.0)") }
            devices.append(
                Device(
                    id: row.0, channel: channel, preferences: preferences,
                    registeredAt: Date(timeIntervalSince1970: row.9), secretHash: row.8,
                    status: row.10
                        ? .active : .disabled(reason: row.11 ?? "", at: Date(timeIntervalSince1970: row.12 ?? 0))))
        }
        return devices
    }

    // MARK: Subscriptions

    package func preferences(deviceID: UUID) async throws -> Preferences? {
        try await single("SELECT preferences FROM devices WHERE id = \(deviceID)", as: String.self).map {
            try StoredJSON.decode(Preferences.self, $0)
        }
    }

    package func updatePreferences(deviceID: UUID, to preferences: Preferences) async throws -> Bool {
        let text = try StoredJSON.encode(preferences)
        let teams = Set(preferences.favouriteTeams.map { $0.uppercased() }).sorted()
        return try await transaction { connection in
            let updated = try await connection.query(
                "UPDATE devices SET preferences = \(text) WHERE id = \(deviceID) RETURNING id", logger: self.logger
            ).collect()
            guard !updated.isEmpty else { return false }
            _ = try await connection.query(
                "DELETE FROM favourite_teams WHERE device_id = \(deviceID)", logger: self.logger
            ).collect()
            if !teams.isEmpty {
                _ = try await connection.query(
                    """
                    INSERT INTO favourite_teams (device_id, team)
                    SELECT \(deviceID), team FROM unnest(\(teams)::text[]) AS t(team)
                    """, logger: self.logger
                ).collect()
            }
            return true
        }
    }

    package func deviceIDs(favouring team: String) async throws -> [UUID] {
        var ids: [UUID] = []
        for try await id in try await client.query(
            """
            SELECT f.device_id FROM favourite_teams f JOIN devices d ON d.id = f.device_id
            WHERE f.team = \(team.uppercased()) AND d.active ORDER BY f.device_id
            """, logger: logger
        ).decode(UUID.self) {
            ids.append(id)
        }
        return ids
    }
}
