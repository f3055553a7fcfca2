import Alerts
import Baseball
import Foundation
import NoHitterActivity

extension Payloads {
    /// What a stored start names in `input-push-channel` until it is sent: the bid's channel at this
    /// delay bucket, which the service may still be making when the start is planned.
    static let bucketPrefix = "bucket:"

    /// A push-to-start (iOS 17.2 and later): `event: start` with the activity's attributes and the
    /// bid's state, as the app's `BidActivityAttributes`. `bucket` is the spoiler-delay bucket of
    /// the broadcast channel the activity is to follow (iOS 18), named when sent
    /// (``StoredStart``); nil asks for the activity's own push token instead
    /// (`input-push-token`, iOS 17.2-17.x).
    struct LiveActivityStart: Encodable {
        struct APS: Encodable {
            var timestamp: Int
            var event = "start"
            var attributesType = "BidActivityAttributes"
            var attributes: BidActivityAttributes
            var contentState: BidActivityAttributes.ContentState
            var staleDate: Int
            var alert: Alert
            var inputPushChannel: String?
            var inputPushToken: Int?

            enum CodingKeys: String, CodingKey {
                case timestamp, event, attributes, alert
                case attributesType = "attributes-type"
                case contentState = "content-state"
                case staleDate = "stale-date"
                case inputPushChannel = "input-push-channel"
                case inputPushToken = "input-push-token"
            }
        }

        var aps: APS
    }

    /// The start of a bid's Live Activity at `moment`, following the channel of delay `bucket`
    /// (nil: by the activity's own token).
    package static func liveActivityStart(
        _ message: AlertMessage, moment: Moment, game: GameInfo, at time: Date, bucket: Int?
    ) throws -> Data {
        let seconds = Int(time.timeIntervalSince1970)
        let attributes = BidActivityAttributes(
            gameID: moment.gameID, pitchingTeam: game.team(moment.pitchingSide).abbreviation,
            battingTeam: game.team(moment.pitchingSide.opponent).abbreviation)
        return try json(
            LiveActivityStart(
                aps: .init(
                    timestamp: seconds, attributes: attributes, contentState: activityState(moment, game: game),
                    staleDate: seconds + 30 * 60, alert: Alert(title: message.title, body: message.body),
                    inputPushChannel: bucket.map { "\(bucketPrefix)\($0)" }, inputPushToken: bucket == nil ? 1 : nil)))
    }

    /// A stored start, read once to be sent: the delay bucket of the channel it is to follow (nil
    /// for a start by token), then written as sent.
    package struct StoredStart {
        var json: [String: Any]
        var aps: [String: Any]

        package init?(_ payload: Data) {
            guard let json = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any],
                let aps = json["aps"] as? [String: Any]
            else { return nil }
            (self.json, self.aps) = (json, aps)
        }

        package var bucket: Int? {
            guard let named = aps["input-push-channel"] as? String, named.hasPrefix(bucketPrefix) else { return nil }
            return Int(named.dropFirst(bucketPrefix.count))
        }

        /// Naming `channel` (its id), or with none asking for the activity's own push token, so an
        /// iOS 18 device whose app has no channel (broadcast off, the limit reached) still gets its
        /// activity, updated by token once the app registers it.
        package mutating func follow(_ channel: String?) {
            aps["input-push-channel"] = channel
            aps["input-push-token"] = channel == nil ? 1 : nil
        }

        /// The bytes sent at `now`: a start held back (by the device's budget) is not stale on
        /// arrival, its `stale-date` at least half an hour after `now`.
        package func sent(at now: Date) throws -> Data {
            var aps = aps
            aps["stale-date"] = max(aps["stale-date"] as? Int ?? 0, Int(now.timeIntervalSince1970) + 30 * 60)
            var json = json
            json["aps"] = aps
            return try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes])
        }
    }
}
