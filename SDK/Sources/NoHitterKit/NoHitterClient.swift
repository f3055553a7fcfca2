import Foundation
import NoHitterActivity

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The No-Hitter Alerts service's API for an app: register the device, read and change its
/// preferences (threshold, favourite teams, deals), and read today's deals. JSON keys are the
/// server's (snake case).
public struct NoHitterClient: Sendable {
    /// Where the service is, e.g. `https://alerts.example.org/`.
    public let baseURL: URL
    public let transport: any HTTPTransport

    public init(baseURL: URL, transport: any HTTPTransport = URLSessionTransport()) {
        self.baseURL = baseURL
        self.transport = transport
    }

    /// A registered device: its id and the secret that authorizes changes to it (keep it in the
    /// keychain; the server keeps only its hash).
    public struct Credentials: Sendable, Codable, Hashable {
        public var id: String
        public var secret: String

        public init(id: String, secret: String) {
            self.id = id
            self.secret = secret
        }
    }

    /// How a device is reached.
    public enum Channel: Sendable, Hashable {
        /// An APNs device token (hex), its environment (`production` or `sandbox`) and the app's topic.
        case apns(token: String, environment: String, topic: String)
        /// A Live Activity's own push token (the activity's `pushTokenUpdates`), its environment,
        /// the app's topic, and the activity's attributes (`activity.attributes`): the server updates
        /// that activity by it with every change of the bid the attributes name, and nothing of
        /// another bid. Without attributes, it gets every bid past the device's threshold.
        case liveActivity(token: String, environment: String, topic: String, bid: BidActivityAttributes? = nil)
        /// The app's push-to-start token (iOS 17.2 and later,
        /// `Activity<BidActivityAttributes>.pushToStartTokenUpdates`): the server starts a bid's
        /// activity on the device, once per bid it follows. `updates` is `channel` (iOS 18: the
        /// activity follows the bid's broadcast channel) or `token` (iOS 17.2-17.x: register the
        /// activity's own token as ``liveActivity(token:environment:topic:bid:)`` once it starts).
        case liveActivityStart(token: String, environment: String, topic: String, updates: String)
        /// A Web Push subscription.
        case webPush(endpoint: String, p256dh: String, auth: String)
        /// A webhook URL and the secret its requests are signed with.
        case webhook(url: String, secret: String)

        var body: [String: String] {
            switch self {
            case .apns(let token, let environment, let topic):
                ["channel": "apns", "token": token, "environment": environment, "topic": topic]
            case .liveActivity(let token, let environment, let topic, let bid):
                ["channel": "live-activity", "token": token, "environment": environment, "topic": topic].merging(
                    bid.map { ["game_id": $0.gameID, "pitching_team": $0.pitchingTeam] } ?? [:]
                ) { first, _ in first }
            case .liveActivityStart(let token, let environment, let topic, let updates):
                [
                    "channel": "live-activity-start", "token": token, "environment": environment, "topic": topic,
                    "updates": updates,
                ]
            case .webPush(let endpoint, let p256dh, let auth):
                ["channel": "web-push", "endpoint": endpoint, "p256dh": p256dh, "auth": auth]
            case .webhook(let url, let secret): ["channel": "webhook", "url": url, "secret": secret]
            }
        }
    }

    /// A device's preferences as the server keeps them. On update, a field left `nil` stays as
    /// it was.
    public struct Preferences: Sendable, Codable, Hashable {
        public var thresholdInnings: Int?
        public var favouriteTeams: [String]?
        public var favouriteThresholdInnings: Int?
        /// `once-per-bid`, `every-inning` or `every-out-in-ninth`.
        public var frequency: String?
        public var spoilerDelaySeconds: Int?
        public var jinxSafe: Bool?
        /// Deal rule ids (`deals(today:)` lists them).
        public var deals: [String]?
        /// Be told of a bid at the first out where this share (0.25) of such bids in history
        /// ended as no-hitters, instead of at `thresholdInnings`.
        public var minOdds: Double?
        /// Be told of bids that cannot count as official no-hitters (a 7-inning doubleheader
        /// game), each alert saying so (the server's default: true).
        public var unofficialBids: Bool?

        public init(
            thresholdInnings: Int? = nil, favouriteTeams: [String]? = nil, favouriteThresholdInnings: Int? = nil,
            frequency: String? = nil, spoilerDelaySeconds: Int? = nil, jinxSafe: Bool? = nil, deals: [String]? = nil,
            minOdds: Double? = nil, unofficialBids: Bool? = nil
        ) {
            self.thresholdInnings = thresholdInnings
            self.favouriteTeams = favouriteTeams
            self.favouriteThresholdInnings = favouriteThresholdInnings
            self.frequency = frequency
            self.spoilerDelaySeconds = spoilerDelaySeconds
            self.jinxSafe = jinxSafe
            self.deals = deals
            self.minOdds = minOdds
            self.unofficialBids = unofficialBids
        }
    }

    /// A deal as `GET /api/deals/today` tells it.
    public struct Deal: Sendable, Codable, Hashable {
        public var rule: String
        public var sponsor: String
        public var reward: String
        public var code: String?
        public var day: String
        /// Whether today is a deal day.
        public var on: Bool
        public var inForce: Bool
        public var condition: String
        /// Why today is not a deal day ("the Nationals lost 3-5 yesterday"); nil when it is.
        public var whyNot: String?
    }

    /// Registers this device; the answer's secret authorizes every later change.
    public func register(_ channel: Channel, preferences: Preferences? = nil) async throws -> Credentials {
        var body =
            try JSONSerialization.jsonObject(with: try Self.encoder.encode(channel.body)) as? [String: Any] ?? [:]
        if let preferences {
            body["preferences"] = try JSONSerialization.jsonObject(with: try Self.encoder.encode(preferences))
        }
        let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        return try await call("POST", "api/devices", body: data, expecting: 201)
    }

    public func preferences(of device: Credentials) async throws -> Preferences {
        try await call("GET", "api/devices/\(device.id)/preferences", device: device)
    }

    /// Changes the fields given (the others stay); the answer is the whole of them after.
    public func updatePreferences(_ changes: Preferences, of device: Credentials) async throws -> Preferences {
        try await call(
            "PUT", "api/devices/\(device.id)/preferences", device: device, body: try Self.encoder.encode(changes))
    }

    /// Sets the device's favourite teams (MLB abbreviations such as `NYY`, or Retrosheet codes; the
    /// answer names them by their Retrosheet codes, `NYA`).
    public func setFavouriteTeams(_ teams: [String], of device: Credentials) async throws -> Preferences {
        try await updatePreferences(Preferences(favouriteTeams: teams), of: device)
    }

    /// Sets the deals the device hears about.
    public func setDeals(_ rules: [String], of device: Credentials) async throws -> Preferences {
        try await updatePreferences(Preferences(deals: rules), of: device)
    }

    /// Today's deals, each with whether it is on.
    public func dealsToday() async throws -> [Deal] {
        struct Answer: Decodable { var deals: [Deal] }
        let answer: Answer = try await call("GET", "api/deals/today")
        return answer.deals
    }

    /// The broadcast channel (iOS 18) the service keeps for a bid, as
    /// `GET /api/games/{id}/live-activity-channel` tells it.
    public struct LiveActivityChannel: Sendable, Codable, Hashable {
        /// APNs's channel id: start the activity on it (`BidActivityAttributes.follow(_:state:channel:)`).
        public var channelID: String
        public var gameID: String
        /// The side pitching (`home` or `away`): the bid the channel follows.
        public var side: String
        public var topic: String
        public var environment: String
        /// The spoiler delay its broadcasts are held back by (the one asked, rounded up).
        public var delay: Int
    }

    /// The channel to start a bid's Live Activity on, for this app (`topic`, its bundle id), its
    /// environment and the fan's spoiler delay; `side` (`home` or `away`, the side pitching) when
    /// both sides of the game hold a bid. Nil while the service has none yet (it makes one when the
    /// bid is first worth following): start the activity with its own push token then.
    public func liveActivityChannel(
        game: String, topic: String, environment: String = "production", delay: Int = 0, side: String? = nil
    ) async throws -> LiveActivityChannel? {
        var query = [("topic", topic), ("environment", environment), ("delay", String(delay))]
        if let side { query.append(("side", side)) }
        do {
            return try await call("GET", "api/games/\(game)/live-activity-channel", query: query)
        } catch NoHitterError.http(let status, _) where status == 404 {
            return nil
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    func call<Answer: Decodable>(
        _ method: String, _ path: String, query: [(String, String)] = [], device: Credentials? = nil,
        body: Data? = nil, expecting: Int = 200
    ) async throws -> Answer {
        var url = baseURL.appendingPathComponent(path)
        if !query.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
            url = components.url ?? url
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = 30
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let device { request.setValue("Bearer \(device.secret)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (status, answer) = try await transport.send(request)
        guard status == expecting else { throw NoHitterError.http(status: status, message: Self.message(answer)) }
        do {
            return try Self.decoder.decode(Answer.self, from: answer)
        } catch {
            throw NoHitterError.unexpectedAnswer("\(method) \(path): \(error)")
        }
    }

    /// The server's error message (`{"error":{"message":…}}`), or the body as text.
    static func message(_ body: Data) -> String {
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        if let error = object?["error"] as? [String: Any], let message = error["message"] as? String { return message }
        return String(decoding: body.prefix(500), as: UTF8.self)
    }
}
