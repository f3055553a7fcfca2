import Alerts
import Delivery
import Foundation
import Retrosheet
import Storage
import Synchronization

/// `POST /api/devices`: the channel and its address, and optional preferences.
package struct DeviceRegistrationBody: Sendable, Codable {
    /// apns, live-activity, web-push or webhook.
    package var channel: String
    package var token: String?
    package var environment: APNsEnvironment?
    package var topic: String?
    package var endpoint: String?
    package var p256dh: String?
    package var auth: String?
    package var url: String?
    package var secret: String?
    package var preferences: PreferencesBody?

    func required(_ value: String?, _ field: String) throws -> String {
        guard let value, !value.isEmpty else {
            throw RegistrationError(field: field, reason: "is required for a \(channel) device")
        }
        return value
    }

    /// The fields each channel takes (besides `channel` and `preferences`).
    static let fields: [String: [String]] = [
        "apns": ["token", "environment", "topic"], "live-activity": ["token", "environment", "topic"],
        "web-push": ["endpoint", "p256dh", "auth"], "webhook": ["url", "secret"],
    ]

    package func request() throws -> RegistrationRequest {
        if let taken = Self.fields[channel] {
            let given: [(String, Bool)] = [
                ("token", token != nil), ("environment", environment != nil), ("topic", topic != nil),
                ("endpoint", endpoint != nil), ("p256dh", p256dh != nil), ("auth", auth != nil), ("url", url != nil),
                ("secret", secret != nil),
            ]
            for (field, present) in given where present && !taken.contains(field) {
                throw RegistrationError(
                    field: field,
                    reason: "is not a field of a \(channel) device (it takes \(taken.joined(separator: ", ")))")
            }
        }
        let device: DeviceChannel
        switch channel {
        case "apns", "live-activity":
            let token = try required(token, "token")
            let topic = try required(topic, "topic")
            let environment = environment ?? .production
            device =
                channel == "apns"
                ? .apns(token: token, environment: environment, topic: topic)
                : .liveActivity(token: token, environment: environment, topic: topic)
        case "web-push":
            device = .webPush(
                endpoint: try required(endpoint, "endpoint"), p256dh: try required(p256dh, "p256dh"),
                auth: try required(auth, "auth"))
        case "webhook":
            device = .webhook(url: try required(url, "url"), secret: try required(secret, "secret"))
        default:
            throw RegistrationError(
                field: "channel", reason: "must be apns, live-activity, web-push or webhook, not '\(channel)'")
        }
        return RegistrationRequest(
            channel: device, preferences: try (preferences ?? PreferencesBody(Preferences())).applied(to: Preferences())
        )
    }
}
