import Foundation
import NIOCore
import ServiceLifecycle
import Synchronization

/// One event of the live stream: a game's new state or a moment, numbered in order.
package struct LiveEvent: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        case game
        case moment
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
        let (event, dropped) = state.withLock { state in
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
            return (event, dropped)
        }
        // Outside the lock: finishing runs the stream's termination handler, which takes it.
        for client in dropped { client.finish() }
        return event
    }

    /// Hands every client a heartbeat (id 0, not kept).
    private static let heartbeatEvent = LiveEvent(id: 0, kind: .heartbeat, data: "")

    package func heartbeat() {
        let event = Self.heartbeatEvent
        let dropped = state.withLock { state in
            var dropped: [AsyncStream<LiveEvent>.Continuation] = []
            for (id, client) in state.clients {
                if case .dropped = client.yield(event) {
                    dropped.append(client)
                    state.clients[id] = nil
                }
            }
            return dropped
        }
        for client in dropped { client.finish() }
    }

    /// The id of the newest event (0 before any).
    package var lastID: Int { state.withLock { $0.nextID - 1 } }

    /// Events after `lastID` (all kept ones when nil), then every new one. Nothing is missed or
    /// repeated between the two.
    package func subscribe(after lastID: Int?) -> AsyncStream<LiveEvent> {
        let id = UUID()
        let stream = state.withLock { state in
            let missed = lastID.map { state.kept(after: $0) } ?? []
            // Room for what it missed, plus the usual margin for what comes next.
            let (stream, continuation) = AsyncStream.makeStream(
                of: LiveEvent.self, bufferingPolicy: .bufferingOldest(clientBuffer + missed.count))
            for event in missed { continuation.yield(event) }
            state.clients[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.clients.removeValue(forKey: id) }
            }
            return stream
        }
        return stream
    }

    /// Clients listening now.
    package var clientCount: Int { state.withLock { $0.clients.count } }

    /// Ends every client's stream (shutdown).
    package func finishAll() {
        let clients = state.withLock { state in
            defer { state.clients.removeAll() }
            return Array(state.clients.values)
        }
        for client in clients { client.finish() }
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
