import Alerts
import Delivery
import Foundation
import Retrosheet
import Storage
import Synchronization

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
