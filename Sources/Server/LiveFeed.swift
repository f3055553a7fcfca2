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

    /// The event's fields, in one object: a client's queue holds a reference, so queueing an
    /// event for each of thousands of clients retains one object, not its buffers and strings.
    private final class Storage: Sendable {
        let id: Int
        let kind: Kind
        let key: String?
        let data: String
        let frame: ByteBuffer
        let body: ByteBuffer
        let message: ByteBuffer
        /// Kind and game: what a newer event supersedes (nil for moments), made once.
        let slot: String?

        init(id: Int, kind: Kind, key: String?, data: String) {
            self.id = id
            self.kind = kind
            self.key = key
            self.data = data
            body = ByteBuffer(
                string: kind == .heartbeat ? ": keep-alive\n\n" : "event: \(kind.rawValue)\ndata: \(data)\n\n")
            frame = ByteBuffer(
                string: kind == .heartbeat
                    ? ": keep-alive\n\n" : "id: \(id)\nevent: \(kind.rawValue)\ndata: \(data)\n\n")
            message = ByteBuffer(
                string: kind == .heartbeat ? "" : #"{"id":\#(id),"event":"\#(kind.rawValue)","data":\#(data)}"#)
            slot = key.map { "\(kind.rawValue):\($0)" }
        }
    }

    private let storage: Storage

    package var id: Int { storage.id }
    package var kind: Kind { storage.kind }
    /// The game a `game` or `score` event is about: a newer event of the same kind and game
    /// supersedes it for a client that has not received it yet. Nil for moments (never
    /// superseded).
    package var key: String? { storage.key }
    /// The event's JSON document.
    package var data: String { storage.data }
    /// The event as Server-Sent Events bytes with its id, encoded once and shared by every
    /// client's write.
    package var frame: ByteBuffer { storage.frame }
    /// The same without the `id:` line, for a batch whose ids are written where they hold (see
    /// `LiveBatch`).
    package var body: ByteBuffer { storage.body }
    /// The event as one WebSocket text message, `{"id":N,"event":"moment","data":{...}}`, also
    /// encoded once.
    package var message: ByteBuffer { storage.message }
    /// Kind and game (`game:CHA202008250`): the waiting event a newer one supersedes.
    var slot: String? { storage.slot }

    package init(id: Int, kind: Kind, data: String, key: String? = nil) {
        storage = Storage(id: id, kind: kind, key: kind == .moment ? nil : key, data: data)
    }

    package static func == (lhs: LiveEvent, rhs: LiveEvent) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.id == rhs.id && lhs.kind == rhs.kind && lhs.key == rhs.key && lhs.data == rhs.data)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(kind)
        hasher.combine(key)
        hasher.combine(data)
    }
}

/// What one client is sent in one write: the events it had not received yet, moments first (in
/// their order), then the latest `game` and `score` event of each game (in id order). A client
/// that keeps up gets one event per batch; one that falls behind gets what it missed coalesced.
package struct LiveBatch: Sendable {
    package var events: [LiveEvent]

    /// The batch as Server-Sent Events bytes. An event's `id:` line is written only where every
    /// event up to that id has been written or superseded in the batch, and then it carries the
    /// highest id written so far: a moment moved ahead of game updates carries none, so a client
    /// that reconnects with its `Last-Event-ID` misses nothing (a moment moved ahead may come
    /// again then; its own id tells the repeat).
    package var sse: ByteBuffer {
        if events.count == 1 { return events[0].frame }
        var minimumAfter = Array(repeating: Int.max, count: events.count)
        for index in stride(from: events.count - 2, through: 0, by: -1) {
            let next = events[index + 1]
            minimumAfter[index] = min(next.kind == .heartbeat ? Int.max : next.id, minimumAfter[index + 1])
        }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(events.reduce(0) { $0 + $1.body.readableBytes + 16 })
        var highest = 0
        for (index, event) in events.enumerated() {
            highest = max(highest, event.id)
            if event.kind != .heartbeat, highest < minimumAfter[index] {
                buffer.writeString("id: \(highest)\n")
            }
            buffer.writeImmutableBuffer(event.body)
        }
        return buffer
    }
}

/// The events one client has not received yet, coalesced as they come: a newer `game` or `score`
/// event of a game supersedes the waiting one, moments are kept, and what is taken goes moments
/// first. Not thread-safe: its owner (a subscription's lock, or a connection's event loop) guards it.
struct PendingEvents {
    /// In id order; nil where a newer event superseded one.
    private var pending: [LiveEvent?] = []
    private(set) var count = 0
    private var moments = 0
    /// Index in `pending` of the waiting event of each kind and game.
    private var latest: [String: Int] = [:]

    /// Queues an event, superseding a waiting one of the same kind and game (unless `coalesce` is
    /// false); whether it superseded one, or nil when more than `limit` events would wait (nothing
    /// queued). A heartbeat is queued only when nothing else waits.
    mutating func offer(_ event: LiveEvent, coalesce: Bool = true, limit: Int) -> Bool? {
        if event.kind == .heartbeat, count > 0 { return false }
        let slot = coalesce ? event.slot : nil
        let superseded = slot.flatMap { latest[$0] }
        guard count - (superseded == nil ? 0 : 1) < limit else { return nil }
        if let superseded {
            pending[superseded] = nil
            count -= 1
        }
        if let slot { latest[slot] = pending.count }
        pending.append(event)
        count += 1
        if event.kind == .moment { moments += 1 }
        return superseded != nil
    }

    /// Everything waiting, moments first (in their order), then the rest in id order; empties it.
    mutating func take() -> LiveBatch {
        // A client that keeps up: one event, one array.
        if pending.count == 1, let event = pending[0] {
            pending.removeAll(keepingCapacity: true)
            latest.removeAll(keepingCapacity: true)
            count = 0
            moments = 0
            return LiveBatch(events: [event])
        }
        var moments: [LiveEvent] = []
        var others: [LiveEvent] = []
        moments.reserveCapacity(self.moments)
        others.reserveCapacity(count - self.moments)
        for case let event? in pending {
            if event.kind == .moment { moments.append(event) } else { others.append(event) }
        }
        pending.removeAll(keepingCapacity: true)
        latest.removeAll(keepingCapacity: true)
        count = 0
        self.moments = 0
        return LiveBatch(events: moments + others)
    }
}

/// One client of the live stream: the events it has not received yet, coalesced as they come.
/// Iterating gives the events one at a time; `nextBatch()` gives all that are waiting at once.
package final class LiveSubscription: AsyncSequence, Sendable {
    package typealias Element = LiveEvent

    fileprivate enum Offer {
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
    fileprivate let onTermination: Mutex<(@Sendable () -> Void)?>

    fileprivate init(limit: Int, after: Int = 0) {
        self.limit = limit
        self.after = after
        onTermination = Mutex(nil)
    }

    /// Queues an event, superseding a waiting one of the same kind and game (unless `coalesce` is
    /// false: what a resuming client missed is given whole); `.full` when more than `limit` events
    /// would wait (the client is let go). A heartbeat is queued only when nothing else waits.
    fileprivate func offer(_ event: LiveEvent, coalesce: Bool = true) -> Offer {
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
    fileprivate func wake(_ waiter: CheckedContinuation<LiveBatch?, Never>) {
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
    fileprivate func finish() {
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

/// The live stream's memory: the latest events in order, and the clients listening.
///
/// A client that reconnects with the last id it saw gets what it missed, as long as the feed still
/// holds it. Each client's events wait in its `LiveSubscription`, where a newer state of a game
/// supersedes an older one not yet sent and moments go first, so a slow client costs little and
/// catches up with the latest of everything. A client with more than `clientBuffer` events
/// waiting even so (moments are never dropped) is cut off: it reconnects with its last id.
package final class LiveFeed: Sendable {
    package let capacity: Int
    package let clientBuffer: Int

    private struct State {
        var events: [LiveEvent] = []
        /// Index in `events` of the oldest kept event (a ring once full).
        var start = 0
        var nextID = 1
        var clients: [UUID: LiveSubscription] = [:]
        /// The Server-Sent Events clients, written to from their connections' event loops: one
        /// `LoopStream` per event loop with clients, handed each event once, and its clients.
        var loops: [ObjectIdentifier: (stream: LoopStream, clients: Int)] = [:]
        var streamed = 0
        /// Those waiting for the number of clients to satisfy a condition.
        var waiters: [(condition: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

        /// Takes out the waiters whose condition now holds, to be resumed outside the lock.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !waiters.isEmpty else { return [] }
            let count = clients.count + streamed
            var ready: [CheckedContinuation<Void, Never>] = []
            waiters.removeAll { waiter in
                guard waiter.condition(count) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }

        /// The kept events after `lastID` (ids grow, not always by one).
        func kept(after lastID: Int) -> [LiveEvent] {
            let ordered = Array(events[start...] + events[..<start])
            var low = 0
            var high = ordered.count
            while low < high {
                let middle = (low + high) / 2
                if ordered[middle].id <= lastID { low = middle + 1 } else { high = middle }
            }
            return Array(ordered[low...])
        }
    }

    private let state = Mutex(State())
    /// Events never written to a client because a newer one of the same kind and game superseded
    /// them while the client (or its event loop) was behind, summed over clients.
    private let coalesced = Atomic<Int>(0)

    package init(capacity: Int = 10_000, clientBuffer: Int = 1024) {
        precondition(capacity > 0 && clientBuffer > 0)
        self.capacity = capacity
        self.clientBuffer = clientBuffer
    }

    /// Appends an event and hands it to every client; returns it with its id. `key` names the
    /// game a `game` or `score` event is about.
    @discardableResult
    package func publish(_ kind: LiveEvent.Kind, data: String, key: String? = nil) -> LiveEvent {
        publish(kind, data: data, key: key, id: nil)!
    }

    /// Appends an event numbered `id` by the caller (several instances number the events of the
    /// shared game log alike; ids grow but need not be consecutive); nil, and nothing sent, when
    /// `id` is not past the newest event's.
    @discardableResult
    package func publish(_ kind: LiveEvent.Kind, data: String, key: String? = nil, id: Int?) -> LiveEvent? {
        let published = state.withLock {
            state -> (
                LiveEvent, [(LiveSubscription, CheckedContinuation<LiveBatch?, Never>)], [LiveSubscription],
                [CheckedContinuation<Void, Never>]
            )? in
            if let id, id < state.nextID { return nil }
            let event = LiveEvent(id: id ?? state.nextID, kind: kind, data: data, key: key)
            state.nextID = event.id + 1
            if state.events.count < capacity {
                state.events.append(event)
            } else {
                state.events[state.start] = event
                state.start = (state.start + 1) % capacity
            }
            let (woken, dropped) = hand(event, to: &state)
            return (event, woken, dropped, dropped.isEmpty ? [] : state.satisfiedWaiters())
        }
        guard let (event, woken, dropped, ready) = published else { return nil }
        // Outside the lock: resuming a writer, and finishing, which runs code that takes it.
        for (client, waiter) in woken { client.wake(waiter) }
        for client in dropped { client.finish() }
        for waiter in ready { waiter.resume() }
        return event
    }

    /// Hands an event to every subscription and every event loop's stream (under the lock, so
    /// that each gets the events in order, and a client added meanwhile misses nothing).
    private func hand(
        _ event: LiveEvent, to state: inout State
    ) -> ([(LiveSubscription, CheckedContinuation<LiveBatch?, Never>)], [LiveSubscription]) {
        var woken: [(LiveSubscription, CheckedContinuation<LiveBatch?, Never>)] = []
        var dropped: [LiveSubscription] = []
        var superseded = 0
        for (id, client) in state.clients {
            switch client.offer(event) {
            case .queued(let waiter, let didSupersede):
                if let waiter { woken.append((client, waiter)) }
                if didSupersede { superseded += 1 }
            case .full:
                dropped.append(client)
                state.clients[id] = nil
            }
        }
        if superseded > 0 { coalesced.add(superseded, ordering: .relaxed) }
        for loop in state.loops.values { loop.stream.post(.event(event)) }
        return (woken, dropped)
    }

    /// Events superseded for clients of an event loop's stream (less, when it takes back what it
    /// counted ahead).
    func countCoalesced(_ count: Int) {
        if count != 0 { coalesced.add(count, ordering: .relaxed) }
    }

    /// Hands every client a heartbeat (id 0, not kept), unless it has events waiting.
    private static let heartbeatEvent = LiveEvent(id: 0, kind: .heartbeat, data: "")

    package func heartbeat() {
        let (woken, dropped, ready) = state.withLock { state in
            let (woken, dropped) = hand(Self.heartbeatEvent, to: &state)
            return (woken, dropped, dropped.isEmpty ? [] : state.satisfiedWaiters())
        }
        for (client, waiter) in woken { client.wake(waiter) }
        for client in dropped { client.finish() }
        for waiter in ready { waiter.resume() }
    }

    /// The id of the newest event (0 before any).
    package var lastID: Int { state.withLock { $0.nextID - 1 } }

    /// Events a client that was behind never got because a newer one of the same kind and game
    /// superseded them, summed over clients since start.
    package var coalescedCount: Int { coalesced.load(ordering: .relaxed) }

    /// Events after `lastID` (all kept ones when nil), then every new one. Nothing is missed
    /// between the two; what it missed comes whole (moments first), then new events waiting are
    /// coalesced.
    package func subscribe(after lastID: Int?) -> LiveSubscription {
        let id = UUID()
        let (subscription, ready) = state.withLock { state in
            let missed = lastID.map { state.kept(after: $0) } ?? []
            // Room for what it missed, plus the usual margin for what comes next. A client that saw
            // more than this instance has yet (it came from another instance) is not sent again
            // what it saw.
            let subscription = LiveSubscription(limit: clientBuffer + missed.count, after: lastID ?? 0)
            for event in missed { _ = subscription.offer(event, coalesce: false) }
            state.clients[id] = subscription
            subscription.onTermination.withLock { handler in
                handler = { [weak self] in
                    let ready = self?.state.withLock { state in
                        state.clients.removeValue(forKey: id) == nil ? [] : state.satisfiedWaiters()
                    }
                    for waiter in ready ?? [] { waiter.resume() }
                }
            }
            return (subscription, state.satisfiedWaiters())
        }
        for waiter in ready { waiter.resume() }
        return subscription
    }

    /// Streams the feed to a Server-Sent Events client from its connection's event loop (events
    /// after its `lastID` first, as `subscribe(after:)` gives them), until the client goes, is let
    /// go, or the feed finishes; then returns. The response's head and first bytes must have been
    /// handed to the channel before: what the loop writes comes after them.
    func stream(to client: StreamClient) async {
        await withTaskCancellationHandler {
            let ready = state.withLock { state in
                let missed = client.lastID.map { state.kept(after: $0) } ?? []
                let key = ObjectIdentifier(client.channel.eventLoop)
                let loop = state.loops[key]?.stream ?? LoopStream(eventLoop: client.channel.eventLoop, feed: self)
                state.loops[key] = (loop, (state.loops[key]?.clients ?? 0) + 1)
                state.streamed += 1
                client.limit = clientBuffer + missed.count
                loop.post(.add(client, missed: missed))
                return state.satisfiedWaiters()
            }
            for waiter in ready { waiter.resume() }
            await client.ended()
        } onCancel: {
            client.end()
        }
    }

    /// A client of `stream` ended (on its event loop). A loop left without clients is forgotten (a
    /// loop may be shut down then): the next client on it starts a new `LoopStream`.
    func streamEnded(on stream: LoopStream) {
        let ready = state.withLock { state in
            state.streamed -= 1
            let key = ObjectIdentifier(stream.eventLoop)
            if let loop = state.loops[key], loop.stream === stream {
                state.loops[key] = loop.clients > 1 ? (stream, loop.clients - 1) : nil
            }
            return state.satisfiedWaiters()
        }
        for waiter in ready { waiter.resume() }
    }

    /// Clients listening now.
    package var clientCount: Int { state.withLock { $0.clients.count + $0.streamed } }

    /// Returns once the number of clients satisfies `condition` (at once if it already does): what
    /// a test waits on instead of polling.
    package func clientCount(reaches condition: @escaping @Sendable (Int) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state in
                if condition(state.clients.count + state.streamed) { return true }
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
            for loop in state.loops.values { loop.stream.post(.finishAll) }
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
