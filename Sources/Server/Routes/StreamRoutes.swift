import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import ServiceLifecycle

/// The live stream: Server-Sent Events at `/api/stream`, the WebSocket at `/api/ws`, both from
/// the one feed (or, with `?delay=`, the feed held back that long for a spoiler delay), both
/// refused (503, 1013) once the server has as many clients as it takes.
struct StreamRoutes: Sendable {
    let feeds: DelayedFeeds
    /// Counts each client's streams (at most as many as its connections may be).
    let gate: ConnectionGate
    /// Closes a client's connection when it has stopped reading.
    let stalls: StreamStallWatch
    /// Keeps a WebSocket client to a few batches queued on its connection's event loop.
    let pacing: StreamPacing
    /// The most live-stream clients at once.
    var maxStreams: Int { gate.limits.maxStreams }

    func add(to api: RouterGroup<APIRequestContext>) {
        api.get("stream") { request, context in
            try stream(request, client: context.client, channel: context.channel)
        }
        // Reached only without the upgrade headers (the WebSocket router takes the upgrades).
        // Plain requests, and handshakes the WebSocket router declined (a malformed `after`, no
        // room): answered here, in JSON.
        api.get("ws") { request, _ -> Response in
            _ = try API.eventID(request.uri.queryParameters.get("after"), name: "after")
            _ = try API.delay(request)
            try checkStreamRoom()
            // RFC 6455 4.2.1: a request that is not a handshake gets 400.
            throw API.error(
                .badRequest,
                "/api/ws is a WebSocket: connect with a WebSocket client (Upgrade: websocket, Sec-WebSocket-Version: 13)"
            )
        }
    }

    /// Server-Sent Events: `game` and `moment` events with ids; `Last-Event-ID` (or `?after=`)
    /// resumes after that event. Heartbeats become comment lines, which keep proxies from closing
    /// the stream and end it once the client has gone. Graceful shutdown ends every stream.
    func stream(_ request: Request, client: String, channel: any Channel) throws -> Response {
        // Both are read (and a malformed one refused) even when both are given: the header wins.
        let header = try API.eventID(request.headers[HTTPField.Name("Last-Event-ID")!], name: "Last-Event-ID")
        let query = try API.eventID(request.uri.queryParameters.get("after"), name: "after")
        let after = header ?? query
        // A spoiler delay: the feed held back by the first of its delays at least that long.
        let delay = try API.delay(request)
        let feed = feeds.feed(delay: delay)
        try checkStreamRoom()
        guard gate.takeStream(client) else { throw Self.tooManyStreams(gate) }
        var headers = HTTPFields()
        headers[HTTPField.Name("X-Spoiler-Delay")!] = "\(delay)"
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        // nginx passes each event on as it comes, whatever its proxy_buffering.
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { [feed, gate, stalls] writer in
                let stream = StreamClient(channel: channel, after: after)
                let watched = stalls.register(channel) { stream.end() }
                defer {
                    gate.giveStream(client)
                    stalls.unregister(watched)
                }
                // The head and this go first through the response's writer; the events are then
                // written from the connection's event loop (`LoopStream`), behind them.
                try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                await withGracefulShutdownHandler {
                    // A client that keeps up gets each event as it comes; one that fell behind (or
                    // whose event loop did) the latest of every game, moments first. A client that
                    // stopped reading has its connection closed by the stall watch.
                    await feed.stream(to: stream)
                } onGracefulShutdown: {
                    feed.finishAll()
                }
                try await writer.finish(nil)
            })
    }

    /// The WebSocket side of the live stream, `GET /api/ws` upgraded: each event is one text
    /// message, `{"id":N,"event":"game"|"moment","data":{...}}`. `?after=N` resumes after event N
    /// (browsers cannot set headers on a WebSocket). What the client sends is ignored; the server
    /// pings every 30 s. A client that falls too far behind is closed with 1013 (try again later)
    /// and resumes with `?after=`; graceful shutdown closes every socket normally (1000).
    func webSocketRouter() -> Router<StreamSocketContext> {
        let router = Router(context: StreamSocketContext.self)
        // Every handshake is taken, and a request the stream cannot serve is then closed with a
        // code and a reason: a browser never sees the body of a refused handshake (and the
        // WebSocket library answers one with an empty 400), but it does see a close frame.
        router.ws("api/ws") { request, _ in
            // RFC 6455 4.1: the key is 16 random bytes in base64; a handshake with any other is
            // not a WebSocket client's (answered 400, never upgraded).
            guard let key = request.headers[.secWebSocketKey], key.utf8.count == 24,
                Data(base64Encoded: key)?.count == 16
            else { return .dontUpgrade }
            return .upgrade([:])
        } onUpgrade: { [feeds, gate, stalls, pacing, maxStreams] inbound, outbound, context in
            let after: Int?
            let delay: Int
            do {
                after = try API.eventID(context.request.uri.queryParameters.get("after"), name: "after")
            } catch {
                let given = context.request.uri.queryParameters.get("after") ?? ""
                try await outbound.close(
                    .init(codeNumber: 1008), reason: "after must be an event id, not '\(given.prefix(40))'")
                return
            }
            do {
                delay = try WidgetFeed.delay(context.request.uri.queryParameters.get("delay")) ?? 0
            } catch {
                try await outbound.close(.init(codeNumber: 1008), reason: "\(error)")
                return
            }
            let feed = feeds.feed(delay: delay)
            guard feeds.clientCount < maxStreams else {
                try await outbound.close(.init(codeNumber: 1013), reason: "the live stream is full: try again later")
                return
            }
            let client = gate.limits.trustedProxies.client(
                peer: context.requestContext.remoteAddress, headers: context.request.headers)
            guard gate.takeStream(client) else {
                try await outbound.close(
                    .init(codeNumber: 1013),
                    reason: "\(gate.limits.maxConnectionsPerClient) live streams from one client: try again later")
                return
            }
            let events = feed.subscribe(after: after)
            let channel = context.requestContext.channel
            let watched = stalls.register(channel) { events.cancel() }
            defer {
                events.cancel()
                gate.giveStream(client)
                stalls.unregister(watched)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Reading keeps pings answered and ends when the client closes, or when the
                // server stops (the WebSocket library then closes every socket, 1000).
                group.addTask { for try await _ in inbound {} }
                group.addTask {
                    // In id order (a message carries its id, and the client resumes after the last
                    // one it got); what waited is coalesced all the same.
                    var pacer = pacing.pacer(on: channel.eventLoop)
                    while let batch = await events.nextBatch() {
                        for event in batch.events.sorted(by: { $0.id < $1.id }) where event.kind != .heartbeat {
                            try await outbound.write(
                                .custom(WebSocketFrame(fin: true, opcode: .text, data: event.message)))
                        }
                        await pacer.queuedBatch()
                    }
                    // The feed let the client go: it fell too far behind.
                    if !Task.isCancelled {
                        try await outbound.close(
                            .init(codeNumber: 1013), reason: "too far behind: reconnect with ?after=<last id>")
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        return router
    }

    /// 429: the client has as many live streams as it may have connections.
    static func tooManyStreams(_ gate: ConnectionGate) -> HTTPError {
        HTTPError(
            .tooManyRequests, headers: [.retryAfter: "10"],
            message: "\(gate.limits.maxConnectionsPerClient) live streams from one client; close one or try again later"
        )
    }

    /// A new live-stream client, unless the server has as many as it takes (503).
    func checkStreamRoom() throws {
        guard feeds.clientCount < maxStreams else {
            throw HTTPError(
                .serviceUnavailable, headers: [.retryAfter: "10"],
                message: "the live stream has \(maxStreams) clients; try again later")
        }
    }
}

/// The WebSocket's request context: Hummingbird's, plus the client's address, which its streams
/// count against.
struct StreamSocketContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let remoteAddress: SocketAddress?
    /// The connection, for the stall watch to close.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}
