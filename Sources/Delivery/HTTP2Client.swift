import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// A lean HTTP/2 client for one origin, for the APNs hot path (and Web Push, a client per push
/// service): requests go straight to frames on a shared TLS connection (no per-stream channel),
/// writes are coalesced into one flush per event-loop turn, and a deadline guards every request
/// (and the TLS handshake, which must choose HTTP/2).
///
/// AsyncHTTPClient does the same job with a channel pipeline per stream and a flush per request
/// part; measured on this project's benchmark machine it tops out near 9,000 requests/s of client
/// CPU, below what a no-hitter's fan-out needs. This client keeps the protocol work in
/// swift-nio-http2 (framing, HPACK, flow control, stream limits) and only drops that per-stream
/// machinery.
package final class HTTP2Client: Sendable {
    package struct Configuration: Sendable {
        /// Connections kept open to the origin; requests are spread over them.
        package var connections = 1
        /// For the TCP connection, and again for the TLS handshake after it.
        package var connectTimeout = TimeAmount.seconds(5)
        /// Certificate authorities (PEM) trusted besides the system's.
        package var extraCertificateAuthorities: [String] = []
        /// For endpoints users give (Web Push services): the name is resolved and its addresses
        /// checked before connecting (see ``EndpointGuard``). Nil for fixed providers (APNs),
        /// which are connected to by name.
        package var endpointGuard: EndpointGuard?
        /// Header names (`:path` included) whose values differ on every request — APNs's device
        /// path and `apns-id`: sent as HPACK literals without indexing, so they never push the
        /// values that repeat (the provider token, the topic) out of the compression table.
        package var unindexedHeaders: Set<String> = []

        package init() {}
    }

    package struct Response: Sendable {
        package var status: Int
        package var headers: HPACKHeaders
        package var body: ByteBuffer
    }

    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The deadline passed before the response; the stream was reset.
        case timedOut
        /// The server sent GOAWAY without processing this stream: safe to send again.
        case notProcessed(String)
        /// The connection closed or failed with the stream open: the request may or may not
        /// have been processed.
        case connectionLost(String)
        /// The server reset the stream.
        case streamReset(String)
        case cannotConnect(String)
        /// The endpoint resolves only into networks the service must not reach.
        case refused(EndpointRefusal)
        /// The server chose another protocol than HTTP/2 in the TLS handshake (ALPN), or none.
        case notHTTP2(String)
        case badURL(String)

        package var description: String {
            switch self {
            case .timedOut: "timed out"
            case .notProcessed(let why): "not processed (\(why))"
            case .connectionLost(let why): "connection lost (\(why))"
            case .streamReset(let code): "stream reset (\(code))"
            case .cannotConnect(let why): "cannot connect (\(why))"
            case .refused(let refusal): "refused: \(refusal)"
            case .notHTTP2(let protocolName): "the server does not speak HTTP/2 (ALPN: \(protocolName))"
            case .badURL(let url): "not an https URL: \(url)"
            }
        }
    }

    private let host: String
    private let port: Int
    private let authority: String
    private let configuration: Configuration
    private let sslContext: NIOSSLContext
    private let group: any EventLoopGroup
    private let pool = Mutex(PoolState())

    private struct PoolState {
        var connections: [HTTP2Connection] = []
        var connecting: [EventLoopPromise<HTTP2Connection>] = []
        var next = 0
        var closed = false
    }

    /// A client for the origin of `url` (`https://host[:port]`).
    package init(
        origin url: String, configuration: Configuration = Configuration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        guard let components = URLComponents(string: url), components.scheme == "https",
            let host = components.host, !host.isEmpty
        else { throw Failure.badURL(url) }
        self.host = host
        port = components.port ?? 443
        authority = components.port.map { "\(host):\($0)" } ?? host
        self.configuration = configuration
        self.group = group
        var tls = TLSConfiguration.makeClientConfiguration()
        // HTTP/1.1 is offered too, so that a server without HTTP/2 says so in the handshake
        // (and is then reached another way) rather than failing it.
        tls.applicationProtocols = ["h2", "http/1.1"]
        if !configuration.extraCertificateAuthorities.isEmpty {
            let certificates = try configuration.extraCertificateAuthorities.flatMap {
                try NIOSSLCertificate.fromPEMBytes(Array($0.utf8))
            }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        sslContext = try NIOSSLContext(configuration: tls)
    }

    /// Sends `POST path` (or another method) and returns the whole response.
    package func execute(
        method: String = "POST", path: String, headers: [(String, String)], body: ByteBuffer, timeout: TimeAmount
    ) async throws(Failure) -> Response {
        let connection = try await connection()
        let request = HTTP2Connection.Request(
            method: method, path: path, authority: authority, headers: headers, body: body, timeout: timeout)
        do {
            return try await connection.send(request).get()
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .connectionLost("\(error)")
        }
    }

    /// One request of a batch.
    package struct Outgoing: Sendable {
        package var path: String
        package var headers: [(String, String)]
        package var body: ByteBuffer

        package init(path: String, headers: [(String, String)], body: ByteBuffer) {
            self.path = path
            self.headers = headers
            self.body = body
        }
    }

    /// Sends every one of `requests` (`method`, each with `timeout`), spread over the open
    /// connections with one hop to each connection's event loop, and returns once they are
    /// written; `completion` gets each answer (by index) on the event loop as it arrives.
    package func submit(
        method: String = "POST", _ requests: [Outgoing], timeout: TimeAmount,
        completion: @escaping @Sendable (Int, Result<Response, Failure>) -> Void
    ) async {
        guard !requests.isEmpty else { return }
        let shares = min(max(1, configuration.connections), requests.count)
        let perShare = (requests.count + shares - 1) / shares
        for start in stride(from: 0, to: requests.count, by: perShare) {
            let end = min(start + perShare, requests.count)
            let connection: HTTP2Connection
            do {
                connection = try await self.connection()
            } catch {
                for index in start..<end { completion(index, .failure(error)) }
                continue
            }
            let batch = requests[start..<end].map {
                HTTP2Connection.Request(
                    method: method, path: $0.path, authority: authority, headers: $0.headers, body: $0.body,
                    timeout: timeout)
            }
            connection.send(batch) { index, result in completion(start + index, result) }
        }
    }

    /// Closes every connection.
    package func shutdown() async {
        let (connections, connecting) = pool.withLock { state in
            state.closed = true
            defer {
                state.connections = []
                state.connecting = []
            }
            return (state.connections, state.connecting)
        }
        for connection in connections { try? await connection.close().get() }
        for promise in connecting { try? await promise.futureResult.get().close().get() }
    }

    /// A usable connection: round-robin over open ones, opening more up to the configured count.
    private func connection() async throws(Failure) -> HTTP2Connection {
        enum Choice {
            case ready(HTTP2Connection)
            case wait(EventLoopFuture<HTTP2Connection>)
            case closed
        }
        var opening: EventLoopPromise<HTTP2Connection>?
        let choice = pool.withLock { state -> Choice in
            guard !state.closed else { return .closed }
            state.connections.removeAll { !$0.isUsable }
            if state.connections.count + state.connecting.count < configuration.connections {
                let promise = group.next().makePromise(of: HTTP2Connection.self)
                state.connecting.append(promise)
                opening = promise
            }
            state.next &+= 1
            if !state.connections.isEmpty {
                return .ready(state.connections[state.next % state.connections.count])
            }
            return .wait(state.connecting[state.next % state.connecting.count].futureResult)
        }
        if let opening {
            opening.futureResult.whenComplete { [self] result in
                let stale: HTTP2Connection? = self.pool.withLock { state in
                    state.connecting.removeAll { $0.futureResult === opening.futureResult }
                    guard case .success(let connection) = result else { return nil }
                    if state.closed { return connection }
                    state.connections.append(connection)
                    return nil
                }
                _ = stale?.close()
            }
            // The connection lives on the loop its promise was made on: asking the group for a
            // loop again would pair them up so that every connection landed on the same loop.
            let loop = opening.futureResult.eventLoop
            if let endpointGuard = configuration.endpointGuard {
                // Resolved and checked here, in the task of the request that opens the connection;
                // then each allowed address is tried in turn.
                do {
                    let addresses = try await endpointGuard.addresses(host: host, port: port)
                    connect(on: loop, trying: addresses).cascade(to: opening)
                } catch {
                    opening.fail(Failure.refused(error))
                }
            } else {
                connect(on: loop, to: nil).cascade(to: opening)
            }
        }
        switch choice {
        case .ready(let connection):
            return connection
        case .closed:
            throw .cannotConnect("the client is shut down")
        case .wait(let future):
            do {
                return try await future.get()
            } catch let failure as Failure {
                throw failure
            } catch {
                throw .cannotConnect("\(error)")
            }
        }
    }

    /// Connects to the first of `addresses` that answers (a server without HTTP/2 ends the tries).
    private func connect(on loop: any EventLoop, trying addresses: [SocketAddress]) -> EventLoopFuture<HTTP2Connection>
    {
        @Sendable func attempt(_ index: Int, _ reasons: [String]) -> EventLoopFuture<HTTP2Connection> {
            guard index < addresses.count else {
                return loop.makeFailedFuture(Failure.cannotConnect(reasons.joined(separator: "; ")))
            }
            return connect(on: loop, to: addresses[index]).flatMapError { error in
                if case Failure.notHTTP2 = error { return loop.makeFailedFuture(error) }
                return attempt(index + 1, reasons + ["\(addresses[index]): \(error)"])
            }
        }
        return attempt(0, [])
    }

    /// Connects to `address`, or to the host by name when nil.
    private func connect(on loop: any EventLoop, to address: SocketAddress?) -> EventLoopFuture<HTTP2Connection> {
        let serverHostname = host.isIPAddress ? nil : host
        let sslContext = sslContext
        let unindexed = configuration.unindexedHeaders
        let handshakeTimeout = configuration.connectTimeout
        return ClientBootstrap(group: loop)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ssl = try NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname)
                    try channel.pipeline.syncOperations.addHandler(ssl)
                    try channel.pipeline.syncOperations.addHandler(
                        ProtocolCheck(negotiated: channel.eventLoop.makePromise(), timeout: handshakeTimeout))
                    try channel.pipeline.syncOperations.addHandler(WriteCoalescingHandler())
                    var settings = nioDefaultSettings
                    settings.append(HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20))
                    // This client writes only header blocks it built itself, and reads nothing from a
                    // response's headers but `:status` and `retry-after`: validating every field
                    // of both is work without a use here.
                    try channel.pipeline.syncOperations.addHandler(
                        NIOHTTP2Handler(mode: .client, initialSettings: settings, headerBlockValidation: .disabled))
                    try channel.pipeline.syncOperations.addHandler(HTTP2Connection.Handler(unindexedHeaders: unindexed))
                }
            }
            .connect(to: address, host: host, port: port)
            .flatMap { channel in
                // Usable once TLS has agreed on HTTP/2: requests queued before would fail with the
                // connection if the server turned out to speak something else. Each connection
                // attempt has its own check (one per address tried); this one's is still in the
                // pipeline, as only this code takes it out, once its work is done (every read of
                // the connection would pass through it otherwise).
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.handler(type: ProtocolCheck.self).negotiated.futureResult
                }
                .flatMap { $0 }
                .flatMapThrowing {
                    let check = try channel.pipeline.syncOperations.handler(type: ProtocolCheck.self)
                    channel.pipeline.syncOperations.removeHandler(check, promise: nil)
                    let handler = try channel.pipeline.syncOperations.handler(type: HTTP2Connection.Handler.self)
                    return HTTP2Connection(channel: channel, handler: handler)
                }
                .flatMapError { error in
                    channel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .flatMapErrorThrowing { error in
                if error is Failure { throw error }
                throw Failure.cannotConnect("\(error)")
            }
    }
}

/// One HTTP/2 connection: its channel and the handler that matches frames to requests.
final class HTTP2Connection: Sendable {
    struct Request: Sendable {
        var method: String
        var path: String
        var authority: String
        var headers: [(String, String)]
        var body: ByteBuffer
        var timeout: TimeAmount
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

/// Completes `negotiated` when the TLS handshake ends: with success if the server chose HTTP/2,
/// with `notHTTP2` if it chose another protocol or none, with the error if the handshake failed
/// or did not end within `timeout` (then the connection is closed: requests wait for it, and a
/// server that accepts but never answers must not hold them past their deadline).
private final class ProtocolCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let negotiated: EventLoopPromise<Void>
    private let timeout: TimeAmount
    private var settled = false
    private var timer: Scheduled<Void>?

    init(negotiated: EventLoopPromise<Void>, timeout: TimeAmount) {
        self.negotiated = negotiated
        self.timeout = timeout
    }

    func channelActive(context: ChannelHandlerContext) {
        if !settled {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: timeout) {
                let (check, context) = loopBound.value
                check.settle(.failure(HTTP2Client.Failure.cannotConnect("no TLS handshake within \(check.timeout)")))
                context.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let chosen) = event as? TLSUserEvent {
            settle(chosen == "h2" ? .success(()) : .failure(HTTP2Client.Failure.notHTTP2(chosen ?? "none")))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settle(.failure(HTTP2Client.Failure.cannotConnect("\(error)")))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settle(.failure(HTTP2Client.Failure.cannotConnect("closed during the TLS handshake")))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        settle(.failure(HTTP2Client.Failure.cannotConnect("closed during the TLS handshake")))
    }

    private func settle(_ result: Result<Void, any Error>) {
        guard !settled else { return }
        settled = true
        timer?.cancel()
        timer = nil
        negotiated.completeWith(result)
    }
}

extension ClientBootstrap {
    /// Connects to `address` when given, else to `host` by name.
    fileprivate func connect(to address: SocketAddress?, host: String, port: Int) -> EventLoopFuture<any Channel> {
        address.map { connect(to: $0) } ?? connect(host: host, port: port)
    }
}
