import Alerts
import Foundation
import NIOCore
import PostgresNIO

/// The outbox (`OutboxStore`) shared by several instances: a moment and its deliveries in one
/// transaction (stored once by its id, whichever instance derives it first); rows claimed with
/// `FOR UPDATE SKIP LOCKED` under a lease (this instance, until a time by the database's clock)
/// that the instance renews while it sends; outcomes recorded only under the lease that is still
/// this instance's; rows whose instance stopped renewing put back in doubt by any instance.
extension PostgresStore: OutboxStore {
    /// The channel a `NOTIFY` names when rows of a channel become due: idle dispatchers of every
    /// instance wake.
    static let outboxChannel = "nohit_outbox"

    @discardableResult
    package func record(_ moment: StoredMoment, payloads: [StoredPayload], deliveries: [NewDelivery]) async throws
        -> Bool
    {
        let body = try StoredJSON.encode(moment)
        let momentID = moment.moment.id
        let occurred = moment.occurredAt.timeIntervalSince1970
        let payloadKeys = payloads.map(\.key)
        let payloadBodies = payloads.map { ByteBuffer(bytes: $0.body) }
        return try await transaction { connection in
            let logger = self.logger
            // Stored once: a second instance deriving the same moment waits for the first's
            // transaction here, then finds it stored and writes nothing.
            let inserted = try await connection.query(
                """
                INSERT INTO moments (id, game_id, kind, occurred_at, body)
                VALUES (\(momentID), \(moment.moment.gameID), \(moment.moment.kind.rawValue), \(occurred), \(body))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, logger: logger
            ).collect()
            guard !inserted.isEmpty else { return false }
            if let bid = PendingStarts.endedBid(moment.moment) {
                _ = try await connection.query(
                    """
                    UPDATE outbox SET state = 3, finished_at = \(occurred),
                        last_error = \(PendingStarts.reason(moment.moment))
                            || coalesce(' (it waited: ' || last_error || ')', \(PendingStarts.waitedForBudget))
                    WHERE channel = 'live-activity-start' AND state IN (0, 5) AND bid_key = \(bid)
                    """, logger: logger
                ).collect()
            }
            var payloadIDs: [String: Int64] = [:]
            if !payloads.isEmpty {
                for try await (key, id) in try await connection.query(
                    """
                    INSERT INTO payloads (key, body) SELECT * FROM unnest(\(payloadKeys)::text[], \(payloadBodies)::bytea[])
                    ON CONFLICT (key) DO UPDATE SET body = excluded.body RETURNING key, id
                    """, logger: logger
                ).decode((String, Int64).self) {
                    payloadIDs[key] = id
                }
            }
            guard !deliveries.isEmpty else { return true }
            var ids: [UUID] = []
            var devices: [UUID] = []
            var channels: [String] = []
            var payloadRows: [Int64] = []
            var bids: [String] = []
            var kinds: [String] = []
            var outs: [Int] = []
            var expires: [Double] = []
            var due: [Double] = []
            var followerBids: [String] = []
            var followerDevices: [UUID] = []
            for delivery in deliveries {
                guard let payloadID = payloadIDs[delivery.payloadKey] else {
                    throw StoreError.invalid("delivery \(delivery.id) names payload \(delivery.payloadKey), not given")
                }
                ids.append(delivery.id)
                devices.append(delivery.deviceID)
                channels.append(delivery.channel.rawValue)
                payloadRows.append(payloadID)
                bids.append(delivery.bidKey)
                kinds.append(delivery.momentKind.rawValue)
                outs.append(delivery.momentOuts)
                expires.append(delivery.expiresAt.timeIntervalSince1970)
                due.append(delivery.notBefore.timeIntervalSince1970)
                if delivery.momentKind.isProgress {
                    followerBids.append(delivery.bidKey)
                    followerDevices.append(delivery.deviceID)
                }
            }
            _ = try await connection.query(
                """
                INSERT INTO outbox (delivery_id, moment_id, device_id, channel, payload_id, bid_key, moment_kind,
                    moment_outs, created_at, expires_at, due_at, state)
                SELECT d.id, \(momentID), d.device, d.channel, d.payload, d.bid, d.kind, d.outs, \(occurred),
                    d.expires, d.due, 0
                FROM unnest(\(ids)::uuid[], \(devices)::uuid[], \(channels)::text[], \(payloadRows)::int8[],
                    \(bids)::text[], \(kinds)::text[], \(outs)::int8[], \(expires)::float8[], \(due)::float8[])
                    AS d(id, device, channel, payload, bid, kind, outs, expires, due)
                ON CONFLICT (moment_id, device_id) DO NOTHING
                """, logger: logger
            ).collect()
            if !followerBids.isEmpty {
                _ = try await connection.query(
                    """
                    INSERT INTO bid_followers (bid_key, device_id)
                    SELECT * FROM unnest(\(followerBids)::text[], \(followerDevices)::uuid[]) ON CONFLICT DO NOTHING
                    """, logger: logger
                ).collect()
            }
            // Delivered at commit, to every instance listening.
            let woken = Array(Set(channels)).sorted()
            _ = try await connection.query(
                "SELECT pg_notify(\(Self.outboxChannel), c) FROM unnest(\(woken)::text[]) AS c", logger: logger
            ).collect()
            return true
        }
    }

    package func isRecorded(momentID: String) async throws -> Bool {
        try await single("SELECT EXISTS (SELECT 1 FROM moments WHERE id = \(momentID))", as: Bool.self) ?? false
    }

    package func followers(bidKey: String) async throws -> Set<UUID> {
        var devices = Set<UUID>()
        for try await id in try await client.query(
            "SELECT device_id FROM bid_followers WHERE bid_key = \(bidKey)", logger: logger
        ).decode(UUID.self) {
            devices.insert(id)
        }
        return devices
    }

    typealias ClaimRow = (
        Int64, UUID, UUID, Int64, String, Double, Double, Int, Bool,
        String?, String?, String?, String?, String?, String?, Double?, Bool?, String?
    )

    package func claim(channel: ChannelKind, now: Date, limit: Int) async throws -> [ClaimedDelivery] {
        let time = now.timeIntervalSince1970
        let instance = instanceID
        let lease = leaseSeconds
        // The lease runs from some point after this (the database's clock, when the row is
        // updated); counting from here errs on the safe side.
        let asked = ContinuousClock.now
        var claimed: [ClaimedDelivery] = try await transaction { connection in
            let logger = self.logger
            var rows: [ClaimRow] = []
            for try await row in try await connection.query(
                """
                WITH picked AS (
                    SELECT id FROM outbox WHERE channel = \(channel.rawValue) AND state = 0 AND due_at <= \(time)
                    ORDER BY due_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
                ), claimed AS (
                    UPDATE outbox o SET state = 1, attempts = o.attempts + 1, attempt_started_at = \(time),
                        lease_owner = \(instance), lease_expires = clock_timestamp() + make_interval(secs => \(lease))
                    FROM picked WHERE o.id = picked.id
                    RETURNING o.id, o.delivery_id, o.device_id, o.payload_id, o.bid_key, o.created_at, o.expires_at,
                        o.attempts, o.token_refreshed
                )
                SELECT c.id, c.delivery_id, c.device_id, c.payload_id, c.bid_key, c.created_at, c.expires_at,
                    c.attempts, c.token_refreshed, d.channel, d.address, d.environment, d.topic, d.key1, d.key2,
                    d.registered_at, d.active, d.status_reason
                FROM claimed c LEFT JOIN devices d ON d.id = c.device_id ORDER BY c.id
                """, logger: logger
            ).decode(ClaimRow.self) {
                rows.append(row)
            }
            guard !rows.isEmpty else { return [] }
            // Alerts queued for a device since deleted or disabled are not sent: they fail, with the reason.
            var unsendable: [(rowID: Int64, reason: String)] = []
            var missing = Set<Int64>()
            for row in rows {
                if row.16 != true {
                    unsendable.append(
                        (
                            row.0,
                            row.16 == nil
                                ? "device removed" : row.17.map { "device disabled: \($0)" } ?? "device disabled"
                        ))
                } else if self.payloadCache.body(row.3) == nil {
                    missing.insert(row.3)
                }
            }
            if !missing.isEmpty {
                for try await (id, body) in try await connection.query(
                    "SELECT id, body FROM payloads WHERE id = ANY(\(Array(missing)))", logger: logger
                ).decode((Int64, ByteBuffer).self) {
                    self.payloadCache.keep(id, Data(body.readableBytesView))
                }
            }
            if !unsendable.isEmpty {
                _ = try await connection.query(
                    """
                    UPDATE outbox o SET state = 3, finished_at = \(time), last_error = v.reason, lease_owner = NULL,
                        lease_expires = NULL
                    FROM unnest(\(unsendable.map(\.rowID))::int8[], \(unsendable.map(\.reason))::text[])
                        AS v(id, reason)
                    WHERE o.id = v.id
                    """, logger: logger
                ).collect()
            }
            var claimed: [ClaimedDelivery] = []
            claimed.reserveCapacity(rows.count)
            for row in rows where row.16 == true {
                guard let kind = row.9, let address = row.10, let registered = row.15,
                    let deviceChannel = try ChannelColumns(
                        kind: kind, address: address, environment: row.11, topic: row.12, key1: row.13, key2: row.14
                    ).channel(opening: self.secrets)
                else {
                    throw StoreError.corrupt(
                        "outbox row", key: "\(row.0)", reason: "device \(row.2) is not a device id")
                }
                claimed.append(
                    ClaimedDelivery(
                        id: row.1, deviceID: row.2, channel: deviceChannel,
                        payload: self.payloadCache.body(row.3) ?? Data(), bidKey: row.4,
                        createdAt: Date(timeIntervalSince1970: row.5), expiresAt: Date(timeIntervalSince1970: row.6),
                        deviceRegisteredAt: Date(timeIntervalSince1970: registered), attempts: row.7,
                        tokenRefreshed: row.8))
            }
            return claimed
        }
        let stamp = LeaseStamp(asked: asked, granted: .now)
        for index in claimed.indices { claimed[index].lease = stamp }
        held.withLock { $0.formUnion(claimed.map(\.id)) }
        return claimed
    }

    /// A claimed row is surely still this instance's while less than half a lease has gone by
    /// since it was claimed, or since the last renewal of an unbroken chain that covered it (each
    /// renewal asked less than half a lease after the one before, the first while the row was
    /// surely held). Renewals run every quarter lease, so two have failed or been late before this
    /// says no; the margin is for the send itself and for the two clocks' rates. Times are when
    /// things were asked, before the database set the lease: earlier than the truth, so safe.
    package func mayStillSend(_ delivery: ClaimedDelivery) -> Bool {
        sendDeadline(delivery).map { ContinuousClock.now < $0 } ?? true
    }

    package func sendDeadline(_ delivery: ClaimedDelivery) -> ContinuousClock.Instant? {
        guard let stamp = delivery.lease else { return nil }
        let half = Duration.milliseconds(Int64(leaseSeconds * 500))
        var from = stamp.asked
        if let chain = renewals.withLock({ $0 }), chain.last > stamp.granted,
            chain.start <= stamp.granted || chain.start - stamp.asked < half
        {
            from = chain.last
        }
        return from + half
    }

    package func complete(_ results: [DeliveryResult]) async throws {
        guard !results.isEmpty else { return }
        // Given back whether or not the write below is made: a row whose outcome is not recorded
        // is not renewed, so it is taken back in doubt once its lease lapses.
        held.withLock { $0.subtract(results.map(\.id)) }
        var finished = (ids: [UUID](), states: [Int16](), times: [Double](), reasons: [String]())
        var retries = (ids: [UUID](), due: [Double](), reasons: [String](), refreshed: [Bool]())
        var pruned = (devices: [UUID](), reasons: [String](), times: [Double]())
        for result in results {
            switch result {
            case .delivered(let id, let at):
                finished.ids.append(id)
                finished.states.append(2)
                finished.times.append(at.timeIntervalSince1970)
                finished.reasons.append("")
            case .failed(let id, let reason, let at):
                finished.ids.append(id)
                finished.states.append(3)
                finished.times.append(at.timeIntervalSince1970)
                finished.reasons.append(reason)
            case .held(let id, let reason, let at):
                // Held: state 5 until the next start's releaseHeld.
                finished.ids.append(id)
                finished.states.append(5)
                finished.times.append(at.timeIntervalSince1970)
                finished.reasons.append(reason)
            case .pruned(let id, let device, let reason, let at):
                finished.ids.append(id)
                finished.states.append(3)
                finished.times.append(at.timeIntervalSince1970)
                finished.reasons.append(reason)
                pruned.devices.append(device)
                pruned.reasons.append(reason)
                pruned.times.append(at.timeIntervalSince1970)
            case .retry(let id, let at, let reason, let refreshed):
                retries.ids.append(id)
                retries.due.append(at.timeIntervalSince1970)
                retries.reasons.append(reason)
                retries.refreshed.append(refreshed)
            }
        }
        let instance = instanceID
        try await transaction { connection in
            let logger = self.logger
            // Only under this instance's lease: a row another instance took back (this one stopped
            // renewing) is that instance's now.
            if !finished.ids.isEmpty {
                _ = try await connection.query(
                    """
                    UPDATE outbox o SET state = v.state, finished_at = v.at, last_error = NULLIF(v.reason, ''),
                        lease_owner = NULL, lease_expires = NULL
                    FROM unnest(\(finished.ids)::uuid[], \(finished.states)::int2[], \(finished.times)::float8[],
                        \(finished.reasons)::text[]) AS v(delivery_id, state, at, reason)
                    WHERE o.delivery_id = v.delivery_id AND o.state = 1 AND o.lease_owner = \(instance)
                    """, logger: logger
                ).collect()
            }
            if !retries.ids.isEmpty {
                _ = try await connection.query(
                    """
                    UPDATE outbox o SET state = 0, due_at = v.due, last_error = v.reason, token_refreshed = v.refreshed,
                        lease_owner = NULL, lease_expires = NULL
                    FROM unnest(\(retries.ids)::uuid[], \(retries.due)::float8[], \(retries.reasons)::text[],
                        \(retries.refreshed)::bool[]) AS v(delivery_id, due, reason, refreshed)
                    WHERE o.delivery_id = v.delivery_id AND o.state = 1 AND o.lease_owner = \(instance)
                    """, logger: logger
                ).collect()
            }
            if !pruned.devices.isEmpty {
                // Once per device (only one still active is disabled), for the operator's feedback hook.
                _ = try await connection.query(
                    """
                    WITH gone AS (
                        UPDATE devices d SET active = false, status_reason = v.reason, status_at = v.at
                        FROM unnest(\(pruned.devices)::uuid[], \(pruned.reasons)::text[], \(pruned.times)::float8[])
                            AS v(id, reason, at)
                        WHERE d.id = v.id AND d.active
                        RETURNING d.id, d.channel, d.address, v.reason, v.at
                    )
                    INSERT INTO feedback (event_id, device_id, channel, address, reason, occurred_at, due_at)
                    SELECT gen_random_uuid(), id, channel, address, reason, at, at FROM gone
                    WHERE channel <> 'live-activity-channel'
                    """, logger: logger
                ).collect()
                // Nothing more goes to a pruned device.
                _ = try await connection.query(
                    """
                    UPDATE outbox o SET state = 3, finished_at = v.at, last_error = 'device pruned: ' || v.reason
                    FROM unnest(\(pruned.devices)::uuid[], \(pruned.reasons)::text[], \(pruned.times)::float8[])
                        AS v(id, reason, at)
                    WHERE o.device_id = v.id AND o.state = 0
                    """, logger: logger
                ).collect()
            }
        }
    }

    package func releaseHeld(now: Date) async throws -> Int {
        let time = now.timeIntervalSince1970
        return try await transaction { connection in
            // Expired meanwhile: no longer worth sending.
            _ = try await connection.query(
                """
                UPDATE outbox SET state = 3, finished_at = \(time), last_error = 'expired while held: ' || last_error
                WHERE state = 5 AND expires_at < \(time)
                """, logger: self.logger
            ).collect()
            var released: [String] = []
            for try await channel in try await connection.query(
                """
                UPDATE outbox SET state = 0, due_at = \(time), finished_at = NULL WHERE state = 5 RETURNING channel
                """, logger: self.logger
            ).decode(String.self) {
                released.append(channel)
            }
            // Every instance's idle dispatchers wake for them, at commit.
            let woken = Array(Set(released)).sorted()
            if !woken.isEmpty {
                _ = try await connection.query(
                    "SELECT pg_notify(\(Self.outboxChannel), c) FROM unnest(\(woken)::text[]) AS c", logger: self.logger
                ).collect()
            }
            return released.count
        }
    }

    package func deliveriesSettled(now: Date) async throws {
        // PostgreSQL checkpoints on its own.
    }

    package func release(_ ids: [UUID]) async throws {
        guard !ids.isEmpty else { return }
        held.withLock { $0.subtract(ids) }
        try await execute(
            """
            UPDATE outbox SET state = 0, attempts = attempts - 1, lease_owner = NULL, lease_expires = NULL
            WHERE delivery_id = ANY(\(ids)) AND state = 1 AND lease_owner = \(instanceID)
            """)
    }

    /// After a restart: the rows whose lease has run out (their instance stopped renewing) are in
    /// doubt, as in ``SQLiteStore/recoverInDoubt(now:)``. Rows another instance is still sending
    /// are left to it.
    package func recoverInDoubt(now: Date) async throws -> RecoveryReport {
        try await reclaimExpired(now: now)
    }

    /// Renews this instance's leases on the rows it is sending, then takes back, in doubt, the rows
    /// of instances that stopped renewing theirs.
    package func maintainLeases(now: Date) async throws -> RecoveryReport {
        // Rows locked by an outcome being recorded are skipped (their lease is about to go): waiting
        // for them could deadlock with that transaction, which locks them in another order.
        let asked = ContinuousClock.now
        let holding = Array(held.withLock { $0 })
        try await execute(
            """
            UPDATE outbox SET lease_expires = clock_timestamp() + make_interval(secs => \(leaseSeconds))
            WHERE id IN (SELECT id FROM outbox WHERE state = 1 AND lease_owner = \(instanceID)
                AND delivery_id = ANY(\(holding)) FOR UPDATE SKIP LOCKED)
            """)
        let half = Duration.milliseconds(Int64(leaseSeconds * 500))
        renewals.withLock { chain in
            if let current = chain, asked > current.last {
                chain = asked - current.last < half ? (current.start, asked) : (asked, asked)
            } else if chain == nil {
                chain = (asked, asked)
            }
        }
        return try await reclaimExpired(now: now)
    }

    func reclaimExpired(now: Date) async throws -> RecoveryReport {
        let time = now.timeIntervalSince1970
        return try await transaction { connection in
            let logger = self.logger
            var superseded: [(Int64, UUID)] = []
            var requeued: [(Int64, UUID)] = []
            var owners: [String: Int] = [:]
            // Whether a later alert of the same bid reached the device since: among the moments of
            // the row's game (a bid is a game's side), the device's row of each.
            for try await (rowID, id, owner, later) in try await connection.query(
                """
                SELECT o.id, o.delivery_id, COALESCE(o.lease_owner, ''),
                    EXISTS (SELECT 1 FROM moments this
                            JOIN moments m ON m.game_id = this.game_id
                            JOIN outbox later ON later.moment_id = m.id AND later.device_id = o.device_id
                            WHERE this.id = o.moment_id AND later.bid_key = o.bid_key AND later.state = 2
                                AND later.created_at > o.created_at)
                FROM outbox o WHERE o.state = 1 AND o.lease_expires < clock_timestamp()
                FOR UPDATE OF o SKIP LOCKED
                """, logger: logger
            ).decode((Int64, UUID, String, Bool).self) {
                owners[owner, default: 0] += 1
                if later { superseded.append((rowID, id)) } else { requeued.append((rowID, id)) }
            }
            if !superseded.isEmpty {
                _ = try await connection.query(
                    """
                    UPDATE outbox SET state = 4, finished_at = \(time), taken_from = lease_owner,
                        lease_owner = NULL, lease_expires = NULL,
                        last_error = 'in doubt after instance ' || COALESCE(lease_owner, '?')
                            || ' stopped renewing its lease; a later alert of the bid was delivered'
                    WHERE id = ANY(\(superseded.map(\.0)))
                    """, logger: logger
                ).collect()
            }
            if !requeued.isEmpty {
                _ = try await connection.query(
                    """
                    UPDATE outbox SET state = 0, due_at = \(time), resent_in_doubt = resent_in_doubt + 1,
                        taken_from = lease_owner, lease_owner = NULL, lease_expires = NULL
                    WHERE id = ANY(\(requeued.map(\.0)))
                    """, logger: logger
                ).collect()
                _ = try await connection.query(
                    """
                    SELECT pg_notify(\(Self.outboxChannel), c)
                    FROM (SELECT DISTINCT channel FROM outbox WHERE id = ANY(\(requeued.map(\.0)))) AS t(c)
                    """, logger: logger
                ).collect()
            }
            return RecoveryReport(
                requeued: requeued.map(\.1), superseded: superseded.map(\.1),
                takenFrom: owners.filter { !$0.key.isEmpty })
        }
    }

}

extension PostgresStore {
    /// The deliveries each instance is sending now (rows claimed under its lease, not yet
    /// finished), for reports and tests: a few dozen an instance at most.
    package func inFlightByInstance() async throws -> [String: Set<UUID>] {
        var deliveries: [String: Set<UUID>] = [:]
        for try await (owner, id) in try await client.query(
            "SELECT lease_owner, delivery_id FROM outbox WHERE state = 1 AND lease_owner IS NOT NULL",
            logger: logger
        ).decode((String, UUID).self) {
            deliveries[owner, default: []].insert(id)
        }
        return deliveries
    }
}
