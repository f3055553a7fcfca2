import Alerts
import Baseball
import Foundation
import Logging
import Pipeline
import Scores
import Storage

/// The live board and the live stream as a consumer of game changes: the change's moments go on
/// the stream (after the alert publisher stored them: it comes first), then the game as it
/// stands. The same for every source.
package struct LiveConsumer: GameChangeConsumer {
    package let board: LiveBoard
    package let feed: LiveFeed

    package init(board: LiveBoard, feed: LiveFeed) {
        self.board = board
        self.feed = feed
    }

    /// Stream ids per item of the shared game log: item N's events are N × 4096 + 0, 1, 2 ...
    package static let idsPerItem = 4096

    package func consume(_ change: GameChange) async throws {
        // Numbered from the item's place in the shared game log when there is one, so that every
        // instance gives the same event the same id (Last-Event-ID resumes on any of them).
        var next = change.sequence.map { Int($0) * Self.idsPerItem }
        func id() -> Int? {
            defer { next = next.map { $0 + 1 } }
            return next
        }
        // A no-hit bid's moments; a score alert's news is the game's `score` event.
        for moment in change.moments where moment.kind.isBid {
            feed.publish(moment, game: change.game.info, at: change.time, id: id())
        }
        guard let recorded = board.record(change.game, at: change.time) else { return }
        if let score = recorded.score { feed.publish(score, id: id(), at: change.time) }
        feed.publish(recorded.snapshot, id: id(), at: change.time)
    }
}

extension LiveFeed {
    /// A moment as the stream's `moment` event (numbered `id` when given).
    package func publish(_ moment: Moment, game: GameInfo, at time: Date, id: Int? = nil) {
        let view = MomentView(StoredMoment(moment: moment, game: game, occurredAt: time))
        guard let data = Self.encoded(view, what: "moment \(moment.id)") else { return }
        publish(.moment, data: data, id: id, at: time)
    }

    /// A game's new score line, as the stream's `score` event.
    package func publish(_ score: ScoreLine, id: Int? = nil, at time: Date? = nil) {
        guard let data = Self.encoded(score, what: "score line \(score.id)") else { return }
        publish(.score, data: data, key: score.id, id: id, at: time)
    }

    /// A game as it stands, as the stream's `game` event.
    package func publish(_ snapshot: GameSnapshot, id: Int? = nil, at time: Date? = nil) {
        guard let data = Self.encoded(snapshot, what: "game \(snapshot.id)") else { return }
        publish(.game, data: data, key: snapshot.id, id: id, at: time)
    }

    /// `value` in the one encoding; one that cannot be written (a number JSON has no form for)
    /// is logged and left off the stream, and the stream goes on.
    private static func encoded(_ value: some Encodable, what: String) -> String? {
        do {
            return String(decoding: try API.encoder.encode(value), as: UTF8.self)
        } catch {
            Logger(label: "nohit.stream").error(
                "an event cannot be written; it is left off the stream",
                metadata: ["event": "\(what)", "error": "\(error)"])
            return nil
        }
    }
}
