import Alerts
import Delivery
import Foundation
import Retrosheet
import Storage
import Synchronization

/// Preferences as the API reads them: every field optional, snake_case; what is absent keeps its
/// current (or default) value.
package struct PreferencesBody: Sendable, Codable {
    package struct QuietHours: Sendable, Codable {
        /// `HH:MM`, local time.
        package var start: String
        package var end: String
        package var timeZone: String
    }

    package var thresholdInnings: Int?
    package var favouriteTeams: [String]?
    package var favouriteThresholdInnings: Int?
    package var frequency: Preferences.Frequency?
    package var kinds: [Moment.Kind]?
    /// `null` turns quiet hours off; absent leaves them as they are.
    package var quietHours: QuietHours??
    package var spoilerDelaySeconds: Int?
    package var jinxSafe: Bool?

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        thresholdInnings = try container.decodeIfPresent(Int.self, forKey: .thresholdInnings)
        favouriteTeams = try container.decodeIfPresent([String].self, forKey: .favouriteTeams)
        favouriteThresholdInnings = try container.decodeIfPresent(Int.self, forKey: .favouriteThresholdInnings)
        frequency = try container.decodeIfPresent(Preferences.Frequency.self, forKey: .frequency)
        kinds = try container.decodeIfPresent([Moment.Kind].self, forKey: .kinds)
        if container.contains(.quietHours) {
            quietHours = .some(try container.decodeIfPresent(QuietHours.self, forKey: .quietHours))
        }
        spoilerDelaySeconds = try container.decodeIfPresent(Int.self, forKey: .spoilerDelaySeconds)
        jinxSafe = try container.decodeIfPresent(Bool.self, forKey: .jinxSafe)
    }

    package init(_ preferences: Preferences) {
        thresholdInnings = preferences.thresholdInnings
        favouriteTeams = preferences.favouriteTeams
        favouriteThresholdInnings = preferences.favouriteThresholdInnings
        frequency = preferences.frequency
        kinds = preferences.kinds.sorted { $0.rawValue < $1.rawValue }
        quietHours = .some(
            preferences.quietHours.map {
                QuietHours(start: Self.clock($0.start), end: Self.clock($0.end), timeZone: $0.timeZone)
            })
        spoilerDelaySeconds = preferences.spoilerDelaySeconds
        jinxSafe = preferences.jinxSafe
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(thresholdInnings, forKey: .thresholdInnings)
        try container.encode(favouriteTeams, forKey: .favouriteTeams)
        try container.encode(favouriteThresholdInnings, forKey: .favouriteThresholdInnings)
        try container.encode(frequency, forKey: .frequency)
        try container.encode(kinds, forKey: .kinds)
        try container.encode(quietHours ?? nil, forKey: .quietHours)
        try container.encode(spoilerDelaySeconds, forKey: .spoilerDelaySeconds)
        try container.encode(jinxSafe, forKey: .jinxSafe)
    }

    enum CodingKeys: String, CodingKey {
        case thresholdInnings, favouriteTeams, favouriteThresholdInnings, frequency, kinds, quietHours,
            spoilerDelaySeconds, jinxSafe
    }

    /// `base` with this body's fields applied, checked; the error names the field.
    package func applied(to base: Preferences) throws -> Preferences {
        var preferences = base
        if let thresholdInnings { preferences.thresholdInnings = thresholdInnings }
        if let favouriteTeams { preferences.favouriteTeams = favouriteTeams.map { $0.uppercased() } }
        if let favouriteThresholdInnings { preferences.favouriteThresholdInnings = favouriteThresholdInnings }
        if let frequency { preferences.frequency = frequency }
        if let kinds { preferences.kinds = Set(kinds) }
        if let quietHours {
            if let quiet = quietHours {
                guard let start = Self.minutes(quiet.start), let end = Self.minutes(quiet.end) else {
                    throw BodyError(field: "quiet_hours", reason: "start and end must be HH:MM")
                }
                preferences.quietHours = .init(start: start, end: end, timeZone: quiet.timeZone)
            } else {
                preferences.quietHours = nil
            }
        }
        if let spoilerDelaySeconds { preferences.spoilerDelaySeconds = spoilerDelaySeconds }
        if let jinxSafe { preferences.jinxSafe = jinxSafe }
        return try preferences.validated()
    }

    static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let hours = Int(parts[0]), let minutes = Int(parts[1]), (0..<24).contains(hours),
            (0..<60).contains(minutes)
        else { return nil }
        return hours * 60 + minutes
    }

    static func clock(_ minutes: Int) -> String {
        String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }
}

/// A request body's field that cannot be taken, and why.
package struct BodyError: Error, Sendable, Hashable, CustomStringConvertible {
    package var field: String
    package var reason: String
    package var description: String { "\(field): \(reason)" }
}

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

    package func request() throws -> RegistrationRequest {
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

/// A moment as the API shows it: what happened, and the alert text.
package struct MomentView: Sendable, Codable {
    package var id: String
    package var gameId: String
    package var kind: Moment.Kind
    package var title: String
    package var body: String
    package var outs: Int
    package var inning: Int
    package var perfect: Bool
    package var occurredAt: Date

    package init(_ stored: StoredMoment) {
        let text = MessageText.render(stored.moment, game: stored.game, jinxSafe: false)
        id = stored.moment.id
        gameId = stored.moment.gameID
        kind = stored.moment.kind
        title = text.title
        body = text.body
        outs = stored.moment.outs
        inning = stored.moment.inning
        perfect = stored.moment.perfect
        occurredAt = stored.occurredAt
    }
}

/// What the web UI needs to start: the VAPID key, the seasons, what counts as an attempt.
package struct ClientConfiguration: Sendable, Codable {
    package var vapidPublicKey: String?
    package var seasons: [String]
    package var attemptOuts: Int
}

package struct AdminDeviceCounts: Sendable, Codable {
    package var total: Int
    package var active: Int
    package var activeByChannel: [String: Int]
}

package struct GameTimeline: Sendable, Codable {
    package var game: GameSnapshot
    package var moments: [MomentView]
}

package struct Attempt: Sendable, Codable {
    package var game: GameSnapshot
    package var bid: GameSnapshot.Bid
}

package struct HallOfFameEntry: Sendable, Codable {
    package var rank: Int
    package var side: SideSummary
}

/// Retrosheet seasons for the hall of fame: `<place>/<season>/` folders of event files, read once
/// per season.
package final class SeasonLibrary: Sendable {
    package let places: [String]
    private let cache = Mutex<[String: [SideSummary]]>([:])

    package init(places: [String]) {
        self.places = places
    }

    /// The seasons some place holds, newest first.
    package func available() -> [String] {
        let names = places.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? [] }
        return Set(names.filter { $0.count == 4 && $0.allSatisfy(\.isASCIIDigit) }).sorted(by: >)
    }

    /// The season's sides ranked for the hall of fame; nil when no place holds the season.
    package func hallOfFame(season: String) async throws -> [SideSummary]? {
        guard season.count == 4, season.allSatisfy(\.isASCIIDigit) else { return nil }
        if let known = cache.withLock({ $0[season] }) { return known }
        guard
            let folder = places.map({ ($0 as NSString).appendingPathComponent(season) }).first(where: {
                FileManager.default.fileExists(atPath: $0)
            })
        else { return nil }
        let (sides, _) = await SeasonBids.summaries(of: try EventFiles.expand([folder]))
        let ranked = SeasonBids.hallOfFame(sides)
        cache.withLock { $0[season] = ranked }
        return ranked
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
