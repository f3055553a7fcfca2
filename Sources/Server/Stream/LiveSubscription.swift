import Foundation
import Synchronization

/// One client of the live stream: the events it has not received yet, coalesced as they come.
/// Iterating gives the events one at a time; `nextBatch()` gives all that are waiting at once.
package final class LiveSubscription: AsyncSequence, Sendable {
    package typealias Element = LiveEvent

    enum Offer {
        /// Queued (superseding a waiting event of the same kind and game or not); the writer to
        /// wake if it was waiting.
        case queued(CheckedContinuation<LiveBatch?, Never>?, superseded: Bool = false)
        case full
    }

    private struct State {
        var pending = PendingEvents()
        var waiter: CheckedContinuation<LiveBatch?, Never>?
        var finished = false
    }

    private let state = Mutex(State())
    private let limit: Int
    /// Events up to this id are not for this client: it saw them (on this instance or another).
    private let after: Int
    let onTermination: Mutex<(@Sendable () -> Void)?>

    init(limit: Int, after: Int = 0) {
        self.limit = limit
        self.after = after
        onTermination = Mutex(nil)
    }

    /// Queues an event, superseding a waiting one of the same kind and game (unless `coalesce` is
    /// false: what a resuming client missed is given whole); `.full` when more than `limit` events
    /// would wait (the client is let go). A heartbeat is queued only when nothing else waits.
    func offer(_ event: LiveEvent, coalesce: Bool = true) -> Offer {
        if event.kind != .heartbeat && event.id <= after { return .queued(nil) }
        return state.withLock { state in
            guard !state.finished else { return .queued(nil) }
            guard let superseded = state.pending.offer(event, coalesce: coalesce, limit: limit) else { return .full }
            // The writer was waiting: it is handed what waits (outside the feed's lock).
            guard state.pending.count > 0, let waiter = state.waiter else {
                return .queued(nil, superseded: superseded)
            }
            state.waiter = nil
            return .queued(waiter, superseded: superseded)
        }
    }

    /// Takes what waits for a waiter that `offer` handed back (outside the feed's lock).
    func wake(_ waiter: CheckedContinuation<LiveBatch?, Never>) {
        let batch = state.withLock { state -> LiveBatch? in state.pending.count == 0 ? nil : state.pending.take() }
        if let batch {
            waiter.resume(returning: batch)
        } else {
            // Taken already by a concurrent `nextBatch`; wait again.
            let finished = state.withLock { state -> Bool in
                if state.finished { return true }
                state.waiter = waiter
                return false
            }
            if finished { waiter.resume(returning: nil) }
        }
    }

    /// Ends the subscription: what waits is still given, then nil.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<LiveBatch?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Every event waiting now, or the next ones to come; nil once the subscription has ended and
    /// nothing waits (or the task is cancelled).
    package func nextBatch() async -> LiveBatch? {
        if Task.isCancelled { terminate(); return nil }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<LiveBatch?, Never>) in
                let ready = state.withLock { state -> LiveBatch?? in
                    if state.pending.count > 0 { return .some(state.pending.take()) }
                    if state.finished { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            terminate()
        }
    }

    /// The client went away: the feed forgets it. The server calls it when the connection ends;
    /// cancelling a task waiting in `nextBatch` does too.
    package func cancel() { terminate() }

    private func terminate() {
        finish()
        let handler = onTermination.withLock { handler in
            defer { handler = nil }
            return handler
        }
        handler?()
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: LiveSubscription
        var batch: [LiveEvent] = []
        var index = 0

        package mutating func next() async -> LiveEvent? {
            while index == batch.count {
                guard let next = await subscription.nextBatch() else { return nil }
                batch = next.events
                index = 0
            }
            defer { index += 1 }
            return batch[index]
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: self) }
}
