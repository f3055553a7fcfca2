import Delivery
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// `nohit fake-apns`: a local APNs (HTTP/2 over TLS) and Web Push service in one process.
///
/// Routes: `POST /3/device/<token>` (APNs), `POST /webpush/subscriptions` (new subscription),
/// `POST /webpush/<id>` (Web Push), `GET /webpush/<id>/messages` (what it decrypted),
/// `GET /accepted` (every accepted `apns-id` with its count; `/accepted/count`: the counts alone;
/// `/accepted/timeline`: each moment's first and last acceptance on CLOCK_MONOTONIC),
/// `GET /notifications/<apns-id>`,
/// `GET /stats`, `POST /reset`; broadcast push: channel management (`POST|GET|DELETE
/// /1/apps/<bundle>/channels`, `GET /1/apps/<bundle>/all-channels`), broadcasts (`POST
/// /4/broadcasts/apps/<bundle>`), a device's activity subscribing (`POST /channels/<id>/subscribers`
/// `{"devices": […]}`; a push-to-start naming `input-push-channel` subscribes its device too), and
/// what each broadcast reached (`GET /broadcasts`, `GET /channels/<bundle>`).
package final class FakeProviderServer: Sendable {
    package let state: FakeProviderState
    /// The address it is reached at: the one it listens on, 127.0.0.1 for any other than an IPv4
    /// host's (a wildcard).
    package let host: String
    package let port: Int
    package let authority: TestCertificateAuthority
    private let channel: any Channel

    private init(
        state: FakeProviderState, host: String, port: Int, authority: TestCertificateAuthority, channel: any Channel
    ) {
        self.state = state
        self.host = host
        self.port = port
        self.authority = authority
        self.channel = channel
    }

    package var baseURL: String { "https://\(host):\(port)" }

    /// Listens on `host:port` (0 picks a free port).
    package static func start(
        host: String = "127.0.0.1", port: Int = 0, configuration: FakeProviderConfiguration,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> FakeProviderServer {
        // Its certificate names the address it listens on (an IPv4 host's besides loopback).
        let address = host.split(separator: ".").compactMap { UInt8($0) }
        let named = address.count == 4 && host != "0.0.0.0" ? host : "127.0.0.1"
        let authority = try TestCertificateAuthority(addresses: named == "127.0.0.1" ? [] : [address])
        let state = FakeProviderState(configuration: configuration)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(authority.serverCertificatePEM.utf8)).map {
                .certificate($0)
            },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(authority.serverKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = configuration.offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
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
                                try channel.pipeline.syncOperations.addHandler(WriteCoalescingHandler())
                                try channel.pipeline.syncOperations.addHandler(
                                    NIOHTTP2Handler(
                                        mode: .server, connectionConfiguration: connection,
                                        streamConfiguration: .init()))
                                try channel.pipeline.syncOperations.addHandler(
                                    FakeProviderHTTP2Handler(state: state, origin: originBox.origin))
                            }
                        },
                        http1ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                                try channel.pipeline.syncOperations.addHandler(
                                    FakeProviderHandler(state: state, origin: originBox.origin))
                            }
                        })
                }
            }
            .bind(host: host, port: port).get()
        let boundPort = channel.localAddress?.port ?? port
        originBox.origin = "https://\(host):\(boundPort)"
        return FakeProviderServer(state: state, host: named, port: boundPort, authority: authority, channel: channel)
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

/// Handles one HTTP/1.1 connection's requests (curl, scripts).
final class FakeProviderHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: FakeProviderState
    private let origin: String
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?

    init(state: FakeProviderState, origin: String) {
        self.state = state
        self.origin = origin
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
        FakeRouter.route(
            state: state, origin: origin, method: head.method.rawValue, uri: head.uri,
            headers: FakeRequestHeaders(head.headers.lazy.map { ($0.name, $0.value) }), body: body)
    }

    private func respond(context: ChannelHandlerContext, reply: FakeReply, keepAlive: Bool) {
        switch reply {
        case .stall:
            return
        case .goAway:
            // HTTP/1.1 has no GOAWAY: the connection just closes.
            context.close(promise: nil)
        case .respond(let status, let extra, let body):
            var headers = HTTPHeaders(extra)
            headers.replaceOrAdd(name: "content-length", value: "\(body.count)")
            if !keepAlive { headers.replaceOrAdd(name: "connection", value: "close") }
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
            if !keepAlive {
                let channel = context.channel
                done.whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}

/// The fake's routes, shared by its HTTP/1.1 and HTTP/2 handlers.
enum FakeRouter {
    static func route(
        state: FakeProviderState, origin: String, method: String, uri: String, headers: FakeRequestHeaders, body: Data
    ) -> FakeReply {
        // Split on bytes: `String.split` compares Characters, a tenth of the fake's time in a fan-out.
        let path = uri.utf8.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
        let parts = (path.first ?? uri.utf8[...]).split(separator: UInt8(ascii: "/")).map { String(Substring($0)) }
        let now = Date()
        switch (method, parts.count, parts.first) {
        case ("POST", 3, "3") where parts[1] == "device":
            return state.apns(token: parts[2], headers: headers, body: body, now: now)
        case (_, 4, "1") where parts[1] == "apps" && (parts[3] == "channels" || parts[3] == "all-channels"):
            return state.channelManagement(
                method: method, bundleID: parts[2], all: parts[3] == "all-channels", headers: headers, body: body,
                now: now)
        case ("POST", 4, "4") where parts[1] == "broadcasts" && parts[2] == "apps":
            return state.broadcast(bundleID: parts[3], headers: headers, body: body, now: now)
        case ("POST", 3, "channels") where parts[2] == "subscribers":
            // A device's activity subscribing, as the app does with Apple (a test stands in for it).
            let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            let devices = object?["devices"] as? [String] ?? []
            guard let channel = parts[1].removingPercentEncoding, !devices.isEmpty else {
                return .json(400, ["reason": "give {\"devices\": [token, …]}"])
            }
            let subscribed = devices.filter { state.subscribe(device: $0, to: channel) }.count
            guard subscribed == devices.count else { return .json(404, ["reason": "ChannelNotRegistered"]) }
            return .json(200, ["subscribed": subscribed])
        case ("GET", 1, "broadcasts"):
            return .json(
                200,
                [
                    "broadcasts": state.acceptedBroadcasts.map { accepted -> [String: Any] in
                        [
                            "apns_id": accepted.apnsID, "channel": accepted.channelID, "priority": accepted.priority,
                            "reached": accepted.reached, "count": accepted.count,
                        ]
                    },
                    "reached": state.acceptedBroadcasts.reduce(0) { $0 + $1.reached },
                ])
        case ("POST", 2, "channels") where parts[1] == "stall":
            // Channels made from now on are never answered (`{"stall": true}`), until false: a
            // sender killed meanwhile leaves a channel it never learned of.
            let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            guard let stall = object?["stall"] as? Bool else { return .json(400, ["reason": "give {\"stall\": bool}"]) }
            state.stallChannelAnswers(stall)
            return .json(200, ["stall": stall])
        case ("GET", 1, "starts"):
            let starts = state.startedActivities
            return .json(
                200,
                [
                    "starts": starts.accepted.map { start -> [String: Any] in
                        ["device": start.device, "apns_id": start.apnsID, "channel": start.channel ?? NSNull()]
                    },
                    "refused": starts.refused,
                ])
        case ("GET", 2, "channels"):
            let counts = state.channelCounts
            return .json(
                200,
                [
                    "created": counts.created, "deleted": counts.deleted, "open": counts.open,
                    "channels": state.channels(of: parts[1]).map {
                        ["id": $0.id, "subscribers": $0.subscribers, "broadcasts": $0.broadcasts, "policy": $0.policy]
                    },
                ])
        case ("POST", 2, "webpush") where parts[1] == "subscriptions":
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
        case ("POST", 2, "webpush"):
            return state.webPush(id: parts[1], origin: origin, headers: headers, body: body, now: now)
        case ("GET", 3, "webpush") where parts[2] == "messages":
            guard let messages = state.webPushMessages(id: parts[1]) else {
                return .json(404, ["reason": "no such subscription"])
            }
            return .json(200, ["messages": messages.map { String(decoding: $0, as: UTF8.self) }])
        case ("POST", 2, "webhooks") where parts[1] == "endpoints":
            let endpoint = state.webhookEndpoint(baseURL: origin)
            return .json(201, ["url": endpoint.url, "secret": endpoint.secret])
        case ("POST", 2, "webhooks"):
            return state.webhook(id: parts[1], headers: headers, body: body, now: now)
        case ("GET", 1, "accepted"):
            let accepted = state.accepted
            return .json(
                200,
                [
                    "unique": accepted.count, "total": accepted.reduce(0) { $0 + $1.count },
                    "accepted": accepted.map { ["apns_id": $0.apnsID, "count": $0.count] },
                ])
        case ("GET", 2, "accepted") where parts[1] == "timeline":
            return .json(
                200,
                [
                    "clock": "CLOCK_MONOTONIC nanoseconds",
                    "moments": state.timeline.map { entry -> [String: Any] in
                        [
                            "moment": entry.momentID ?? NSNull(), "first_ns": entry.first, "last_ns": entry.last,
                            "count": entry.count,
                        ]
                    },
                ])
        case ("GET", 2, "accepted") where parts[1] == "count":
            // The counts alone: a fan-out's listing is 100,000 entries to build and to parse.
            let counts = state.acceptedCounts
            return .json(200, ["unique": counts.unique, "total": counts.total])
        case ("GET", 2, "notifications"):
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
        case ("GET", 1, "stats"):
            return .json(
                200,
                [
                    "requests": state.requestCount,
                    "statuses": Dictionary(uniqueKeysWithValues: state.statusCounts.map { ("\($0)", $1) }),
                ])
        case ("POST", 1, "reset"):
            state.reset()
            return .json(200, ["reset": true])
        default:
            return .json(
                404,
                [
                    "reason": "no route for \(method) \(path): this fake serves POST /3/device/{token} (APNs), "
                        + "POST|GET|DELETE /1/apps/{bundle}/channels, GET /1/apps/{bundle}/all-channels, "
                        + "POST /4/broadcasts/apps/{bundle}, POST /channels/{id}/subscribers, GET /broadcasts, "
                        + "GET /channels/{bundle}, "
                        + "POST /webpush/subscriptions, POST /webpush/{id}, GET /webpush/{id}/messages, "
                        + "POST /webhooks/endpoints, POST /webhooks/{id}, GET /accepted, GET /accepted/count, "
                        + "GET /accepted/timeline, "
                        + "GET /notifications/{apns-id}, GET /stats, POST /reset"
                ])
        }
    }
}

/// The fake's HTTP/2 side, on frames: each stream's HEADERS and DATA are gathered, routed, and
/// answered with HEADERS (and DATA), flushed once per read burst. No per-stream channels, so the
/// fake costs little next to the client it measures.
final class FakeProviderHTTP2Handler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let state: FakeProviderState
    private let origin: String
    private var streams: [Int32: (headers: HPACKHeaders, body: ByteBuffer?)] = [:]
    private var unacknowledgedBytes = 0
    private var needsFlush = false
    private var closing = false
    /// Streams whose requests are held now, and those of them the client reset meanwhile (it gave
    /// up waiting, as on its timeout).
    private var heldStreams: Set<Int32> = []
    private var resetWhileHeld: Set<Int32> = []

    init(state: FakeProviderState, origin: String) {
        self.state = state
        self.origin = origin
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let streamID = Int32(Int(frame.streamID))
        switch frame.payload {
        case .headers(let headers):
            streams[streamID] = (headers.headers, nil)
            if headers.endStream { finish(streamID, context: context) }
        case .data(let data):
            if case .byteBuffer(var buffer) = data.data {
                unacknowledgedBytes += buffer.readableBytes
                if streams[streamID]?.body == nil {
                    streams[streamID]?.body = buffer
                } else {
                    streams[streamID]?.body?.writeBuffer(&buffer)
                }
            }
            if unacknowledgedBytes >= 32 * 1024 {
                // Give the client its connection window back at half the initial 65,535 bytes, so
                // it never runs dry (streams' own windows are 1 MiB).
                context.write(
                    wrapOutboundOut(
                        HTTP2Frame(
                            streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledgedBytes))
                    ), promise: nil)
                unacknowledgedBytes = 0
                needsFlush = true
            }
            if data.endStream { finish(streamID, context: context) }
        case .rstStream:
            if streams.removeValue(forKey: streamID) == nil, heldStreams.contains(streamID) {
                resetWhileHeld.insert(streamID)
            }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if needsFlush {
            needsFlush = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    private func finish(_ streamID: Int32, context: ChannelHandlerContext) {
        guard let request = streams.removeValue(forKey: streamID), !closing else { return }
        let held = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let wasHeld = state.holdIfHeld(apnsID: request.headers.first(name: "apns-id")) {
            eventLoop.execute {
                let (handler, context) = held.value
                handler.heldStreams.remove(streamID)
                // A connection that closed while its request was held never delivered it.
                guard context.channel.isActive, !handler.closing else { return }
                // A request whose sender gave up on it (reset its stream) was delivered all the
                // same, as a provider that got it before the reset would: the sender cannot know,
                // so it is in doubt, and the ledger says so.
                if handler.resetWhileHeld.remove(streamID) != nil,
                    let apnsID = request.headers.first(name: "apns-id")
                {
                    handler.state.gaveUpOn(apnsID: apnsID)
                }
                handler.answer(streamID, request: request, context: context)
                if handler.needsFlush {
                    handler.needsFlush = false
                    context.flush()
                }
            }
        }
        if wasHeld {
            heldStreams.insert(streamID)
        } else {
            answer(streamID, request: request, context: context)
        }
    }

    private func answer(
        _ streamID: Int32, request: (headers: HPACKHeaders, body: ByteBuffer?), context: ChannelHandlerContext
    ) {
        let headers = request.headers
        let body = request.body.map { Data($0.readableBytesView) } ?? Data()
        let reply = FakeRouter.route(
            state: state, origin: origin, method: headers.first(name: ":method") ?? "GET",
            uri: headers.first(name: ":path") ?? "/",
            headers: FakeRequestHeaders(headers.lazy.map { ($0.name, $0.value) }), body: body)
        let id = HTTP2StreamID(streamID)
        switch reply {
        case .stall:
            return
        case .goAway:
            // This stream and any later one are not processed; the connection closes.
            closing = true
            let last = streamID > 2 ? HTTP2StreamID(streamID - 2) : HTTP2StreamID.rootStream
            let frame = HTTP2Frame(
                streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: nil))
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
        case .respond(let status, let extra, let body):
            var response = HPACKHeaders()
            response.add(name: ":status", value: String(status))
            // `apns-id` differs on every response: not worth a place in the compression table.
            for (name, value) in extra {
                response.add(name: name, value: value, indexing: name == "apns-id" ? .nonIndexable : .indexable)
            }
            response.add(name: "content-length", value: String(body.count))
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: id, payload: .headers(.init(headers: response, endStream: body.isEmpty)))),
                promise: nil)
            if !body.isEmpty {
                context.write(
                    wrapOutboundOut(
                        HTTP2Frame(
                            streamID: id,
                            payload: .data(.init(data: .byteBuffer(ByteBuffer(bytes: body)), endStream: true)))),
                    promise: nil)
            }
            needsFlush = true
        }
    }
}
