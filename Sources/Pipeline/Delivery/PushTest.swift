import Alerts
import Delivery
import Foundation

/// One real push to one device through the configured provider, to see that a key, topic,
/// environment or endpoint works (`nohit push test`, `POST /api/admin/devices/{id}/test`): the
/// provider's answer, in the operator's words. Nothing is stored and the device is not changed,
/// whatever the provider says.
package struct PushTest: Sendable {
    /// What the provider said, and the words for it.
    package struct Result: Sendable {
        package var deviceID: UUID
        package var channel: ChannelKind
        /// The push's id (APNs `apns-id`, a webhook's `webhook-id`).
        package var pushID: UUID
        /// Nil when the push could not be sent at all (no such channel configured).
        package var outcome: ProviderOutcome?
        package var accepted: Bool { outcome == .accepted }
        package var summary: String
    }

    /// Sends the test push to `device` through `channels`, at `now`.
    package static func send(to device: Device, through channels: ProviderChannels, now: Date) async -> Result {
        let kind = device.channel.kind
        let id = UUID()
        var result = Result(deviceID: device.id, channel: kind, pushID: id, outcome: nil, summary: "")
        let title = "No-Hitter Alerts"
        let body = "A test push: this device gets the service's alerts."
        let payload: Data?
        do {
            payload = try Payloads.test(kind, title: title, body: body)
        } catch {
            result.summary = "the test push could not be written: \(error)"
            return result
        }
        guard let payload else {
            result.summary =
                kind == .liveActivityStart
                ? "a push-to-start token would start an activity, not show an alert: test the app's alert token "
                    + "(an apns device) instead"
                : "a Live Activity token lives only while its activity runs and takes no alert of its own: test the "
                    + "app's alert token (an apns device) instead"
            return result
        }
        guard let channel = channels.channels.first(where: { $0.kind == kind }) else {
            result.summary = "\(kind.rawValue) is not configured here: \(channels.unavailable[kind] ?? "no channel")"
            return result
        }
        let outcome = await channel.deliver(
            OutboundDelivery(
                id: id, deviceID: device.id, channel: device.channel, payload: payload, collapseKey: "nohit-test",
                createdAt: now, expiresAt: now.addingTimeInterval(300)))
        result.outcome = outcome
        result.summary = describe(outcome, kind: kind, id: id, channel: device.channel)
        return result
    }

    static func describe(_ outcome: ProviderOutcome, kind: ChannelKind, id: UUID, channel: DeviceChannel) -> String {
        let provider = kind.rawValue
        let address: String
        switch channel {
        case .apns(_, let environment, let topic), .liveActivity(_, let environment, let topic, _):
            address = "\(topic), \(environment.rawValue)"
        case .liveActivityStart(_, let environment, let topic, let updates):
            address = "push-to-start, \(topic), \(environment.rawValue), updates by \(updates.rawValue)"
        case .liveActivityChannel(let id, let bid, let environment, let topic):
            address = "channel \(id) of \(bid), \(topic), \(environment.rawValue)"
        case .webPush(let endpoint, _, _):
            address = URL(string: endpoint)?.host ?? endpoint
        case .webhook(let url, _):
            address = url
        case .console(let label):
            address = label
        }
        switch outcome {
        case .accepted:
            return "\(provider) accepted the test push (id \(id.uuidString.lowercased()); \(address)): it should "
                + "show on the device now"
        case .gone(let reason, let since):
            return "\(provider) says the device is gone: \(reason)"
                + (since.map { " (since \(ISO8601DateFormatter().string(from: $0)))" } ?? "")
                + "; the service disables it at its next alert (\(address))"
        case .rejected(let status, let reason):
            return "\(provider) refused the test push: \(status) \(reason) (\(address))"
        case .transient(let reason, let retryAfter):
            return "\(provider) could not take it now: \(reason)"
                + (retryAfter.map { " (retry after \(Int($0)) s)" } ?? "") + "; try again"
        case .expiredProviderToken:
            return "\(provider) said the provider token expired (ExpiredProviderToken): check this machine's clock"
        case .connectionLost(let reason):
            return "the connection to \(provider) was lost: \(reason); try again"
        case .notSent(let reason):
            return "not sent to \(provider): \(reason); try again"
        case .misconfigured(let reason):
            return "\(provider) refuses this server's configuration: \(reason) — "
                + ProviderOutcome.configurationFix(for: reason) + " (\(address))"
        }
    }
}
