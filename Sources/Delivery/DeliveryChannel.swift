import Alerts
import Foundation

/// One message to one device, as the outbox hands it to a channel.
package struct OutboundDelivery: Sendable, Hashable {
    /// UUIDv5 of moment id and device id: `apns-id`, `webhook-id`; the same on every retry.
    package var id: UUID
    package var deviceID: UUID
    package var channel: DeviceChannel
    /// The channel's payload (APNs JSON, Web Push plaintext, webhook body).
    package var payload: Data
    /// Groups a bid's alerts: `apns-collapse-id`, Web Push `Topic`.
    package var collapseKey: String
    /// When the moment happened.
    package var createdAt: Date
    /// After this the alert is stale (`apns-expiration`, Web Push `TTL`).
    package var expiresAt: Date

    package init(
        id: UUID, deviceID: UUID, channel: DeviceChannel, payload: Data, collapseKey: String, createdAt: Date,
        expiresAt: Date
    ) {
        self.id = id
        self.deviceID = deviceID
        self.channel = channel
        self.payload = payload
        self.collapseKey = collapseKey
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A way to reach devices: APNs, Web Push, webhooks, the console.
package protocol DeliveryChannel: Sendable {
    var kind: ChannelKind { get }
    /// Sends one delivery and classifies what the provider said. Never throws: failures are
    /// outcomes.
    func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome
    /// The provider rejected the credentials as expired: make new ones (APNs JWT).
    func refreshCredentials() async
}

extension DeliveryChannel {
    package func refreshCredentials() async {}
}
