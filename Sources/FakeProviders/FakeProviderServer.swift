import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// `nohit fake-apns`: a local APNs (HTTP/2 over TLS) and Web Push service in one process.
///
/// Routes: `POST /3/device/<token>` (APNs), `POST /webpush/subscriptions` (new subscription),
/// `POST /webpush/<id>` (Web Push), `GET /webpush/<id>/messages` (what it decrypted),
/// `GET /accepted` (every accepted `apns-id` with its count), `GET /notifications/<apns-id>`,
/// `GET /stats`, `POST /reset`.
package final class FakeProviderServer: Sendable {
    package let state: FakeProviderState
    package let port: Int
    package let authority: TestCertificateAuthority
    private let channel: any Channel

    private init(state: FakeProviderState, port: Int, authority: TestCertificateAuthority, channel: any Channel) {
        self.state = state
        self.port = port
        self.authority = authority
        self.channel = channel
    }

    package var baseURL: String { "https://127.0.0.1:\(port)" }

    /// Listens on `host:port` (0 picks a free port).
    package static func start(
        host: String = "127.0.0.1", port: Int = 0, configuration: FakeProviderConfiguration,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> FakeProviderServer {
        let authority = try TestCertificateAuthority()
        let state = FakeProviderState(configuration: configuration)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(authority.serverCertificatePEM.utf8)).map {
                .certificate($0)
            },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(authority.serverKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let originBox = OriginBox()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                var connection = NIOHTTP2Handler.ConnectionConfiguration()
                                connection.initialSettings = [
                                    HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                                    HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                                    HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024),
                                ]
                                // A benchmark opens many streams at once; do not mistake that for abuse.
                                connection.maximumRecentlyResetStreams = 100_000
                                _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                                    mode: .server, connectionConfiguration: connection, streamConfiguration: .init()
                                ) { stream in
                                    stream.eventLoop.makeCompletedFuture {
                                        try stream.pipeline.syncOperations.addHandlers([
                                            HTTP2FramePayloadToHTTP1ServerCodec(),
                                            FakeProviderHandler(state: state, origin: originBox.origin, http2: true),
                                        ])
                                    }
                                }
                            }
                        },
                        http1ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                                try channel.pipeline.syncOperations.addHandler(
                                    FakeProviderHandler(state: state, origin: originBox.origin, http2: false))
                            }
                        })
                }
            }
            .bind(host: host, port: port).get()
        let boundPort = channel.localAddress?.port ?? port
        originBox.origin = "https://\(host):\(boundPort)"
        return FakeProviderServer(state: state, port: boundPort, authority: authority, channel: channel)
    }

    package func shutdown() async throws {
        try await channel.close()
    }

    /// Waits until the listening socket closes.
    package func waitUntilClosed() async throws {
        try await channel.closeFuture.get()
    }
}

/// The origin (`https://host:port`) is known only once the port is bound.
private final class OriginBox: @unchecked Sendable {
    // Written once before the first connection is accepted; read by connection handlers after.
    var origin = ""
}

/// Handles one request stream (HTTP/2) or one connection's requests (HTTP/1.1).
final class FakeProviderHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: FakeProviderState
    private let origin: String
    private let http2: Bool
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?

    init(state: FakeProviderState, origin: String, http2: Bool) {
        self.state = state
        self.origin = origin
        self.http2 = http2
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = nil
        case .body(var part):
            if body == nil { body = part } else { body!.writeBuffer(&part) }
        case .end:
            guard let head else { return }
            let bytes = body.map { Data($0.readableBytesView) } ?? Data()
            self.head = nil
            body = nil
            respond(context: context, reply: route(head, bytes), keepAlive: head.isKeepAlive)
        }
    }

    private func route(_ head: HTTPRequestHead, _ body: Data) -> FakeReply {
        let path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
        let parts = path.split(separator: "/").map(String.init)
        let headers = head.headers.map { ($0.name, $0.value) }
        let now = Date()
        switch (head.method, parts.count, parts.first) {
        case (.POST, 3, "3") where parts[1] == "device":
            return state.apns(token: parts[2], headers: headers, body: body, now: now)
        case (.POST, 2, "webpush") where parts[1] == "subscriptions":
            let requested = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            let subscription =
                (requested?["id"] as? String).map { state.subscribe(id: $0, baseURL: origin) }
                ?? state.subscribe(baseURL: origin)
            return .json(
                201,
                [
                    "endpoint": subscription.endpoint,
                    "keys": ["p256dh": subscription.p256dh, "auth": subscription.auth],
                ])
        case (.POST, 2, "webpush"):
            return state.webPush(id: parts[1], origin: origin, headers: headers, body: body, now: now)
        case (.GET, 3, "webpush") where parts[2] == "messages":
            guard let messages = state.webPushMessages(id: parts[1]) else {
                return .json(404, ["reason": "no such subscription"])
            }
            return .json(200, ["messages": messages.map { String(decoding: $0, as: UTF8.self) }])
        case (.POST, 2, "webhooks") where parts[1] == "endpoints":
            let endpoint = state.webhookEndpoint(baseURL: origin)
            return .json(201, ["url": endpoint.url, "secret": endpoint.secret])
        case (.POST, 2, "webhooks"):
            return state.webhook(id: parts[1], headers: headers, body: body, now: now)
        case (.GET, 1, "accepted"):
            let accepted = state.accepted
            return .json(
                200,
                [
                    "unique": accepted.count, "total": accepted.reduce(0) { $0 + $1.count },
                    "accepted": accepted.map { ["apns_id": $0.apnsID, "count": $0.count] },
                ])
        case (.GET, 2, "notifications"):
            guard let notification = state.notification(apnsID: parts[1]) else {
                return .json(404, ["reason": "not accepted"])
            }
            return .json(
                200,
                [
                    "apns_id": notification.apnsID, "device_token": notification.deviceToken,
                    "topic": notification.topic,
                    "push_type": notification.pushType, "collapse_id": notification.collapseID ?? NSNull(),
                    "payload": String(decoding: notification.payload, as: UTF8.self),
                ])
        case (.GET, 1, "stats"):
            return .json(
                200,
                [
                    "requests": state.requestCount,
                    "statuses": Dictionary(uniqueKeysWithValues: state.statusCounts.map { ("\($0)", $1) }),
                ])
        case (.POST, 1, "reset"):
            state.reset()
            return .json(200, ["reset": true])
        default:
            return .json(404, ["reason": "no route for \(head.method) \(path)"])
        }
    }

    private func respond(context: ChannelHandlerContext, reply: FakeReply, keepAlive: Bool) {
        switch reply {
        case .stall:
            return
        case .goAway:
            guard http2, let parent = context.channel.parent else {
                context.close(promise: nil)
                return
            }
            let streamID =
                (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
            let last = Int(Int32(streamID)) > 2 ? HTTP2StreamID(Int32(streamID) - 2) : HTTP2StreamID.rootStream
            let frame = HTTP2Frame(
                streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: nil))
            parent.writeAndFlush(frame).whenComplete { _ in parent.close(promise: nil) }
        case .respond(let status, let extra, let body):
            var headers = HTTPHeaders(extra)
            headers.replaceOrAdd(name: "content-length", value: "\(body.count)")
            if !http2 && !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
            context.write(
                wrapOutboundOut(
                    .head(
                        HTTPResponseHead(
                            version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers))),
                promise: nil)
            if !body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
            }
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !http2 && !keepAlive { done.whenComplete { _ in context.close(promise: nil) } }
        }
    }
}
