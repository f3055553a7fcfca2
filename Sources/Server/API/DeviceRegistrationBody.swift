import Alerts
import Delivery
import Foundation
import Synchronization

/// `POST /api/devices`: the channel and its address, and optional preferences.
package struct DeviceRegistrationBody: Sendable, Codable {
    /// apns, live-activity, live-activity-start (a push-to-start token), web-push or webhook.
    package var channel: String
    package var token: String?
    package var environment: APNsEnvironment?
    package var topic: String?
    /// One of the declared apps, instead of `topic`.
    package var app: String?
    package var endpoint: String?
    package var p256dh: String?
    package var auth: String?
    package var url: String?
    package var secret: String?
    /// A push-to-start token's: how the started activity hears the bid's changes, `channel`
    /// (iOS 18, the default) or `token` (iOS 17.2–17.x).
    package var updates: ActivityUpdates?
    /// A Live Activity's: the bid it shows, as its attributes name it (`game_id`, `pitching_team`);
    /// it then hears that bid only. Both or neither.
    package var gameId: String?
    package var pitchingTeam: String?
    package var preferences: PreferencesBody?

    func required(_ value: String?, _ field: String) throws -> String {
        guard let value, !value.isEmpty else {
            throw RegistrationError(field: field, reason: "is required for a \(channel) device")
        }
        return value
    }

    /// The fields each channel takes (besides `channel` and `preferences`).
    static let fields: [String: [String]] = [
        "apns": ["token", "environment", "topic", "app"],
        "live-activity": ["token", "environment", "topic", "app", "game_id", "pitching_team"],
        "live-activity-start": ["token", "environment", "topic", "app", "updates"],
        "web-push": ["endpoint", "p256dh", "auth"], "webhook": ["url", "secret"],
    ]

    /// The registration, with `apps` the server's declared apps (an `app` names one of them).
    package func request(
        apps: [String: (topic: String, environment: APNsEnvironment)] = [:]
    ) throws -> RegistrationRequest {
        if let taken = Self.fields[channel] {
            let given: [(String, Bool)] = [
                ("token", token != nil), ("environment", environment != nil), ("topic", topic != nil),
                ("app", app != nil),
                ("endpoint", endpoint != nil), ("p256dh", p256dh != nil), ("auth", auth != nil), ("url", url != nil),
                ("secret", secret != nil), ("updates", updates != nil), ("game_id", gameId != nil),
                ("pitching_team", pitchingTeam != nil),
            ]
            for (field, present) in given where present && !taken.contains(field) {
                throw RegistrationError(
                    field: field,
                    reason: "is not a field of a \(channel) device (it takes \(taken.joined(separator: ", ")))")
            }
        }
        let device: DeviceChannel
        switch channel {
        case "apns", "live-activity", "live-activity-start":
            let token = try required(token, "token")
            let topic: String
            var environment = environment ?? .byDefault
            if let app {
                guard self.topic == nil else {
                    throw RegistrationError(field: "app", reason: "give app or topic, not both")
                }
                guard let declared = apps[app] else {
                    throw RegistrationError(
                        field: "app",
                        reason: apps.isEmpty
                            ? "this server declares no apps: give topic (the app's bundle id)"
                            : "'\(app)' is not an app of this server (\(apps.keys.sorted().joined(separator: ", ")))")
                }
                topic = declared.topic
                if self.environment == nil { environment = declared.environment }
            } else {
                topic = try required(self.topic, "topic")
            }
            switch channel {
            case "apns": device = .apns(token: token, environment: environment, topic: topic)
            case "live-activity":
                var bid: ActivityBid?
                switch (gameId, pitchingTeam) {
                case (nil, nil): bid = nil
                case (let game?, let team?): bid = ActivityBid(gameID: game, pitchingTeam: team)
                case (nil, _):
                    throw RegistrationError(
                        field: "game_id", reason: "is required with pitching_team (the activity's bid)")
                case (_, nil):
                    throw RegistrationError(
                        field: "pitching_team", reason: "is required with game_id (the activity's bid)")
                }
                device = .liveActivity(token: token, environment: environment, topic: topic, bid: bid)
            default:
                device = .liveActivityStart(
                    token: token, environment: environment, topic: topic, updates: updates ?? .channel)
            }
        case "web-push":
            device = .webPush(
                endpoint: try required(endpoint, "endpoint"), p256dh: try required(p256dh, "p256dh"),
                auth: try required(auth, "auth"))
        case "webhook":
            device = .webhook(url: try required(url, "url"), secret: try required(secret, "secret"))
        default:
            throw RegistrationError(
                field: "channel",
                reason: "must be apns, live-activity, live-activity-start, web-push or webhook, not '\(channel)'")
        }
        return RegistrationRequest(
            channel: device, preferences: try (preferences ?? PreferencesBody(Preferences())).applied(to: Preferences())
        )
    }
}
