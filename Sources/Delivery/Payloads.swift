import Alerts
import Baseball
import Foundation
import NoHitterActivity

/// The bytes each channel sends for a moment: `Encodable` values written by the service's one
/// JSON encoding (``WireJSON``), so the moment inside a push is the moment the API and the
/// stream give.
package enum Payloads {
    /// APNs refuses anything larger.
    package static let apnsLimit = 4096

    /// Alert words as a notification shows them.
    struct Alert: Encodable {
        var title: String
        var body: String
    }

    /// An APNs alert: `aps.alert`, a thread per bid, time-sensitive, and the moment.
    struct APNsAlert: Encodable {
        struct APS: Encodable {
            var alert: Alert
            var sound = "default"
            var threadID: String
            var interruptionLevel = "time-sensitive"

            enum CodingKeys: String, CodingKey {
                case alert, sound
                case threadID = "thread-id"
                case interruptionLevel = "interruption-level"
            }
        }

        var aps: APS
        /// None in a test push.
        var moment: MomentView?
    }

    /// A Live Activity update: the bid's state (the type the app decodes it with,
    /// `BidActivityAttributes.ContentState`), and an `end` once the bid is over.
    struct LiveActivityUpdate: Encodable {
        struct APS: Encodable {
            var timestamp: Int
            var event: String
            var contentState: BidActivityAttributes.ContentState
            var staleDate: Int
            var dismissalDate: Int?
            var alert: Alert

            enum CodingKeys: String, CodingKey {
                case timestamp, event, alert
                case contentState = "content-state"
                case staleDate = "stale-date"
                case dismissalDate = "dismissal-date"
            }
        }

        var aps: APS
    }

    /// A Web Push message's plaintext (encrypted per subscription when sent).
    struct WebPushMessage: Encodable {
        var title: String
        var body: String
        var tag: String
        var moment: MomentView?
    }

    /// A webhook body.
    struct WebhookBody: Encodable {
        var type: String
        var moment: MomentView?
        var message: Alert
    }

    /// `value` in the one encoding (it throws only for a number JSON cannot write).
    static func json(_ value: some Encodable) throws -> Data {
        try WireJSON.encoder.encode(value)
    }

    /// An APNs alert, its body shortened until the whole fits in APNs' 4 KB.
    package static func apnsAlert(_ message: AlertMessage, moment: Moment, game: GameInfo) throws -> Data {
        var message = message
        let view = MomentView(moment, game: game)
        while true {
            let data = try json(
                APNsAlert(
                    aps: .init(alert: Alert(title: message.title, body: message.body), threadID: message.bidKey),
                    moment: view))
            if data.count <= apnsLimit || message.body.isEmpty { return data }
            message.body = String(message.body.dropLast(max(16, data.count - apnsLimit)))
        }
    }

    /// A Live Activity update carrying the bid's state (`end` once the bid is over).
    package static func liveActivity(_ message: AlertMessage, moment: Moment, game: GameInfo, at time: Date) throws
        -> Data
    {
        let alive = moment.kind.bidStillAlive
        let seconds = Int(time.timeIntervalSince1970)
        let state = activityState(moment, game: game)
        return try json(
            LiveActivityUpdate(
                aps: .init(
                    timestamp: seconds, event: alive ? "update" : "end", contentState: state,
                    staleDate: seconds + 30 * 60,
                    dismissalDate: alive ? nil : seconds + 60 * 60,
                    alert: Alert(title: message.title, body: message.body))))
    }

    /// The bid's state at `moment`, as the lock screen shows it.
    static func activityState(_ moment: Moment, game: GameInfo) -> BidActivityAttributes.ContentState {
        let alive = moment.kind.bidStillAlive
        return BidActivityAttributes.ContentState(
            status: alive ? "alive" : moment.kind.rawValue, outs: moment.outs, innings: moment.outs / 3,
            perfect: moment.perfect, pitchers: moment.pitchers.map { game.name(of: $0) },
            score: .init(away: moment.score.away, home: moment.score.home),
            pitchingTeam: game.team(moment.pitchingSide).abbreviation,
            battingTeam: game.team(moment.pitchingSide.opponent).abbreviation,
            batter: moment.batter.map { game.name(of: $0) }, chance: alive ? moment.odds?.share : nil,
            lastPlay: moment.lastPlay)
    }

    /// Whether a Live Activity update (from ``liveActivity(_:moment:game:at:)``) ends the activity:
    /// the bid is over, which the fan must see now (a broadcast's priority 10).
    package static func endsActivity(_ payload: Data) -> Bool {
        let json = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
        return (json?["aps"] as? [String: Any])?["event"] as? String == "end"
    }

    /// The plaintext of a Web Push message (encrypted per subscription when sent).
    package static func webPush(_ message: AlertMessage, moment: Moment, game: GameInfo) throws -> Data {
        try json(
            WebPushMessage(
                title: message.title, body: message.body, tag: message.bidKey, moment: MomentView(moment, game: game)))
    }

    /// A webhook body.
    package static func webhook(_ message: AlertMessage, moment: Moment, game: GameInfo) throws -> Data {
        try json(
            WebhookBody(
                type: "moment.\(moment.kind.rawValue)", moment: MomentView(moment, game: game),
                message: Alert(title: message.title, body: message.body)))
    }

    /// A test push's bytes for `kind` (`nohit push test`): an alert of that channel without a
    /// moment; nil for a Live Activity, which has no alert of its own to test.
    package static func test(_ kind: ChannelKind, title: String, body: String) throws -> Data? {
        let alert = Alert(title: title, body: body)
        switch kind {
        case .apns: return try json(APNsAlert(aps: .init(alert: alert, threadID: "nohit-test"), moment: nil))
        case .webPush: return try json(WebPushMessage(title: title, body: body, tag: "nohit-test", moment: nil))
        case .webhook: return try json(WebhookBody(type: "test", moment: nil, message: alert))
        case .console: return Data("\(title) — \(body)".utf8)
        case .liveActivity, .liveActivityChannel, .liveActivityStart: return nil
        }
    }

    /// What the console prints.
    package static func console(_ message: AlertMessage) -> Data {
        Data("\(message.title) — \(message.body)".utf8)
    }
}
