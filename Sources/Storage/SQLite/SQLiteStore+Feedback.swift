import Foundation
import GRDB

extension SQLiteStore: FeedbackStore {
    package func takeFeedback(now: Date, lease: TimeInterval, limit: Int) async throws -> [FeedbackEvent] {
        try await database.write { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    UPDATE feedback SET due_at = ?, attempts = attempts + 1
                    WHERE id IN (SELECT id FROM feedback WHERE sent_at IS NULL AND due_at <= ? ORDER BY due_at, id LIMIT ?)
                    RETURNING event_id, device_id, channel, address, reason, occurred_at, attempts
                    """,
                arguments: [now.addingTimeInterval(lease).timeIntervalSince1970, now.timeIntervalSince1970, limit])
            return rows.compactMap { row -> FeedbackEvent? in
                guard let event = UUID(uuidString: row[0]), let device = UUID(uuidString: row[1]) else { return nil }
                return FeedbackEvent(
                    eventID: event, deviceID: device, channel: row[2], address: row[3], reason: row[4],
                    prunedAt: Date(timeIntervalSince1970: row[5]), attempts: (row[6] as Int) - 1)
            }
            .sorted { ($0.prunedAt, $0.eventID.uuidString) < ($1.prunedAt, $1.eventID.uuidString) }
        }
    }

    package func feedbackSent(_ eventID: UUID, at date: Date) async throws {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE feedback SET sent_at = ?, last_error = NULL WHERE event_id = ?",
                arguments: [date.timeIntervalSince1970, eventID.text(uppercase: false)])
        }
    }

    package func feedbackFailed(_ eventID: UUID, retryAt: Date, reason: String) async throws {
        try await database.write { db in
            try db.execute(
                sql: "UPDATE feedback SET due_at = ?, last_error = ? WHERE event_id = ? AND sent_at IS NULL",
                arguments: [retryAt.timeIntervalSince1970, reason, eventID.text(uppercase: false)])
        }
    }
}
