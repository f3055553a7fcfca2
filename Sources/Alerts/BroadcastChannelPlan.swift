import Baseball
import Foundation

/// Which broadcast channels (iOS 18) a bid needs: one per followed bid (a game and the side
/// pitching) per spoiler-delay bucket, per app and environment, made when the bid is first worth
/// following to a device of that app. The devices' own preferences say which bids are worth it
/// (``Planner``); a fan's delay is rounded up to a bucket, as the stream's is. Pure.
package enum BroadcastChannelPlan {
    /// The spoiler delays a channel is kept for, in seconds (those the stream serves): a fan's
    /// delay is rounded up to one of them, so the lock screen is never ahead of the fan's stream.
    package static let buckets = [0, 30, 60, 120, 300]

    /// What a channel's id is while the service makes it: written before APNs is asked, so a stop
    /// between the two is known at the next start (and APNs's channel, if made, deleted).
    package static let intentPrefix = "making-"

    /// Whether `id` is a channel being made, not yet APNs's.
    package static func isIntent(_ id: String) -> Bool { id.hasPrefix(intentPrefix) }

    /// A channel: the bid, the app, the environment and the delay.
    package struct Key: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The bid (``Moment/bidKey``): `<game id>-home` or `-away`, the side pitching.
        package var bid: String
        package var topic: String
        package var environment: APNsEnvironment
        package var delay: Int

        package init(bid: String, topic: String, environment: APNsEnvironment, delay: Int) {
            self.bid = bid
            self.topic = topic
            self.environment = environment
            self.delay = delay
        }

        /// The bid of `side` pitching in `gameID`.
        package static func bid(gameID: String, side: Side) -> String {
            "\(gameID)-\(side == .away ? "away" : "home")"
        }

        /// The game the bid is in.
        package var gameID: String { String(bid.prefix { $0 != "-" }) }

        package static func < (a: Key, b: Key) -> Bool {
            (a.bid, a.topic, a.environment.rawValue, a.delay) < (b.bid, b.topic, b.environment.rawValue, b.delay)
        }

        package var description: String { "\(bid) \(topic) (\(environment.rawValue)) \(delay) s behind" }

        /// The key of a channel the service made or is making (nil for any other device).
        package init?(_ device: Device) {
            guard case .liveActivityChannel(_, let bid, let environment, let topic) = device.channel else {
                return nil
            }
            self.init(bid: bid, topic: topic, environment: environment, delay: device.preferences.spoilerDelaySeconds)
        }
    }

    /// The bucket for a fan's delay: the smallest at least as long (the longest past it).
    package static func bucket(for delay: Int) -> Int {
        buckets.first { $0 >= delay } ?? buckets[buckets.count - 1]
    }

    /// The channels `moment` makes worth having: for each app's device (an iOS app's, or a Live
    /// Activity's, or one to start by push naming the channel) the planner would tell of this bid, the bid at its delay's bucket.
    package static func wanted(_ moment: Moment, teams: [String], at time: Date, devices: [Device]) -> Set<Key> {
        guard moment.kind.isBid, moment.kind.bidStillAlive else { return [] }
        var keys = Set<Key>()
        for device in devices {
            let (environment, topic): (APNsEnvironment, String)
            switch device.channel {
            // (An activity's token that names its bid is updated by that token, not a channel.)
            case .apns(_, let env, let bundle), .liveActivity(_, let env, let bundle, nil),
                .liveActivityStart(_, let env, let bundle, .channel):
                (environment, topic) = (env, bundle)
            default: continue
            }
            let delay = bucket(for: device.preferences.spoilerDelaySeconds)
            let key = Key(bid: moment.bidKey, topic: topic, environment: environment, delay: delay)
            if keys.contains(key) { continue }
            // Asked as that app's Live Activity: the lock screen's rules (no quiet hours, every
            // bid past the threshold), with the device's own preferences.
            var asked = device
            asked.channel = .liveActivity(token: "", environment: environment, topic: topic)
            if case .send = Planner.decide(moment, teams: teams, at: time, device: asked, history: DeviceBidHistory()) {
                keys.insert(key)
            }
        }
        return keys
    }

    /// The preferences a channel is kept with: its delay; everything else the planner asks of a
    /// channel is its bid (``Planner``).
    package static func preferences(for key: Key) -> Preferences {
        var preferences = Preferences()
        preferences.spoilerDelaySeconds = key.delay
        return preferences
    }
}
