import Foundation
import ServiceLifecycle
import Storage
import Synchronization

/// The moments of every game change, through the publisher: planned and written to the outbox
/// (each moment once, however often it is derived), before any consumer after it sees the change.
package struct AlertConsumer: GameChangeConsumer {
    package let publisher: MomentPublisher
    package let counts = Counts()
    /// A moment the database refuses for a fault of the machine (a full disk) is tried again
    /// until it is stored: the game waits for it, and no moment is passed over.
    package let storage: StorageHealth

    package init(publisher: MomentPublisher, storage: StorageHealth = StorageHealth()) {
        self.publisher = publisher
        self.storage = storage
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
            let published: MomentPublisher.Published
            do {
                published = try await storage.persist(
                    "a moment and its alerts", stopping: { Task.isShuttingDownGracefully }
                ) {
                    try await publisher.publish(moment, game: change.game.info, at: change.time)
                }
            } catch is StorageFault {
                // Stopping while the database takes nothing: the source stops here, as on any
                // graceful stop; the moment is derived again at the next start.
                throw CancellationError()
            }
            counts.add(published, score: !moment.kind.isBid)
        }
    }
}
