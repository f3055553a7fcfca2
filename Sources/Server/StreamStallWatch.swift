import Dispatch
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
        /// When the write in progress began (uptime nanoseconds), 0 when none is.
        fileprivate let started = Atomic<UInt64>(0)
        /// Since when the sweeps have found the connection unwritable (its unsent bytes past the
        /// channel's high watermark), 0 when the last one found it writable: a write that was
        /// taken at once, with the bytes queued behind, is as stuck as one that waits.
        fileprivate let unwritableSince = Atomic<UInt64>(0)

        fileprivate init(channel: (any Channel)?) {
            self.channel = channel
        }

        /// A write begins (call ``end()`` when it returns).
        package func begin() { started.store(max(1, DispatchTime.now().uptimeNanoseconds), ordering: .relaxed) }
        package func end() { started.store(0, ordering: .relaxed) }
    }

    private struct State {
        var writers: [ObjectIdentifier: Writer] = [:]
        var closed = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    package let timeout: Duration
    private let state = Mutex(State())

    package init(timeout: Duration = .seconds(30)) {
        self.timeout = timeout
    }

    /// A client's stream starts on `channel` (nil: nothing to close, as through the router alone).
    package func register(_ channel: (any Channel)?) -> Writer {
        let writer = Writer(channel: channel)
        state.withLock { $0.writers[ObjectIdentifier(writer)] = writer }
        return writer
    }

    /// Its stream ended.
    package func unregister(_ writer: Writer) {
        _ = state.withLock { $0.writers.removeValue(forKey: ObjectIdentifier(writer)) }
    }

    /// Closes the connections whose write has been waiting longer than the timeout at `now`
    /// (uptime nanoseconds), or that every sweep over that long found unwritable; returns how
    /// many. One sweeper at a time.
    @discardableResult
    package func sweep(now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Int {
        let limit =
            UInt64(timeout.components.seconds) * 1_000_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000)
        let (stalled, ready) = state.withLock { state -> ([Writer], [CheckedContinuation<Void, Never>]) in
            let stalled = state.writers.values.filter { writer in
                let started = writer.started.load(ordering: .relaxed)
                if started != 0 && now > started && now - started > limit { return true }
                guard let channel = writer.channel, !channel.isWritable else {
                    writer.unwritableSince.store(0, ordering: .relaxed)
                    return false
                }
                let since = writer.unwritableSince.load(ordering: .relaxed)
                if since == 0 {
                    writer.unwritableSince.store(now, ordering: .relaxed)
                    return false
                }
                return now > since && now - since > limit
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
        for writer in stalled { writer.channel?.close(promise: nil) }
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

/// Sweeps the stall watch every `interval` until shutdown.
package struct StreamStallSweep: Service {
    package var watch: StreamStallWatch
    package var interval: Duration

    package init(watch: StreamStallWatch, interval: Duration = .seconds(1)) {
        self.watch = watch
        self.interval = interval
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
            try await Task.sleep(for: interval)
            watch.sweep()
        }
    }
}
