import NIOCore
import ServiceLifecycle
import Synchronization

/// Live-stream clients that stopped reading. A client that does not read fills its socket's
/// buffers, then the channel's own (past its high watermark the channel is unwritable, and the
/// stream's next write waits or queues behind; the feed coalesces meanwhile, moments kept). A
/// connection every sweep has found unwritable for longer than `timeout` is closed and its stream
/// ended; the client resumes from the last event id it got (SSE's `Last-Event-ID`, the
/// WebSocket's `?after=`). So a client that never reads holds a stream's buffers for no longer
/// than that, and its slot goes to others. Nothing is added to a write: the sweeps read each
/// channel's writability.
package final class StreamStallWatch: Sendable {
    /// One client's stream, as registered.
    package final class Stream: Sendable {
        fileprivate let channel: any Channel
        /// Ends the client's stream (its subscription), so that its task ends at once.
        fileprivate let end: @Sendable () -> Void

        fileprivate init(channel: any Channel, end: @escaping @Sendable () -> Void) {
            self.channel = channel
            self.end = end
        }
    }

    private struct Entry {
        let stream: Stream
        /// The sweep that first found the connection unwritable, since when every sweep has; nil
        /// when the last one found it writable.
        var unwritableSince: Int?
    }

    private struct State {
        var streams: [ObjectIdentifier: Entry] = [:]
        var sweeps = 0
        var closed = 0
        var waiters: [(id: Int, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiter = 0
    }

    /// How long a connection may stay unwritable before it is closed.
    package let timeout: Duration
    /// How often ``StreamStallSweep`` sweeps.
    package let interval: Duration
    private let state = Mutex(State())

    package init(timeout: Duration = .seconds(30), interval: Duration = .seconds(1)) {
        self.timeout = timeout
        self.interval = interval
    }

    /// Sweeps that make the timeout (at least two: a connection found unwritable at one sweep is
    /// not closed at the next).
    private var limit: Int { max(2, Int((timeout / interval).rounded(.up))) }

    /// A client's stream starts on `channel`; `end` ends it (its subscription) when the connection
    /// is closed for a stall.
    package func register(_ channel: any Channel, end: @escaping @Sendable () -> Void) -> Stream {
        let stream = Stream(channel: channel, end: end)
        state.withLock { $0.streams[ObjectIdentifier(stream)] = Entry(stream: stream) }
        return stream
    }

    /// Its stream ended.
    package func unregister(_ stream: Stream) {
        _ = state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    /// One sweep: closes the connections every sweep has found unwritable for more than the
    /// timeout's sweeps; returns how many. One sweeper at a time.
    @discardableResult
    package func sweep() -> Int {
        let limit = limit
        let (stalled, ready) = state.withLock { state -> ([Stream], [CheckedContinuation<Void, Never>]) in
            state.sweeps += 1
            let now = state.sweeps
            var stalled: [Stream] = []
            for (key, entry) in state.streams {
                if entry.stream.channel.isWritable {
                    if entry.unwritableSince != nil { state.streams[key]?.unwritableSince = nil }
                } else if let since = entry.unwritableSince {
                    if now - since > limit { stalled.append(entry.stream) }
                } else {
                    state.streams[key]?.unwritableSince = now
                }
            }
            for stream in stalled { state.streams[ObjectIdentifier(stream)] = nil }
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
        for stream in stalled {
            stream.channel.close(promise: nil)
            stream.end()
        }
        for waiter in ready { waiter.resume() }
        return stalled.count
    }

    /// Connections closed since start for not reading.
    package var closedCount: Int { state.withLock { $0.closed } }

    /// Returns once `count` connections have been closed (at once if they have), or the task is
    /// cancelled (a test's time limit ends it instead of leaving it waiting): what a test waits on
    /// instead of polling.
    package func closedCount(reaches count: Int) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let holds = state.withLock { state in
                    if state.closed >= count || Task.isCancelled { return true }
                    state.waiters.append((id, count, continuation))
                    return false
                }
                if holds { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
            }?.resume()
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
