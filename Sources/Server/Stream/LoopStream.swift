import NIOCore
import NIOHTTPTypes
import Synchronization

/// The Server-Sent Events clients whose connections are on one event loop, written to from the
/// loop itself.
///
/// The feed hands each event to each loop once (`post`); the loop takes everything that came since
/// it last looked, coalesces it as a client that fell behind would be sent it (moments first, then
/// the latest `game` and `score` event of each game), encodes it once, and writes the same bytes to
/// every client that is keeping up, one write and flush each. A client whose connection cannot
/// take more (unwritable: its socket and the channel's buffer are full) gets nothing meanwhile: its
/// events wait in its own `PendingEvents`, coalesced, and go in one write when the connection is
/// writable again; past its limit it is let go (it resumes with `Last-Event-ID`).
///
/// So nothing is done per client per event but the write itself: no task to resume, no hop onto the
/// loop, no mark behind the write; events that come together (a play's moment, score and state)
/// go in one write. A loop short of CPU coalesces by itself: what came while it was writing the
/// last batch is the next batch, not a backlog of writes in its queue. And a moment does not wait
/// for a pass to end: every 256 clients the pass looks, and the clients it has not reached get the
/// moment with their batch.
final class LoopStream: Sendable {
    enum Item {
        case event(LiveEvent)
        /// A client, and what it missed (given whole).
        case add(StreamClient, missed: [LiveEvent])
        case finishAll
    }

    private struct Inbox {
        var items: [Item] = []
        /// A drain is in the loop's queue.
        var scheduled = false
    }

    let eventLoop: any EventLoop
    private weak let feed: LiveFeed?
    private let inbox = Mutex(Inbox())

    /// What only the event loop touches: its clients, the items taken from the inbox, the run of
    /// events being sent. Bound to the loop: each step reads it once, checked to be on the loop.
    private final class LoopState {
        var clients: [StreamClient] = []
        var taken: [Item] = []
        var run: [LiveEvent] = []
    }

    private let bound: NIOLoopBoundBox<LoopState>

    init(eventLoop: any EventLoop, feed: LiveFeed) {
        self.eventLoop = eventLoop
        self.feed = feed
        bound = .makeBoxSendingValue(LoopState(), eventLoop: eventLoop)
    }

    /// Queues an item for the loop (in the order posted: the feed posts under its lock), and a
    /// drain unless one is waiting already.
    func post(_ item: Item) {
        let schedule = inbox.withLock { inbox in
            inbox.items.append(item)
            defer { inbox.scheduled = true }
            return !inbox.scheduled
        }
        if schedule { eventLoop.execute { self.drain() } }
    }

    /// Everything posted since the last drain, in order: runs of events are sent as one batch.
    private func drain() {
        let state = bound.value
        inbox.withLock { inbox in
            swap(&state.taken, &inbox.items)
            inbox.scheduled = false
        }
        for item in state.taken {
            switch item {
            case .event(let event):
                state.run.append(event)
            case .add(let client, let missed):
                sendRun()
                add(client, missed: missed)
            case .finishAll:
                sendRun()
                // What waits for each client is written first; behind the tasks that let the
                // clients just added write (they are queued ahead of this one).
                eventLoop.execute {
                    for client in self.bound.value.clients {
                        if client.pending.count > 0 { client.writePending() }
                        self.end(client)
                    }
                }
            }
        }
        sendRun()
        state.taken.removeAll(keepingCapacity: true)
    }

    /// The run of events taken, to every client: coalesced and encoded once for those keeping up,
    /// into their own pending events for the others.
    ///
    /// A moment that comes while the run is being written does not wait for the whole pass: the
    /// clients not written to yet get the run and the new events in one batch (the moment first),
    /// then those written to already get the new events.
    private func sendRun() {
        let state = bound.value
        defer { state.run.removeAll(keepingCapacity: true) }
        guard !state.run.isEmpty, !state.clients.isEmpty else { return }
        // The clients as they are now: one that ends during a write (its connection failed) leaves
        // `clients` at once, and is skipped here.
        let snapshot = state.clients
        var coalesced = 0
        var dropped: [StreamClient] = []
        var next = 0
        var newer: [LiveEvent] = []
        send(state.run, to: snapshot, from: &next, coalesced: &coalesced, dropped: &dropped) {
            guard let moment = self.takeEventsWithAMoment() else { return nil }
            newer = moment
            return state.run + moment
        }
        if !newer.isEmpty {
            var again = 0
            send(newer, to: Array(snapshot[..<next]), from: &again, coalesced: &coalesced, dropped: &dropped) { nil }
        }
        for client in dropped { end(client) }
        feed?.countCoalesced(coalesced)
    }

    /// Every `check` clients, whether to write the rest something else instead (a run with what
    /// came meanwhile); `next` ends at the first client the first run was not written to.
    private func send(
        _ events: [LiveEvent], to clients: [StreamClient], from next: inout Int, coalesced: inout Int,
        dropped: inout [StreamClient], check: () -> [LiveEvent]?
    ) {
        var events = events
        var (batch, superseded) = Self.coalesce(events)
        var bytes = batch.sse
        // Ids grow: a client that saw (on another instance) the first of them filters its own.
        var first = events.first(where: { $0.kind != .heartbeat })?.id ?? Int.max
        var split: Int?
        var index = 0
        // What the batch supersedes is counted for every client before the writes (a client may
        // read at once, and then look at the count); a client that does not take the batch is
        // taken off again (in `coalesced`, added after the pass).
        feed?.countCoalesced(superseded * clients.count)
        while index < clients.count {
            if split == nil, index > 0, index % Self.checkEvery == 0, let more = check() {
                split = index
                events = more
                let counted = superseded
                (batch, superseded) = Self.coalesce(events)
                bytes = batch.sse
                first = events.first(where: { $0.kind != .heartbeat })?.id ?? Int.max
                feed?.countCoalesced((superseded - counted) * (clients.count - index))
            }
            let client = clients[index]
            index += 1
            guard client.state == .streaming else {
                coalesced -= superseded
                continue
            }
            if client.ready, client.pending.count == 0, client.after < first, client.isWritable {
                client.write(bytes)
                continue
            }
            coalesced -= superseded
            var full = false
            for event in events where event.kind == .heartbeat || event.id > client.after {
                switch client.pending.offer(event, limit: client.limit) {
                case nil: full = true
                case true?: coalesced += 1
                case false?: break
                }
                if full { break }
            }
            if full {
                dropped.append(client)
            } else if client.ready, client.isWritable {
                client.writePending()
            }
        }
        next = split ?? clients.count
    }

    /// How often a pass looks for a moment that came meanwhile.
    static let checkEvery = 256

    /// The events waiting in the inbox if there are only events and a moment among them, taken.
    private func takeEventsWithAMoment() -> [LiveEvent]? {
        inbox.withLock { inbox -> [LiveEvent]? in
            var events: [LiveEvent] = []
            var moment = false
            for item in inbox.items {
                guard case .event(let event) = item else { return nil }
                if event.kind == .moment { moment = true }
                events.append(event)
            }
            guard moment else { return nil }
            inbox.items.removeAll(keepingCapacity: true)
            return events
        }
    }

    /// A run of events as one client that fell behind is sent them; how many were superseded.
    static func coalesce(_ run: [LiveEvent]) -> (LiveBatch, superseded: Int) {
        if run.count == 1 { return (LiveBatch(events: run), 0) }
        var pending = PendingEvents()
        var superseded = 0
        for event in run where pending.offer(event, limit: .max) == true { superseded += 1 }
        return (pending.take(), superseded)
    }

    private func add(_ client: StreamClient, missed: [LiveEvent]) {
        guard client.state == .new, client.channel.isActive else { return abandon(client) }
        do {
            try client.channel.pipeline.syncOperations.addHandler(client)
        } catch {
            return abandon(client)
        }
        let state = bound.value
        client.state = .streaming
        client.stream = self
        client.index = state.clients.count
        state.clients.append(client)
        for event in missed { _ = client.pending.offer(event, coalesce: false, limit: client.limit) }
        // The response's head and first bytes were handed to the loop (as tasks of its own) before
        // the client was posted, but this drain may have been queued before them: the client's
        // first write waits for a task queued now, behind them. Meanwhile its events wait.
        eventLoop.execute {
            client.ready = true
            if client.state == .streaming, client.pending.count > 0, client.isWritable { client.writePending() }
        }
    }

    /// A client that went (or was cancelled) before it was added.
    private func abandon(_ client: StreamClient) {
        client.state = .ended
        feed?.streamEnded(on: self)
        client.finish()
    }

    /// Ends a client's stream: it is forgotten, its handler leaves the connection (which may serve
    /// other requests after), and its response is ended.
    func end(_ client: StreamClient) {
        switch client.state {
        case .new:
            client.state = .cancelled
        case .cancelled, .ended:
            break
        case .streaming:
            client.state = .ended
            let state = bound.value
            let last = state.clients.removeLast()
            if last !== client {
                state.clients[client.index] = last
                last.index = client.index
            }
            client.leave()
            feed?.streamEnded(on: self)
            client.finish()
        }
    }
}

/// One Server-Sent Events client of a `LoopStream`: a handler at the end of its connection's
/// pipeline, through which the loop writes its events and learns when the connection can take more
/// or is gone.
final class StreamClient: ChannelInboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    enum State { case new, cancelled, streaming, ended }

    private enum Ending {
        case streaming
        case waiting(CheckedContinuation<Void, Never>)
        case ended
    }

    let channel: any Channel
    /// The last event the client saw (`Last-Event-ID`), if it resumes.
    let lastID: Int?
    /// Events up to this id are not for this client: it saw them (on this instance or another).
    var after: Int { lastID ?? 0 }
    /// The most events that may wait for the connection (set before the loop sees the client).
    var limit = 1024

    // Touched on the event loop only.
    var state = State.new
    /// What the response's writer handed to the connection before the client was added has been
    /// written: the loop may write.
    var ready = false
    var pending = PendingEvents()
    var index = 0
    weak var stream: LoopStream?
    private var context: ChannelHandlerContext?

    private let ending = Mutex(Ending.streaming)

    init(channel: any Channel, after lastID: Int?) {
        self.channel = channel
        self.lastID = lastID
    }

    var isWritable: Bool { channel.isWritable }

    func write(_ bytes: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(.body(bytes)), promise: nil)
    }

    func writePending() {
        write(pending.take().sse)
    }

    /// Takes the handler out of an open connection.
    func leave() {
        guard let context, channel.isActive else { return }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        stream?.end(self)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if state == .streaming, ready, pending.count > 0, context.channel.isWritable { writePending() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stream?.end(self)
        context.fireChannelInactive()
    }

    /// Ends the stream from any thread (the client's task was cancelled, or its connection was
    /// closed for a stall).
    func end() {
        channel.eventLoop.execute {
            if let stream = self.stream { stream.end(self) } else if self.state == .new { self.state = .cancelled }
        }
    }

    /// Its response may end: wakes `ended()`.
    func finish() {
        let waiter = ending.withLock { ending -> CheckedContinuation<Void, Never>? in
            defer { ending = .ended }
            if case .waiting(let continuation) = ending { return continuation }
            return nil
        }
        waiter?.resume()
    }

    /// Returns once the stream has ended.
    func ended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = ending.withLock { ending -> Bool in
                if case .ended = ending { return true }
                ending = .waiting(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
