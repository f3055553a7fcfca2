import Foundation
import Hummingbird
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@testable import Server

/// The Server-Sent Events stream is written from each connection's event loop (`LoopStream`): a
/// client whose connection cannot take more gets nothing meanwhile, its events coalesced (every
/// moment, the latest state of each game), and what waited in one write when it can take more; a
/// client that keeps up gets every event. Through real sockets, on the server `nohit serve` runs.
@Suite struct LoopStreamTests {
    typealias Fixture = APIServerTests.Fixture

    /// Reads an SSE stream into text, optionally paused (reading off, a 4 KB receive buffer, so
    /// that the server's side of the connection soon cannot take more), until `done` holds.
    final class Reader: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let finished: EventLoopPromise<String>
        private let done: @Sendable (String) -> Bool
        private var text = ""
        private var completed = false
        /// Whether the connection closed before `done` held (read once `finished` has completed).
        private(set) var closedEarly = false

        init(eventLoop: any EventLoop, done: @escaping @Sendable (String) -> Bool) {
            finished = eventLoop.makePromise()
            self.done = done
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            text += String(buffer: unwrapInboundIn(data))
            // What `done` looks for comes last: the text's end is enough (megabytes may come).
            if !completed, done(String(text.utf8.suffix(256 * 1024))!) {
                completed = true
                finished.succeed(text)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !completed { closedEarly = true }
            finished.succeed(text)
        }

        static func open(port: Int, paused: Bool = false, until done: @escaping @Sendable (String) -> Bool)
            async throws -> (any Channel, Reader)
        {
            let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
            let reader = Reader(eventLoop: eventLoop, done: done)
            let channel = try await ClientBootstrap(group: eventLoop)
                .channelOption(.socketOption(.so_rcvbuf), value: paused ? 4096 : 1 << 20)
                .channelOption(.autoRead, value: !paused)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(reader) }
                }
                .connect(host: "127.0.0.1", port: port).get()
            try await channel.writeAndFlush(
                ByteBuffer(string: "GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"))
            return (channel, reader)
        }
    }

    /// The `data:` lines of one kind of event, in the order read.
    static func data(_ text: String, kind: String) -> [String] {
        text.components(separatedBy: "event: \(kind)\ndata: ").dropFirst().map { String($0.prefix { $0 != "\n" }) }
    }

    /// 3 games change 400 times each (8 KB a state: 9.6 MB, far more than the sockets hold) with 5
    /// moments among the changes while one client does not read. When it reads again it has every
    /// moment, in order, and the latest state of each game, not 1,200 states; the SSE ids it read
    /// only grow and end with the newest. The client that read all along has every moment and every
    /// game's latest state too.
    @Test(.timeLimit(.minutes(30))) func aClientThatStopsReadingGetsEveryMomentAndTheLatestStateWhenItReadsAgain()
        async throws
    {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        // The stall watch an hour off: this is about coalescing, and on a starved run the paused
        // client (and the reading one, whose process got no CPU) stayed unwritable past the default
        // 30 s and were closed mid-stream (StreamStallTests covers closing them).
        fixture.options.stalls = StreamStallWatch(timeout: .seconds(3600))
        let feed = fixture.feed
        try await fixture.live { client in
            let port = try #require(client.port)
            // Read up to a last state published after everything (a state comes after the moments
            // of its batch, and carries the batch's highest id: a reader that stopped at the end
            // moment itself, moved ahead of states, stopped before its batch's id).
            let complete: @Sendable (String) -> Bool = { text in
                text.contains(#"{"moment":"end"}"#) && text.contains(#"{"game":"last"}"#)
                    && (0..<3).allSatisfy { text.contains(#""game":\#($0),"n":399"#) }
            }
            let (pausedChannel, paused) = try await Reader.open(port: port, paused: true, until: complete)
            let (readingChannel, reading) = try await Reader.open(port: port, until: complete)
            await feed.clientCount(reaches: { $0 == 2 })
            let coalescedBefore = feed.coalescedCount
            let padding = String(repeating: "x", count: 8 * 1024)
            for n in 0..<400 {
                for game in 0..<3 {
                    feed.publish(.game, data: #"{"game":\#(game),"n":\#(n),"pad":"\#(padding)"}"#, key: "G\(game)")
                }
                if n % 100 == 50 { feed.publish(.moment, data: #"{"moment":\#(n)}"#) }
            }
            feed.publish(.moment, data: #"{"moment":"end"}"#)
            let last = feed.publish(.game, data: #"{"game":"last"}"#, key: "last")
            let readAllAlong = try await reading.finished.futureResult.get()
            try await pausedChannel.setOption(.autoRead, value: true).get()
            pausedChannel.read()
            let text = try await paused.finished.futureResult.get()

            let moments = [#"{"moment":50}"#, #"{"moment":150}"#, #"{"moment":250}"#, #"{"moment":350}"#]
            for (read, reader) in [(text, paused), (readAllAlong, reading)] {
                #expect(!reader.closedEarly, "the server closed the stream before its end")
                #expect(Self.data(read, kind: "moment") == moments + [#"{"moment":"end"}"#])
                let ids = read.split(separator: "\n").filter { $0.hasPrefix("id: ") }.compactMap {
                    Int($0.dropFirst(4))
                }
                #expect(
                    zip(ids, ids.dropFirst()).allSatisfy(<) && ids.last == last.id, "\(ids.suffix(5)), last \(last.id)")
            }
            let states = Self.data(text, kind: "game").count
            #expect(states < 1_200, "the paused client was sent every state")
            #expect(feed.coalescedCount - coalescedBefore >= 1_200 - states)
            try await pausedChannel.close()
            try await readingChannel.close()
        }
    }

    /// 300 states of one game and a moment published while the server's event loop is held (a loop
    /// short of CPU, at its extreme): the client gets the moment and the latest state, not the
    /// backlog. (When each client's task queued its own writes on the loop, the client was sent
    /// every state in order, ahead of the moment; with pacing, still up to three.)
    @Test(.timeLimit(.minutes(30))) func aClientOfABusyLoopGetsTheLatestStateNotTheBacklog() async throws {
        let fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        let feed = fixture.feed
        let serverLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: fixture.api.router(), server: fixture.api.server(),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(serverLoops))
        let services = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: app.logger)
        let serving = Task { try await services.run() }
        var portIterator = ports.makeAsyncIterator()
        let port = try #require(await portIterator.next())

        let (channel, reader) = try await Reader.open(port: port) { $0.contains(#""n":299"#) }
        await feed.clientCount(reaches: { $0 == 1 })
        let coalescedBefore = feed.coalescedCount
        let held = await StreamPacingTests.HeldLoop(serverLoops.next())
        for n in 0..<300 {
            _ = feed.publish(.game, data: #"{"n":\#(n)}"#, key: "G1")
            if n == 150 { _ = feed.publish(.moment, data: #"{"moment":1}"#) }
        }
        held.free()
        let text = try await reader.finished.futureResult.get()
        let states = text.components(separatedBy: "event: game\n").count - 1
        #expect(states == 1, "\(states) states of the game sent; the last: \(text.suffix(200))")
        #expect(text.contains(#"{"moment":1}"#))
        #expect(feed.coalescedCount - coalescedBefore == 299)
        try await channel.close()
        await services.triggerGracefulShutdown()
        _ = try? await serving.value
        try await serverLoops.shutdownGracefully()
    }
}

/// The loop's pass itself, on embedded channels (one thread, the loop run by hand).
@Suite struct LoopStreamPassTests {
    /// Posts a moment to the stream the first time something is written through it: a moment that
    /// comes while a pass is writing to every client.
    final class MomentOnFirstWrite: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = HTTPResponsePart
        let post: () -> Void
        private var posted = false

        init(post: @escaping () -> Void) { self.post = post }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if !posted {
                posted = true
                post()
            }
            context.write(data, promise: promise)
        }
    }

    static func writes(_ channel: EmbeddedChannel) throws -> [String] {
        var texts: [String] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) {
            if case .body(let bytes) = part { texts.append(String(buffer: bytes)) }
        }
        return texts
    }

    /// 600 clients; a moment comes while the pass writes a game's state to the 11th. The clients
    /// the pass had not reached when it looked (every 256) get the state and the moment in one
    /// write, the moment first; those it had reached get the moment next, in a write of its own.
    @Test func aMomentThatComesDuringAPassGoesToTheClientsNotReachedYetWithTheirBatch() throws {
        let loop = EmbeddedEventLoop()
        let feed = LiveFeed()
        let stream = LoopStream(eventLoop: loop, feed: feed)
        var channels: [EmbeddedChannel] = []
        let moment = LiveEvent(id: 2, kind: .moment, data: #"{"moment":1}"#)
        for index in 0..<600 {
            let channel = EmbeddedChannel(loop: loop)
            if index == 10 {
                try channel.pipeline.syncOperations.addHandler(MomentOnFirstWrite { stream.post(.event(moment)) })
            }
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            let client = StreamClient(channel: channel, after: nil)
            stream.post(.add(client, missed: []))
            channels.append(channel)
        }
        loop.run()
        stream.post(.event(LiveEvent(id: 1, kind: .game, data: #"{"n":1}"#, key: "G1")))
        loop.run()
        let state = "id: 1\nevent: game\ndata: {\"n\":1}\n\n"
        let writes = try channels.map(Self.writes)
        #expect(writes[..<256].allSatisfy { $0 == [state, "id: 2\nevent: moment\ndata: {\"moment\":1}\n\n"] })
        // The moment moved ahead of the state carries no id (the state's is still to come).
        #expect(
            writes[256...].allSatisfy {
                $0 == ["event: moment\ndata: {\"moment\":1}\n\nid: 2\nevent: game\ndata: {\"n\":1}\n\n"]
            })
        // Nothing more waits: the pass took the moment from the inbox.
        loop.run()
        #expect(try channels.allSatisfy { try Self.writes($0).isEmpty })
    }
}
