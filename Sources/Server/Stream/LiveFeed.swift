import Foundation
import NIOCore
import Synchronization

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
        var waiters: [(id: Int, condition: @Sendable (Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] =
            []
        var nextWaiter = 0

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

        /// The last resume answered, while no event has come since: clients resuming from the
        /// same id (every `?after=0` at once) share one array instead of building one each.
        var lastResume: (after: Int, newest: Int, events: [LiveEvent])?

        /// The kept events after `lastID` (ids grow, not always by one).
        func kept(after lastID: Int) -> [LiveEvent] {
            // The kept events in id order are `events[start...]` then `events[..<start]`.
            let count = events.count
            func at(_ index: Int) -> LiveEvent { events[(start + index) % count] }
            var low = 0
            var high = count
            while low < high {
                let middle = (low + high) / 2
                if at(middle).id <= lastID { low = middle + 1 } else { high = middle }
            }
            return (low..<count).map(at)
        }

        /// What a client resuming after `lastID` is given: what it missed, whole while it is no
        /// more than `bound` events; past that, every moment and only the newest event of each
        /// kind and game (what a client that fell behind would have been given, since a newer
        /// state supersedes an older one), so that a resume from 0 holds the day's state, not its
        /// 10,000 kept events, and costs a client hundreds of bytes per game, not megabytes.
        mutating func resume(after lastID: Int, bound: Int) -> [LiveEvent] {
            let newest = nextID - 1
            if let last = lastResume, last.after == lastID, last.newest == newest { return last.events }
            var missed = kept(after: lastID)
            if missed.count > bound {
                var seen = Set<String>()
                var newestFirst: [LiveEvent] = []
                for event in missed.reversed() {
                    if let slot = event.slot, !seen.insert(slot).inserted { continue }
                    newestFirst.append(event)
                }
                missed = newestFirst.reversed()
            }
            lastResume = (lastID, newest, missed)
            return missed
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
    /// `time` is when the event happened by the service's clock (a change's time), which a spoiler
    /// delay counts from; nil for now.
    @discardableResult
    package func publish(
        _ kind: LiveEvent.Kind, data: String, key: String? = nil, id: Int?, at time: Date? = nil
    ) -> LiveEvent? {
        append(at: time) { next in
            if let id, id < next { return nil }
            return LiveEvent(id: id ?? next, kind: kind, data: data, key: key)
        }
    }

    /// Appends an event made elsewhere (another feed's, under its id) and hands it to every
    /// client; false, and nothing sent, when its id is not past the newest event's.
    @discardableResult
    package func relay(_ event: LiveEvent) -> Bool {
        append(at: nil) { next in event.id < next ? nil : event } != nil
    }

    /// Called with each event as it is appended, in order, and the time it happened (nil: now):
    /// what holds the stream back for a spoiler delay (`DelayedFeeds`). One at a time.
    package func onAppend(_ observer: @escaping @Sendable (LiveEvent, Date?) -> Void) {
        self.observer.withLock { $0 = observer }
    }

    private let observer = Mutex<(@Sendable (LiveEvent, Date?) -> Void)?>(nil)

    private func append(at time: Date?, _ make: (_ next: Int) -> LiveEvent?) -> LiveEvent? {
        let published = state.withLock {
            state -> (
                LiveEvent, [(LiveSubscription, CheckedContinuation<LiveBatch?, Never>)], [LiveSubscription],
                [CheckedContinuation<Void, Never>]
            )? in
            guard let event = make(state.nextID) else { return nil }
            state.nextID = event.id + 1
            // Under the lock, so the observer is handed the events in order.
            observer.withLock { $0 }?(event, time)
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

    /// Every kept event after `lastID`, in order (what a test or a tool reads whole; a client
    /// resuming is given `State.resume`).
    package func keptEvents(after lastID: Int) -> [LiveEvent] {
        state.withLock { $0.kept(after: lastID) }
    }

    /// The id of the newest event (0 before any).
    package var lastID: Int { state.withLock { $0.nextID - 1 } }

    /// Events a client that was behind never got because a newer one of the same kind and game
    /// superseded them, summed over clients since start.
    package var coalescedCount: Int { coalesced.load(ordering: .relaxed) }

    /// Events after `lastID` (none when nil), then every new one. Nothing is missed between the
    /// two; what it missed comes moments first, whole up to `clientBuffer` events and the newest of
    /// each game past that (`State.resume`), then new events waiting are coalesced.
    package func subscribe(after lastID: Int?) -> LiveSubscription {
        let id = UUID()
        let (subscription, ready) = state.withLock { state in
            let missed = lastID.map { state.resume(after: $0, bound: clientBuffer) } ?? []
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
                let missed = client.lastID.map { state.resume(after: $0, bound: clientBuffer) } ?? []
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
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        // Cancelled (a test's time limit), it returns instead of waiting for ever.
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let holds = state.withLock { state in
                    if condition(state.clients.count + state.streamed) || Task.isCancelled { return true }
                    state.waiters.append((id, condition, continuation))
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
