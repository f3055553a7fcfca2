import Foundation
import Hummingbird
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@testable import Server

/// When the server's event loop is short of CPU, a live-stream client's writes do not pile up on
/// it: after a few batches the client waits for its loop, and what comes meanwhile is coalesced in
/// its subscription (the latest state of each game, every moment), so what it reads lags by a
/// few batches, not by a backlog that grows with every event.
@Suite struct StreamPacingTests {
    typealias Fixture = APIServerTests.Fixture

    /// An event loop held busy until released (a loop short of CPU, at its extreme).
    final class HeldLoop: Sendable {
        private let release = DispatchSemaphore(value: 0)

        /// Returns once `loop` is running the task that holds it.
        init(_ loop: any EventLoop) async {
            await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
                loop.execute { [release] in
                    held.resume()
                    release.wait()
                }
            }
        }

        func free() { release.signal() }
    }

    @Test(.timeLimit(.minutes(1))) func aClientWaitsOnceLimitBatchesAreQueuedAndGoesOnWhenTheLoopRunsThem()
        async throws
    {
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = loops.next()
        let pacing = StreamPacing(limit: 2)
        let held = await HeldLoop(loop)
        let done = ManagedFlag()
        let client = Task {
            var pacer = pacing.pacer(on: loop)
            await pacer.queuedBatch()
            // One batch queued: the client goes on.
            #expect(pacing.waitCount == 0)
            await pacer.queuedBatch()
            done.set()
        }
        // Two batches queued on a loop that runs nothing: the client waits...
        while pacing.waitCount == 0 { await Task.yield() }
        #expect(!done.isSet, "the client went on with two batches queued on a held loop")
        // ...until the loop has run them.
        held.free()
        await client.value
        #expect(done.isSet)
        #expect(pacing.waitCount == 1)
        try await loops.shutdownGracefully()
    }

    /// 300 states of one game and a moment published while the server's event loop is held: the
    /// client gets at most two of the intermediate states (its two batches queued on the loop), then
    /// the moment and the latest state. Before pacing it was sent every state the feed gave its task
    /// (they waited on the loop, in order, ahead of the moment).
    @Test(.timeLimit(.minutes(2))) func aClientOfABusyLoopGetsTheLatestStateNotTheBacklog() async throws {
        var fixture = try await Fixture { _ in true }
        defer { fixture.remove() }
        let pacing = StreamPacing(limit: 2)
        fixture.options.pacing = pacing
        let feed = fixture.feed
        let api = fixture.api
        let serverLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: api.router(), server: api.server(),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(serverLoops))
        let services = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: app.logger)
        let serving = Task { try await services.run() }
        var portIterator = ports.makeAsyncIterator()
        let port = try #require(await portIterator.next())

        let reader = try await SSEReader.open(port: port, until: #""n":299"#)
        await feed.clientCount(reaches: { $0 == 1 })
        let coalescedBefore = feed.coalescedCount
        let held = await HeldLoop(serverLoops.next())
        for n in 0..<300 {
            _ = feed.publish(.game, data: #"{"n":\#(n)}"#, key: "G1")
            if n == 150 { _ = feed.publish(.moment, data: #"{"moment":1}"#) }
        }
        // However the client's task and the publisher interleaved, it has queued at most two
        // batches on the held loop (then it waits for the loop); the rest waits in its
        // subscription, each state superseding the one before.
        held.free()
        let text = try await reader.1.done.futureResult.get()
        let states = text.components(separatedBy: "event: game\n").count - 1
        #expect(states <= 3, "\(states) states of the game sent; the last: \(text.suffix(200))")
        #expect(text.contains(#"{"moment":1}"#))
        #expect(feed.coalescedCount - coalescedBefore == 300 - states)
        try await reader.0.close()
        await services.triggerGracefulShutdown()
        _ = try? await serving.value
        try await serverLoops.shutdownGracefully()
    }

    /// A flag set once, read from any thread.
    final class ManagedFlag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// Reads an SSE stream until `marker` has come.
    final class SSEReader: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let done: EventLoopPromise<String>
        private let marker: String
        private var text = ""

        init(eventLoop: any EventLoop, marker: String) {
            done = eventLoop.makePromise()
            self.marker = marker
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            text += String(buffer: unwrapInboundIn(data))
            if text.contains(marker) { done.succeed(text) }
        }

        func channelInactive(context: ChannelHandlerContext) { done.succeed(text) }

        static func open(port: Int, until marker: String) async throws -> (any Channel, SSEReader) {
            let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
            let reader = SSEReader(eventLoop: eventLoop, marker: marker)
            let channel = try await ClientBootstrap(group: eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(reader) }
                }
                .connect(host: "127.0.0.1", port: port).get()
            try await channel.writeAndFlush(
                ByteBuffer(string: "GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"))
            return (channel, reader)
        }
    }
}
