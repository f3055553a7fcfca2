import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// HTTPS/1.1 to endpoints users give (webhooks, push services without HTTP/2): one request per
/// connection, made through an ``EndpointGuard`` to a checked address, with a deadline on the
/// whole exchange and a bounded response. A redirect is an answer like any other: it is never
/// followed (the caller classifies it).
package struct HTTP1Client: Sendable {
    package struct Configuration: Sendable {
        /// For each TCP connection attempt.
        package var connectTimeout = TimeAmount.seconds(5)
        /// Certificate authorities (PEM) trusted besides the system's.
        package var extraCertificateAuthorities: [String] = []
        /// Bytes of a response body read; the rest is not waited for.
        package var maximumResponseBody = 64 * 1024
        package var endpointGuard = EndpointGuard()

        package init() {}
    }

    package struct Response: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: ByteBuffer
    }

    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case badURL(String)
        /// The endpoint resolves only into networks the service must not reach.
        case refused(EndpointRefusal)
        case cannotConnect(String)
        case timedOut
        /// The connection closed or failed before the whole response head arrived.
        case connectionLost(String)

        package var description: String {
            switch self {
            case .badURL(let url): "not an https URL: \(url)"
            case .refused(let refusal): "refused: \(refusal)"
            case .cannotConnect(let why): "cannot connect (\(why))"
            case .timedOut: "timed out"
            case .connectionLost(let why): "connection lost (\(why))"
            }
        }
    }

    private let configuration: Configuration
    private let sslContext: NIOSSLContext
    private let group: any EventLoopGroup

    package init(
        configuration: Configuration = Configuration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.configuration = configuration
        self.group = group
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["http/1.1"]
        if !configuration.extraCertificateAuthorities.isEmpty {
            let certificates = try configuration.extraCertificateAuthorities.flatMap {
                try NIOSSLCertificate.fromPEMBytes(Array($0.utf8))
            }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        sslContext = try NIOSSLContext(configuration: tls)
    }

    /// The parts of an https URL a request needs.
    package struct Target: Sendable, Hashable {
        package var host: String
        package var port: Int
        /// `Host:`: the host, with the port when it is not 443.
        package var authority: String
        /// Path and query.
        package var path: String

        package init?(url: String) {
            guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
                let host = components.host, !host.isEmpty, components.user == nil, components.password == nil
            else { return nil }
            self.host = host
            port = components.port ?? 443
            authority = components.port.map { "\(host.contains(":") ? "[\(host)]" : host):\($0)" } ?? host
            var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            if let query = components.percentEncodedQuery { path += "?" + query }
            self.path = path
        }
    }

    /// Sends one request and returns the response (its body up to the configured bound).
    package func execute(
        method: HTTPMethod = .POST, url: String, headers: [(String, String)], body: ByteBuffer, timeout: TimeAmount
    ) async throws(Failure) -> Response {
        guard let target = Target(url: url) else { throw .badURL(url) }
        let addresses: [SocketAddress]
        do {
            addresses = try await configuration.endpointGuard.addresses(host: target.host, port: target.port)
        } catch {
            throw .refused(error)
        }
        let channel = try await connect(to: addresses, host: target.host)
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: target.path)
        head.headers.add(name: "host", value: target.authority)
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        head.headers.replaceOrAdd(name: "content-length", value: "\(body.readableBytes)")
        head.headers.replaceOrAdd(name: "connection", value: "close")
        if !head.headers.contains(name: "user-agent") { head.headers.add(name: "user-agent", value: "nohit") }

        // The deadline closes the connection, which ends the exchange below.
        let expired = Atomic<Bool>(false)
        let deadline = channel.channel.eventLoop.scheduleTask(in: timeout) {
            expired.store(true, ordering: .relaxed)
            channel.channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        let limit = configuration.maximumResponseBody
        let result: Result<Response, Failure>
        do {
            result = try await channel.executeThenClose { inbound, outbound in
                // The request goes in one write: a service answers, and closes (`connection:
                // close`), as soon as it has the body, so an `.end` written after the body raced
                // that close and could fail ("I/O on closed channel") after the service had taken
                // the request — a delivered push reported lost, and sent again. A write that fails
                // even so does not hide an answer that came: the answer is read first.
                var parts: [HTTPClientRequestPart] = [.head(head)]
                if body.readableBytes > 0 { parts.append(.body(.byteBuffer(body))) }
                parts.append(.end(nil))
                var writeFailure: (any Error)?
                do {
                    try await outbound.write(contentsOf: parts)
                } catch {
                    writeFailure = error
                }
                var response: Response?
                do {
                    for try await part in inbound {
                        switch part {
                        case .head(let head):
                            response = Response(
                                status: Int(head.status.code), headers: head.headers, body: ByteBuffer())
                        case .body(var chunk):
                            guard response != nil else { continue }
                            let room = max(0, limit - response!.body.readableBytes)
                            if let bytes = chunk.readSlice(length: min(room, chunk.readableBytes)) {
                                response!.body.writeImmutableBuffer(bytes)
                            }
                            if response!.body.readableBytes >= limit { return .success(response!) }
                        case .end:
                            if let response { return .success(response) }
                        }
                    }
                } catch {
                    // A head that came is the service's answer, whatever broke after it.
                    if let response { return .success(response) }
                    throw writeFailure ?? error
                }
                if let response { return .success(response) }
                if let writeFailure { throw writeFailure }
                return .failure(.connectionLost("closed before the response"))
            }
        } catch {
            throw expired.load(ordering: .relaxed) ? .timedOut : .connectionLost("\(error)")
        }
        if case .failure = result, expired.load(ordering: .relaxed) { throw .timedOut }
        return try result.get()
    }

    /// A TLS connection to the first of `addresses` that answers.
    private func connect(
        to addresses: [SocketAddress], host: String
    ) async throws(Failure) -> NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart> {
        let sslContext = sslContext
        let serverHostname = host.isIPAddress ? nil : host
        var reasons: [String] = []
        for address in addresses {
            do {
                return try await ClientBootstrap(group: group)
                    .connectTimeout(configuration.connectTimeout)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .connect(to: address) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                                wrappingChannelSynchronously: channel)
                        }
                    }
            } catch {
                reasons.append("\(address): \(error)")
            }
        }
        throw .cannotConnect(reasons.joined(separator: "; "))
    }
}

extension String {
    /// Whether the string is an IPv4 or IPv6 address literal (no SNI is sent for those).
    var isIPAddress: Bool {
        switch IPAddress.read(host: self) {
        case .ipv4(_, let canonical): canonical
        case .ipv6: true
        case .name, .invalid: false
        }
    }
}
