import Alerts
import Foundation
import GRDB

/// The outbox (`OutboxStore`): moments with their deliveries, claims, outcomes, recovery.
extension SQLiteStore {
    /// SQLite copies the WAL back into the database (a checkpoint) at the commit that takes it
    /// past 1,000 pages. A fan-out writes about 120 MB of WAL for 100,000 devices (the rows, then
    /// each claim and each batch of outcomes), so it checkpointed dozens of times, inside its own
    /// transactions, copying the same hot pages again each time. From a moment's record until the
    /// dispatchers are idle, checkpoints wait (up to this many pages, 256 MB, as a backstop); a
    /// dispatcher going idle makes one once no channel has anything being sent or due
    /// (`deliveriesSettled`).
    static let fanOutCheckpointPages = 65536
    static let checkpointPages = 1000

    package func deliveriesSettled(now: Date) async throws {
        guard keepsWAL else { return }
        let checkpoints = checkpoints
        try await database.writeWithoutTransaction { db in
            guard checkpoints.isDeferred else { return }
            let probe = try db.cachedStatement(sql: Queries.unfinished)
            for channel in ChannelKind.allCases {
                let busy = try Bool.fetchOne(
                    probe, arguments: [channel.rawValue, channel.rawValue, now.timeIntervalSince1970])
                if busy == true { return }
            }
            checkpoints.isDeferred = false
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.checkpointPages)")
            try db.checkpoint(.passive)
        }
    }

    @discardableResult
    package func record(_ moment: StoredMoment, payloads: [StoredPayload], deliveries: [NewDelivery]) async throws
        -> Bool
    {
        let body = try Self.encode(moment)
        let checkpoints = keepsWAL ? checkpoints : nil
        return try await database.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO moments (id, game_id, occurred_at, body) VALUES (?, ?, ?, ?)",
                arguments: [moment.moment.id, moment.moment.gameID, moment.occurredAt.timeIntervalSince1970, body])
            guard db.changesCount > 0 else { return false }
            if let bid = PendingStarts.endedBid(moment.moment) {
                try db.execute(
                    sql: """
                        UPDATE outbox SET state = 3, finished_at = ?,
                            last_error = ? || coalesce(' (it waited: ' || last_error || ')', ?)
                        WHERE channel = 'live-activity-start' AND state IN (0, 5) AND bid_key = ?
                        """,
                    arguments: [
                        moment.occurredAt.timeIntervalSince1970, PendingStarts.reason(moment.moment),
                        PendingStarts.waitedForBudget, bid,
                    ])
            }
            if let checkpoints, !deliveries.isEmpty, !checkpoints.isDeferred {
                // Before this transaction's commit, which would otherwise be the first to checkpoint.
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.fanOutCheckpointPages)")
                checkpoints.isDeferred = true
            }
            var payloadIDs: [String: Int64] = [:]
            for payload in payloads {
                try db.execute(
                    sql:
                        "INSERT INTO payloads (key, body) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET body = excluded.body",
                    arguments: [payload.key, payload.body])
                payloadIDs[payload.key] = try Int64.fetchOne(
                    db, sql: "SELECT id FROM payloads WHERE key = ?", arguments: [payload.key])
            }
            let insert = try DirectStatement(
                db,
                sql: """
                    INSERT INTO outbox (delivery_id, moment_id, device_id, channel, payload_id, bid_key, moment_kind,
                        moment_outs, created_at, expires_at, due_at, state)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
                    ON CONFLICT(moment_id, device_id) DO NOTHING
                    """)
            let follow = try DirectStatement(
                db, sql: "INSERT INTO bid_followers (bid_key, device_id) VALUES (?, ?) ON CONFLICT DO NOTHING")
            for delivery in deliveries {
                guard let payloadID = payloadIDs[delivery.payloadKey] else {
                    throw StoreError.invalid("delivery \(delivery.id) names payload \(delivery.payloadKey), not given")
                }
                try insert.execute { row in
                    row.bind(delivery.id)
                    row.bind(moment.moment.id)
                    row.bind(delivery.deviceID)
                    row.bind(delivery.channel.rawValue)
                    row.bind(payloadID)
                    row.bind(delivery.bidKey)
                    row.bind(delivery.momentKind.rawValue)
                    row.bind(delivery.momentOuts)
                    row.bind(moment.occurredAt)
                    row.bind(delivery.expiresAt)
                    row.bind(delivery.notBefore)
                }
                if delivery.momentKind.isProgress {
                    try follow.execute { row in
                        row.bind(delivery.bidKey)
                        row.bind(delivery.deviceID)
                    }
                }
            }
            return true
        }
    }

    package func plannedStarts(since: Date) async throws -> [UUID: [Date]] {
        try await database.read { db in
            var starts: [UUID: [Date]] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT device_id, due_at FROM outbox
                    WHERE channel = 'live-activity-start' AND due_at >= ? AND state IN (0, 1, 2, 5)
                    """, arguments: [since.timeIntervalSince1970])
            while let row = try rows.next() {
                let text: String = row[0]
                guard let id = UUID(text: text) else {
                    throw StoreError.corrupt("push-to-start", key: text, reason: "not a device id")
                }
                starts[id, default: []].append(Date(timeIntervalSince1970: row[1]))
            }
            return starts
        }
    }

    package func isRecorded(momentID: String) async throws -> Bool {
        try await database.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM moments WHERE id = ?)", arguments: [momentID])
                ?? false
        }
    }

    package func followers(bidKey: String) async throws -> Set<UUID> {
        try await database.read { db in
            var devices = Set<UUID>()
            let ids = try String.fetchCursor(db, sql: Queries.followers, arguments: [bidKey])
            while let text = try ids.next() {
                guard let id = UUID(text: text) else {
                    throw StoreError.corrupt("bid follower", key: text, reason: "of \(bidKey), not a device id")
                }
                devices.insert(id)
            }
            return devices
        }
    }

    package func claim(channel: ChannelKind, now: Date, limit: Int) async throws -> [ClaimedDelivery] {
        let cache = payloadCache
        let claimedRows = claimedRows
        return try await database.write { db in
            let rowIDs = try Int64.fetchAll(
                db, sql: Queries.claim,
                arguments: [now.timeIntervalSince1970, channel.rawValue, now.timeIntervalSince1970, limit])
            guard !rowIDs.isEmpty else { return [] }
            var claimed: [ClaimedDelivery] = []
            claimed.reserveCapacity(rowIDs.count)
            let rows = try Row.fetchCursor(db, sql: Queries.claimed(rowIDs))
            // Alerts queued for a device since deleted or disabled are not sent: they fail here, with
            // the reason (before, a deleted device's rows stayed claimed for ever).
            var unsendable: [(rowID: Int64, reason: String)] = []
            while let row = try rows.next() {
                let active: Int? = row[16]
                guard active == 1 else {
                    let reason = (row[17] as String?).map { "device disabled: \($0)" } ?? "device disabled"
                    unsendable.append((row[15], active == nil ? "device removed" : reason))
                    continue
                }
                let payloadID: Int64 = row[2]
                let payload: Data
                if let cached = cache.bodies[payloadID] {
                    payload = cached
                } else {
                    payload =
                        try Data.fetchOne(db, sql: "SELECT body FROM payloads WHERE id = ?", arguments: [payloadID])
                        ?? Data()
                    if cache.bodies.count > 1024 { cache.bodies.removeAll() }
                    cache.bodies[payloadID] = payload
                }
                guard let id = try Self.uuid(row, 0), let device = try Self.uuid(row, 1),
                    let channel = try self.channel(
                        kind: row[8], address: row[9], environment: row[10], topic: row[11], key1: row[12],
                        key2: row[13])
                else { throw StoreError.corrupt("outbox row", key: "\(row[0] as String)") }
                if claimedRows.rowIDs.count >= 100_000 { claimedRows.rowIDs.removeAll() }
                claimedRows.rowIDs[id] = row[15]
                claimed.append(
                    ClaimedDelivery(
                        id: id, deviceID: device, channel: channel, payload: payload, bidKey: row[3],
                        createdAt: Date(timeIntervalSince1970: row[4]), expiresAt: Date(timeIntervalSince1970: row[5]),
                        deviceRegisteredAt: Date(timeIntervalSince1970: row[14]), attempts: row[6],
                        tokenRefreshed: row[7]))
            }
            let drop = try db.cachedStatement(
                sql: "UPDATE outbox SET state = 3, finished_at = ?, last_error = ? WHERE id = ?")
            for (rowID, reason) in unsendable {
                try drop.execute(arguments: [now.timeIntervalSince1970, reason, rowID])
            }
            return claimed
        }
    }

    package func release(_ ids: [UUID]) async throws {
        guard !ids.isEmpty else { return }
        let claimedRows = claimedRows
        try await database.write { db in
            let release = try db.cachedStatement(
                sql:
                    "UPDATE outbox SET state = 0, attempts = attempts - 1 WHERE id = ? AND delivery_id = ? AND state = 1"
            )
            for id in ids {
                guard let rowID = try claimedRows.take(id, db) else { continue }
                try release.execute(arguments: [rowID, id.text(uppercase: true)])
            }
        }
    }

    package func complete(_ results: [DeliveryResult]) async throws {
        guard !results.isEmpty else { return }
        let claimedRows = claimedRows
        try await database.write { db in
            let finishing = try DirectStatement(
                db, sql: "UPDATE outbox SET state = ?, finished_at = ?, last_error = ? WHERE id = ? AND delivery_id = ?"
            )
            let retry = try DirectStatement(
                db,
                sql: """
                    UPDATE outbox SET state = 0, due_at = ?, last_error = ?, token_refreshed = ?
                    WHERE id = ? AND delivery_id = ?
                    """)
            func finish(_ id: UUID, row rowID: Int64, as state: State, at: Date, reason: String?) throws {
                try finishing.execute { row in
                    row.bind(state.rawValue)
                    row.bind(at)
                    row.bind(reason)
                    row.bind(rowID)
                    row.bind(id)
                }
            }
            for result in results {
                guard let rowID = try claimedRows.take(result.id, db) else { continue }
                switch result {
                case .delivered(let id, let at):
                    try finish(id, row: rowID, as: .delivered, at: at, reason: nil)
                case .retry(let id, let at, let reason, let refreshed):
                    try retry.execute { row in
                        row.bind(at)
                        row.bind(reason)
                        row.bind(refreshed)
                        row.bind(rowID)
                        row.bind(id)
                    }
                case .failed(let id, let reason, let at):
                    try finish(id, row: rowID, as: .failed, at: at, reason: reason)
                case .held(let id, let reason, let at):
                    try finish(id, row: rowID, as: .held, at: at, reason: reason)
                case .pruned(let id, let device, let reason, let at):
                    try finish(id, row: rowID, as: .failed, at: at, reason: reason)
                    try db.execute(
                        sql:
                            "UPDATE devices SET active = 0, status_reason = ?, status_at = ? WHERE id = ? AND active = 1",
                        arguments: [reason, at.timeIntervalSince1970, device.text(uppercase: true)])
                    if db.changesCount > 0 {
                        // Once per device, for the operator's feedback hook (not for a broadcast
                        // channel: the service's own, which the operator never registered).
                        try db.execute(
                            sql: """
                                INSERT INTO feedback (event_id, device_id, channel, address, reason, occurred_at, due_at)
                                SELECT ?, id, channel, address, ?, ?, ? FROM devices
                                WHERE id = ? AND channel <> 'live-activity-channel'
                                """,
                            arguments: [
                                UUID().text(uppercase: false), reason, at.timeIntervalSince1970,
                                at.timeIntervalSince1970, device.text(uppercase: true),
                            ])
                    }
                    // Nothing more goes to a pruned device.
                    try db.execute(
                        sql: Queries.dropPendingOfDevice,
                        arguments: [at.timeIntervalSince1970, "device pruned: \(reason)", device.text(uppercase: true)])
                }
            }
        }
    }

    package func releaseHeld(now: Date) async throws -> Int {
        try await database.write { db in
            let time = now.timeIntervalSince1970
            // Expired meanwhile: no longer worth sending.
            try db.execute(
                sql: """
                    UPDATE outbox SET state = ?, finished_at = ?, last_error = 'expired while held: ' || last_error
                    WHERE state = ? AND expires_at < ?
                    """,
                arguments: [State.failed.rawValue, time, State.held.rawValue, time])
            try db.execute(
                sql: "UPDATE outbox SET state = ?, due_at = ?, finished_at = NULL WHERE state = ?",
                arguments: [State.pending.rawValue, time, State.held.rawValue])
            return db.changesCount
        }
    }

    package func recoverInDoubt(now: Date) async throws -> RecoveryReport {
        try await database.write { db in
            var report = RecoveryReport()
            let rows = try Row.fetchAll(db, sql: Queries.inDoubt)
            for row in rows {
                let rowID: Int64 = row[0]
                guard let id = UUID(text: row[1]) else { throw StoreError.corrupt("outbox row", key: "\(rowID)") }
                if row[2] as Bool {
                    report.superseded.append(id)
                    try db.execute(
                        sql: "UPDATE outbox SET state = 4, finished_at = ?, last_error = ? WHERE id = ?",
                        arguments: [
                            now.timeIntervalSince1970,
                            "in doubt after a restart; a later alert of the bid was delivered",
                            rowID,
                        ])
                } else {
                    report.requeued.append(id)
                    try db.execute(
                        sql:
                            "UPDATE outbox SET state = 0, due_at = ?, resent_in_doubt = resent_in_doubt + 1 WHERE id = ?",
                        arguments: [now.timeIntervalSince1970, rowID])
                }
            }
            return report
        }
    }

    package func failedDeliveries(limit: Int) async throws -> FailedDeliveries {
        try await database.read { db in
            let recent = try Row.fetchAll(
                db,
                sql: """
                    SELECT o.delivery_id, o.device_id, o.channel, o.last_error, o.finished_at, o.moment_id,
                        o.attempts, d.active
                    FROM outbox o INDEXED BY outbox_failed LEFT JOIN devices d ON d.id = o.device_id
                    WHERE o.state = 3 ORDER BY o.finished_at DESC LIMIT ?
                    """, arguments: [limit]
            ).compactMap { row -> FailedDeliveries.Delivery? in
                guard let delivery = UUID(uuidString: row[0]), let device = UUID(uuidString: row[1]) else { return nil }
                return FailedDeliveries.Delivery(
                    deliveryID: delivery, deviceID: device, channel: row[2], reason: row[3] ?? "",
                    failedAt: Date(timeIntervalSince1970: row[4] ?? 0), momentID: row[5], attempts: row[6],
                    deviceActive: (row[7] as Int?).map { $0 != 0 })
            }
            let counts = try Row.fetchAll(
                db,
                sql: """
                    SELECT channel, coalesce(last_error, ''), count(*) FROM outbox INDEXED BY outbox_failed
                    WHERE state = 3 GROUP BY channel, last_error ORDER BY 3 DESC, 1, 2 LIMIT 50
                    """
            ).map { FailedDeliveries.Count(channel: $0[0], reason: $0[1], count: $0[2]) }
            return FailedDeliveries(recent: recent, counts: counts)
        }
    }

    package func outboxCounts() async throws -> OutboxCounts {
        try await database.read { db in
            var counts = OutboxCounts()
            for row in try Row.fetchAll(
                db,
                sql: "SELECT state, channel = 'live-activity-start', COUNT(*) FROM outbox GROUP BY 1, 2")
            {
                let count: Int = row[2]
                let state = State(rawValue: row[0])
                if row[1] as Bool {
                    if state == .delivered { counts.startsSent += count }
                    if state == .failed { counts.startsFailed += count }
                }
                switch state {
                case .pending: counts.pending += count
                case .sending: counts.sending += count
                case .delivered: counts.delivered += count
                case .failed: counts.failed += count
                case .superseded: counts.superseded += count
                case .held: counts.held += count
                case nil: break
                }
            }
            return counts
        }
    }

    package func hasUnfinished(channels: [ChannelKind], dueBy: Date?) async throws -> Bool {
        let due = dueBy?.timeIntervalSince1970 ?? .infinity
        return try await database.read { db in
            let probe = try db.cachedStatement(sql: Queries.unfinished)
            for channel in channels
            where try Bool.fetchOne(probe, arguments: [channel.rawValue, channel.rawValue, due]) == true {
                return true
            }
            return false
        }
    }

    package func nextDue(channel: ChannelKind) async throws -> Date? {
        try await database.read { db in
            try Double.fetchOne(db, sql: Queries.nextDue, arguments: [channel.rawValue])
                .map(Date.init(timeIntervalSince1970:))
        }
    }

    /// Rows in the outbox, for reports and tests: delivery id, state, attempts, in-doubt resends.
    package func outboxRows() async throws -> [(
        id: UUID, state: Int, attempts: Int, resentInDoubt: Int, error: String?
    )] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT delivery_id, state, attempts, resent_in_doubt, last_error FROM outbox ORDER BY id"
            )
            .compactMap { row in
                UUID(text: row[0]).map { ($0, row[1], row[2], row[3], row[4]) }
            }
        }
    }
}
