import NIOCore
import ServiceLifecycle
import Synchronization

/// Live-stream clients whose writes stopped going out. A client that does not read fills its
/// socket's buffers, and the server's next write to it then waits (the stream is coalesced
/// meanwhile, moments kept); past `timeout` its connection is closed, and the client resumes from
/// the last event id it got (SSE's `Last-Event-ID`, the WebSocket's `?after=`). So a client that
/// never reads holds a stream's buffers for no longer than that, and its slot goes to others.
package final class StreamStallWatch: Sendable {
    /// One client's writes.
    package final class Writer: Sendable {
        fileprivate let channel: (any Channel)?
        /// Ends the client's stream (its subscription), so that its task ends at once.
        fileprivate let endStream: @Sendable () -> Void
        private let watch: StreamStallWatch
        /// The sweep count when the write in progress began, 0 when none is: a write costs two
        /// relaxed atomic stores and a load, no clock read.
        fileprivate let started = Atomic<UInt64>(0)
        /// The sweep count when the sweeps began to find the connection unwritable (its unsent
        /// bytes past the channel's high watermark), 0 when the last one found it writable: a
        /// write taken at once, with its bytes queued behind, is as stuck as one that waits.
        fileprivate let unwritableSince = Atomic<UInt64>(0)

        fileprivate init(channel: (any Channel)?, watch: StreamStallWatch, end: @escaping @Sendable () -> Void) {
            self.channel = channel
            self.watch = watch
            self.endStream = end
        }

        /// A write begins (call ``end()`` when it returns).
        package func begin() { started.store(watch.sweeps.load(ordering: .relaxed), ordering: .relaxed) }
        package func end() { started.store(0, ordering: .relaxed) }
    }

    private struct State {
        var writers: [ObjectIdentifier: Writer] = [:]
        var closed = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    /// How long a write may wait, or a connection stay unwritable, before it is closed.
    package let timeout: Duration
    /// How often ``StreamStallSweep`` sweeps.
    package let interval: Duration
    /// Sweeps so far, from 1: the watch's clock.
    fileprivate let sweeps = Atomic<UInt64>(1)
    private let state = Mutex(State())

    package init(timeout: Duration = .seconds(30), interval: Duration = .seconds(1)) {
        self.timeout = timeout
        self.interval = interval
    }

    /// Sweeps that make the timeout (at least two: a write begun just before a sweep is not
    /// closed at the next).
    private var limit: UInt64 { UInt64(max(2, (timeout / interval).rounded(.up))) }

    /// A client's stream starts on `channel` (nil: nothing to close, as through the router alone);
    /// `end` ends it (its subscription) when the connection is closed for a stall.
    package func register(_ channel: (any Channel)?, end: @escaping @Sendable () -> Void) -> Writer {
        let writer = Writer(channel: channel, watch: self, end: end)
        state.withLock { $0.writers[ObjectIdentifier(writer)] = writer }
        return writer
    }

    /// Its stream ended.
    package func unregister(_ writer: Writer) {
        _ = state.withLock { $0.writers.removeValue(forKey: ObjectIdentifier(writer)) }
    }

    /// One sweep: closes the connections whose write began more than the timeout's sweeps ago, or
    /// that every sweep over that many found unwritable; returns how many. One sweeper at a time.
    @discardableResult
    package func sweep() -> Int {
        let now = sweeps.add(1, ordering: .relaxed).newValue
        let limit = limit
        let (stalled, ready) = state.withLock { state -> ([Writer], [CheckedContinuation<Void, Never>]) in
            let stalled = state.writers.values.filter { writer in
                let started = writer.started.load(ordering: .relaxed)
                if started != 0 && now - started > limit { return true }
                guard let channel = writer.channel, !channel.isWritable else {
                    writer.unwritableSince.store(0, ordering: .relaxed)
                    return false
                }
                let since = writer.unwritableSince.load(ordering: .relaxed)
                if since == 0 {
                    writer.unwritableSince.store(now, ordering: .relaxed)
                    return false
                }
                return now - since > limit
            }
            for writer in stalled { state.writers[ObjectIdentifier(writer)] = nil }
            state.closed += stalled.count
            var ready: [CheckedContinuation<Void, Never>] = []
            let closed = state.closed
            state.waiters.removeAll { waiter in
                guard closed >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return (stalled, ready)
        }
        for writer in stalled {
            writer.channel?.close(promise: nil)
            writer.endStream()
        }
        for waiter in ready { waiter.resume() }
        return stalled.count
    }

    /// Connections closed since start for a write that waited too long.
    package var closedCount: Int { state.withLock { $0.closed } }

    /// Returns once `count` connections have been closed (at once if they have): what a test
    /// waits on instead of polling.
    package func closedCount(reaches count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state in
                if state.closed >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if holds { continuation.resume() }
        }
    }
}

/// Sweeps the stall watch every `watch.interval` until shutdown.
package struct StreamStallSweep: Service {
    package var watch: StreamStallWatch

    package init(watch: StreamStallWatch) {
        self.watch = watch
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await sweepUntilCancelled() }
        } catch is CancellationError {
            // Shutdown.
        }
    }

    /// The sweeps, until the task is cancelled (outside a service group too).
    package func sweepUntilCancelled() async throws {
        while true {
            try await Task.sleep(for: watch.interval)
            watch.sweep()
        }
    }
}
