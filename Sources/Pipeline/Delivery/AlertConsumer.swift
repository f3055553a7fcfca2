import Foundation
import Synchronization

/// The moments of every game change, through the publisher: planned and written to the outbox
/// (each moment once, however often it is derived), before any consumer after it sees the change.
package struct AlertConsumer: GameChangeConsumer {
    package let publisher: MomentPublisher
    package let counts = Counts()

    package init(publisher: MomentPublisher) {
        self.publisher = publisher
    }

    /// What the publisher did so far.
    package final class Counts: Sendable {
        private let state = Mutex((moments: 0, new: 0, deliveries: 0, scores: 0))
        /// Bid moments derived, bid moments stored for the first time, deliveries planned (score
        /// alerts' included), score alerts derived.
        package var value: (moments: Int, new: Int, deliveries: Int, scores: Int) { state.withLock { $0 } }

        func add(_ published: MomentPublisher.Published, score: Bool) {
            state.withLock {
                if score {
                    $0.scores += 1
                } else {
                    $0.moments += 1
                    if published.isNew { $0.new += 1 }
                }
                $0.deliveries += published.deliveries
            }
        }
    }

    package func consume(_ change: GameChange) async throws {
        for moment in change.moments {
            counts.add(
                try await publisher.publish(moment, game: change.game.info, at: change.time), score: !moment.kind.isBid
            )
        }
    }
}
