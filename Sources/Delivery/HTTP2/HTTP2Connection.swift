import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Synchronization

/// One HTTP/2 connection: its channel and the handler that matches frames to requests.
final class HTTP2Connection: Sendable {
    struct Request: Sendable {
        var method: String
        var path: String
        var authority: String
        var headers: [(String, String)]
        var body: ByteBuffer
        var timeout: TimeAmount
        /// Not written after this (a process held up past its claims' leases): fails `notSent`.
        var sendBy: ContinuousClock.Instant? = nil
    }

    let channel: any Channel
    private let handler: NIOLoopBound<Handler>
    private let usable = Atomic<Bool>(true)

    init(channel: any Channel, handler: Handler) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
        handler.onRetire = { [weak self] in self?.usable.store(false, ordering: .relaxed) }
    }

    /// Open and not going away.
    var isUsable: Bool { usable.load(ordering: .relaxed) && channel.isActive }

    typealias Completion = @Sendable (Result<HTTP2Client.Response, HTTP2Client.Failure>) -> Void

    func send(_ request: Request) -> EventLoopFuture<HTTP2Client.Response> {
        let promise = channel.eventLoop.makePromise(of: HTTP2Client.Response.self)
        let completion: Completion = { result in promise.completeWith(result.mapError { $0 as any Error }) }
        if channel.eventLoop.inEventLoop {
            handler.value.submit(request, completion: completion)
        } else {
            channel.eventLoop.execute { [handler] in handler.value.submit(request, completion: completion) }
        }
        return promise.futureResult
    }

    /// Writes all of `requests` in one turn of the event loop (one flush); `completion` gets each
    /// answer by index.
    func send(
        _ requests: [Request],
        completion: @escaping @Sendable (Int, Result<HTTP2Client.Response, HTTP2Client.Failure>) -> Void
    ) {
        channel.eventLoop.execute { [handler] in
            for (index, request) in requests.enumerated() {
                handler.value.submit(request) { completion(index, $0) }
            }
        }
    }

    func close() -> EventLoopFuture<Void> {
        usable.store(false, ordering: .relaxed)
        return channel.close()
    }

    /// Writes requests as HEADERS and DATA frames on new client streams, reads responses back,
    /// and keeps the connection's receive window open.
    final class Handler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        private struct Pending {
            var completion: Completion
            var status = 0
            var headers = HPACKHeaders()
            var body: ByteBuffer?
            var deadline: NIODeadline
        }

        private let unindexedHeaders: Set<String>
        private var context: ChannelHandlerContext?
        private var pending: [Int32: Pending] = [:]
        private var nextStreamID: Int32 = 1
        private var flushScheduled = false
        /// One timer per connection, at the earliest deadline of the requests in flight (a timer
        /// per request cost a heap insertion and a linear removal from the event loop's queue).
        private var sweep: (at: NIODeadline, task: Scheduled<Void>)?
        /// GOAWAY received (or stream ids nearly used up): no new streams.
        private var retiring = false
        private var unacknowledgedBytes = 0
        var onRetire: (@Sendable () -> Void)?

        /// Stream ids are 31 bits; a connection is retired well before they run out.
        private static let lastUsableStreamID: Int32 = Int32.max - 1_000_000

        init(unindexedHeaders: Set<String>) {
            self.unindexedHeaders = unindexedHeaders
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            failAll(.connectionLost("handler removed"))
        }

        func submit(_ request: Request, completion: @escaping Completion) {
            guard let context, context.channel.isActive, !retiring else {
                completion(.failure(.notProcessed("connection closing")))
                return
            }
            if OutboundDelivery.hasPassed(request.sendBy) {
                completion(.failure(.notSent))
                return
            }
            let streamID = nextStreamID
            nextStreamID += 2
            if nextStreamID >= Self.lastUsableStreamID { retire() }
            var headers = HPACKHeaders()
            headers.reserveCapacity(request.headers.count + 4)
            headers.add(name: ":method", value: request.method)
            headers.add(name: ":scheme", value: "https")
            func indexing(_ name: String) -> HPACKIndexing {
                unindexedHeaders.contains(name) ? .nonIndexable : .indexable
            }
            headers.add(name: ":path", value: request.path, indexing: indexing(":path"))
            headers.add(name: ":authority", value: request.authority)
            for (name, value) in request.headers { headers.add(name: name, value: value, indexing: indexing(name)) }
            let hasBody = request.body.readableBytes > 0
            if hasBody { headers.add(name: "content-length", value: String(request.body.readableBytes)) }
            let deadline = NIODeadline.now() + request.timeout
            pending[streamID] = Pending(completion: completion, deadline: deadline)
            armSweep(at: deadline, context)
            let id = HTTP2StreamID(streamID)
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: !hasBody)))),
                promise: nil)
            if hasBody {
                context.write(
                    wrapOutboundOut(
                        HTTP2Frame(
                            streamID: id, payload: .data(.init(data: .byteBuffer(request.body), endStream: true)))),
                    promise: nil)
            }
            scheduleFlush(context)
        }

        /// One flush for everything written in this turn of the event loop.
        private func scheduleFlush(_ context: ChannelHandlerContext) {
            guard !flushScheduled else { return }
            flushScheduled = true
            context.eventLoop.assumeIsolated().execute { [weak self] in
                guard let self, let context = self.context else { return }
                self.flushScheduled = false
                context.flush()
            }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            let streamID = Int32(Int(frame.streamID))
            switch frame.payload {
            case .headers(let headers):
                guard var entry = pending[streamID] else { return }
                if let status = headers.headers.first(name: ":status").flatMap(Int.init) {
                    // 1xx responses are informational; the final status replaces them.
                    entry.status = status
                    entry.headers = headers.headers
                }
                pending[streamID] = entry
                if headers.endStream { complete(streamID) }
            case .data(let data):
                if case .byteBuffer(var buffer) = data.data {
                    unacknowledgedBytes += buffer.readableBytes
                    if var entry = pending[streamID] {
                        if entry.body == nil {
                            entry.body = buffer
                        } else {
                            entry.body!.writeBuffer(&buffer)
                        }
                        pending[streamID] = entry
                    }
                }
                acknowledgeData(context)
                if data.endStream { complete(streamID) }
            case .rstStream(let code):
                fail(streamID, .streamReset("\(code)"))
            case .goAway(let lastStreamID, let code, _):
                retire()
                let last = Int32(Int(lastStreamID))
                for id in pending.keys where id > last {
                    fail(id, .notProcessed("GOAWAY \(code)"))
                }
                if pending.isEmpty { context.close(promise: nil) }
            default:
                break
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let closed = event as? StreamClosedEvent, let reason = closed.reason {
                fail(Int32(Int(closed.streamID)), .streamReset("\(reason)"))
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            retire()
            failAll(.connectionLost("connection closed"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            retire()
            failAll(.connectionLost("\(error)"))
            context.close(promise: nil)
        }

        /// Response bodies count against the connection's receive window; give it back in
        /// chunks (streams' own windows are far larger than any APNs response).
        private func acknowledgeData(_ context: ChannelHandlerContext) {
            guard unacknowledgedBytes >= 32 * 1024 else { return }
            let increment = unacknowledgedBytes
            unacknowledgedBytes = 0
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))),
                promise: nil)
            scheduleFlush(context)
        }

        private func armSweep(at deadline: NIODeadline, _ context: ChannelHandlerContext) {
            if let sweep, sweep.at <= deadline { return }
            sweep?.task.cancel()
            let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] () -> Void in
                self?.sweepDeadlines()
            }
            sweep = (deadline, task)
        }

        /// Times out every request past its deadline and waits for the next one.
        private func sweepDeadlines() {
            sweep = nil
            guard let context else { return }
            let now = NIODeadline.now()
            var next: NIODeadline?
            var expired: [Int32] = []
            for (streamID, entry) in pending {
                if entry.deadline <= now {
                    expired.append(streamID)
                } else if next.map({ entry.deadline < $0 }) ?? true {
                    next = entry.deadline
                }
            }
            for streamID in expired.sorted() { timedOut(streamID) }
            if let next { armSweep(at: next, context) }
        }

        private func complete(_ streamID: Int32) {
            guard let entry = pending.removeValue(forKey: streamID) else { return }
            entry.completion(
                .success(
                    HTTP2Client.Response(status: entry.status, headers: entry.headers, body: entry.body ?? ByteBuffer())
                ))
            closeIfDrained()
        }

        private func fail(_ streamID: Int32, _ failure: HTTP2Client.Failure) {
            guard let entry = pending.removeValue(forKey: streamID) else { return }
            entry.completion(.failure(failure))
            closeIfDrained()
        }

        private func timedOut(_ streamID: Int32) {
            guard pending[streamID] != nil, let context else { return }
            fail(streamID, .timedOut)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: HTTP2StreamID(streamID), payload: .rstStream(.cancel))),
                promise: nil)
            scheduleFlush(context)
        }

        private func failAll(_ failure: HTTP2Client.Failure) {
            let entries = pending
            pending = [:]
            sweep?.task.cancel()
            sweep = nil
            for entry in entries.values {
                entry.completion(.failure(failure))
            }
        }

        private func retire() {
            guard !retiring else { return }
            retiring = true
            onRetire?()
        }

        private func closeIfDrained() {
            if retiring && pending.isEmpty, let context, context.channel.isActive { context.close(promise: nil) }
        }
    }
}
