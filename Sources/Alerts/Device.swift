import Foundation

/// Where a device receives alerts, as registered.
package enum DeviceChannel: Sendable, Hashable, Codable {
    /// An iOS app: the APNs device token (hex), the environment, and the topic (bundle id).
    case apns(token: String, environment: APNsEnvironment, topic: String)
    /// A Live Activity: its push token, the environment, the app's bundle id (pushes go to
    /// `<bundle>.push-type.liveactivity`), and the bid it shows (its attributes' game and team
    /// pitching): it hears that bid only. Without one (an app registered before activities named
    /// their bid), it hears every bid past the device's threshold.
    case liveActivity(token: String, environment: APNsEnvironment, topic: String, bid: ActivityBid? = nil)
    /// A broadcast channel (iOS 18) the service made for one bid (``Moment/bidKey``: a game and the
    /// side pitching) at one spoiler delay, in an environment, for an app: one request updates
    /// every Live Activity subscribed to it. Made and removed by the service
    /// (``ChannelKind/liveActivityChannel``), never registered by a client.
    case liveActivityChannel(id: String, bid: String, environment: APNsEnvironment, topic: String)
    /// An app's push-to-start token (iOS 17.2 and later): the service starts a bid's Live Activity
    /// on the device, with `updates` saying how the activity then hears the bid's changes.
    case liveActivityStart(token: String, environment: APNsEnvironment, topic: String, updates: ActivityUpdates)
    /// A browser: the push subscription's endpoint and keys (base64url).
    case webPush(endpoint: String, p256dh: String, auth: String)
    /// A server: an https URL and the Standard Webhooks signing secret (`whsec_...`).
    case webhook(url: String, secret: String)
    /// Standard output, for the demo.
    case console(label: String)

    /// The app and environment of an APNs channel (an alert token, a Live Activity's token, a
    /// broadcast channel, a push-to-start token); nil for the others.
    package var apnsApp: (topic: String, environment: APNsEnvironment)? {
        switch self {
        case .apns(_, let environment, let topic), .liveActivity(_, let environment, let topic, _),
            .liveActivityChannel(_, _, let environment, let topic),
            .liveActivityStart(_, let environment, let topic, _):
            (topic, environment)
        case .webPush, .webhook, .console: nil
        }
    }

    /// Whether it updates Live Activities (one activity's token, or a broadcast channel's).
    package var updatesLiveActivities: Bool { kind == .liveActivity || kind == .liveActivityChannel }

    package var kind: ChannelKind {
        switch self {
        case .apns: .apns
        case .liveActivity: .liveActivity
        case .liveActivityChannel: .liveActivityChannel
        case .liveActivityStart: .liveActivityStart
        case .webPush: .webPush
        case .webhook: .webhook
        case .console: .console
        }
    }
}

/// Where an APNs token was issued: `sandbox` for a debug build run from Xcode, `production` for
/// TestFlight and the App Store. Read also as `development`, the value of the app's
/// `aps-environment` entitlement for the sandbox; stored and written as `sandbox`.
package enum APNsEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case sandbox
    case production

    /// What the registration API and `nohit devices add` take when none is given, and why.
    package static let byDefault = APNsEnvironment.production

    /// The names read, for a refusal.
    package static let accepted = "sandbox (or development, the entitlement's name for it) or production"

    /// An environment by name: its own, or `development` for the sandbox.
    package init?(name: String) {
        if name == "development" {
            self = .sandbox
        } else {
            self.init(rawValue: name)
        }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let environment = Self(name: name) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "must be \(Self.accepted), not '\(name)'")
        }
        self = environment
    }
}

/// The bid a Live Activity shows, as its attributes (`BidActivityAttributes`) name it: the game
/// and the abbreviation of the team pitching.
package struct ActivityBid: Sendable, Hashable, Codable {
    package var gameID: String
    package var pitchingTeam: String

    package init(gameID: String, pitchingTeam: String) {
        self.gameID = gameID
        self.pitchingTeam = pitchingTeam
    }

    /// As stored: `CHA202008250/CWS`.
    package var key: String { "\(gameID)/\(pitchingTeam)" }

    package init?(key: String) {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        self.init(gameID: String(parts[0]), pitchingTeam: String(parts[1]))
    }

    /// Whether `moment` is of this bid: its game, and the side pitching named by `pitchingTeam`
    /// (MLB's abbreviation, as the service writes the attributes; nil where the caller does not know
    /// it) or `franchise` (the Retrosheet code, which the service's other fields take too), either
    /// in any case.
    package func shows(_ moment: Moment, pitchingTeam: String?, franchise: String?) -> Bool {
        guard moment.gameID == gameID else { return false }
        let team = self.pitchingTeam.uppercased()
        return [pitchingTeam, franchise].contains { $0?.uppercased() == team }
    }
}

/// How a Live Activity started by push hears the bid's later changes.
package enum ActivityUpdates: String, Sendable, Hashable, Codable, CaseIterable {
    /// iOS 18: the start names the bid's broadcast channel (`input-push-channel`).
    case channel
    /// iOS 17.2–17.x: the start asks for the activity's own push token (`input-push-token`), which
    /// the app registers as a `live-activity` device.
    case token

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let updates = Self(rawValue: name) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "must be channel (iOS 18) or token (iOS 17.2-17.x), not '\(name)'")
        }
        self = updates
    }
}

/// The kinds of channel; each has its own dispatcher.
package enum ChannelKind: String, Sendable, Hashable, Codable, CaseIterable {
    case apns
    case liveActivity = "live-activity"
    case liveActivityChannel = "live-activity-channel"
    case liveActivityStart = "live-activity-start"
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
