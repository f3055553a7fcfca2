import Alerts
import Clocks
import Foundation
import NIOCore

/// Webhooks signed per Standard Webhooks: `webhook-id` the delivery id (receivers de-duplicate
/// on it), `webhook-timestamp`, `webhook-signature`. Sent over ``HTTP1Client``: the URL is the
/// user's, so its address is checked when connecting and a redirect is never followed.
package struct WebhookChannel: DeliveryChannel {
    package let kind = ChannelKind.webhook
    let client: HTTP1Client
    let clock: any WallClock
    let timeout: TimeAmount

    package init(client: HTTP1Client, clock: any WallClock, timeout: TimeAmount = .seconds(20)) {
        self.client = client
        self.clock = clock
        self.timeout = timeout
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
        guard case .webhook(let url, let secret) = delivery.channel,
            let key = try? StandardWebhooks.key(fromSecret: secret)
        else { return .gone(reason: "not a valid webhook", since: nil) }
        let id = "msg_" + delivery.id.uuidString.lowercased()
        let timestamp = Int(clock.now().timeIntervalSince1970)
        let headers = [
            ("content-type", "application/json"),
            ("webhook-id", id),
            ("webhook-timestamp", "\(timestamp)"),
            (
                "webhook-signature",
                StandardWebhooks.signature(id: id, timestamp: timestamp, body: delivery.payload, key: key)
            ),
        ]
        if delivery.isPastSendBy { return OutboundDelivery.notSent }
        do {
            let response = try await client.execute(
                url: url, headers: headers, body: ByteBuffer(bytes: delivery.payload), timeout: timeout)
            return OutcomeClassifier.web(
                status: response.status, retryAfter: response.headers.first(name: "retry-after"),
                location: response.headers.first(name: "location"), goneStatuses: [410], thing: "endpoint")
        } catch {
            return OutcomeClassifier.failure(error)
        }
    }
}
