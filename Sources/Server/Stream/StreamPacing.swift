import NIOCore
import Synchronization

/// Keeps each live-stream client to a few batches waiting on its connection's event loop, so that
/// a server short of CPU sends every client the latest state instead of a growing backlog.
///
/// A client's task hands each write to the connection's event loop as a task of its own. When the
/// loop falls behind (a machine whose other work takes the CPU), those writes pile up in the loop's
/// queue, every intermediate state of every game in it, and what a client reads lags further with
/// every event; the subscription, where a newer state of a game replaces an older one and moments
/// go first, never sees the backlog. With pacing, each batch is followed in the loop's queue by a
/// mark; a client whose loop has not reached the marks of `limit` of its batches waits for it
/// before taking its next batch, and what comes meanwhile waits (coalesced) in its subscription.
/// A loop that keeps up reaches each mark long before the next batch: nothing waits then.
package final class StreamPacing: Sendable {
    /// The batches one client may have queued on its event loop before it waits; nil: no pacing
    /// (every batch is queued at once, as before pacing: for comparisons).
    package let limit: Int?
    private let waits = Atomic<Int>(0)

    package init(limit: Int? = 2) {
        precondition((limit ?? 1) >= 1, "a client must be allowed at least one batch in flight")
        self.limit = limit
    }

    /// How many times a client waited for its event loop to catch up (each time, what came
    /// meanwhile was coalesced in its subscription).
    package var waitCount: Int { waits.load(ordering: .relaxed) }

    /// The pacer for one client's stream on `eventLoop`.
    func pacer(on eventLoop: any EventLoop) -> StreamPacer {
        StreamPacer(eventLoop: eventLoop, pacing: self)
    }

    fileprivate func waited() { waits.add(1, ordering: .relaxed) }
}

/// One client's pacing: owned by the client's task (its count of batches queued) and by the
/// marks it queues on the event loop (the count the loop has reached).
struct StreamPacer: ~Copyable {
    private final class Reached: Sendable {
        struct State {
            var reached = 0
            /// The task waiting for the loop to reach this batch.
            var waiter: (batch: Int, continuation: CheckedContinuation<Void, Never>)?
        }
        let state = Mutex(State())
    }

    private let eventLoop: any EventLoop
    private let pacing: StreamPacing
    private let reached = Reached()
    private var queued = 0

    fileprivate init(eventLoop: any EventLoop, pacing: StreamPacing) {
        self.eventLoop = eventLoop
        self.pacing = pacing
    }

    /// After a batch's writes were handed to the connection: marks its place in the loop's queue
    /// (a task behind the writes), and when `limit` batches are not reached yet, waits until the
    /// loop has run all of them.
    mutating func queuedBatch() async {
        guard let limit = pacing.limit else { return }
        queued += 1
        let (reached, batch) = (reached, queued)
        eventLoop.execute {
            let waiter = reached.state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.reached = batch
                guard let waiter = state.waiter, waiter.batch <= batch else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            waiter?.resume()
        }
        let behind = reached.state.withLock { batch - $0.reached >= limit }
        guard behind else { return }
        pacing.waited()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = reached.state.withLock { state -> Bool in
                if state.reached >= batch { return true }
                state.waiter = (batch, continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
