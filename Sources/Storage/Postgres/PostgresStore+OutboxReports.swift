import Alerts
import Foundation
import NIOCore
import PostgresNIO

extension PostgresStore {
    package func failedDeliveries(limit: Int) async throws -> FailedDeliveries {
        var recent: [FailedDeliveries.Delivery] = []
        for try await (delivery, device, channel, reason, failedAt, moment, attempts, active) in try await client.query(
            """
            SELECT o.delivery_id, o.device_id, o.channel, coalesce(o.last_error, ''), coalesce(o.finished_at, 0),
                o.moment_id, o.attempts, d.active
            FROM outbox o LEFT JOIN devices d ON d.id = o.device_id
            WHERE o.state = 3 ORDER BY o.finished_at DESC LIMIT \(limit)
            """, logger: logger
        ).decode((UUID, UUID, String, String, Double, String, Int, Bool?).self) {
            recent.append(
                FailedDeliveries.Delivery(
                    deliveryID: delivery, deviceID: device, channel: channel, reason: reason,
                    failedAt: Date(timeIntervalSince1970: failedAt), momentID: moment, attempts: attempts,
                    deviceActive: active))
        }
        var counts: [FailedDeliveries.Count] = []
        for try await (channel, reason, count) in try await client.query(
            """
            SELECT channel, coalesce(last_error, ''), count(*) FROM outbox
            WHERE state = 3 GROUP BY channel, last_error ORDER BY 3 DESC, 1, 2 LIMIT 50
            """, logger: logger
        ).decode((String, String, Int).self) {
            counts.append(FailedDeliveries.Count(channel: channel, reason: reason, count: count))
        }
        return FailedDeliveries(recent: recent, counts: counts)
    }

    package func outboxCounts() async throws -> OutboxCounts {
        var counts = OutboxCounts()
        for try await (state, start, count) in try await client.query(
            "SELECT state, channel = 'live-activity-start', count(*) FROM outbox GROUP BY 1, 2", logger: logger
        ).decode((Int, Bool, Int).self) {
            if start, state == 2 { counts.startsSent += count }
            if start, state == 3 { counts.startsFailed += count }
            switch state {
            case 0: counts.pending += count
            case 1: counts.sending += count
            case 2: counts.delivered += count
            case 3: counts.failed += count
            case 4: counts.superseded += count
            case 5: counts.held += count
            default: break
            }
        }
        return counts
    }

    package func hasUnfinished(channels: [ChannelKind], dueBy: Date?) async throws -> Bool {
        let kinds = channels.map(\.rawValue)
        let due = dueBy?.timeIntervalSince1970 ?? .infinity
        return try await single(
            """
            SELECT EXISTS (SELECT 1 FROM outbox WHERE state = 1 AND channel = ANY(\(kinds)))
                OR EXISTS (SELECT 1 FROM outbox WHERE state = 0 AND channel = ANY(\(kinds)) AND due_at <= \(due))
            """, as: Bool.self) ?? false
    }

    package func nextDue(channel: ChannelKind) async throws -> Date? {
        try await single(
            "SELECT min(due_at) FROM outbox WHERE channel = \(channel.rawValue) AND state = 0", as: Double?.self
        ).flatMap { $0 }.map(Date.init(timeIntervalSince1970:))
    }

    package func plannedStarts(since: Date) async throws -> [UUID: [Date]] {
        var starts: [UUID: [Date]] = [:]
        for try await (device, due) in try await client.query(
            """
            SELECT device_id, due_at FROM outbox
            WHERE channel = 'live-activity-start' AND due_at >= \(since.timeIntervalSince1970) AND state IN (0, 1, 2, 5)
            """,
            logger: logger
        ).decode((UUID, Double).self) {
            starts[device, default: []].append(Date(timeIntervalSince1970: due))
        }
        return starts
    }

    /// Rows in the outbox, for reports and tests: delivery id, state, attempts, in-doubt resends,
    /// error, and the instance sending it (state 1).
    package func outboxRows() async throws -> [(
        id: UUID, state: Int, attempts: Int, resentInDoubt: Int, error: String?, leaseOwner: String?, takenFrom: String?
    )] {
        var rows: [(UUID, Int, Int, Int, String?, String?, String?)] = []
        for try await row in try await client.query(
            """
            SELECT delivery_id, state, attempts, resent_in_doubt, last_error, lease_owner, taken_from
            FROM outbox ORDER BY id
            """,
            logger: logger
        ).decode((UUID, Int, Int, Int, String?, String?, String?).self) {
            rows.append(row)
        }
        return rows.map { ($0.0, $0.1, $0.2, $0.3, $0.4, $0.5, $0.6) }
    }
}
