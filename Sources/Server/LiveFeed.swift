import Foundation
import NIOCore
import ServiceLifecycle
import Synchronization

/// One event of the live stream: a game's new state or a moment, numbered in order.
package struct LiveEvent: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        case game
        case moment
        /// A game's score line changed: runs, hits, errors, the half-inning or the status.
        case score
        /// Not kept and not numbered: tells the server to write a keep-alive, which also finds
        /// clients that went away.
        case heartbeat
    }

    package var id: Int
    package var kind: Kind
    /// The event's JSON document.
    package var data: String
    /// The event as Server-Sent Events bytes, encoded once and shared by every client's write.
    package var frame: ByteBuffer
    /// The event as one WebSocket text message, `{"id":N,"event":"moment","data":{...}}`, also
    /// encoded once.
    package var message: ByteBuffer

    package init(id: Int, kind: Kind, data: String) {
        self.id = id
        self.kind = kind
        self.data = data
        frame = ByteBuffer(
            string: kind == .heartbeat ? ": keep-alive\n\n" : "id: \(id)\nevent: \(kind.rawValue)\ndata: \(data)\n\n")
        message = ByteBuffer(
            string: kind == .heartbeat ? "" : #"{"id":\#(id),"event":"\#(kind.rawValue)","data":\#(data)}"#)
    }
}

/// The live stream's memory: the latest events in order, and the clients listening.
///
/// A client that reconnects with the last id it saw gets what it missed, as long as the feed still
/// holds it. A client that falls more than `clientBuffer` events behind is cut off (it reconnects
/// with its last id and catches up) rather than slowing the feed or the other clients.
package final class LiveFeed: Sendable {
    package let capacity: Int
    package let clientBuffer: Int

    private struct State {
        var events: [LiveEvent] = []
        /// Index in `events` of the oldest kept event (a ring once full).
        var start = 0
        var nextID = 1
        var clients: [UUID: AsyncStream<LiveEvent>.Continuation] = [:]
        /// Those waiting for the number of clients to satisfy a condition.
        var waiters: [(condition: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

        /// Takes out the waiters whose condition now holds, to be resumed outside the lock.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !waiters.isEmpty else { return [] }
            let count = clients.count
            var ready: [CheckedContinuation<Void, Never>] = []
            waiters.removeAll { waiter in
                guard waiter.condition(count) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }

        func kept(after lastID: Int) -> [LiveEvent] {
            let ordered = Array(events[start...] + events[..<start])
            guard let first = ordered.first, lastID >= first.id - 1 else { return ordered }
            return Array(ordered.dropFirst(lastID - first.id + 1))
        }
    }

    private let state = Mutex(State())

    package init(capacity: Int = 10_000, clientBuffer: Int = 1024) {
        precondition(capacity > 0 && clientBuffer > 0)
        self.capacity = capacity
        self.clientBuffer = clientBuffer
    }

    /// Appends an event and hands it to every client; returns it with its id.
    @discardableResult
    package func publish(_ kind: LiveEvent.Kind, data: String) -> LiveEvent {
        let (event, dropped, ready) = state.withLock { state in
            let event = LiveEvent(id: state.nextID, kind: kind, data: data)
            state.nextID += 1
            if state.events.count < capacity {
                state.events.append(event)
            } else {
                state.events[state.start] = event
                state.start = (state.start + 1) % capacity
            }
            var dropped: [AsyncStream<LiveEvent>.Continuation] = []
            for (id, client) in state.clients {
                if case .dropped = client.yield(event) {
                    dropped.append(client)
                    state.clients[id] = nil
                }
            }
            return (event, dropped, dropped.isEmpty ? [] : state.satisfiedWaiters())
        }
        // Outside the lock: finishing runs the stream's termination handler, which takes it.
        for client in dropped { client.finish() }
        for waiter in ready { waiter.resume() }
        return event
    }

    /// Hands every client a heartbeat (id 0, not kept).
    private static let heartbeatEvent = LiveEvent(id: 0, kind: .heartbeat, data: "")

    package func heartbeat() {
        let event = Self.heartbeatEvent
        let (dropped, ready) = state.withLock { state in
            var dropped: [AsyncStream<LiveEvent>.Continuation] = []
            for (id, client) in state.clients {
                if case .dropped = client.yield(event) {
                    dropped.append(client)
                    state.clients[id] = nil
                }
            }
            return (dropped, dropped.isEmpty ? [] : state.satisfiedWaiters())
        }
        for client in dropped { client.finish() }
        for waiter in ready { waiter.resume() }
    }

    /// The id of the newest event (0 before any).
    package var lastID: Int { state.withLock { $0.nextID - 1 } }

    /// Events after `lastID` (all kept ones when nil), then every new one. Nothing is missed or
    /// repeated between the two.
    package func subscribe(after lastID: Int?) -> AsyncStream<LiveEvent> {
        let id = UUID()
        let (stream, ready) = state.withLock { state in
            let missed = lastID.map { state.kept(after: $0) } ?? []
            // Room for what it missed, plus the usual margin for what comes next.
            let (stream, continuation) = AsyncStream.makeStream(
                of: LiveEvent.self, bufferingPolicy: .bufferingOldest(clientBuffer + missed.count))
            for event in missed { continuation.yield(event) }
            state.clients[id] = continuation
            continuation.onTermination = { [weak self] _ in
                let ready = self?.state.withLock { state in
                    state.clients.removeValue(forKey: id) == nil ? [] : state.satisfiedWaiters()
                }
                for waiter in ready ?? [] { waiter.resume() }
            }
            return (stream, state.satisfiedWaiters())
        }
        for waiter in ready { waiter.resume() }
        return stream
    }

    /// Clients listening now.
    package var clientCount: Int { state.withLock { $0.clients.count } }

    /// Returns once the number of clients satisfies `condition` (at once if it already does): what
    /// a test waits on instead of polling.
    package func clientCount(reaches condition: @escaping @Sendable (Int) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state in
                if condition(state.clients.count) { return true }
                state.waiters.append((condition, continuation))
                return false
            }
            if holds { continuation.resume() }
        }
    }

    /// Ends every client's stream (shutdown).
    package func finishAll() {
        let (clients, ready) = state.withLock { state in
            let clients = Array(state.clients.values)
            state.clients.removeAll()
            return (clients, state.satisfiedWaiters())
        }
        for client in clients { client.finish() }
        for waiter in ready { waiter.resume() }
    }
}

/// Sends the live stream's heartbeat every `interval` until shutdown, when it ends every client's
/// stream (streams never end by themselves).
package struct FeedHeartbeat: Service {
    package var feed: LiveFeed
    package var interval: Duration

    package init(feed: LiveFeed, interval: Duration = .seconds(15)) {
        self.feed = feed
        self.interval = interval
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: interval)
                    feed.heartbeat()
                }
            }
        } catch is CancellationError {
            // Shutdown.
        }
        feed.finishAll()
    }
}
