import Foundation
import PostgresNIO

extension PostgresStore: FeedbackStore {
    package func takeFeedback(now: Date, lease: TimeInterval, limit: Int) async throws -> [FeedbackEvent] {
        var events: [FeedbackEvent] = []
        // Rows another instance is taking at the same moment are skipped, not waited for.
        for try await (event, device, channel, address, reason, at, attempts) in try await client.query(
            """
            UPDATE feedback SET due_at = \(now.addingTimeInterval(lease).timeIntervalSince1970), attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM feedback WHERE sent_at IS NULL AND due_at <= \(now.timeIntervalSince1970)
                ORDER BY due_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING event_id, device_id, channel, address, reason, occurred_at, attempts
            """, logger: logger
        ).decode((UUID, UUID, String, String, String, Double, Int).self) {
            events.append(
                FeedbackEvent(
                    eventID: event, deviceID: device, channel: channel, address: address, reason: reason,
                    prunedAt: Date(timeIntervalSince1970: at), attempts: attempts - 1))
        }
        return events.sorted { ($0.prunedAt, $0.eventID.uuidString) < ($1.prunedAt, $1.eventID.uuidString) }
    }

    package func feedbackSent(_ eventID: UUID, at date: Date) async throws {
        _ = try await client.query(
            "UPDATE feedback SET sent_at = \(date.timeIntervalSince1970), last_error = NULL WHERE event_id = \(eventID)",
            logger: logger
        ).collect()
    }

    package func feedbackFailed(_ eventID: UUID, retryAt: Date, reason: String) async throws {
        _ = try await client.query(
            """
            UPDATE feedback SET due_at = \(retryAt.timeIntervalSince1970), last_error = \(reason)
            WHERE event_id = \(eventID) AND sent_at IS NULL
            """, logger: logger
        ).collect()
    }
}
