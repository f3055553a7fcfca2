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
    /// (``resolvingStart(_:channel:)``); nil asks for the activity's own push token instead
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

    /// The delay bucket of the channel a stored start is to follow; nil for a start by token.
    package static func startBucket(_ payload: Data) -> Int? {
        let json = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
        guard let named = (json?["aps"] as? [String: Any])?["input-push-channel"] as? String,
            named.hasPrefix(bucketPrefix)
        else { return nil }
        return Int(named.dropFirst(bucketPrefix.count))
    }

    /// The start as sent at `now`: naming `channel` (its id), or, with none, asking for the
    /// activity's own push token, so an iOS 18 device whose app has no channel (broadcast not turned
    /// on for it, the limit reached) still gets its activity, updated by token once the app
    /// registers it; `channel` nil leaves the start as stored. A start held back (by the device's
    /// budget) is not stale on arrival: `stale-date` at least half an hour after `now`.
    package static func resolvingStart(_ payload: Data, channel: String??, now: Date?) throws -> Data {
        guard var json = try JSONSerialization.jsonObject(with: payload) as? [String: Any],
            var aps = json["aps"] as? [String: Any]
        else { return payload }
        switch channel {
        case .some(.some(let id)):
            aps["input-push-channel"] = id
            aps["input-push-token"] = nil
        case .some(.none):
            aps["input-push-channel"] = nil
            aps["input-push-token"] = 1
        case .none:
            break
        }
        if let now {
            let stale = Int(now.timeIntervalSince1970) + 30 * 60
            aps["stale-date"] = max(aps["stale-date"] as? Int ?? 0, stale)
        }
        json["aps"] = aps
        return try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}
