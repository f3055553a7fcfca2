import Alerts
import Baseball
import Foundation

/// The bytes each channel sends for a moment.
package enum Payloads {
    /// APNs refuses anything larger.
    package static let apnsLimit = 4096

    /// The moment's facts, for apps and webhooks to act on.
    static func momentObject(_ moment: Moment, game: GameInfo) -> [String: Any] {
        MomentView(moment, game: game).object
    }

    static func json(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    }

    /// An APNs alert: `aps.alert`, a thread per bid, time-sensitive, and the moment.
    package static func apnsAlert(_ message: AlertMessage, moment: Moment, game: GameInfo) -> Data {
        var message = message
        while true {
            let data = json([
                "aps": [
                    "alert": ["title": message.title, "body": message.body], "sound": "default",
                    "thread-id": message.bidKey, "interruption-level": "time-sensitive",
                ],
                "moment": momentObject(moment, game: game),
            ])
            if data.count <= apnsLimit || message.body.isEmpty { return data }
            message.body = String(message.body.dropLast(max(16, data.count - apnsLimit)))
        }
    }

    /// A Live Activity update carrying the bid's state (`end` once the bid is over).
    package static func liveActivity(_ message: AlertMessage, moment: Moment, game: GameInfo, at time: Date) -> Data {
        let state: [String: Any] = [
            "status": moment.kind.bidStillAlive ? "alive" : moment.kind.rawValue, "outs": moment.outs,
            "innings": moment.outs / 3, "perfect": moment.perfect,
            "pitchers": moment.pitchers.map { game.name(of: $0) },
            "score": ["away": moment.score.away, "home": moment.score.home],
            "pitching_team": game.team(moment.pitchingSide).abbreviation,
            "batting_team": game.team(moment.pitchingSide.opponent).abbreviation,
        ]
        var aps: [String: Any] = [
            "timestamp": Int(time.timeIntervalSince1970), "event": moment.kind.bidStillAlive ? "update" : "end",
            "content-state": state, "stale-date": Int(time.timeIntervalSince1970) + 30 * 60,
            "alert": ["title": message.title, "body": message.body],
        ]
        if !moment.kind.bidStillAlive { aps["dismissal-date"] = Int(time.timeIntervalSince1970) + 60 * 60 }
        return json(["aps": aps])
    }

    /// The plaintext of a Web Push message (encrypted per subscription when sent).
    package static func webPush(_ message: AlertMessage, moment: Moment, game: GameInfo) -> Data {
        json([
            "title": message.title, "body": message.body, "tag": message.bidKey,
            "moment": momentObject(moment, game: game),
        ])
    }

    /// A webhook body.
    package static func webhook(_ message: AlertMessage, moment: Moment, game: GameInfo) -> Data {
        json([
            "type": "moment.\(moment.kind.rawValue)", "moment": momentObject(moment, game: game),
            "message": ["title": message.title, "body": message.body],
        ])
    }

    /// What the console prints.
    package static func console(_ message: AlertMessage) -> Data {
        Data("\(message.title) — \(message.body)".utf8)
    }
}
