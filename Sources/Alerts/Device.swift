import Foundation

/// Where a device receives alerts, as registered.
package enum DeviceChannel: Sendable, Hashable, Codable {
    /// An iOS app: the APNs device token (hex), the environment, and the topic (bundle id).
    case apns(token: String, environment: APNsEnvironment, topic: String)
    /// A Live Activity following bids: its push token, the environment, and the app's bundle id
    /// (pushes go to `<bundle>.push-type.liveactivity`).
    case liveActivity(token: String, environment: APNsEnvironment, topic: String)
    /// A browser: the push subscription's endpoint and keys (base64url).
    case webPush(endpoint: String, p256dh: String, auth: String)
    /// A server: an https URL and the Standard Webhooks signing secret (`whsec_...`).
    case webhook(url: String, secret: String)
    /// Standard output, for the demo.
    case console(label: String)

    package var kind: ChannelKind {
        switch self {
        case .apns: .apns
        case .liveActivity: .liveActivity
        case .webPush: .webPush
        case .webhook: .webhook
        case .console: .console
        }
    }
}

package enum APNsEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case sandbox
    case production
}

/// The kinds of channel; each has its own dispatcher.
package enum ChannelKind: String, Sendable, Hashable, Codable, CaseIterable {
    case apns
    case liveActivity = "live-activity"
    case webPush = "web-push"
    case webhook
    case console
}

/// A registered device and what it wants.
package struct Device: Sendable, Hashable, Codable, Identifiable {
    package var id: UUID
    package var channel: DeviceChannel
    package var preferences: Preferences
    package var registeredAt: Date
    /// SHA-256 of the secret handed out at registration (hex); the secret itself is not kept.
    package var secretHash: String
    package var status: Status

    package enum Status: Sendable, Hashable, Codable {
        case active
        /// The provider said the token or endpoint is gone, the operator turned it off, or the
        /// same token or subscription was registered again as another device.
        case disabled(reason: String, at: Date)
    }

    package init(
        id: UUID, channel: DeviceChannel, preferences: Preferences = Preferences(), registeredAt: Date,
        secretHash: String, status: Status = .active
    ) {
        self.id = id
        self.channel = channel
        self.preferences = preferences
        self.registeredAt = registeredAt
        self.secretHash = secretHash
        self.status = status
    }

    package var isActive: Bool { status == .active }
}
