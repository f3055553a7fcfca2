import Alerts
import AsyncHTTPClient
import Foundation
import NIOCore

/// Webhooks signed per Standard Webhooks: `webhook-id` the delivery id (receivers de-duplicate
/// on it), `webhook-timestamp`, `webhook-signature`.
package struct WebhookChannel: DeliveryChannel {
    package let kind = ChannelKind.webhook
    let client: HTTPClient
    let clock: any WallClock
    let timeout: TimeAmount

    package init(client: HTTPClient, clock: any WallClock, timeout: TimeAmount = .seconds(20)) {
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
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "webhook-id", value: id)
        request.headers.add(name: "webhook-timestamp", value: "\(timestamp)")
        request.headers.add(
            name: "webhook-signature",
            value: StandardWebhooks.signature(id: id, timestamp: timestamp, body: delivery.payload, key: key))
        request.body = .bytes(ByteBuffer(bytes: delivery.payload))
        do {
            let response = try await client.execute(request, timeout: timeout)
            _ = try await response.body.collect(upTo: 64 * 1024)
            let status = Int(response.status.code)
            switch status {
            case 200...299: return .accepted
            case 410: return .gone(reason: "endpoint answered 410 Gone", since: nil)
            case 429, 500...599:
                return .transient(
                    reason: "HTTP \(status)",
                    retryAfter: response.headers.first(name: "retry-after").flatMap(TimeInterval.init))
            default: return .rejected(status: status, reason: "HTTP \(status)")
            }
        } catch {
            return APNsChannel.classify(error)
        }
    }
}

/// Prints alerts: the demo's channel.
package struct ConsoleChannel: DeliveryChannel {
    package let kind = ChannelKind.console
    let write: @Sendable (String) -> Void

    package init(write: @escaping @Sendable (String) -> Void = { print($0) }) {
        self.write = write
    }

    package func deliver(_ delivery: OutboundDelivery) async -> ProviderOutcome {
        guard case .console(let label) = delivery.channel else { return .rejected(status: 0, reason: "not a console") }
        write("[\(label)] " + String(decoding: delivery.payload, as: UTF8.self))
        return .accepted
    }
}
