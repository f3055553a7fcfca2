import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
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
        /// Never written: its time to be sent (`Outgoing.sendBy`) had passed.
        case notSent
        /// The server chose another protocol than HTTP/2 in the TLS handshake (ALPN), or none.
        case notHTTP2(String)
        case badURL(String)

        package var description: String {
            switch self {
            case .timedOut: "timed out"
            case .notSent: "not sent: its time to be sent had passed"
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
        /// The last moment the request may be written (``OutboundDelivery/sendBy``): checked on
        /// the connection's event loop as its frames are written; past it, it fails `notSent`.
        package var sendBy: ContinuousClock.Instant?

        package init(
            path: String, headers: [(String, String)], body: ByteBuffer, sendBy: ContinuousClock.Instant? = nil
        ) {
            self.path = path
            self.headers = headers
            self.body = body
            self.sendBy = sendBy
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
                    timeout: timeout, sendBy: $0.sendBy)
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

extension ClientBootstrap {
    /// Connects to `address` when given, else to `host` by name.
    fileprivate func connect(to address: SocketAddress?, host: String, port: Int) -> EventLoopFuture<any Channel> {
        address.map { connect(to: $0) } ?? connect(host: host, port: port)
    }
}
