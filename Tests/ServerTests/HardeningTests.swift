import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import Server

/// What the server does for every request and every connection, whatever the route: security
/// headers, 405 for a method a path lacks, no control characters in paths, registrations limited
/// per client; and, through a real socket, the connection gate (503 over the per-client limit,
/// 408 for a head that never comes, 400 and 431 for requests the decoder cannot read).
@Suite struct HardeningTests {
    typealias Fixture = APIServerTests.Fixture

    @Test func everyResponseCarriesTheSecurityHeaders() async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            for (uri, status) in [
                ("/healthz", HTTPResponse.Status.ok), ("/", .ok), ("/api/games/XXX202008250", .notFound),
                ("/api/moments?limit=0", .badRequest),
            ] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == status, "\(uri)")
                    #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", "\(uri)")
                    let policy = response.headers[HTTPField.Name("Content-Security-Policy")!] ?? ""
                    #expect(
                        policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'"), "\(uri)")
                }
            }
        }
    }

    @Test func aMethodAPathDoesNotHaveIs405WithAllow() async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: "/api/games", method: .delete) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET")
            }
            try await client.execute(uri: "/api/devices/\(UUID())/preferences", method: .post) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, PUT")
            }
            try await client.execute(uri: "/api/no-such-thing", method: .delete) { #expect($0.status == .notFound) }
        }
    }

    @Test(arguments: ["/app.js%00.html", "/app.js%0a", "/%01"])
    func aPathWithAControlCharacterIsRefused(path: String) async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        try await fixture.test { client in
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            }
        }
    }

    @Test func registrationsAreLimitedPerClient() async throws {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        // The limiter's own clock stands still: on a loaded machine a minute may pass between two
        // requests, and refill the bucket.
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        fixture.options.registrations = RateLimiter(perMinute: 1, burst: 2, now: { start })
        try await fixture.test { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<3 {
                let body = #"{"channel":"apns","token":"\#(APIServerTests.token)","topic":"com.example.nohit"}"#
                try await client.execute(
                    uri: "/api/devices", method: .post, headers: APIServerTests.jsonType,
                    body: ByteBuffer(string: body)
                ) { response in
                    statuses.append(response.status)
                    if response.status == .tooManyRequests {
                        #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 > 0)
                    }
                }
            }
            #expect(statuses == [.created, .created, .tooManyRequests])
        }
        #expect(try await fixture.store.deviceCount() == 2)
    }

    @Test func aRateLimiterRefillsAndForgets() {
        let limiter = RateLimiter(perMinute: 6, burst: 2, clients: 2)
        let start = Date(timeIntervalSince1970: 0)
        #expect(limiter.take("a", now: start) == nil)
        #expect(limiter.take("a", now: start) == nil)
        let wait = limiter.take("a", now: start)
        #expect(wait == 10)
        #expect(limiter.take("a", now: start.addingTimeInterval(10)) == nil)
        // Other clients are counted apart; the oldest is forgotten past the cap.
        #expect(limiter.take("b", now: start) == nil)
        #expect(limiter.take("c", now: start.addingTimeInterval(11)) == nil)
        #expect(limiter.take("a", now: start.addingTimeInterval(11)) == nil)
    }

    /// A clock stepped back an hour holds nobody for the hour: the bucket's time follows it.
    @Test func aRateLimiterIsNotHeldByAClockSteppedBack() {
        let limiter = RateLimiter(perMinute: 6, burst: 1)
        let start = Date(timeIntervalSince1970: 7200)
        #expect(limiter.take("a", now: start) == nil)
        #expect(limiter.take("a", now: start) == 10)
        let stepped = start.addingTimeInterval(-3600)
        #expect(limiter.take("a", now: stepped) == 10)
        #expect(limiter.take("a", now: stepped.addingTimeInterval(10)) == nil)
    }

    // MARK: Through a real socket

    /// Sends `bytes` on a new connection to `port` and returns what came back before the server
    /// closed the connection (or `wait` passed).
    ///
    /// The answer is gathered and the deadline kept on the connection's event loop, not in tasks:
    /// on a loaded machine the cooperative pool can be busy for seconds, and a reader and a timer
    /// both waiting for it could let the timer win over an answer that came long before.
    static func exchange(_ bytes: [UInt8], port: Int, from source: String? = nil, wait: Duration = .seconds(300))
        async throws -> String
    {
        let group = MultiThreadedEventLoopGroup.singleton
        let answer = group.next().makePromise(of: String.self)
        var bootstrap = ClientBootstrap(group: group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(AnswerCollector(answer: answer))
            }
        }
        let channel: any Channel
        do {
            if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
            channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
        } catch {
            // A promise left unfulfilled stops the process in a debug build.
            answer.fail(error)
            throw error
        }
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(wait)) {
            answer.succeed("(no answer within \(wait))")
            channel.close(promise: nil)
        }
        // The server may close while a long request is still going out: what it answered before
        // is what counts.
        if !bytes.isEmpty { channel.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil) }
        let text = try await answer.futureResult.get()
        deadline.cancel()
        try? await channel.close()
        return text
    }

    /// Gathers what the server sends until it closes (or resets: what came is what counts).
    final class AnswerCollector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let answer: EventLoopPromise<String>
        let text = Mutex("")

        init(answer: EventLoopPromise<String>) { self.answer = answer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let chunk = unwrapInboundIn(data)
            text.withLock { $0 += String(buffer: chunk) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            answer.succeed(text.withLock { $0 })
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }

    /// A plain TCP connection to the server on `port` (loopback).
    /// A connection to the server, from `source` (a loopback address) when given.
    static func connect(port: Int, from source: String? = nil) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        return
            try await bootstrap
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    static func live(
        _ configure: (inout APIServer.Options) -> Void, _ body: @escaping @Sendable (Int) async throws -> Void
    ) async throws {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        configure(&fixture.options)
        try await fixture.live { client in try await body(try #require(client.port)) }
    }

    @Test(arguments: [
        ("a malformed request line", "GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n", "400 Bad Request"),
        ("a bad method", "G@T / HTTP/1.1\r\nHost: x\r\n\r\n", "400 Bad Request"),
        (
            "Content-Length with chunked",
            "POST /api/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "400 Bad Request"
        ),
        (
            "a 200 KB header", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\n\r\n",
            "431"
        ),
        (
            "10,000 headers",
            "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<10_000).map { "X-\($0): y\r\n" }.joined() + "\r\n", "431"
        ),
        ("HTTP/1.1 without Host", "GET /healthz HTTP/1.1\r\nAccept: */*\r\n\r\n", "400 Bad Request"),
    ])
    func anUnreadableRequestIsAnsweredAndTheConnectionClosed(name: String, request: String, status: String)
        async throws
    {
        try await Self.live({ _ in }) { port in
            let answer = try await Self.exchange(Array(request.utf8), port: port)
            #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(name): \(answer.prefix(120))")
            #expect(answer.lowercased().contains("connection: close"), "\(name)")
            // The guard's own answers carry the security headers too.
            #expect(answer.lowercased().contains("x-content-type-options: nosniff"), "\(name)")
        }
    }

    /// What a logger was given: level and message of each line.
    final class CapturedLines: Sendable {
        let lines = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])

        var logger: Logger {
            Logger(label: "test") { _ in Handler(captured: self) }
        }

        struct Handler: LogHandler {
            let captured: CapturedLines
            var logLevel: Logger.Level = .info
            var metadata: Logger.Metadata = [:]
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) {
                guard event.level >= logLevel else { return }
                captured.lines.withLock {
                    $0.append((event.level, event.message.description, metadata.merging(event.metadata ?? [:]) { $1 }))
                }
            }
        }
    }

    /// A client sending one unreadable request after another makes one log line a minute, in the
    /// gate's words, and no error line ("[HummingbirdWebSocket] Error handling upgrade result" was
    /// logged at error level for each of them before).
    @Test func unreadableRequestsAreLoggedOncePerClientPerInterval() async throws {
        let captured = CapturedLines()
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        // The client is never barred here (what is measured is the log). As in the fixture, a
        // request has 600 s for its head: on a loaded machine one came after the default 10 s and
        // was answered 408 (CI, and a full run beside a benchmark).
        var limits = ConnectionLimits()
        limits.abusePenalty = .zero
        limits.headerTimeout = .seconds(600)
        fixture.options.gate = ConnectionGate(limits: limits, logger: captured.logger)
        let started = ContinuousClock.now
        try await fixture.live(logger: captured.logger) { client in
            let port = try #require(client.port)
            for index in 0..<40 {
                let request = index.isMultiple(of: 2) ? "G@T / HTTP/1.1\r\nHost: x\r\n\r\n" : "GET / HTTP/1.1\r\n\r\n"
                let answer = try await Self.exchange(Array(request.utf8), port: port)
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(80))")
            }
        }
        let lines = captured.lines.withLock { $0 }
        #expect(lines.filter { $0.level >= .error }.map(\.message) == [])
        let refusals = lines.filter { $0.message == "refused a request that could not be read" }
        // One line a minute: two if the 40 requests took more than a minute on a loaded machine.
        let minutes = Int((ContinuousClock.now - started) / .seconds(60)) + 1
        #expect(refusals.count >= 1 && refusals.count <= minutes, "\(refusals.map(\.metadata))")
        #expect(refusals.first?.metadata["client"] == "127.0.0.1")
        #expect(refusals.first?.metadata["status"] == "400")
    }

    /// The refusal log's interval, on an injected clock: the first refusal of a client is logged,
    /// the rest of the minute counted and told with the next line.
    @Test func theRefusalLogWritesOneLinePerClientPerInterval() {
        let captured = CapturedLines()
        let log = RefusalLog(logger: captured.logger, interval: .seconds(60))
        let start = ContinuousClock.now
        for second in 0..<60 {
            log.refused(client: "10.0.0.1", status: "400", reason: "bad", now: start + .seconds(second))
        }
        log.refused(client: "10.0.0.2", status: "431", reason: "big", now: start + .seconds(30))
        log.refused(client: "10.0.0.1", status: "400", reason: "bad", now: start + .seconds(60))
        let lines = captured.lines.withLock { $0 }
        #expect(lines.map { $0.metadata["client"] } == ["10.0.0.1", "10.0.0.2", "10.0.0.1"])
        #expect(lines.map { $0.metadata["refused_since_last_line"] } == [nil, nil, "59"])
        #expect(lines.allSatisfy { $0.level == .notice })
    }

    /// A keep-alive connection that reads one answer and stays open, and what it saw.
    final class KeepAliveClient: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let answered: EventLoopPromise<String>
        let closed: EventLoopPromise<Void>
        private var text = ""

        init(eventLoop: any EventLoop) {
            answered = eventLoop.makePromise()
            closed = eventLoop.makePromise()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            text += String(buffer: unwrapInboundIn(data))
            // The whole answer: its head, and as many body bytes as its Content-Length says.
            guard let end = text.range(of: "\r\n\r\n") else { return }
            let head = text[..<end.lowerBound].lowercased()
            let length =
                head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            if text[end.upperBound...].utf8.count >= length { answered.succeed(text) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            answered.succeed(text)
            closed.succeed()
        }

        static func open(port: Int, request: String, from source: String? = nil) async throws -> (
            any Channel, KeepAliveClient
        ) {
            let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
            let client = KeepAliveClient(eventLoop: eventLoop)
            var bootstrap = ClientBootstrap(group: eventLoop)
            if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
            let channel =
                try await bootstrap
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(client) }
                }
                .connect(host: "127.0.0.1", port: port).get()
            // A refused connection may be answered (503) and closed before the request is out: the
            // answer is what counts.
            channel.writeAndFlush(ByteBuffer(string: request), promise: nil)
            return (channel, client)
        }
    }

    /// A gate with `maxConnections` connections in all and no per-client limit, where only the cap
    /// closes a connection: not the 408 for a connection that sends no request (the test client's
    /// own) nor the idle timeout, however slow the machine.
    static func onlyTheCapCloses(at maxConnections: Int) -> ConnectionGate {
        var limits = ConnectionLimits()
        limits.maxConnections = maxConnections
        limits.maxConnectionsPerClient = 0
        limits.headerTimeout = .seconds(3600)
        limits.idleTimeout = .seconds(3600)
        return ConnectionGate(limits: limits)
    }

    /// At the connection cap, the keep-alive connection idle the longest is closed for a new
    /// client, which is served (before: 503 while the idlers held every slot).
    @Test(.timeLimit(.minutes(30))) func idleKeepAliveConnectionsGiveWayAtTheCap() async throws {
        // Eight idlers and the test client's own connection (open, never used).
        try await Self.live({ $0.gate = Self.onlyTheCapCloses(at: 9) }) { port in
            var idlers: [(any Channel, KeepAliveClient)] = []
            for _ in 0..<8 {
                let idler = try await KeepAliveClient.open(
                    port: port, request: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let answer = try await idler.1.answered.futureResult.get()
                #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(80))")
                idlers.append(idler)
            }
            // Each newcomer is served (and stays, idle in its turn); the idlers are closed oldest first.
            var newcomers: [(any Channel, KeepAliveClient)] = []
            func newcomer(_ round: Int) async throws {
                let client = try await KeepAliveClient.open(
                    port: port, request: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                let answer = try await client.1.answered.futureResult.get()
                #expect(answer.hasPrefix("HTTP/1.1 200"), "round \(round): \(answer.prefix(80))")
                newcomers.append(client)
            }
            for round in 0..<3 {
                try await newcomer(round)
                try await idlers[round].1.closed.futureResult.get()
            }
            #expect(
                idlers[3...].allSatisfy { $0.0.isActive }, "\(idlers.map(\.0.isActive)) \(newcomers.map(\.0.isActive))")
            // A connection with a request in progress is not idle: a live stream keeps its slot
            // while the idlers, then the newcomers, are closed for the next ones.
            let stream = try await KeepAliveClient.open(
                port: port, request: "GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
            try await idlers[3].1.closed.futureResult.get()
            for round in 3..<8 { try await newcomer(round) }
            for idler in idlers[4...] { try await idler.1.closed.futureResult.get() }
            try await newcomers[0].1.closed.futureResult.get()
            #expect(stream.0.isActive)
            #expect(newcomers[1...].allSatisfy { $0.0.isActive })
            for client in newcomers + [stream] { try? await client.0.close() }
        }
    }

    /// At the cap, a client holding many connections does not take an idle one from a client
    /// holding about as many (idlers from many addresses would otherwise evict one another without
    /// end); a client holding few does.
    @Test(.timeLimit(.minutes(30))) func clientsHoldingManyConnectionsDoNotEvictEachOther() async throws {
        // Four idlers of one client, four streams of another, and the test client's own.
        try await Self.live({ $0.gate = Self.onlyTheCapCloses(at: 9) }) { port in
            var held: [(any Channel, KeepAliveClient)] = []
            for _ in 0..<4 {
                let idler = try await KeepAliveClient.open(
                    port: port, request: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", from: "127.0.0.2")
                _ = try await idler.1.answered.futureResult.get()
                held.append(idler)
            }
            for _ in 0..<4 {
                let stream = try await KeepAliveClient.open(
                    port: port, request: "GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
                    from: "127.0.0.3")
                // Admitted: its response has begun.
                let head = try await stream.1.answered.futureResult.get()
                #expect(head.hasPrefix("HTTP/1.1 200"), "\(head.prefix(80))")
                held.append(stream)
            }
            // The streams' client holds four: the idlers' client would be left with three.
            let many = try await KeepAliveClient.open(
                port: port, request: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", from: "127.0.0.3")
            let refused = try await many.1.answered.futureResult.get()
            #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused.prefix(80))")
            #expect(held[0...3].allSatisfy { $0.0.isActive })
            // A client with no connection gets the idlers' oldest.
            let few = try await KeepAliveClient.open(
                port: port, request: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", from: "127.0.0.4")
            let served = try await few.1.answered.futureResult.get()
            #expect(served.hasPrefix("HTTP/1.1 200"), "\(served.prefix(80))")
            try await held[0].1.closed.futureResult.get()
            for client in held + [many, few] { try? await client.0.close() }
        }
    }

    /// A client that keeps sending what the server cannot read is refused for a while (each
    /// such request costs the server a connection and an answer); another client is not.
    @Test func aClientWithRepeatedProtocolErrorsIsRefusedForAWhileAndNoOneElse() async throws {
        try await Self.live({ api in
            var limits = api.gate.limits
            limits.abuseStrikes = 3
            limits.abusePenalty = .seconds(600)
            // Three strikes within an hour: CI's starved run took over a minute for the three.
            limits.abuseWindow = .seconds(3600)
            api.gate = ConnectionGate(limits: limits)
        }) { port in
            let malformed = Array("GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n".utf8)
            // Who is answered is the point, not how fast: a starved run took over a minute for the
            // three, so each has the default bound (for a server that never answers).
            let wait = Duration.seconds(300)
            for _ in 0..<3 {
                let answer = try await Self.exchange(malformed, port: port, from: "127.0.0.7", wait: wait)
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(80))")
            }
            let healthz = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            let refused = try await Self.exchange(healthz, port: port, from: "127.0.0.7", wait: wait)
            #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused.prefix(80))")
            #expect(refused.contains("repeated protocol errors"), "\(refused)")
            let other = try await Self.exchange(healthz, port: port, from: "127.0.0.8", wait: wait)
            #expect(other.hasPrefix("HTTP/1.1 200"), "\(other.prefix(80))")
        }
    }

    @Test func aHeadThatNeverComesIsClosedWith408() async throws {
        try await Self.live({ api in
            var limits = ConnectionLimits()
            limits.headerTimeout = .seconds(1)
            // The idle timeout far off: only the header timeout answers (408; the idle one closes
            // without a word). CI's starved run once took 76 s to see the answer of a 1 s timeout.
            limits.idleTimeout = .seconds(3600)
            api.gate = ConnectionGate(limits: limits)
        }) { port in
            // Half a request line, then nothing: a slowloris.
            let answer = try await Self.exchange(Array("GET /heal".utf8), port: port, wait: .seconds(1800))
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer.prefix(120))")
            #expect(answer.lowercased().contains("x-content-type-options: nosniff"))
        }
    }

    @Test func connectionsOverThePerClientLimitAre503AndOthersAreServed() async throws {
        try await Self.live({ api in
            var limits = ConnectionLimits()
            limits.maxConnectionsPerClient = 3
            // The held connections send nothing: the header deadline must not close them while
            // a loaded machine is slow to answer the fourth (it did, and every try after that was
            // an ordinary connection waiting for a request).
            limits.headerTimeout = .seconds(600)
            api.gate = ConnectionGate(limits: limits)
        }) { port in
            // Three idle connections from 127.0.0.1 are held; a fourth is refused at once.
            var held: [NIOAsyncChannel<ByteBuffer, ByteBuffer>] = []
            for _ in 0..<3 {
                held.append(
                    try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .connect(host: "127.0.0.1", port: port) { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                            }
                        })
            }
            var refused = ""
            for _ in 0..<20 {
                refused = try await Self.exchange([], port: port, wait: .seconds(5))
                if refused.hasPrefix("HTTP/1.1 503") { break }
            }
            #expect(refused.hasPrefix("HTTP/1.1 503"), "\(refused.prefix(120))")
            #expect(refused.contains("3 connections from one client"))
            #expect(refused.lowercased().contains("x-content-type-options: nosniff"))
            for channel in held { try? await channel.channel.close() }
            // Once they close, the client is served again.
            var served = ""
            for _ in 0..<50 {
                served = try await Self.exchange(
                    Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), port: port)
                if served.hasPrefix("HTTP/1.1 200") { break }
            }
            #expect(served.hasPrefix("HTTP/1.1 200"))
        }
    }
}
