import Foundation

/// Devices the providers said are gone (pruned), kept for the operator's feedback hook: each
/// recorded once, in the transaction that disables the device, and sent until the hook takes it,
/// always under the same event id (the `webhook-id` a receiver de-duplicates on).
package protocol FeedbackStore: Sendable {
    /// Events due now, oldest first, each taken for `lease` (another sender, or this one after a
    /// restart, takes it again once the lease runs out without an answer).
    func takeFeedback(now: Date, lease: TimeInterval, limit: Int) async throws -> [FeedbackEvent]
    /// The hook took the event: never sent again.
    func feedbackSent(_ eventID: UUID, at date: Date) async throws
    /// The hook did not take it: sent again at `retryAt`.
    func feedbackFailed(_ eventID: UUID, retryAt: Date, reason: String) async throws
}

/// A device pruned: what the operator's hook is told.
package struct FeedbackEvent: Sendable, Hashable {
    package var eventID: UUID
    package var deviceID: UUID
    package var channel: String
    /// The APNs or Live Activity token, the Web Push endpoint, or the webhook URL.
    package var address: String
    /// The provider's reason (`Unregistered`, `BadDeviceToken`, ...).
    package var reason: String
    package var prunedAt: Date
    /// Sends tried before this one.
    package var attempts: Int

    package init(
        eventID: UUID, deviceID: UUID, channel: String, address: String, reason: String, prunedAt: Date, attempts: Int
    ) {
        self.eventID = eventID
        self.deviceID = deviceID
        self.channel = channel
        self.address = address
        self.reason = reason
        self.prunedAt = prunedAt
        self.attempts = attempts
    }
}
