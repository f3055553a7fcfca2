import Foundation

#if canImport(ActivityKit)
    import ActivityKit
#endif

/// A no-hit bid's Live Activity: what stays for the activity's life (the game and its sides) and
/// what every update carries (`ContentState`). The server writes the content state of each push
/// with this type, and ActivityKit decodes it with a plain `JSONDecoder`, so its keys are spelled
/// here once for both (snake case, as the service's API).
///
/// In the app, `BidActivityAttributes` is the activity's `ActivityAttributes` (iOS 16.1 and
/// later). Its Info.plist needs `NSSupportsLiveActivities` (YES) and, for the updates of the last
/// outs sent at priority 10, `NSSupportsLiveActivitiesFrequentUpdates` (YES).
public struct BidActivityAttributes: Codable, Hashable, Sendable {
    /// The service's id of the game (`CHA202008250`).
    public var gameID: String
    /// MLB's abbreviations of the side in the field (whose bid it is) and the side at bat.
    public var pitchingTeam: String
    public var battingTeam: String

    public init(gameID: String, pitchingTeam: String, battingTeam: String) {
        self.gameID = gameID
        self.pitchingTeam = pitchingTeam
        self.battingTeam = battingTeam
    }

    enum CodingKeys: String, CodingKey {
        case gameID = "game_id"
        case pitchingTeam = "pitching_team"
        case battingTeam = "batting_team"
    }

    /// The bid as it stands: what the lock screen shows.
    public struct ContentState: Codable, Hashable, Sendable {
        public struct Score: Codable, Hashable, Sendable {
            public var away: Int
            public var home: Int

            public init(away: Int, home: Int) {
                self.away = away
                self.home = home
            }
        }

        /// `alive` while the bid goes on; once over, what ended it: `completed` (the no-hitter is
        /// official), `broken-up` (the first hit), `ended-not-official` (see the alert).
        public var status: String
        /// Outs the side has recorded without a hit, and the innings they make.
        public var outs: Int
        public var innings: Int
        public var perfect: Bool
        /// The bid's pitchers in order.
        public var pitchers: [String]
        public var score: Score
        public var pitchingTeam: String
        public var battingTeam: String
        /// Who was at the plate for the play, where known.
        public var batter: String?
        /// The bid's chance of ending as a no-hitter (0 to 1), from history, while it is alive.
        public var chance: Double?
        /// The play in words.
        public var lastPlay: String?

        public init(
            status: String, outs: Int, innings: Int, perfect: Bool, pitchers: [String], score: Score,
            pitchingTeam: String, battingTeam: String, batter: String? = nil, chance: Double? = nil,
            lastPlay: String? = nil
        ) {
            self.status = status
            self.outs = outs
            self.innings = innings
            self.perfect = perfect
            self.pitchers = pitchers
            self.score = score
            self.pitchingTeam = pitchingTeam
            self.battingTeam = battingTeam
            self.batter = batter
            self.chance = chance
            self.lastPlay = lastPlay
        }

        /// Whether the bid is still going on.
        public var isAlive: Bool { status == "alive" }

        enum CodingKeys: String, CodingKey {
            case status, outs, innings, perfect, pitchers, score, batter, chance
            case pitchingTeam = "pitching_team"
            case battingTeam = "batting_team"
            case lastPlay = "last_play"
        }
    }
}

#if canImport(ActivityKit)
    @available(iOS 16.1, *)
    extension BidActivityAttributes: ActivityAttributes {}

    @available(iOS 18.0, *)
    extension BidActivityAttributes {
        /// Starts the bid's Live Activity following the service's broadcast channel for it: one
        /// request from the server updates every activity on the channel.
        public static func follow(
            _ attributes: BidActivityAttributes, state: ContentState, channel: String
        ) throws -> Activity<BidActivityAttributes> {
            try Activity.request(
                attributes: attributes, content: ActivityContent(state: state, staleDate: nil),
                pushType: .channel(channel))
        }
    }

    @available(iOS 17.2, *)
    extension BidActivityAttributes {
        /// The app's push-to-start tokens as the system gives them (hex, as the server takes them):
        /// register each with `NoHitterClient.register(.liveActivityStart(token:environment:topic:updates:))`
        /// — `updates: "channel"` on iOS 18, `"token"` on 17.2-17.x. Every activity started by push
        /// that has a token of its own (`Activity.pushTokenUpdates`: always on 17.2-17.x, and on
        /// iOS 18 when the server had no channel for it) is then registered as
        /// `.liveActivity(token:environment:topic:bid: activity.attributes)`, so it hears its bid only.
        public static var pushToStartTokens: AsyncMapSequence<Activity<BidActivityAttributes>.PushTokenUpdates, String>
        {
            Activity<BidActivityAttributes>.pushToStartTokenUpdates.map { token in
                token.map { String(format: "%02x", $0) }.joined()
            }
        }

        /// How an activity started by push hears the bid on this system: `channel` from iOS 18,
        /// `token` before.
        public static var startUpdates: String {
            if #available(iOS 18.0, *) { return "channel" }
            return "token"
        }
    }
#endif
